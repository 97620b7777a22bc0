"""The normalized Apple Neural Engine reports: an anemll-profile recording (``AneProfile``: measured ops,
placements, islands) and an ane-costplan plan (``AneCostPlan``), as :mod:`edgeprof.io.anemll` reads them and
the ANE analyses use them. Nothing here knows the JSON layout."""

from __future__ import annotations

from dataclasses import dataclass, field


# --------------------------------------------------------------------------------------------------
# Apple Neural Engine reports (anemll-profile, ane-costplan)
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AnePlacement:
    """One op of the compute plan as the profile lists it (``ordered_placements``)."""

    function: str
    index: int
    name: str
    type: str
    short_type: str
    device: str          # ANE · CPU · GPU · ?
    cost: float          # plan weight (a share of the whole model's work, 0..1)
    ane_supported: bool


@dataclass(frozen=True)
class AneIsland:
    """A maximal run of non-focus ops (``graph_interruptions.interruptions`` / ``edge_runs``)."""

    id: int
    function: str
    start_index: int
    end_index: int
    path: str            # ANE->CPU->ANE · CPU->ANE · ANE->CPU · CPU
    device: str
    op_count: int
    total_cost: float
    runtime_ms: float    # cost-model runtime of the island's ops (missing ones count 0)
    switch_penalty_ms: float
    total_penalty_ms: float
    soft_ops: int        # ANE could run them; the planner preferred another device
    hard_ops: int        # ANE does not support them
    missing_runtime_ops: int
    reason: str
    first_type: str
    last_type: str
    is_interruption: bool
    edge_kind: str       # "" for interruptions; lead · trail · all
    center_percent: float = 0.0

    @property
    def switches(self) -> int:
        """Device switches the island causes: 2 inside a function, 1 at its start or end, 0 when it is all of it."""
        if self.is_interruption:
            return 2
        return {"lead": 1, "trail": 1}.get(self.edge_kind, 0)


@dataclass
class AneProfile:
    """An anemll-profile ``-j`` report (0.4.x). Sections the document lacks are empty and listed in
    ``missing``; op-level tables keep the tool's field names."""

    source: str
    version: str
    model: dict
    compute: dict                 # mode, interrupt_boundary_ms, compute_units_all (bool)
    status: dict                  # no_costmodel_entries, log_data_masked (bools)
    summary: dict
    measured: dict                # measured_prediction
    placements: list[AnePlacement]
    interruptions_summary: dict   # graph_interruptions without its lists
    interruptions: list[AneIsland]
    edge_runs: list[AneIsland]
    op_types: list[dict]          # op_type_breakdown rows
    op_type_totals: dict
    top_operations: list[dict]
    conv_detail: list[dict]
    high_cost_ops: list[dict]
    ane_op_types: dict[str, int]
    cpu_op_types: dict[str, int]
    unsupported_reasons: dict[str, list[str]]
    fallback_ops: list[dict]
    missing: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.model.get("display_name") or self.source.rsplit("/", 1)[-1]


@dataclass
class AneCostPlan:
    """An ane-costplan ``-j`` report: every non-const op with its plan weight. Weights are normalised
    (they sum to about 1), so only shares are comparable between plans."""

    source: str
    model: str
    operations: list[dict]        # {index, type, short_type, cost[, function, device]}
    total_cost: float
    total_ops: int
    with_device: int              # ops with any device usage (not an ANE count)
    no_device: int
    warnings: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.model.rsplit("/", 1)[-1] if self.model else self.source.rsplit("/", 1)[-1]
