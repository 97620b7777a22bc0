"""The document types of the Apple Neural Engine and Core ML reports, ExecuTorch programs, the history store,
LLM phases and the agent skills (the rest, and the registry of every kind: :mod:`edgeprof.documents`)."""

from __future__ import annotations

from typing import Any, Literal, TypedDict


class AneAnalysisDoc(TypedDict):
    kind: Literal["ane_analysis"]
    boundary_ms: float
    costplan: str | None
    findings: list[dict[str, Any]]
    headline: str
    model: str
    source: str
    summary: dict[str, Any]
    version: str
    warnings: list[Any]


class AnePlanDoc(TypedDict):
    kind: Literal["ane_plan"]
    costplan: str
    findings: list[dict[str, Any]]
    headline: str
    model: str
    source: str
    summary: dict[str, Any]
    warnings: list[str]


class AneDiffDoc(TypedDict):
    kind: Literal["ane_diff"]
    after: str
    before: str
    fallback_ops: dict[str, Any]
    interruptions: dict[str, Any]
    latency: dict[str, Any]
    op_counts: dict[str, Any]
    op_types: list[dict[str, Any]]
    reports: Literal["profile"]
    sequential_estimate_ms: dict[str, Any]
    statements: list[str]


class AnePlanDiffDoc(TypedDict):
    """``ane diff`` of two cost plans (``reports``: costplan); :class:`AneDiffDoc` is the diff of two profiles."""
    kind: Literal["ane_diff"]
    after: str
    before: str
    no_device: dict[str, Any]
    op_count: dict[str, Any]
    op_types: list[dict[str, Any]]
    ops: list[dict[str, Any]]
    reports: Literal["costplan"]
    statements: list[str]
    total_cost: dict[str, Any]
    total_cost_note: str
    with_device: dict[str, Any]


class AneFolderDoc(TypedDict):
    kind: Literal["ane_folder"]
    errors: list[Any]
    note: str
    reports: list[dict[str, Any]]
    skipped: list[Any]
    summary: list[dict[str, Any]]


class IngestDoc(TypedDict):
    kind: Literal["ingest"]
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


class HistoryDoc(TypedDict):
    kind: Literal["history"]
    eager: bool
    method: str
    metric: str
    regressions: list[Any]
    series: list[dict[str, Any]]
    since: str | None
    store: str
    threshold: float


class ExportDoc(TypedDict):
    kind: Literal["export"]
    counts: dict[str, Any]
    launches_already_there: int
    launches_copied: int
    store: str
    target: str
    target_kind: str


class CoremlStaticDoc(TypedDict):
    kind: Literal["coreml_static"]
    errors: list[Any]
    models: list[dict[str, Any]]
    path: str


class CoremlDiffDoc(TypedDict):
    kind: Literal["coreml_diff"]
    after: str
    before: str
    evidence: str
    hazards: dict[str, Any]
    islands: dict[str, Any]
    label: str
    op_types: list[Any]
    statements: list[str]
    totals: dict[str, Any]


class ProgramDoc(TypedDict):
    kind: Literal["program"]
    constants: dict[str, Any]
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


class ProgramDiffDoc(TypedDict):
    kind: Literal["program_diff"]
    after: str
    before: str
    instructions: list[dict[str, Any]]
    planned_bytes: dict[str, Any]
    sizes: list[dict[str, Any]]
    statements: list[str]
    xnnpack_nodes: list[dict[str, Any]]


class SkillsDoc(TypedDict):
    kind: Literal["skills"]
    skills: list[dict[str, Any]]


class PhasesDoc(TypedDict):
    kind: Literal["phases"]
    input: str
    labels_source: str
    phases: list[dict[str, Any]]
    pooled: bool
    runs: int
    time_to_first_token: dict[str, Any]


class PhaseComparisonDoc(TypedDict):
    kind: Literal["phase_comparison"]
    baseline: str
    candidate: str
    convention: str
    only_in: dict[str, Any]
    phases: list[dict[str, Any]]
    statements: list[str]
