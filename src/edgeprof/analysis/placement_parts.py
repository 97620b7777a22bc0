"""Placement figures (pure): the partitions a placement forms, the share of time, FLOPs and plan weight each
placement carries, its fingerprint, and the placement document (``edgeprof placement``)."""

from __future__ import annotations

import dataclasses

from ..placement_model import UNKNOWN, Placement
from ..runtimes import runtime

# partitions and shares
# --------------------------------------------------------------------------------------------------

def partitions(pl_: Placement) -> list[dict]:
    """Maximal runs of one placement in topological order: ``{index, placement, accelerated, first, last, ops,
    op_keys, time_ms, flops, plan_weight}`` (a figure None when no operator of the run carries it)."""
    out: list[dict] = []
    for op in pl_.ops:
        if out and out[-1]["placement"] == op.placement:
            p = out[-1]
        else:
            p = {"index": len(out), "placement": op.placement, "accelerated": op.accelerated, "first": op.index,
                 "last": op.index, "ops": 0, "op_keys": [], "time_ms": None, "flops": None, "plan_weight": None}
            out.append(p)
        p["last"] = op.index
        p["ops"] += 1
        p["op_keys"].append(op.key)
        for f in ("time_ms", "flops", "plan_weight"):
            v = getattr(op, f)
            if v is not None:
                p[f] = (p[f] or 0) + v
    return out


def _share(part: float | None, whole: float | None) -> float | None:
    return part / whole * 100 if part is not None and whole else None


def shares(pl_: Placement) -> list[dict]:
    """Per placement: operators, partitions, time and work, and their shares of the operators' sums (a share of
    the sum of the operators that carry the figure: shares add up to 100)."""
    rows: dict[str, dict] = {}
    parts = partitions(pl_)
    for op in pl_.ops:
        r = rows.setdefault(op.placement, {"placement": op.placement, "accelerated": op.accelerated, "ops": 0,
                                           "partitions": 0, "time_ms": None, "flops": None, "plan_weight": None})
        r["ops"] += 1
        for f in ("time_ms", "flops", "plan_weight"):
            v = getattr(op, f)
            if v is not None:
                r[f] = (r[f] or 0) + v
    for p in parts:
        rows[p["placement"]]["partitions"] += 1
    totals = {f: sum(r[f] for r in rows.values() if r[f] is not None) for f in ("time_ms", "flops", "plan_weight")}
    for r in rows.values():
        r["time_share_pct"] = _share(r["time_ms"], totals["time_ms"])
        r["flops_share_pct"] = _share(r["flops"], totals["flops"])
        r["plan_weight_share_pct"] = _share(r["plan_weight"], totals["plan_weight"])
    return sorted(rows.values(), key=lambda r: (not r["accelerated"], -(r["time_ms"] or 0), r["placement"]))


def fingerprint(pl_: Placement) -> str:
    """A short digest of which operator runs where (keys and placements in order; times left out): two builds with
    the same placement have the same fingerprint whatever their timings."""
    import hashlib

    h = hashlib.sha256()
    for op in pl_.ops:
        h.update(f"{op.key}\x1f{op.placement}\x1e".encode())
    return h.hexdigest()[:16]


def describe(pl_: Placement) -> dict:
    """The placement document: operators, partitions, per-placement shares, fingerprint and the runtime's words."""
    rt = runtime(pl_.runtime)
    parts = partitions(pl_)
    acc = [p for p in parts if p["accelerated"]]
    host_parts = [p for p in parts if not p["accelerated"] and p["placement"] != UNKNOWN]
    between = sum(1 for p in host_parts if any(a["index"] < p["index"] for a in acc)
                  and any(a["index"] > p["index"] for a in acc))
    rows = shares(pl_)
    acc_time = sum(r["time_ms"] or 0 for r in rows if r["accelerated"])
    tot_time = sum(r["time_ms"] or 0 for r in rows)
    return {
        "input": pl_.source, "runtime": pl_.runtime, "runtime_title": rt.title, "evidence": pl_.evidence,
        "host": pl_.host, "focus": pl_.focus, "fallback_means": rt.fallback_means,
        "runs": pl_.runs, "run_ms": pl_.run_ms, "fingerprint": fingerprint(pl_),
        "operators": [dataclasses.asdict(op) for op in pl_.ops],
        "partitions": parts, "placements": rows,
        "summary": {"operators": len(pl_.ops), "accelerated_operators": sum(op.accelerated for op in pl_.ops),
                    "host_operators": sum(1 for op in pl_.ops if not op.accelerated and op.placement != UNKNOWN),
                    "unknown_operators": sum(1 for op in pl_.ops if op.placement == UNKNOWN),
                    "partitions": len(parts), "accelerated_partitions": len(acc), "host_partitions": len(host_parts),
                    "host_partitions_between_accelerated": between,
                    "accelerated_time_share_pct": _share(acc_time, tot_time) if tot_time else None},
        "statement": _statement(pl_, parts, rows),
        "warnings": list(pl_.warnings),
    }


def _statement(pl_: Placement, parts: list[dict], rows: list[dict]) -> str:
    n = len(pl_.ops)
    if not n:
        return f"{pl_.source}: no operators to place."
    acc = sum(op.accelerated for op in pl_.ops)
    head = f"{acc} of {n} operators on an accelerator ({', '.join(r['placement'] for r in rows if r['accelerated']) or 'none'})"
    t = [r for r in rows if r["time_share_pct"] is not None]
    if t:
        at = sum(r["time_share_pct"] for r in t if r["accelerated"])
        head += f", {at:.1f} % of operator time"
    f = [r for r in rows if r["flops_share_pct"] is not None]
    if f:
        af = sum(r["flops_share_pct"] for r in f if r["accelerated"])
        head += f", {af:.1f} % of FLOPs"
    w = [r for r in rows if r["plan_weight_share_pct"] is not None]
    if w:
        aw = sum(r["plan_weight_share_pct"] for r in w if r["accelerated"])
        head += f", {aw:.1f} % of the plan's weight"
    return f"{head}; {len(parts)} partition(s) in execution order."


# --------------------------------------------------------------------------------------------------
