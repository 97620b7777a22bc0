"""The JSON documents edgeprof prints (``--json``), writes (``*_robust_stats.json``, ``analysis_summary.json``, …)
and returns to agents (the MCP tools' ``result``), declared as types: one frozen record type per document kind of
:data:`edgeprof.conventions.KINDS` (base: :class:`edgeprof.documents_base.Document`), its fields the document's
top-level fields with their types (nested parts typed where declared here, otherwise objects and arrays). The
API's results (:mod:`edgeprof.api.results`) hold one each; a document is made from what an analysis built by
``from_json`` (an undeclared or missing field is an error there and then) and written by its one ``to_json``.

``edgeprof schema [KIND]`` turns the types into JSON Schema (:mod:`edgeprof.render.json_schema`); with
``EDGEPROF_CHECK_JSON=1`` every document is checked against its schema before it is printed or written (the
tests run with it). Conventions of the mapping: a ``float`` is a JSON number, or null where the value is not
finite (:mod:`edgeprof.render.jsonfmt` writes NaN and infinities as null); an ``int`` is an integer; a field
whose default is ``ABSENT`` is optional (absent from some documents of the kind).

A field added, renamed or retyped in a document is changed here in the same commit (the tests fail otherwise);
a change to an existing field bumps ``SCHEMA_VERSION``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from .documents_base import ABSENT, Document

from .conventions import VERDICTS
from .documents_models import (
    AneAnalysisDoc,
    AneDiffDoc,
    AneFolderDoc,
    AnePlanDiffDoc,
    AnePlanDoc,
    CoremlDiffDoc,
    CoremlStaticDoc,
    ExportDoc,
    HistoryDoc,
    IngestDoc,
    NumericsDoc,
    PhaseComparisonDoc,
    PhasesDoc,
    MemoryDoc,
    PlacementDiffDoc,
    PlacementDoc,
    ProgramDiffDoc,
    ProgramDoc,
    SkillsDoc,
)

Verdict = Literal[VERDICTS]  # type: ignore[valid-type]


class ExecutedKernelsDoc(Document):
    kind: ClassVar[str] = "executed_kernels"
    evidence: str
    source: str
    runs: int
    sme_executed: bool
    kleidiai_executed: bool
    sme_ms_per_run: float
    qp8_ms_per_run: float
    gemm_conv_ms_per_run: float
    kleidiai_share_of_gemm_conv: float
    operators: list[dict[str, Any]]
    other_gemm_conv_operators: list[dict[str, Any]]
    statement: str
    input: str


class AnalysisSummaryDoc(Document):
    kind: ClassVar[str] = "analysis_summary"
    analysed_count: int
    csv_files: list[str]
    errors: list[Any]
    etdump_count: int
    etrecord: str | None
    format: str
    per_etdump: list[dict[str, Any]]
    run_dir: str
    taxonomy_version: str
    tool: str
    warnings: list[Any]


class _LatencyDocOptional(Document):
    written: str = ABSENT
    runtime: str = ABSENT  # the runtime that recorded the runs (edgeprof.runtimes): the words they are shown in


class LatencyDoc(_LatencyDocOptional):
    kind: ClassVar[str] = "latency"
    ci: dict[str, Any]
    count: int
    cv_percent: float
    drift: dict[str, Any]
    input: str
    iqr_ms: float
    latencies_ms: list[float]
    mad_ms: float
    max_ms: float
    mean_ms: float
    median_ms: float
    min_ms: float
    multimodality: dict[str, Any]
    name: str
    outliers: dict[str, Any]
    percentiles: dict[str, Any]
    robust_stats: dict[str, Any]
    run_indices: list[int]
    sigma_mad_ms: float
    source: str
    std_dev_ms: float
    steady: dict[str, Any]
    trimmed_mean_10_ms: float
    trimmed_mean_5_ms: float
    warmup: dict[str, Any]
    warnings: list[Any]


class _ComparisonDocOptional(Document):
    # absent when an arm has fewer than 2 runs (verdict inconclusive, no interval); roles and by_category as the
    # command gives them; verdict_if_comparable when the arms are not comparable
    advice: str | None = ABSENT
    by_category: dict[str, Any] = ABSENT
    estimator: str = ABSENT
    hodges_lehmann: dict[str, Any] = ABSENT
    launch_allowance: dict[str, Any] = ABSENT
    launch_noise: dict[str, Any] = ABSENT
    launch_sd_estimate: float | None = ABSENT
    metrics: dict[str, Any] = ABSENT
    minimum_detectable_effect: float = ABSENT
    p_value: float = ABSENT
    placement: dict[str, Any] = ABSENT  # with profiles: where each operator ran in each arm, diffed (placement --diff)
    memory: dict[str, Any] = ABSENT  # with launches edgeprof run recorded: their memory per phase, compared
    p_value_scope: str = ABSENT
    plan: dict[str, Any] | None = ABSENT
    regime: str = ABSENT
    roles: str = ABSENT
    slow_runs: dict[str, Any] = ABSENT
    tail_regression: str | None = ABSENT
    tests: dict[str, Any] = ABSENT
    verdict_if_comparable: Verdict = ABSENT
    written: str = ABSENT


class ComparisonDoc(_ComparisonDocOptional):
    kind: ClassVar[str] = "comparison"
    baseline: dict[str, Any]
    candidate: dict[str, Any]
    ci: dict[str, Any] | None
    comparability: dict[str, Any]
    config1: dict[str, Any]
    config2: dict[str, Any]
    convention: str
    inputs: dict[str, Any]
    level: float
    metric: str
    output_stem: str
    resamples: int
    seed: int
    significant: bool
    speedup: dict[str, Any]
    summary_line: str
    threshold: float
    variability: dict[str, Any]
    verdict: Verdict
    warnings: list[str]


class _BreakdownDocOptional(Document):
    program: dict[str, Any] = ABSENT  # with --program: the work per instruction
    runtime: str = ABSENT  # the runtime that recorded the profile (edgeprof.runtimes): the words it is shown in
    written: list[str] = ABSENT


class BreakdownDoc(_BreakdownDocOptional):
    kind: ClassVar[str] = "breakdown"
    accounting_check_max_abs_ns: float
    backends: dict[str, Any]
    categories: list[dict[str, Any]]
    e2e_ms: dict[str, Any]
    etrecord_status: str
    experiment: str | None
    graph_breaks: dict[str, Any]
    input: str
    name: str
    notes: list[str]
    operators: list[dict[str, Any]]
    other_top: list[Any]
    portable_hotspots: list[dict[str, Any]]
    runs: int
    taxonomy_version: str
    warnings: list[Any]


class _KernelsDocOptional(Document):
    executed: list[dict[str, Any]] = ABSENT  # from a log (not from a kernels CSV)
    log: dict[str, Any] = ABSENT
    written: str = ABSENT


class KernelsDoc(_KernelsDocOptional):
    kind: ClassVar[str] = "kernels"
    input: str
    kernels: list[dict[str, Any]]
    model_id: str
    summary: dict[str, Any]
    warnings: list[Any]



class KernelViewDoc(Document):
    kind: ClassVar[str] = "kernel_view"
    written: str = ABSENT  # with --out: the Markdown written
    baseline_name: str
    by_family: list[dict[str, Any]]
    by_kind: list[dict[str, Any]]
    candidate_name: str
    evidence: str
    filter_op: str | None
    inputs: dict[str, Any]
    kernels: list[dict[str, Any]]
    note: str
    only_in_baseline: list[str]
    only_in_candidate: list[str]
    status: str
    verdict: str
    warnings: list[Any]


class ValidationDoc(Document):
    kind: ClassVar[str] = "validation"
    checks: list[dict[str, Any]]
    counts: dict[str, Any]
    ok: bool
    run_dir: str
    trace_logs: list[Any]


class _ReportDocOptional(Document):
    written: list[str] = ABSENT
    numerics: dict[str, Any] = ABSENT  # when both arms were recorded with a debug buffer


class ReportDoc(_ReportDocOptional):
    kind: ClassVar[str] = "report"
    comparison: dict[str, Any] | None
    configs: list[dict[str, Any]]
    evidence_names: dict[str, Any]
    findings: list[dict[str, Any]]
    kernels: dict[str, Any] | None
    latency_evidence: str
    metadata: dict[str, Any]
    missing: list[str]
    phase_comparison: dict[str, Any] | None
    sme2_pair: bool
    taxonomy_version: str
    title: str
    tool: str
    validation: dict[str, Any] | None
    version: str


class TraceDoc(Document):
    kind: ClassVar[str] = "trace"
    adjusted: int
    input: str
    runs: list[int]
    skipped_no_duration: int
    slices: int
    tracks: int
    written: str


class ExampleDoc(Document):
    kind: ClassVar[str] = "example"
    dest: str
    files: list[str]


class _CollectionDocOptional(Document):
    commands: list[str] = ABSENT  # a dry run: the commands it would run
    launches_ok: int = ABSENT  # a collection that ran (status complete)
    failed: list[dict[str, Any]] = ABSENT
    overhead: dict[str, Any] | None = ABSENT
    manifest: str = ABSENT
    metrics: str = ABSENT
    report: dict[str, Any] | None = ABSENT
    noise_profile: str | None = ABSENT


class CollectionDoc(_CollectionDocOptional):
    kind: ClassVar[str] = "collection"
    launches_planned: int
    run_dir: str
    status: str
    warnings: list[str]


class PlanDoc(Document):
    kind: ClassVar[str] = "plan"
    configurations: list[dict[str, Any]]
    effect: float
    inputs: list[str]
    lag1_autocorrelation: float
    launch_noise: dict[str, Any]
    launch_sd: float
    launch_sd_source: str
    level: float
    method: str
    options: list[dict[str, Any]]
    power: float
    recommended: dict[str, Any] | None
    statement: str
    threshold: float
    within_sd: float
    within_sd_effective: float
    written: str | None


# collections: one command over several inputs
class _LatencyReportsDocOptional(Document):
    comparison: ComparisonDoc = ABSENT  # latency --compare: the two inputs compared


class LatencyReportsDoc(_LatencyReportsDocOptional):
    kind: ClassVar[str] = "latency"
    reports: list[LatencyDoc]


class BreakdownsDoc(Document):
    kind: ClassVar[str] = "breakdown"
    breakdowns: list[BreakdownDoc]


class KernelLogsDoc(Document):
    kind: ClassVar[str] = "kernels"
    logs: list[KernelsDoc]
    executed: list[ExecutedKernelsDoc]


# kind → the shapes a document of that kind takes (a single result first, then the collection)
DOCUMENTS: dict[str, tuple[type, ...]] = {
    "analysis_summary": (AnalysisSummaryDoc,), "latency": (LatencyDoc, LatencyReportsDoc),
    "comparison": (ComparisonDoc,), "breakdown": (BreakdownDoc, BreakdownsDoc), "kernels": (KernelsDoc, KernelLogsDoc),
    "executed_kernels": (ExecutedKernelsDoc,), "kernel_view": (KernelViewDoc,), "validation": (ValidationDoc,),
    "ane_analysis": (AneAnalysisDoc,), "ane_plan": (AnePlanDoc,), "ane_diff": (AneDiffDoc, AnePlanDiffDoc),
    "ane_folder": (AneFolderDoc,), "report": (ReportDoc,), "trace": (TraceDoc,), "example": (ExampleDoc,),
    "collection": (CollectionDoc,), "plan": (PlanDoc,), "ingest": (IngestDoc,), "history": (HistoryDoc,), "export": (ExportDoc,),
    "coreml_static": (CoremlStaticDoc,), "coreml_diff": (CoremlDiffDoc,), "program": (ProgramDoc,),
    "program_diff": (ProgramDiffDoc,), "skills": (SkillsDoc,), "phases": (PhasesDoc,),
    "phase_comparison": (PhaseComparisonDoc,), "numerics": (NumericsDoc,),
    "placement": (PlacementDoc,), "placement_diff": (PlacementDiffDoc,), "memory": (MemoryDoc,),
}
