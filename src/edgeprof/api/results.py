"""Typed results of the public API.

Each command returns a frozen dataclass holding its typed JSON document (``doc``, of the type
:mod:`edgeprof.documents` declares for its kind) and what is not JSON (the Profile, the series): typed attributes
for what a program reads (``cmp.speedup.ci.low``, ``cmp.verdict``, ``bd.categories`` as a Polars frame),
``to_json()`` for the JSON the CLI prints (with ``schema_version`` and ``kind`` from :mod:`edgeprof.conventions`),
and read-only mapping access (``cmp["verdict"]``) for code written against the dictionaries. Tables are Polars frames;
``.to_pandas()`` on them needs pandas and pyarrow (or use :func:`edgeprof.model.to_pandas`, which needs neither).

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

@dataclass(frozen=True, init=False)
class LatencyReport(Result):
    """One launch's robust latency statistics (``edgeprof latency``); ``series`` is the launch it describes."""

    kind: ClassVar[str] = "latency"
    series: Any = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.doc["name"]

    @property
    def count(self) -> int:
        return self.doc["count"]

    @property
    def median_ms(self) -> float | None:
        return self.doc.get("median_ms")

    @property
    def ci(self) -> Interval:
        c = (self.doc.get("ci") or {}).get("median") or {}
        return Interval(c.get("low_ms"), c.get("high_ms"), c.get("level"))

    @property
    def warmup_runs(self) -> int:
        return (self.doc.get("warmup") or {}).get("count", 0)

    @property
    def latencies_ms(self):
        import numpy as np

        return np.asarray(self.doc["latencies_ms"], dtype=float)


@dataclass(frozen=True)
class Speedup:
    estimate: float | None
    ci: Interval
    median_based: float | None = None
    trimmed_mean_based: float | None = None


@dataclass(frozen=True, init=False)
class Comparison(Result):
    """Baseline vs candidate (``edgeprof compare``): speedup = baseline / candidate, its interval, the verdict."""

    kind: ClassVar[str] = "comparison"

    @property
    def speedup(self) -> Speedup:
        s = self.doc.get("speedup") or {}
        ci = self.doc.get("ci") or {}
        return Speedup(s.get("estimate"), Interval(s.get("ci_low"), s.get("ci_high"), ci.get("level")),
                       s.get("median_based"), s.get("trimmed_mean_based"))

    @property
    def verdict(self) -> str:
        return self.doc["verdict"]

    @property
    def significant(self) -> bool:
        return bool(self.doc.get("significant"))

    @property
    def baseline(self) -> dict:
        return self.doc["baseline"]

    @property
    def candidate(self) -> dict:
        return self.doc["candidate"]

    @property
    def summary_line(self) -> str:
        return self.doc["summary_line"]

    @property
    def categories(self):
        """Per category and overhead line: ms per run, speedup with its interval, shares, status (Polars)."""
        return _frame((self.doc.get("by_category") or {}).get("categories", []))

    @property
    def bottleneck(self) -> dict:
        return (self.doc.get("by_category") or {}).get("bottleneck") or {}


# --------------------------------------------------------------------------------------------------
# where the time goes
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True, init=False)
class Breakdown(Result):
    """Category accounting, operators, backends, hotspots and graph breaks of one profile."""

    kind: ClassVar[str] = "breakdown"
    profile: Any = field(default=None, repr=False)
    operators_all: list | None = field(default=None, repr=False)  # every operator (the document keeps the top)

    def _split(self, data: dict) -> tuple[dict, dict]:
        return data, {"operators_all": data.pop("operators_all", None)}

    @property
    def name(self) -> str:
        return self.doc["name"]

    @property
    def categories(self):
        return _frame(self.doc["categories"])

    @property
    def operators(self):
        return _frame(self.operators_all or self.doc["operators"])

    @property
    def e2e_ms(self) -> dict:
        return self.doc["e2e_ms"]


@dataclass(frozen=True, init=False)
class AnalyzeResult(Result):
    """``edgeprof analyze``: ``data`` is ``analysis_summary.json``; the files written and the inputs that failed."""

    kind: ClassVar[str] = "analysis_summary"
    summary_path: Path | None = None
    outputs: list[Path] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)

    @property
    def summary(self) -> dict:
        return self.to_json()

    @property
    def ok(self) -> bool:
        return not self.errors


# --------------------------------------------------------------------------------------------------
# kernels and validation
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True, init=False)
class KernelTable(Result):
    """The kernels one XNNPACK log (or kernels CSV) registers: evidence = registered."""

    kind: ClassVar[str] = "kernels"

    @property
    def kernels(self):
        return _frame(self.doc["kernels"])

    @property
    def summary(self) -> dict:
        return self.doc["summary"]


@dataclass(frozen=True, init=False)
class ExecutedEvidence(Result):
    """Which SME/KleidiAI datatype paths an ETDump shows ran: evidence = executed."""

    kind: ClassVar[str] = "executed_kernels"

    @property
    def statement(self) -> str:
        return self.doc["statement"]

    @property
    def sme_executed(self) -> bool:
        return bool(self.doc.get("sme_executed"))


@dataclass(frozen=True, init=False)
class KernelView(Result):
    kind: ClassVar[str] = "kernel_view"

    @property
    def status(self) -> str:
        return self.doc["status"]

    @property
    def verdict(self) -> str:
        return self.doc["verdict"]


@dataclass(frozen=True, init=False)
class Validation(Result):
    kind: ClassVar[str] = "validation"

    @property
    def ok(self) -> bool:
        return bool(self.doc["ok"])

    @property
    def checks(self) -> list[dict]:
        return self.doc["checks"]

    @property
    def failures(self) -> list[dict]:
        return [c for c in self.doc["checks"] if c["status"] == "fail"]


# --------------------------------------------------------------------------------------------------
# Apple Neural Engine
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True, init=False)
class AneAnalysis(Result):
    """Findings of one anemll-profile report (``kind`` ane_analysis) or ane-costplan report (ane_plan)."""

    kind: ClassVar[str] = "ane_analysis"

    def document_type(self, data: dict):
        from ..documents_models import AneAnalysisDoc, AnePlanDoc

        return AnePlanDoc if (data.get("summary") or {}).get("kind") == "costplan" else AneAnalysisDoc

    @property
    def headline(self) -> str:
        return self.doc["headline"]

    @property
    def findings(self) -> list[dict]:
        return self.doc["findings"]


@dataclass(frozen=True, init=False)
class AneDiff(Result):
    """Two anemll-profile reports (``reports``: profile) or two cost plans (costplan) compared."""

    kind: ClassVar[str] = "ane_diff"

    def document_type(self, data: dict):
        from ..documents_models import AneDiffDoc, AnePlanDiffDoc

        return AnePlanDiffDoc if data.get("reports") == "costplan" else AneDiffDoc

    @property
    def statements(self) -> list[str]:
        return self.doc["statements"]


@dataclass(frozen=True, init=False)
class AneFolder(Result):
    kind: ClassVar[str] = "ane_folder"

    @property
    def summary(self):
        return _frame(self.doc["summary"])


@dataclass(frozen=True, init=False)
class CoreMLStatic(Result):
    """Static analysis of one or more Core ML programs (``edgeprof coreml``): ``models`` has one entry per
    bundle; ``ops(i)`` and ``op_types(i)`` are the i-th model's tables as Polars frames."""

    kind: ClassVar[str] = "coreml_static"

    @property
    def models(self) -> list[dict]:
        return self.doc["models"]

    def ops(self, i: int = 0):
        return _frame([{k: v for k, v in o.items() if k != "hazards"} for o in self.doc["models"][i]["ops"]])

    def op_types(self, i: int = 0):
        return _frame(self.doc["models"][i]["op_types"])


@dataclass(frozen=True, init=False)
class CoreMLDiff(Result):
    """Two versions of a Core ML model compared statically (``edgeprof coreml diff``)."""

    kind: ClassVar[str] = "coreml_diff"

    @property
    def statements(self) -> list[str]:
        return self.doc["statements"]


@dataclass(frozen=True, init=False)
class PhaseReport(Result):
    """A profile per phase (``edgeprof phases``)."""

    kind: ClassVar[str] = "phases"

    @property
    def phases(self) -> list[dict]:
        return self.doc["phases"]


@dataclass(frozen=True, init=False)
class NumericsResult(Result):
    """Where two programs' results part ways (``edgeprof numerics``): matched points and their metrics."""

    kind: ClassVar[str] = "numerics"

    @property
    def statements(self) -> list[str]:
        return self.doc["statements"]

    @property
    def points(self) -> list[dict]:
        return self.doc["points"]

    @property
    def outputs(self) -> list[dict]:
        return self.doc["outputs"]


@dataclass(frozen=True, init=False)
class PhaseComparison(Result):
    kind: ClassVar[str] = "phase_comparison"

    @property
    def statements(self) -> list[str]:
        return self.doc["statements"]


@dataclass(frozen=True, init=False)
class ProgramInfo(Result):
    """What is inside a .pte (``edgeprof program``): sizes, memory plan, instructions, delegates."""

    kind: ClassVar[str] = "program"

    @property
    def sizes(self):
        return _frame(self.doc["sizes"])

    @property
    def instructions(self):
        return _frame([{k: v for k, v in i.items() if k != "delegate"} for i in self.doc["instructions"]])


@dataclass(frozen=True, init=False)
class ProgramDiff(Result):
    kind: ClassVar[str] = "program_diff"

    @property
    def statements(self) -> list[str]:
        return self.doc["statements"]


# --------------------------------------------------------------------------------------------------
# report and trace
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True, init=False)
class Report(Result):
    """Everything about a run folder, one profile or a pair, for the Markdown and HTML renderings."""

    kind: ClassVar[str] = "report"

    @property
    def comparison(self) -> Comparison | None:
        c = self.doc.get("comparison")
        return Comparison(c) if c else None

    @property
    def findings(self) -> list[dict]:
        return self.doc["findings"]

    def markdown(self, generated: str | None = None) -> str:
        from ..render import report as rep

        return rep.markdown(self.data, generated=generated)

    def html(self, generated: str | None = None) -> str:
        from ..render import report as rep

        return rep.html(self.data, generated=generated)



@dataclass(frozen=True, init=False)
class PlanResult(Result):
    """``edgeprof plan``: the design (launches per arm × runs per launch) that resolves a change of a given size."""

    kind: ClassVar[str] = "plan"

    @property
    def recommended(self) -> dict | None:
        return self.doc["recommended"]

    @property
    def statement(self) -> str:
        return self.doc["statement"]


@dataclass(frozen=True, init=False)
class Collection(Result):
    """``edgeprof run``: the run folder written, launches done and failed, the ETDump overhead, the report."""

    kind: ClassVar[str] = "collection"

    @property
    def run_dir(self) -> Path:
        return Path(self.doc["run_dir"])

    @property
    def ok(self) -> bool:
        return self.doc.get("status") in ("complete", "dry run") and not self.doc.get("failed")

    @property
    def failed(self) -> list[dict]:
        return list(self.doc.get("failed", []))


@dataclass(frozen=True, init=False)
class TraceResult(Result):
    kind: ClassVar[str] = "trace"


@dataclass(frozen=True, init=False)
class ExampleResult(Result):
    kind: ClassVar[str] = "example"
