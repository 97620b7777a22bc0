"""A static Core ML analysis as an anemll-profile–shaped JSON document (``edgeprof coreml --as-anemll``).

The shape is anemll-profile 0.4.1's ``-j`` report (fields as its schema names them), so ``edgeprof ane``,
``ane diff`` and the report read it like a measured one. It says what it is: ``tool`` is
:data:`ESTIMATE_TOOL`, ``measured_prediction.status`` is ``not_run``, runtimes are roofline estimates, plan
costs are each op's share of the estimated time, and ops the rules place as "not ANE, CPU or GPU" are listed
on ``CPU`` with that in their reason.
"""

from __future__ import annotations

from ..mil_model import short_type as _short
from ..conventions import TOOL_VERSION as __version__
from ..conventions import ESTIMATE_TOOL


def estimate_document(m: dict) -> dict:
    """``m``: one model of :func:`edgeprof.api.coreml` (its ``models[i]``)."""
    est = m["estimate"]
    ops = [o for o in m["ops"] if o["predicted_device"] != "const"]
    total_ms = sum(o["estimated_ms"] or 0 for o in ops) or 1.0
    rules = m["rules"]

    def device(o):
        return {"ANE": "ANE", "CPU": "CPU", "non-ANE": "CPU"}.get(o["predicted_device"], "?")

    placements = [{"function": o["function"], "index": o["index"], "name": o["name"], "type": o["type"],
                   "short_type": _short(o["type"]), "device": device(o), "cost": (o["estimated_ms"] or 0) / total_ms,
                   "ane_supported": 1 if o["predicted_device"] == "ANE" else 0} for o in ops]
    by_dev: dict[str, list] = {}
    for p in placements:
        by_dev.setdefault(p["device"], []).append(p)
    types: dict[str, dict] = {}
    for o in ops:
        t = types.setdefault(_short(o["type"]), {"type": o["type"], "short_type": _short(o["type"]), "count": 0, "total_ms": 0.0,
                                                 "flops": 0, "mb": 0.0, "weight_mb": 0.0, "comp": False, "mem": False})
        t["count"] += 1
        t["total_ms"] += o["estimated_ms"] or 0
        t["flops"] += o["flops"] or 0
        t["mb"] += ((o["act_read"] or 0) + o["weight_read"] + (o["written"] or 0)) / 1e6
        t["weight_mb"] += o["weight_read"] / 1e6
        t["comp"] |= o["bound"] == "Comp"
        t["mem"] |= o["bound"] == "Mem"
    grand_ms = sum(t["total_ms"] for t in types.values())
    breakdown = sorted(({"type": t["type"], "short_type": t["short_type"], "count": t["count"],
                         "ms_per_op": t["total_ms"] / t["count"], "total_ms": t["total_ms"], "gflop": t["flops"] / 1e9,
                         "gbps": t["mb"] / t["total_ms"] if t["total_ms"] else 0.0,
                         "share_pct": 100 * t["total_ms"] / grand_ms if grand_ms else 0.0,
                         "bound": "Comp" if t["comp"] else ("Mem" if t["mem"] else "?"), "weight_mb": t["weight_mb"]}
                        for t in types.values()), key=lambda r: -r["total_ms"])
    top = sorted(ops, key=lambda o: -(o["estimated_ms"] or 0))[:20]
    reasons: dict[str, set] = {}
    fallback = []
    for o, p in zip(ops, placements):
        if p["device"] == "CPU":
            why = f"{o['rule']}: {rules[o['rule']]}" + (" (CPU or GPU)" if o["predicted_device"] == "non-ANE" else "")
            reasons.setdefault(o["type"], set()).add(why)
            fallback.append({**{k: p[k] for k in ("function", "index", "name", "type", "short_type", "device", "cost")},
                             "supported": "CPU", "reason": "ane: " + why})
    gi = est["graph_interruptions"]
    counts = {d: len(v) for d, v in by_dev.items()}
    return {
        "tool": ESTIMATE_TOOL, "version": __version__, "evidence": "mil_static", "label": "estimate",
        "chip": est["chip"]["name"],
        "model": {"display_name": m["model"], "input_path": m["path"], "format": "ML Program"},
        "compute": {"mode": "estimate (CPU+ANE)", "interrupt_boundary_ms": est["boundary_ms"], "compute_units_all": 0},
        "status": {"no_costmodel_entries": False, "log_data_masked": False},
        "summary": {"total_ops": m["totals"]["ops"], "ane_ops": counts.get("ANE", 0), "cpu_ops": counts.get("CPU", 0),
                    "gpu_ops": 0, "const_ops": m["totals"]["ops"] - len(ops), "total_cost": 1.0,
                    "ane_cost": sum(p["cost"] for p in by_dev.get("ANE", [])),
                    "cpu_cost": sum(p["cost"] for p in by_dev.get("CPU", [])), "gpu_cost": 0.0,
                    "costmodel_entries": 0, "unique_costmodel_ops": 0, "grand_runtime_ms": grand_ms,
                    "grand_gflop": m["totals"]["flops"] / 1e9},
        "measured_prediction": {"status": "not_run"},
        "ordered_placements": [p for p in placements if p["device"] != "?"],
        "graph_interruptions": {**{k: v for k, v in gi.items() if k not in ("interruptions", "edge_runs")},
                                "interruptions": [_island(i) for i in gi["interruptions"]],
                                "edge_runs": [_island(i) for i in gi["edge_runs"]]},
        "op_type_breakdown": breakdown,
        "op_type_totals": {"grand_runtime_ms": grand_ms, "grand_gflop": m["totals"]["flops"] / 1e9,
                           "grand_weight_mb": sum(t["weight_mb"] for t in breakdown),
                           "grand_gbps": sum(t["mb"] for t in types.values()) / grand_ms if grand_ms else 0.0},
        "top_operations": [{"name": o["name"], "type": o["type"], "short_type": _short(o["type"]),
                            "runtime_ms": o["estimated_ms"] or 0.0,
                            "total_mb": ((o["act_read"] or 0) + o["weight_read"] + (o["written"] or 0)) / 1e6,
                            "gbps": (((o["act_read"] or 0) + o["weight_read"] + (o["written"] or 0)) / 1e6
                                     / o["estimated_ms"]) if o["estimated_ms"] else 0.0,
                            "bound": {"Comp": "Compute", "Mem": "Memory"}.get(o["bound"], "?")} for o in top],
        "conv_detail": [], "high_cost_ops": [],
        "ane_op_types": _type_counts(by_dev.get("ANE", [])), "cpu_op_types": _type_counts(by_dev.get("CPU", [])),
        "unsupported_reasons_by_type": {t: sorted(v) for t, v in sorted(reasons.items())},
        "fallback_ops": sorted(fallback, key=lambda f: -f["cost"]),
        "compute_units_all": 0,
    }


def _island(i: dict) -> dict:
    d = {k: i[k] for k in ("id", "function", "start_index", "end_index", "path", "device", "op_count", "total_cost",
                           "runtime_ms", "switch_penalty_ms", "total_penalty_ms", "soft_ops", "hard_ops",
                           "missing_runtime_ops", "reason", "first_type", "last_type", "center_percent")}
    d["is_interruption"] = 1 if i["is_interruption"] else 0
    d["first_short_type"], d["last_short_type"] = _short(i["first_type"]), _short(i["last_type"])
    if i["edge_kind"]:
        d["edge_kind"] = i["edge_kind"]
    return d


def _type_counts(ps: list[dict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in ps:
        out[p["short_type"]] = out.get(p["short_type"], 0) + 1
    return dict(sorted(out.items()))


def costplan_document(model: str, records: list[dict]) -> dict:
    """Compute-plan records (``collect.coreml_mac.plan_records``) as an ane-costplan ``-j`` document: every op
    with a cost, sorted by cost (descending); ``no_device`` counts ops the plan gives no device."""
    ops = [r for r in records if r["cost"] is not None]
    return {"model": model, "total_cost": sum(r["cost"] for r in ops), "total_ops": len(ops),
            "with_device": sum(r["device"] != "?" for r in ops), "no_device": sum(r["device"] == "?" for r in ops),
            "operations": [{"index": r["index"], "type": r["type"], "cost": r["cost"], "function": r["function"],
                            "device": r["device"]} for r in sorted(ops, key=lambda r: -r["cost"])]}


def measured_document(model: str, records: list[dict], timing: dict, compute_units: str, boundary_ms: float,
                      islands: list, gi_summary: dict) -> dict:
    """A compute plan and timed predictions as an anemll-profile 0.4.1–compatible document. Without the
    compiler's CostModel log there are no per-op runtimes: ``status.no_costmodel_entries`` says so."""
    import statistics

    placed = [r for r in records if r["cost"] is not None and r["device"] != "?"]
    dev = {d: [r for r in placed if r["device"] == d] for d in ("ANE", "CPU", "GPU")}
    times = timing.get("times_ms") or []
    avg = statistics.fmean(times) if times else 0.0
    measured = {"status": timing["status"]}
    if timing["status"] == "ok":
        measured.update(steady_ms=timing["steady_ms"], average_ms=avg, runs=len(times),
                        iter_per_sec=1000 / avg if avg else 0.0)
    if timing.get("error"):
        measured["error"] = timing["error"]
    fallback = [{"function": r["function"], "index": r["index"], "name": r["name"], "type": r["type"],
                 "short_type": _short(r["type"]), "device": r["device"], "cost": r["cost"],
                 "supported": ",".join(r["supported"]),
                 "reason": "ANE supported but not preferred" if "ANE" in r["supported"] else "Not supported on ANE"}
                for r in placed if r["device"] != "ANE"]
    isl = [_island({**i.__dict__}) for i in islands]
    return {
        "tool": "anemll-profile", "version": "0.4.1", "collected_by": "edgeprof coreml profile",
        "model": {"display_name": model.rstrip("/").rsplit("/", 1)[-1], "input_path": model, "format": "ML Program"},
        "compute": {"mode": compute_units, "interrupt_boundary_ms": boundary_ms,
                    "compute_units_all": 1 if compute_units == "all" else 0},
        "status": {"no_costmodel_entries": True, "log_data_masked": False},
        "summary": {"total_ops": len(records), "ane_ops": len(dev["ANE"]), "cpu_ops": len(dev["CPU"]),
                    "gpu_ops": len(dev["GPU"]), "const_ops": sum(r["cost"] is None for r in records),
                    "total_cost": sum(r["cost"] for r in placed),
                    **{f"{d.lower()}_cost": sum(r["cost"] for r in v) for d, v in dev.items()},
                    "costmodel_entries": 0, "unique_costmodel_ops": 0, "grand_runtime_ms": 0.0, "grand_gflop": 0.0},
        "measured_prediction": measured,
        "ordered_placements": [{"function": r["function"], "index": r["index"], "name": r["name"], "type": r["type"],
                                "short_type": _short(r["type"]), "device": r["device"], "cost": r["cost"],
                                "ane_supported": 1 if "ANE" in r["supported"] else 0} for r in placed],
        "graph_interruptions": {**gi_summary, "interruptions": [i for i in isl if i["is_interruption"]],
                                "edge_runs": [i for i in isl if not i["is_interruption"]]},
        "op_type_breakdown": [], "op_type_totals": {}, "top_operations": [], "conv_detail": [],
        "high_cost_ops": [{"index": r["index"], "type": r["type"], "short_type": _short(r["type"]), "cost": r["cost"],
                           "device": r["device"]} for r in placed if r["cost"] > 0.005],
        "ane_op_types": _type_counts([{"short_type": _short(r["type"])} for r in dev["ANE"]]),
        "cpu_op_types": _type_counts([{"short_type": _short(r["type"])} for r in dev["CPU"]]),
        "unsupported_reasons_by_type": {},
        "fallback_ops": sorted(fallback, key=lambda f: -f["cost"]),
        "compute_units_all": 1 if compute_units == "all" else 0,
    }
