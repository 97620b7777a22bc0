"""Typed results of the public API.

Each command returns a dataclass over its JSON document: typed attributes for what a program reads
(``cmp.speedup.ci.low``, ``cmp.verdict``, ``bd.categories`` as a Polars frame), ``to_dict()`` for the JSON
the CLI prints (with ``schema_version`` and ``kind`` from :mod:`edgeprof.conventions`), and mapping access
(``cmp["verdict"]``) for code written against the dictionaries. Tables are Polars frames; ``.to_pandas()``
on them needs pandas and pyarrow (or use :func:`edgeprof.model.to_pandas`, which needs neither).

The base (``Result``, ``Interval``) is in :mod:`edgeprof.api.result_base`, the history commands' results in
:mod:`edgeprof.api.results_history`; :mod:`edgeprof.api` exports them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from .result_base import Interval, Result, _frame


# --------------------------------------------------------------------------------------------------
# latency and comparison
# --------------------------------------------------------------------------------------------------

@dataclass
class LatencyReport(Result):
    """One launch's robust latency statistics (``edgeprof latency``); ``series`` is the launch it describes."""

    kind: ClassVar[str] = "latency"
    series: Any = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.data["name"]

    @property
    def count(self) -> int:
        return self.data["count"]

    @property
    def median_ms(self) -> float | None:
        return self.data.get("median_ms")

    @property
    def ci(self) -> Interval:
        c = (self.data.get("ci") or {}).get("median") or {}
        return Interval(c.get("low_ms"), c.get("high_ms"), c.get("level"))

    @property
    def warmup_runs(self) -> int:
        return (self.data.get("warmup") or {}).get("count", 0)

    @property
    def latencies_ms(self):
        import numpy as np

        return np.asarray(self.data["latencies_ms"], dtype=float)


@dataclass
class Speedup:
    estimate: float | None
    ci: Interval
    median_based: float | None = None
    trimmed_mean_based: float | None = None


@dataclass
class Comparison(Result):
    """Baseline vs candidate (``edgeprof compare``): speedup = baseline / candidate, its interval, the verdict."""

    kind: ClassVar[str] = "comparison"

    @property
    def speedup(self) -> Speedup:
        s = self.data.get("speedup") or {}
        ci = self.data.get("ci") or {}
        return Speedup(s.get("estimate"), Interval(s.get("ci_low"), s.get("ci_high"), ci.get("level")),
                       s.get("median_based"), s.get("trimmed_mean_based"))

    @property
    def verdict(self) -> str:
        return self.data["verdict"]

    @property
    def significant(self) -> bool:
        return bool(self.data.get("significant"))

    @property
    def baseline(self) -> dict:
        return self.data["baseline"]

    @property
    def candidate(self) -> dict:
        return self.data["candidate"]

    @property
    def summary_line(self) -> str:
        return self.data["summary_line"]

    @property
    def categories(self):
        """Per category and overhead line: ms per run, speedup with its interval, shares, status (Polars)."""
        return _frame((self.data.get("by_category") or {}).get("categories", []))

    @property
    def bottleneck(self) -> dict:
        return (self.data.get("by_category") or {}).get("bottleneck") or {}


# --------------------------------------------------------------------------------------------------
# where the time goes
# --------------------------------------------------------------------------------------------------

@dataclass
class Breakdown(Result):
    """Category accounting, operators, backends, hotspots and graph breaks of one profile."""

    kind: ClassVar[str] = "breakdown"
    profile: Any = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.data["name"]

    @property
    def categories(self):
        return _frame(self.data["categories"])

    @property
    def operators(self):
        return _frame(self.data.get("operators_all") or self.data["operators"])

    @property
    def e2e_ms(self) -> dict:
        return self.data["e2e_ms"]

    def body(self) -> dict:
        doc = super().body()
        doc.pop("operators_all", None)
        return doc


@dataclass
class AnalyzeResult(Result):
    """``edgeprof analyze``: ``data`` is ``analysis_summary.json``; the files written and the inputs that failed."""

    kind: ClassVar[str] = "analysis_summary"
    summary_path: Path | None = None
    outputs: list[Path] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)

    @property
    def summary(self) -> dict:
        return self.to_dict()

    @property
    def ok(self) -> bool:
        return not self.errors


# --------------------------------------------------------------------------------------------------
# kernels and validation
# --------------------------------------------------------------------------------------------------

@dataclass
class KernelTable(Result):
    """The kernels one XNNPACK log (or kernels CSV) registers: evidence = registered."""

    kind: ClassVar[str] = "kernels"

    @property
    def kernels(self):
        return _frame(self.data["kernels"])

    @property
    def summary(self) -> dict:
        return self.data["summary"]


@dataclass
class ExecutedEvidence(Result):
    """Which SME/KleidiAI datatype paths an ETDump shows ran: evidence = executed."""

    kind: ClassVar[str] = "executed_kernels"

    @property
    def statement(self) -> str:
        return self.data["statement"]

    @property
    def sme_executed(self) -> bool:
        return bool(self.data.get("sme_executed"))


@dataclass
class KernelView(Result):
    kind: ClassVar[str] = "kernel_view"

    @property
    def status(self) -> str:
        return self.data["status"]

    @property
    def verdict(self) -> str:
        return self.data["verdict"]


@dataclass
class Validation(Result):
    kind: ClassVar[str] = "validation"

    @property
    def ok(self) -> bool:
        return bool(self.data["ok"])

    @property
    def checks(self) -> list[dict]:
        return self.data["checks"]

    @property
    def failures(self) -> list[dict]:
        return [c for c in self.data["checks"] if c["status"] == "fail"]


# --------------------------------------------------------------------------------------------------
# Apple Neural Engine
# --------------------------------------------------------------------------------------------------

@dataclass
class AneAnalysis(Result):
    """Findings of one anemll-profile report (``kind`` ane_analysis) or ane-costplan report (ane_plan)."""

    kind: ClassVar[str] = "ane_analysis"

    def body(self) -> dict:
        doc = super().body()
        if self.data.get("summary", {}).get("kind") == "costplan":
            doc["kind"] = "ane_plan"
        return doc

    @property
    def headline(self) -> str:
        return self.data["headline"]

    @property
    def findings(self) -> list[dict]:
        return self.data["findings"]


@dataclass
class AneDiff(Result):
    kind: ClassVar[str] = "ane_diff"

    @property
    def statements(self) -> list[str]:
        return self.data["statements"]


@dataclass
class AneFolder(Result):
    kind: ClassVar[str] = "ane_folder"

    @property
    def summary(self):
        return _frame(self.data["summary"])


@dataclass
class CoreMLStatic(Result):
    """Static analysis of one or more Core ML programs (``edgeprof coreml``): ``models`` has one entry per
    bundle; ``ops(i)`` and ``op_types(i)`` are the i-th model's tables as Polars frames."""

    kind: ClassVar[str] = "coreml_static"

    @property
    def models(self) -> list[dict]:
        return self.data["models"]

    def ops(self, i: int = 0):
        return _frame([{k: v for k, v in o.items() if k != "hazards"} for o in self.data["models"][i]["ops"]])

    def op_types(self, i: int = 0):
        return _frame(self.data["models"][i]["op_types"])


@dataclass
class CoreMLDiff(Result):
    """Two versions of a Core ML model compared statically (``edgeprof coreml diff``)."""

    kind: ClassVar[str] = "coreml_diff"

    @property
    def statements(self) -> list[str]:
        return self.data["statements"]


@dataclass
class PhaseReport(Result):
    """A profile per phase (``edgeprof phases``)."""

    kind: ClassVar[str] = "phases"

    @property
    def phases(self) -> list[dict]:
        return self.data["phases"]


@dataclass
class PhaseComparison(Result):
    kind: ClassVar[str] = "phase_comparison"

    @property
    def statements(self) -> list[str]:
        return self.data["statements"]


@dataclass
class ProgramInfo(Result):
    """What is inside a .pte (``edgeprof program``): sizes, memory plan, instructions, delegates."""

    kind: ClassVar[str] = "program"

    @property
    def sizes(self):
        return _frame(self.data["sizes"])

    @property
    def instructions(self):
        return _frame([{k: v for k, v in i.items() if k != "delegate"} for i in self.data["instructions"]])


@dataclass
class ProgramDiff(Result):
    kind: ClassVar[str] = "program_diff"

    @property
    def statements(self) -> list[str]:
        return self.data["statements"]


# --------------------------------------------------------------------------------------------------
# report and trace
# --------------------------------------------------------------------------------------------------

@dataclass
class Report(Result):
    """Everything about a run folder, one profile or a pair, for the Markdown and HTML renderings."""

    kind: ClassVar[str] = "report"

    @property
    def comparison(self) -> Comparison | None:
        c = self.data.get("comparison")
        return Comparison(c) if c else None

    @property
    def findings(self) -> list[dict]:
        return self.data["findings"]

    def markdown(self, generated: str | None = None) -> str:
        from ..render import report as rep

        return rep.markdown(self.data, generated=generated)

    def html(self, generated: str | None = None) -> str:
        from ..render import report as rep

        return rep.html(self.data, generated=generated)

    def body(self) -> dict:
        doc = super().body()
        if isinstance(doc.get("comparison"), Result):
            doc["comparison"] = doc["comparison"].body()
        return doc


@dataclass
class PlanResult(Result):
    """``edgeprof plan``: the design (launches per arm × runs per launch) that resolves a change of a given size."""

    kind: ClassVar[str] = "plan"

    @property
    def recommended(self) -> dict | None:
        return self.data["recommended"]

    @property
    def statement(self) -> str:
        return self.data["statement"]


@dataclass
class Collection(Result):
    """``edgeprof run``: the run folder written, launches done and failed, the ETDump overhead, the report."""

    kind: ClassVar[str] = "collection"

    @property
    def run_dir(self) -> Path:
        return Path(self.data["run_dir"])

    @property
    def ok(self) -> bool:
        return self.data.get("status") in ("complete", "dry run") and not self.data.get("failed")

    @property
    def failed(self) -> list[dict]:
        return list(self.data.get("failed", []))


@dataclass
class TraceResult(Result):
    kind: ClassVar[str] = "trace"


@dataclass
class ExampleResult(Result):
    kind: ClassVar[str] = "example"
