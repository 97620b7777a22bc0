"""Before/after for Apple Neural Engine reports, and the per-submodel summary of a model folder.

Profiles: measured latency (speedup = before / after), interruptions, fallbacks, op-type shares, islands
fixed and introduced. Cost plans: ``total_cost`` before and after, as the ane-costplan workflow reads it (a
drop means the compiler agrees with the change) with its caveat — it is dimensionless, a sum of the
compiler's relative weights over the non-const ops, never a time — plus ``with_device``/``no_device`` and the
per-type and per-op **shares** of ``total_cost``.
"""

from __future__ import annotations

from typing import Any

from ..conventions import fmt_ms
from ..ane_model import AneCostPlan, AneIsland, AneProfile
from ..taxonomy import DEFAULT
from .ane_plan import plan_shares, plan_total, short_type

MOVE_PP = 0.5  # per-op share changes smaller than this (percentage points) are not listed
TOTAL_COST_NOTE = ("total_cost is dimensionless (the compiler's relative weights summed over the non-const ops, about 1 "
                   "for a whole model): compare it only before vs after, never as time; the per-type shares say where "
                   "the weight moved")


def _island_key(i: AneIsland) -> tuple:
    return (i.function, short_type(i.first_type), short_type(i.last_type), i.reason)


def _islands(p: AneProfile) -> dict[tuple, list[AneIsland]]:
    out: dict[tuple, list] = {}
    for i in p.interruptions:
        out.setdefault(_island_key(i), []).append(i)
    return out


def _share_rows(before: dict[str, tuple], after: dict[str, tuple], what: str) -> list[dict]:
    """before/after: type → (share %, count[, ms])."""
    rows: list[dict[str, Any]] = []
    for t in sorted(set(before) | set(after)):
        b, a = before.get(t), after.get(t)
        rows.append({"type": t, "category": DEFAULT.classify(t).category,
                     f"{what}_before_pct": b[0] if b else 0.0, f"{what}_after_pct": a[0] if a else 0.0,
                     "delta_pp": (a[0] if a else 0.0) - (b[0] if b else 0.0),
                     "count_before": b[1] if b else 0, "count_after": a[1] if a else 0,
                     "status": "added" if not b else "removed" if not a else "kept"})
    rows.sort(key=lambda r: -abs(r["delta_pp"]))
    return rows


def counts_line(pairs: list[tuple[str, object, object]]) -> str:
    """``ops 3 → 5; unchanged: with a device 105, with no device 0`` — what moved, then what did not, once."""
    moved = [f"{k} {b} → {a}" for k, b, a in pairs if b != a]
    same = [f"{k} {b}" for k, b, a in pairs if b == a]
    return "; ".join(moved + (["unchanged: " + ", ".join(same)] if same else []))


def diff_profiles(before: AneProfile, after: AneProfile) -> dict:
    mb, ma = before.measured, after.measured
    lat: dict[str, Any] = {"before_ms": mb.get("average_ms") if mb.get("status") == "ok" else None,
           "after_ms": ma.get("average_ms") if ma.get("status") == "ok" else None,
           "status_before": mb.get("status"), "status_after": ma.get("status")}
    lat["speedup"] = lat["before_ms"] / lat["after_ms"] if lat["before_ms"] and lat["after_ms"] else None
    lines = []
    if lat["speedup"]:
        change = 100 * (lat["after_ms"] / lat["before_ms"] - 1)
        lines.append(f"measured latency {lat['before_ms']:.4g} → {fmt_ms(lat['after_ms'])} ms ({change:+.1f} %, speedup "
                     f"{lat['speedup']:.3g}×; each is the tool's mean of 1–10 runs, with no spread: small changes are "
                     "within noise)")
    elif before.status.get("static_estimate") and after.status.get("static_estimate"):
        lines.append("no measured latency: both are static estimates (`edgeprof coreml --as-anemll`), nothing was run")
    else:
        lines.append(f"measured latency not comparable (status {lat['status_before']} → {lat['status_after']})")
    ib, ia = _islands(before), _islands(after)
    fixed = [{"function": k[0], "first_type": k[1], "last_type": k[2], "reason": k[3], "count": len(v) - len(ia.get(k, []))}
             for k, v in ib.items() if len(v) > len(ia.get(k, []))]
    introduced = [{"function": k[0], "first_type": k[1], "last_type": k[2], "reason": k[3],
                   "count": len(v) - len(ib.get(k, []))} for k, v in ia.items() if len(v) > len(ib.get(k, []))]
    nb = before.interruptions_summary.get("graph_interruptions", len(before.interruptions))
    na = after.interruptions_summary.get("graph_interruptions", len(after.interruptions))
    if fixed or introduced or nb != na:
        lines.append(f"graph interruptions {nb} → {na}: {sum(f['count'] for f in fixed)} island(s) fixed, "
                     f"{sum(f['count'] for f in introduced)} introduced")
    lines.append(counts_line([("ops not on the ANE", len(before.fallback_ops), len(after.fallback_ops))]
                             + ([("graph interruptions", nb, na)] if not (fixed or introduced or nb != na) else [])))
    types = _share_rows({t["short_type"]: (t["share_pct"], t["count"]) for t in before.op_types},
                        {t["short_type"]: (t["share_pct"], t["count"]) for t in after.op_types}, "runtime_share")
    moved = [r for r in types if abs(r["delta_pp"]) >= 1.0][:5]
    if moved:
        lines.append("runtime shares: " + ", ".join(f"{r['type']} {r['runtime_share_before_pct']:.1f} → "
                                                    f"{r['runtime_share_after_pct']:.1f} %" for r in moved))
    counts = {k: (before.summary.get(k), after.summary.get(k)) for k in ("ane_ops", "cpu_ops", "gpu_ops", "total_ops")}
    return {"reports": "profile", "before": before.source, "after": after.source,
            "latency": lat, "interruptions": {"before": nb, "after": na, "fixed": fixed, "introduced": introduced},
            "fallback_ops": {"before": len(before.fallback_ops), "after": len(after.fallback_ops)},
            "op_counts": counts, "op_types": types,
            "sequential_estimate_ms": {"before": before.summary.get("grand_runtime_ms"),
                                       "after": after.summary.get("grand_runtime_ms")},
            "statements": lines}


def diff_plans(before: AneCostPlan, after: AneCostPlan) -> dict:
    sb, sa = plan_shares(before), plan_shares(after)

    def by_type(ops):
        out: dict[str, list] = {}
        for o in ops:
            acc = out.setdefault(o["short_type"], [0.0, 0])
            acc[0] += o["share_pct"]
            acc[1] += 1
        return {t: (s, n) for t, (s, n) in out.items()}

    types = _share_rows(by_type(sb), by_type(sa), "plan_share")
    # ops: the k-th op of a type before ↔ the k-th after (indices shift when a model changes)
    queues: dict[str, list] = {}
    for o in sorted(sa, key=lambda o: o["index"]):
        queues.setdefault(o["type"], []).append(o)
    ops = []
    for o in sorted(sb, key=lambda o: o["index"]):
        q = queues.get(o["type"])
        a = q.pop(0) if q else None
        d = (a["share_pct"] if a else 0.0) - o["share_pct"]
        if abs(d) >= MOVE_PP:
            ops.append({"type": o["short_type"], "index_before": o["index"], "index_after": a["index"] if a else None,
                        "share_before_pct": o["share_pct"], "share_after_pct": a["share_pct"] if a else 0.0,
                        "delta_pp": d})
    for q in queues.values():
        for a in q:
            if a["share_pct"] >= MOVE_PP:
                ops.append({"type": a["short_type"], "index_before": None, "index_after": a["index"],
                            "share_before_pct": 0.0, "share_after_pct": a["share_pct"], "delta_pp": a["share_pct"]})
    ops.sort(key=lambda r: -abs(r["delta_pp"]))
    tb, ta = plan_total(before), plan_total(after)
    total = {"before": tb, "after": ta, "change_percent": 100 * (ta / tb - 1) if tb > 0 else None}
    if total["change_percent"] is None:
        tc_line = f"total_cost {tb:.4g} → {ta:.4g}"
    elif ta < tb:
        tc_line = (f"total_cost {tb:.4g} → {ta:.4g} ({total['change_percent']:+.1f} %): a drop — the compiler agrees "
                   "with the change")
    elif ta > tb:
        tc_line = (f"total_cost {tb:.4g} → {ta:.4g} ({total['change_percent']:+.1f} %): a rise — the compiler scores the "
                   "changed graph as more expensive")
    else:
        tc_line = f"total_cost unchanged ({tb:.4g})"
    lines = [tc_line, counts_line([("ops", len(before.operations), len(after.operations)),
                                   ("with a device", before.with_device, after.with_device),
                                   ("with no device", before.no_device, after.no_device)])
             + " (no device = CPU-only ops such as gathers and int32 work)"]
    moved = [r for r in types if abs(r["delta_pp"]) >= 1.0][:6]
    if moved:
        lines.append("plan shares by type: " + ", ".join(f"{r['type']} {r['plan_share_before_pct']:.1f} → "
                                                         f"{r['plan_share_after_pct']:.1f} %" for r in moved))
    else:
        lines.append("no op type's share of the plan moved by 1 percentage point or more")
    lines.append(TOTAL_COST_NOTE)
    return {"reports": "costplan", "before": before.source, "after": after.source,
            "op_types": types, "ops": ops[:40], "op_count": {"before": len(before.operations), "after": len(after.operations)},
            "total_cost": total,
            "no_device": {"before": before.no_device, "after": after.no_device},
            "with_device": {"before": before.with_device, "after": after.with_device},
            "total_cost_note": TOTAL_COST_NOTE, "statements": lines}


# --------------------------------------------------------------------------------------------------
# model folders: one row per submodel, never one model
# --------------------------------------------------------------------------------------------------

ROLES = (("lm_head", ("lm_head", "lmhead", "lm-head")), ("embeddings", ("embeddings", "embedding", "embed")),
         ("prefill", ("prefill",)), ("decode/FFN", ("decode", "ffn", "infer")))


PIPELINE_ORDER = ("embeddings", "prefill", "decode/FFN", "lm_head")  # how an LLM's submodels run


def role_of(name: str) -> str:
    low = name.lower()
    for role, keys in ROLES:
        if any(k in low for k in keys):
            return role
    return ""


def model_stem(name: str) -> str:
    """A report's model as a comparable stem: ``/x/llama_FFN.mlpackage`` → ``llama_FFN``."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    for ext in (".json", ".mlmodelc", ".mlpackage", ".costplan", ".profile", "_costplan", "_profile", "-costplan",
                "-profile"):
        if base.lower().endswith(ext):
            base = base[: -len(ext)]
    return base
