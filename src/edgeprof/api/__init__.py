"""The public Python API: one function per command, each returning a typed result (:mod:`.results`).

>>> import edgeprof
>>> cmp = edgeprof.compare("off.etdp", "on.etdp")
>>> cmp.speedup.estimate, cmp.speedup.ci.low, cmp.verdict
>>> bd = edgeprof.breakdown("model.etdp"); bd.categories      # a Polars frame
>>> prof = edgeprof.load_etdump("model.etdp", etrecord="model.etrecord"); prof.events

Every function takes ``ws=``: a :class:`~edgeprof.io.workspace.Workspace` shared by several calls reads each
input once (``edgeprof.Workspace(run_dir)``).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING

# name → the module that defines it (relative to this package): each is imported on first use, so a command
# loads only the API modules it calls (tests/core/test_imports.py counts them)
_WHERE = {
    "ReadOptions": "..io.workspace",
    "Workspace": "..io.workspace",
    "analyze": ".analyze",
    "ane": ".ane",
    "ane_diff": ".ane",
    "ane_folder": ".ane",
    "is_model_bundle": ".ane",
    "load_ane_report": ".ane",
    "breakdown": ".breakdown",
    "breakdowns": ".breakdown",
    "load_profile": ".breakdown",
    "coreml": ".coreml",
    "coreml_as_anemll": ".coreml",
    "coreml_diff": ".coreml",
    "coreml_plan": ".coreml",
    "coreml_profile": ".coreml",
    "Roles": ".compare",
    "assign_roles": ".compare",
    "compare": ".compare",
    "explicit_roles": ".compare",
    "kit_roles": ".compare",
    "example": ".example",
    "export": ".history",
    "history": ".history",
    "ingest": ".ingest",
    "executed_evidence": ".kernels",
    "kernel_evidence": ".kernels",
    "kernel_view": ".kernels",
    "kernels": ".kernels",
    "latency": ".latency",
    "memory": ".memory",
    "load_etdump": ".load",
    "numerics": ".numerics",
    "compare_phases": ".phases",
    "phases": ".phases",
    "load_placement": ".placement",
    "placement": ".placement",
    "placement_diff": ".placement",
    "placement_gate": ".placement",
    "plan": ".plan",
    "program": ".program",
    "program_diff": ".program",
    "report": ".report",
    "AnalyzeResult": ".results",
    "AneAnalysis": ".results",
    "AneDiff": ".results",
    "AneFolder": ".results",
    "Breakdown": ".results",
    "Collection": ".results",
    "Comparison": ".results",
    "CoreMLDiff": ".results",
    "CoreMLStatic": ".results",
    "ExecutedEvidence": ".results",
    "Interval": ".results",
    "KernelTable": ".results",
    "KernelView": ".results",
    "LatencyReport": ".results",
    "PhaseComparison": ".results",
    "PhaseReport": ".results",
    "PlanResult": ".results",
    "ProgramDiff": ".results",
    "ProgramInfo": ".results",
    "Report": ".results",
    "Result": ".results",
    "Speedup": ".results",
    "TraceResult": ".results",
    "Validation": ".results",
    "ExportResult": ".results_history",
    "HistoryResult": ".results_history",
    "IngestResult": ".results_history",
    "MemoryReport": ".results_memory",
    "PlacementDiff": ".results_placement",
    "PlacementInfo": ".results_placement",
    "run": ".run",
    "trace": ".trace",
    "validate": ".validate",
}


if TYPE_CHECKING:  # the names __getattr__ binds on first use, for type checkers
    from ..io.workspace import ReadOptions, Workspace
    from .analyze import analyze
    from .ane import ane, ane_diff, ane_folder, is_model_bundle, load_ane_report
    from .breakdown import breakdown, breakdowns, load_profile
    from .compare import Roles, assign_roles, compare, explicit_roles, kit_roles
    from .coreml import coreml, coreml_as_anemll, coreml_diff, coreml_plan, coreml_profile
    from .example import example
    from .history import export, history
    from .ingest import ingest
    from .kernels import executed_evidence, kernel_evidence, kernel_view, kernels
    from .latency import latency
    from .load import load_etdump
    from .memory import memory
    from .numerics import numerics
    from .phases import compare_phases, phases
    from .placement import load_placement, placement, placement_diff, placement_gate
    from .plan import plan
    from .program import program, program_diff
    from .report import report
    from .results import (AnalyzeResult, AneAnalysis, AneDiff, AneFolder, Breakdown, Collection, Comparison, CoreMLDiff,
                          CoreMLStatic, ExecutedEvidence, Interval, KernelTable, KernelView, LatencyReport, PhaseComparison,
                          PhaseReport, PlanResult, ProgramDiff, ProgramInfo, Report, Result, Speedup, TraceResult, Validation)
    from .results_history import ExportResult, HistoryResult, IngestResult
    from .results_memory import MemoryReport
    from .results_placement import PlacementDiff, PlacementInfo
    from .run import run
    from .trace import trace
    from .validate import validate


class _API(types.ModuleType):
    """This package: a function is imported from its module on first use. Most functions share their module's name
    (``compare`` in ``.compare``): when the import system binds the submodule on the package, the function is bound
    instead, as the eager imports did."""

    def __getattr__(self, name: str):
        where = _WHERE.get(name)
        if where is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where, __name__), name)
        super().__setattr__(name, value)
        return value

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, types.ModuleType) and name in _WHERE and value.__name__ == f"{__name__}.{name}":
            value = getattr(value, name)
        super().__setattr__(name, value)

    def __dir__(self):
        return sorted({*self.__dict__, *_WHERE})


sys.modules[__name__].__class__ = _API


# what a command imports lazily: a CLI that freezes the GC (one run per process) loads them first
_PRELOAD = {"analyze": ("edgeprof.analysis.breakdown", "edgeprof.analysis.kernels", "edgeprof.analysis.timeline",
                        "edgeprof.analysis.inspector_order", "edgeprof.io.etdump_read", "edgeprof.render.tables")}


def preload(command: str) -> None:
    """Import the modules ``command`` will need now rather than mid-run."""
    import importlib

    for name in _PRELOAD.get(command, ()):
        importlib.import_module(name)

__all__ = [
    "AnalyzeResult", "AneAnalysis", "AneDiff", "AneFolder", "Breakdown", "Collection", "Comparison", "CoreMLDiff",
    "CoreMLStatic", "ExecutedEvidence", "ExportResult", "HistoryResult", "IngestResult", "Interval", "KernelTable",
    "KernelView", "LatencyReport", "MemoryReport", "PhaseComparison", "PhaseReport", "PlacementDiff", "PlacementInfo",
    "PlanResult", "ProgramDiff", "ProgramInfo", "ReadOptions", "Report", "Result", "Roles", "Speedup", "TraceResult",
    "Validation", "Workspace", "analyze", "ane", "ane_diff", "ane_folder", "assign_roles", "breakdown", "breakdowns",
    "compare", "compare_phases", "coreml", "coreml_as_anemll", "coreml_diff", "coreml_plan", "coreml_profile",
    "example", "executed_evidence", "explicit_roles", "export", "history", "ingest", "is_model_bundle",
    "kernel_evidence", "kernel_view", "kernels", "kit_roles", "latency", "load_ane_report", "load_etdump",
    "load_placement", "load_profile", "memory", "numerics", "phases", "placement", "placement_diff", "placement_gate",
    "plan", "preload", "program", "program_diff", "report", "run", "trace", "validate",
]
