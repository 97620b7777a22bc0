"""The ane-costplan side of the ANE analysis: each op's share of the plan's ``total_cost``, the plan's own
findings, and the cross-check of plan cost against an anemll-profile's measured runtime shares.

``total_cost`` is dimensionless (the compiler's relative weights), so only shares are compared, never times.
Also the finding record every ANE finding uses (:func:`finding`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..mil_model import short_type  # noqa: F401 - re-exported for ane and ane_diff
from ..ane_model import AneCostPlan, AneProfile

if TYPE_CHECKING:
    from ..ane_model import AnePlacement

CROSS_MIN_SHARE = 5.0            # the larger share (pp) a disagreement needs to be reported
CROSS_RATIO = 2.0                # runtime share vs plan share differing by this factor = disagreement


def finding(title: str, section: str, severity: str, detail: list[str] | None = None, **evidence) -> dict:
    """A finding. ``source`` is the evidence label: anemll_json (the profile), costplan_json, or both."""
    source = "costplan_json" if section in ("operations", "no_device") else \
        "anemll_json+costplan_json" if section.startswith("cost plan") else "anemll_json"
    return {"id": "", "source": source, "section": section, "severity": severity, "title": title,
            "detail": detail or [], "evidence": evidence}


def plan_total(plan: AneCostPlan) -> float:
    """The plan's ``total_cost`` (what the tool summed over every non-const op); the listed ops' sum when the
    report gives none. Shares are of this, never renormalised over the ops a report happens to list."""
    listed = sum(o["cost"] for o in plan.operations)
    return plan.total_cost if plan.total_cost > 0 else listed


def plan_unlisted_share(plan: AneCostPlan) -> float:
    """The share (%) of ``total_cost`` that no listed op accounts for (a report cut short, or hand-trimmed)."""
    total = plan_total(plan)
    return max(0.0, 100 * (1 - sum(o["cost"] for o in plan.operations) / total)) if total > 0 else 0.0


def plan_shares(plan: AneCostPlan) -> list[dict]:
    """Each op's share (%) of the plan's ``total_cost`` (weights are dimensionless, so only shares compare)."""
    total = plan_total(plan)
    return [{**o, "share_pct": 100 * o["cost"] / total if total > 0 else 0.0} for o in plan.operations]


def plan_findings(plan: AneCostPlan) -> list[dict]:
    ops = sorted(plan_shares(plan), key=lambda o: -o["share_pct"])
    by_type: dict[str, list] = {}
    for o in ops:
        acc = by_type.setdefault(o["short_type"], [0, 0.0])
        acc[0] += 1
        acc[1] += o["share_pct"]
    types = sorted(({"type": t, "ops": n, "share_pct": s} for t, (n, s) in by_type.items()), key=lambda r: -r["share_pct"])
    top = ops[:10]
    detail = [f"[{o['index']}] {o['short_type']}: {o['share_pct']:.2f} %" for o in top]
    detail.append("by type: " + ", ".join(f"{t['type']} {t['share_pct']:.1f} % ({t['ops']})" for t in types[:6]))
    detail.append(f"shares are of total_cost {plan_total(plan):.4g} (dimensionless compiler weights)")
    if not plan.no_device:  # the guide's step 2 asks for it: said when it is 0 as well
        detail.append(f"no_device: 0 — every op has a device in the plan (with_device {plan.with_device})")
    unlisted = plan_unlisted_share(plan)
    if unlisted > 0.5:
        detail.append(f"the listed ops account for {100 - unlisted:.1f} % of total_cost; {unlisted:.1f} % is in ops the "
                      "report does not list")
    out = [finding(f"Plan: {top[0]['short_type']} [{top[0]['index']}] is the costliest op ({top[0]['share_pct']:.1f} % of the "
              "plan)" if top else "Plan lists no operations", "operations", "info", detail, top_ops=top, types=types)]
    if plan.no_device:
        out.append(finding(f"{plan.no_device} op(s) have no device in the plan", "no_device", "warning",
                      ["the compute plan gave these ops no device usage at all (ane-costplan does not say which; "
                       "with_device counts ops with any device, not ANE ops)"], no_device=plan.no_device,
                      with_device=plan.with_device))
    return out


def match_ops(p: AneProfile, plan: AneCostPlan) -> list[tuple[dict, AnePlacement | None, str]]:
    """(plan op, profile placement or None, method): by function + index + type, then index + type when that
    names one placement, then type + order (the k-th op of a type in each)."""
    pl: AnePlacement | None
    by_fit: dict[tuple, AnePlacement] = {(pl.function, pl.index, pl.type): pl for pl in p.placements}
    by_it: dict[tuple, list] = {}
    for pl in p.placements:
        by_it.setdefault((pl.index, pl.type), []).append(pl)
    used = set()
    out: list = []
    pending = []
    for o in sorted(plan.operations, key=lambda o: (o.get("function", ""), o["index"])):
        pl = by_fit.get((o.get("function"), o["index"], o["type"])) if "function" in o else None
        method = "function+index+type"
        if pl is None:
            cands = [c for c in by_it.get((o["index"], o["type"]), []) if id(c) not in used]
            pl = cands[0] if len(cands) == 1 else None
            method = "index+type"
        if pl is not None and id(pl) not in used:
            used.add(id(pl))
            out.append((o, pl, method))
        else:
            pending.append(o)
    queues: dict[str, list] = {}
    for pl in p.placements:
        if id(pl) not in used:
            queues.setdefault(pl.type, []).append(pl)
    for o in pending:
        q = queues.get(o["type"])
        out.append((o, q.pop(0), "type+order") if q else (o, None, "unmatched"))
    return out


def cross_check(p: AneProfile, plan: AneCostPlan) -> dict:
    """Plan cost share vs measured runtime share, by op type and by op, and ANE-capable ops placed elsewhere.

    Plan shares are shares of the plan's ``total_cost``. ane-costplan leaves out ``const*``/``constexpr_*`` ops,
    so runtime shares are taken over the profile's other op types (the ones a plan can hold). When the plan
    lists ops worth less than its ``total_cost``, the missing part could belong to any type: a plan share is
    then only a lower bound, and "low in the plan" is claimed only if it holds with the missing part added.
    """
    plan_by_type: dict[str, float] = {}
    for o in plan.operations:
        plan_by_type[o["short_type"]] = plan_by_type.get(o["short_type"], 0.0) + o["cost"]
    total = plan_total(plan)
    unlisted = plan_unlisted_share(plan)
    rt_by_type = {t["short_type"]: t["total_ms"] for t in p.op_types}
    plannable = {t: v for t, v in rt_by_type.items() if not t.startswith("const")}
    rc = sum(plannable.values())
    common = sorted(set(plan_by_type) & set(plannable))
    types: list[dict[str, Any]] = []
    for t in common:
        ps = 100 * plan_by_type[t] / total if total > 0 else 0.0
        rs = 100 * plannable[t] / rc if rc > 0 else 0.0
        v = _verdict(ps, rs)
        if v == "plan_low_runtime_high" and _verdict(ps + unlisted, rs) != v:
            v = "agree"  # the unlisted part of the plan could be this type's
        types.append({"type": t, "plan_share_pct": ps, "runtime_share_pct": rs, "verdict": v,
                      "plan_share_is_lower_bound": unlisted > 0.5,
                      "bound": next((x["bound"] for x in p.op_types if x["short_type"] == t), "?")})
    types.sort(key=lambda r: -max(r["plan_share_pct"], r["runtime_share_pct"]))
    only_runtime = sorted(set(rt_by_type) - set(plan_by_type))
    # per op: runtimes are known for the profile's top operations; below that list they are at most its last
    matches = match_ops(p, plan)
    methods: dict[str, int] = {}
    for _, _, m in matches:
        methods[m] = methods.get(m, 0) + 1
    grand = p.op_type_totals.get("grand_runtime_ms") or p.summary.get("grand_runtime_ms") or 0
    rt_by_name = {o["name"]: o["runtime_ms"] for o in p.top_operations}
    unique = p.summary.get("unique_costmodel_ops", len(p.top_operations))
    cutoff = min(rt_by_name.values()) if rt_by_name and unique > len(rt_by_name) else (0.0 if rt_by_name else None)
    ops = []
    for o, pl, method in matches:
        if pl is None or grand <= 0 or total <= 0:
            continue
        ps = 100 * o["cost"] / total
        if pl.name in rt_by_name:
            rs, bound_only = 100 * rt_by_name[pl.name] / grand, False
        elif cutoff is not None:
            rs, bound_only = 100 * cutoff / grand, True  # an upper bound
        else:
            continue
        v = _verdict(ps, rs)
        if v == "plan_low_runtime_high" and bound_only:
            v = "agree"  # an upper bound cannot show that runtime is high
        if v != "agree":
            ops.append({"index": o["index"], "function": pl.function, "name": pl.name, "type": o["short_type"],
                        "plan_share_pct": ps, "runtime_share_pct": rs, "runtime_is_upper_bound": bound_only,
                        "verdict": v, "matched_by": method})
    placed = []
    for o, pl, method in matches:
        if pl is None:
            continue
        plan_dev = o.get("device")
        if plan_dev and plan_dev.upper().startswith(("ANE", "NEURAL")) and pl.device in ("CPU", "GPU"):
            placed.append({"index": o["index"], "name": pl.name, "type": o["short_type"], "profile_device": pl.device,
                           "plan_device": plan_dev, "matched_by": method, "basis": "plan device"})
        elif not plan_dev and pl.ane_supported and pl.device in ("CPU", "GPU") and o["cost"] > 0:
            placed.append({"index": o["index"], "name": pl.name, "type": o["short_type"], "profile_device": pl.device,
                           "plan_device": None, "matched_by": method, "basis": "ANE supported"})
    statements = []
    for r in types + ops:
        if r["verdict"] == "plan_high_runtime_low":
            statements.append(f"{r['type']}{_at(r)}: {r['plan_share_pct']:.1f} % of the plan's cost but "
                              f"{'≤ ' if r.get('runtime_is_upper_bound') else ''}{r['runtime_share_pct']:.1f} % of the "
                              "runtime: the ANE pipelines it (the static cost overstates it)")
        elif r["verdict"] == "plan_low_runtime_high":
            statements.append(f"{r['type']}{_at(r)}: {r['runtime_share_pct']:.1f} % of the runtime but only "
                              f"{r['plan_share_pct']:.1f} % of the plan's cost: memory/bandwidth stalls the static "
                              "model misses" + (" (memory-bound)" if r.get("bound") == "Mem" else ""))
    for x in placed:
        statements.append(f"{x['type']} [{x['index']}] {x['name']}: "
                          + ("preferred on the ANE in the plan" if x["plan_device"] else "supported by the ANE")
                          + f" but placed on the {x['profile_device']} in the profile (shape/tile constraints, or too "
                            "small to be worth a switch)")
    return {"types": types, "types_only_in_profile": only_runtime, "ops": ops, "placement": placed,
            "match_methods": methods, "statements": statements, "plan_total_cost": total,
            "plan_unlisted_share_pct": unlisted,
            "note": "plan shares are shares of total_cost; runtime shares are over the profile's non-const op types "
                    "(ane-costplan omits const/constexpr ops); per-op runtimes exist for the profile's top operations, "
                    "below them only an upper bound"}


def _at(r: dict) -> str:
    return f" [{r['index']}] {r['name']}" if "index" in r else ""


def _verdict(plan_share: float, runtime_share: float) -> str:
    if max(plan_share, runtime_share) < CROSS_MIN_SHARE:
        return "agree"
    if plan_share >= CROSS_MIN_SHARE and runtime_share * CROSS_RATIO <= plan_share:
        return "plan_high_runtime_low"
    if runtime_share >= CROSS_MIN_SHARE and plan_share * CROSS_RATIO <= runtime_share:
        return "plan_low_runtime_high"
    return "agree"
