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

from ..io.workspace import ReadOptions, Workspace
from .analyze import analyze
from .ane import ane, ane_diff, ane_folder, is_model_bundle, load_ane_report
from .breakdown import breakdown, breakdowns, load_profile
from .coreml import coreml, coreml_as_anemll, coreml_diff, coreml_plan, coreml_profile
from .compare import Roles, assign_roles, compare, explicit_roles, kit_roles
from .example import example
from .history import export, history
from .ingest import ingest
from .kernels import executed_evidence, kernel_evidence, kernel_view, kernels
from .latency import latency
from .memory import memory
from .load import load_etdump
from .numerics import numerics
from .phases import compare_phases, phases
from .placement import load_placement, placement, placement_diff, placement_gate
from .plan import plan
from .program import program, program_diff
from .report import report
from .results import (
    AnalyzeResult,
    AneAnalysis,
    AneDiff,
    AneFolder,
    Breakdown,
    Collection,
    Comparison,
    CoreMLDiff,
    CoreMLStatic,
    ExecutedEvidence,
    Interval,
    KernelTable,
    KernelView,
    LatencyReport,
    PhaseComparison,
    PhaseReport,
    PlanResult,
    ProgramDiff,
    ProgramInfo,
    Report,
    Result,
    Speedup,
    TraceResult,
    Validation,
)
from .results_history import ExportResult, HistoryResult, IngestResult
from .results_memory import MemoryReport
from .results_placement import PlacementDiff, PlacementInfo
from .run import run
from .trace import trace
from .validate import validate

# what a command imports lazily: a CLI that freezes the GC (one run per process) loads them first
_PRELOAD = {"analyze": ("edgeprof.analysis.breakdown", "edgeprof.analysis.kernels", "edgeprof.analysis.timeline",
                        "edgeprof.analysis.inspector_order", "edgeprof.io.etdump_read", "edgeprof.render.tables")}


def preload(command: str) -> None:
    """Import the modules ``command`` will need now rather than mid-run."""
    import importlib

    for name in _PRELOAD.get(command, ()):
        importlib.import_module(name)

__all__ = [
    "numerics", "Workspace", "ReadOptions", "preload", "load_etdump", "load_profile", "analyze", "latency", "compare", "assign_roles", "kit_roles",
    "explicit_roles", "Roles", "breakdown", "breakdowns", "kernels", "kernel_evidence", "executed_evidence",
    "kernel_view", "validate", "ane", "ane_diff", "ane_folder", "load_ane_report", "is_model_bundle", "report",
    "trace", "example", "run", "plan", "ingest", "history", "export", "IngestResult", "HistoryResult", "ExportResult", "Result", "Interval", "Speedup", "LatencyReport", "Comparison", "Breakdown", "AnalyzeResult",
    "Collection", "PlanResult", "KernelTable", "ExecutedEvidence", "KernelView", "Validation", "AneAnalysis", "AneDiff", "AneFolder", "Report",
    "TraceResult", "coreml", "coreml_diff", "coreml_as_anemll", "coreml_plan", "coreml_profile", "CoreMLStatic",
    "CoreMLDiff", "program", "program_diff", "ProgramInfo", "ProgramDiff", "phases", "PhaseReport", "compare_phases", "PhaseComparison",
    "memory", "MemoryReport", "placement", "placement_diff", "placement_gate", "load_placement", "PlacementInfo", "PlacementDiff",
]
