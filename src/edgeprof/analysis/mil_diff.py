"""Two versions of a Core ML model, statically (pure): op counts per type, FLOPs and bytes, weights on disk,
hazards and the estimated islands — each difference as a row and a one-line statement."""

from __future__ import annotations


def _pct(a: float, b: float) -> str:
    return "" if not a else f" ({100 * (b - a) / a:+.1f} %)"


def diff(a: dict, b: dict) -> dict:
    """``a`` and ``b`` are :func:`~edgeprof.analysis.mil_static.analyze_program` documents (before, after)."""
    ta, tb = {t["short_type"]: t for t in a["op_types"]}, {t["short_type"]: t for t in b["op_types"]}
    types = []
    for t in sorted(set(ta) | set(tb)):
        x, y = ta.get(t, {}), tb.get(t, {})
        row = {"short_type": t, "count_before": x.get("count", 0), "count_after": y.get("count", 0),
               "flops_before": x.get("flops", 0), "flops_after": y.get("flops", 0),
               "weight_stored_before": x.get("weight_stored", 0), "weight_stored_after": y.get("weight_stored", 0)}
        if any(row[f"{k}_before"] != row[f"{k}_after"] for k in ("count", "flops", "weight_stored")):
            types.append(row)
    keys = ("flops", "weight_read", "weight_stored_unique", "act_read", "written", "ops")
    totals = {k: {"before": a["totals"][k], "after": b["totals"][k]} for k in keys}
    files_a, files_b = sum(a["totals"]["weight_files"].values()), sum(b["totals"]["weight_files"].values())
    totals["weight_file_bytes"] = {"before": files_a, "after": files_b}
    ha, hb = {h["rule"]: h for h in a["hazards"]}, {h["rule"]: h for h in b["hazards"]}
    hazards = {"added": sorted(set(hb) - set(ha)), "removed": sorted(set(ha) - set(hb)),
               "changed": sorted(r for r in set(ha) & set(hb) if ha[r]["op_count"] != hb[r]["op_count"])}
    ga, gb = a["estimate"]["graph_interruptions"], b["estimate"]["graph_interruptions"]
    islands = {k: {"before": ga[k], "after": gb[k]} for k in ("graph_interruptions", "interrupted_ops",
                                                               "total_non_focus_ops", "estimated_total_tax_ms")}
    islands["estimated_ms"] = {"before": a["estimate"]["estimated_ms"], "after": b["estimate"]["estimated_ms"]}
    st = []
    for k, label in (("flops", "FLOPs"), ("weight_stored_unique", "weights on disk (bytes)"),
                     ("weight_read", "dense weight bytes read"), ("ops", "ops")):
        v = totals[k]
        if v["before"] != v["after"]:
            st.append(f"{label}: {v['before']:,} → {v['after']:,}{_pct(v['before'], v['after'])}")
    for r in types[:10]:
        if r["count_before"] != r["count_after"]:
            st.append(f"{r['short_type']}: {r['count_before']} → {r['count_after']} ops")
    for r in hazards["added"]:
        st.append(f"new hazard: {hb[r]['title']} ({hb[r]['op_count']} ops)")
    for r in hazards["removed"]:
        st.append(f"hazard gone: {ha[r]['title']}")
    for r in hazards["changed"]:
        st.append(f"{r}: {ha[r]['op_count']} → {hb[r]['op_count']} ops")
    v = islands["graph_interruptions"]
    if v["before"] != v["after"]:
        st.append(f"estimated ANE interruptions: {v['before']} → {v['after']}")
    if not st:
        st.append("no static difference: same ops, bytes, hazards and estimated islands")
    return {"before": a["model"], "after": b["model"], "evidence": "mil_static", "label": "estimate",
            "totals": totals, "op_types": types, "hazards": hazards, "islands": islands, "statements": st}
