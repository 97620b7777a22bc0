"""A measured anemll-profile report joined with the static analysis of the same model (pure): per op type the
achieved GFLOP/s and GB/s (static FLOPs and bytes over measured time), and per op where the static placement
estimate was wrong.

Ops are matched by function and index (both count every op of the function's top-level block, consts included),
checked by op type; an op whose type differs at that index is matched by its first output's name instead.
"""

from __future__ import annotations

from ..mil_model import short_type
from ..ane_model import AneProfile


def cross_check_static(p: AneProfile, m: dict) -> dict:
    """``m``: one model document of :func:`edgeprof.analysis.mil_static.analyze_program`."""
    ops = [o for o in m["ops"] if o["predicted_device"] != "const"]
    by_index = {(o["function"], o["index"]): o for o in ops}
    by_name = {(o["function"], o["output"]): o for o in ops}
    matched, unmatched, wrong = 0, 0, []
    agree = disagree = not_known = 0
    for pl in p.placements:
        o = by_index.get((pl.function, pl.index))
        if o is None or short_type(o["type"]) != pl.short_type:
            o = by_name.get((pl.function, pl.name))
        if o is None:
            unmatched += 1
            continue
        matched += 1
        pred = o["predicted_device"]
        if pred == "?":
            not_known += 1
            continue
        on_ane = pl.device == "ANE"
        if (pred == "ANE") == on_ane:
            agree += 1
        else:
            disagree += 1
            wrong.append({"function": pl.function, "index": pl.index, "name": pl.name, "type": pl.short_type,
                          "predicted": pred, "rule": o["rule"], "measured": pl.device})
    types = {}
    for t in m["op_types"]:
        types[t["short_type"]] = t
    rows = []
    for r in p.op_types:
        s = types.get(r["short_type"])
        if s is None or not r["total_ms"]:
            continue
        moved = s["act_read"] + s["weight_read"] + s["written"]
        rows.append({"short_type": r["short_type"], "measured_ms": r["total_ms"], "count_measured": r["count"],
                     "count_static": s["count"], "flops": s["flops"] if s["flops_known"] else None, "bytes": moved,
                     "achieved_gflops": s["flops"] / r["total_ms"] / 1e6 if s["flops_known"] else None,
                     "achieved_gbps": moved / r["total_ms"] / 1e6,
                     "measured_bound": r["bound"], "measured_gbps": r["gbps"]})
    rows.sort(key=lambda x: -x["measured_ms"])
    known = agree + disagree
    return {"model": m["model"], "matched_ops": matched, "unmatched_ops": unmatched, "agree": agree,
            "disagree": disagree, "not_known": not_known, "agreement": agree / known if known else None,
            "wrong": wrong, "op_types": rows, "evidence": "anemll_json+mil_static"}
