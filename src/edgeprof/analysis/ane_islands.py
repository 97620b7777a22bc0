"""Graph interruptions from a list of op placements (pure): the maximal runs of non-focus ops per function.

The same algorithm and boundary cost as anemll-profile 0.4.1's graph-interruption analysis (reference:
``anemll_spec.md`` §2.8–2.10), so an estimate from the static rules and a measured report are comparable:

* ops are walked per function in index order; const ops and ops whose device is ``?`` are transparent;
* a run of non-focus ops with a focus op on both sides is an *interruption* (switch cost 2·B), a run at the
  start or end of a function is an *edge run* (B), a function with no focus op at all is one ``all`` run (0);
* an island's reason: a hard reason (the focus device cannot run the op) wins over a soft one
  ("supported but not preferred"); different hard reasons are marked ``(+mixed)``;
* islands are ordered interruptions first, then by total penalty, runtime (descending) and start index.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..ane_model import AneIsland

if TYPE_CHECKING:
    from typing import Any

SOFT_REASON = "ANE supported but not preferred"


@dataclass(frozen=True)
class Placement:
    function: str
    index: int
    name: str
    type: str
    device: str          # ANE · CPU · GPU · ? (not known) · Other
    cost: float = 0.0
    ane_supported: bool = False
    runtime_ms: float | None = None
    reason: str = ""     # why the op is not on the focus device ("" = not known)
    is_const: bool = False


def focus_device(placements: list[Placement], compute_units_all: bool = False) -> str:
    """ANE, or GPU when all compute units were allowed and GPU carries more of the plan than ANE."""
    ane = [p for p in placements if p.device == "ANE"]
    gpu = [p for p in placements if p.device == "GPU"]
    ane_cost, gpu_cost = sum(p.cost for p in ane), sum(p.cost for p in gpu)
    if compute_units_all and gpu and (not ane or gpu_cost > ane_cost or (gpu_cost == ane_cost and len(gpu) >= len(ane))):
        return "GPU"
    return "ANE"


def _device_label(devs: set[str], focus: str) -> str:
    if "CPU" in devs and "GPU" in devs:
        return "CPU+GPU"
    if "CPU" in devs:
        return "CPU"
    if "GPU" in devs:
        return "GPU"
    return "Other"


def islands(placements: list[Placement], *, boundary_ms: float, focus: str = "ANE") -> list[AneIsland]:
    """Every non-focus run, interruptions first (ids 1…), then edge runs (id 0)."""
    by_fn: dict[str, list[Placement]] = {}
    for p in placements:
        by_fn.setdefault(p.function, []).append(p)
    runs: list[dict] = []
    run: dict[str, Any] | None  # the non-focus run being walked
    for fn, ps in by_fn.items():
        ps = sorted(ps, key=lambda p: p.index)
        total_ops = ps[-1].index + 1 if ps else 0
        last_focus, run = -1, None
        for p in ps:
            if p.is_const or p.device == "?":
                continue
            if p.device == focus:
                if run is not None:
                    run["next"] = p.index
                    runs.append(run)
                    run = None
                last_focus = p.index
                continue
            if run is None:
                run = {"function": fn, "start": p.index, "end": p.index, "prev": last_focus, "next": -1, "ops": 0,
                       "cost": 0.0, "soft": 0, "hard": 0, "missing": 0, "runtime": 0.0, "devs": set(), "reason": "",
                       "first": p.type, "last": p.type, "total_ops": total_ops}
            run["end"] = p.index
            run["ops"] += 1
            run["cost"] += p.cost
            run["soft"] += p.ane_supported
            run["hard"] += not p.ane_supported
            run["devs"].add(p.device)
            run["last"] = p.type
            if p.runtime_ms is None:
                run["missing"] += 1
            else:
                run["runtime"] += p.runtime_ms
            reason = SOFT_REASON if p.ane_supported else (p.reason or "Not supported on ANE")
            if not p.ane_supported:
                if run["reason"] in ("", SOFT_REASON):
                    run["reason"] = reason
                elif run["reason"] != reason and "(+mixed)" not in run["reason"]:
                    run["reason"] += " (+mixed)"
            elif run["reason"] == "":
                run["reason"] = reason
        if run is not None:
            runs.append(run)
    out = []
    for r in runs:
        inter = r["prev"] >= 0 and r["next"] >= 0
        switch = (boundary_ms if r["prev"] >= 0 else 0.0) + (boundary_ms if r["next"] >= 0 else 0.0)
        label = _device_label(r["devs"], focus)
        if inter:
            path, edge = f"{focus}->{label}->{focus}", ""
        elif r["prev"] < 0 and r["next"] < 0:
            path, edge = label, "all"
        elif r["prev"] < 0:
            path, edge = f"{label}->{focus}", "lead"
        else:
            path, edge = f"{focus}->{label}", "trail"
        center = (((r["start"] + r["end"]) / 2.0) + 0.5) / r["total_ops"] * 100 if r["total_ops"] else 0.0
        out.append(AneIsland(0, r["function"], r["start"], r["end"], path, label, r["ops"], r["cost"], r["runtime"],
                             switch, switch + r["runtime"], r["soft"], r["hard"], r["missing"], r["reason"], r["first"],
                             r["last"], inter, edge, center))
    out.sort(key=lambda i: (not i.is_interruption, -i.total_penalty_ms, -i.runtime_ms, i.start_index))
    n = 0
    ranked = []
    for i in out:
        if i.is_interruption:
            n += 1
            i = dataclasses.replace(i, id=n)
        ranked.append(i)
    return ranked


def summary(isl: list[AneIsland], focus: str = "ANE") -> dict:
    """The ``graph_interruptions`` aggregates (interruptions only in the tax; edge runs in the non-focus totals)."""
    inter = [i for i in isl if i.is_interruption]
    return {
        "focus_device": focus, "non_focus_runs": len(isl), "graph_interruptions": len(inter),
        "edge_runs_ignored": len(isl) - len(inter), "interrupted_ops": sum(i.op_count for i in inter),
        "total_non_focus_ops": sum(i.op_count for i in isl), "interrupted_cost": sum(i.total_cost for i in inter),
        "total_non_focus_cost": sum(i.total_cost for i in isl),
        "estimated_switch_tax_ms": sum(i.switch_penalty_ms for i in inter),
        "estimated_island_time_ms": sum(i.runtime_ms for i in inter),
        "estimated_total_tax_ms": sum(i.total_penalty_ms for i in inter),
        "interrupted_soft_ops": sum(i.soft_ops for i in inter), "interrupted_hard_ops": sum(i.hard_ops for i in inter),
        "interrupted_missing_runtime_ops": sum(i.missing_runtime_ops for i in inter),
    }
