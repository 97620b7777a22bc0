"""The document types of the Apple Neural Engine and Core ML reports, ExecuTorch programs, the history store,
LLM phases and the agent skills (the rest, and the registry of every kind: :mod:`edgeprof.documents`)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from .documents_base import ABSENT, Document


class _AneFindingsDoc(Document):
    """What the analyses of a profile and of a cost plan share."""
    findings: list[dict[str, Any]]
    headline: str
    model: str
    source: str
    summary: dict[str, Any]


class AneAnalysisDoc(_AneFindingsDoc):
    kind: ClassVar[str] = "ane_analysis"
    boundary_ms: float
    costplan: str | None
    version: str
    warnings: list[Any]


class AnePlanDoc(_AneFindingsDoc):
    kind: ClassVar[str] = "ane_plan"
    costplan: str
    warnings: list[str]


class _AneDiffCommonDoc(Document):
    """What the diffs of two profiles and of two cost plans share."""
    kind: ClassVar[str] = "ane_diff"
    after: str
    before: str
    op_types: list[dict[str, Any]]
    statements: list[str]


class AneDiffDoc(_AneDiffCommonDoc):
    fallback_ops: dict[str, Any]
    interruptions: dict[str, Any]
    latency: dict[str, Any]
    op_counts: dict[str, Any]
    reports: Literal["profile"]
    sequential_estimate_ms: dict[str, Any]


class AnePlanDiffDoc(_AneDiffCommonDoc):
    """``ane diff`` of two cost plans (``reports``: costplan); :class:`AneDiffDoc` is the diff of two profiles."""
    no_device: dict[str, Any]
    op_count: dict[str, Any]
    ops: list[dict[str, Any]]
    reports: Literal["costplan"]
    total_cost: dict[str, Any]
    total_cost_note: str
    with_device: dict[str, Any]


class AneFolderDoc(Document):
    kind: ClassVar[str] = "ane_folder"
    errors: list[Any]
    note: str
    reports: list[dict[str, Any]]
    skipped: list[Any]
    summary: list[dict[str, Any]]


class IngestDoc(Document):
    kind: ClassVar[str] = "ingest"
    added: list[dict[str, Any]]
    counts: dict[str, Any]
    engine: str
    errors: list[Any]
    relabeled: list[Any]
    seconds: float
    skipped: list[Any]
    store: str
    store_kind: str
    warnings: list[Any]


class HistoryDoc(Document):
    kind: ClassVar[str] = "history"
    eager: bool
    fallbacks: list[str]  # placement changes at or after --since where an operator left its accelerator
    method: str
    metric: str
    regressions: list[Any]
    series: list[dict[str, Any]]
    since: str | None
    store: str
    threshold: float


class ExportDoc(Document):
    kind: ClassVar[str] = "export"
    counts: dict[str, Any]
    launches_already_there: int
    launches_copied: int
    store: str
    target: str
    target_kind: str


class CoremlStaticDoc(Document):
    kind: ClassVar[str] = "coreml_static"
    errors: list[Any]
    models: list[dict[str, Any]]
    path: str


class CoremlDiffDoc(Document):
    kind: ClassVar[str] = "coreml_diff"
    after: str
    before: str
    evidence: str
    hazards: dict[str, Any]
    islands: dict[str, Any]
    label: str
    op_types: list[Any]
    statements: list[str]
    totals: dict[str, Any]


class ProgramDoc(Document):
    kind: ClassVar[str] = "program"
    constants: dict[str, Any]
    etrecord: str = ABSENT  # with an ETRecord: the file whose op types were attached
    etrecord_found: str = ABSENT  # how it was found when not given (beside the .pte), or why one found was not used
    delegates: list[dict[str, Any]]
    file: str
    file_size: int
    header: dict[str, Any]
    instructions: list[dict[str, Any]]
    memory_plan: list[dict[str, Any]]
    methods: list[str]
    sizes: list[dict[str, Any]]
    sizes_add_up: bool
    version: int
    work: list[dict[str, Any]]


class ProgramDiffDoc(Document):
    kind: ClassVar[str] = "program_diff"
    after: str
    before: str
    instructions: list[dict[str, Any]]
    planned_bytes: dict[str, Any]
    sizes: list[dict[str, Any]]
    statements: list[str]
    xnnpack_nodes: list[dict[str, Any]]


class MemoryDoc(Document):
    kind: ClassVar[str] = "memory"
    configurations: list[dict[str, Any]]
    coreml_models: list[dict[str, Any]]  # per model: weight bytes stored and dense
    etdumps: list[dict[str, Any]]
    litert_reports: list[dict[str, Any]]  # what LiteRT's benchmark_model reported of its memory
    inputs: list[str]
    ort_profiles: list[dict[str, Any]]
    programs: list[dict[str, Any]]
    statements: list[str]
    warnings: list[str]


class PlacementDoc(Document):
    kind: ClassVar[str] = "placement"
    evidence: str
    fallback_means: str
    fingerprint: str
    focus: str | None
    host: str
    input: str
    operators: list[dict[str, Any]]
    partitions: list[dict[str, Any]]
    placements: list[dict[str, Any]]
    run_ms: float | None
    runs: int | None
    runtime: str
    runtime_title: str
    statement: str
    summary: dict[str, Any]
    warnings: list[str]


class PlacementDiffDoc(Document):
    kind: ClassVar[str] = "placement_diff"
    baseline: str
    baseline_evidence: str
    baseline_fingerprint: str
    baseline_runtime: str
    candidate: str
    candidate_evidence: str
    candidate_fingerprint: str
    fallback_means: str
    fallbacks: int
    moved: list[dict[str, Any]]
    moved_cost_known: bool
    moved_cost_ms: float | None
    only_baseline: list[dict[str, Any]]
    only_candidate: list[dict[str, Any]]
    opaque_baseline_partitions: list[str]
    partitions: dict[str, Any]
    promotions: int
    run_ms: dict[str, Any]
    runtime: str
    statements: list[str]
    suspected_fallbacks: list[str]
    verdict: str
    warnings: list[str]


class SkillsDoc(Document):
    kind: ClassVar[str] = "skills"
    skills: list[dict[str, Any]]


class PhasesDoc(Document):
    kind: ClassVar[str] = "phases"
    input: str
    labels_source: str
    phases: list[dict[str, Any]]
    pooled: bool
    runs: int
    time_to_first_token: dict[str, Any] = ABSENT  # when a phase is labelled prefill


class PhaseComparisonDoc(Document):
    kind: ClassVar[str] = "phase_comparison"
    baseline: str
    candidate: str
    convention: str
    only_in: dict[str, Any]
    phases: list[dict[str, Any]]
    statements: list[str]


class NumericsDoc(Document):
    kind: ClassVar[str] = "numerics"
    baseline: dict[str, Any]
    candidate: dict[str, Any]
    points: list[dict[str, Any]]
    outputs: list[dict[str, Any]]
    accuracy_lost: dict[str, Any] | None
    threshold_db: float
    noise_floor_db: float
    matched_by: list[str]
    base_points: int
    candidate_points: int
    statements: list[str]
