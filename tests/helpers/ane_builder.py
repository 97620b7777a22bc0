"""Construct anemll-profile 0.4.1 / ane-costplan documents for tests, following the tool's schema
(reference: anemll_spec.md §1, §5), and write them the way the tools do (NSJSONSerialization style)."""

from __future__ import annotations

import json
import random

B_TOOL = 300.0


def island(id_, function, start, end, runtime_ms, *, kind="interruption", ops=None, cost=0.001, reason="",
           first_type="ios18.slice_update", last_type=None, soft=0, hard=None, missing=0, device="CPU"):
    """kind: interruption | lead | trail | all."""
    ops = ops if ops is not None else end - start + 1
    hard = ops - soft if hard is None else hard
    prev = start - 2 if kind in ("interruption", "trail") else -1
    nxt = end + 2 if kind in ("interruption", "lead") else -1
    switch = (B_TOOL if prev >= 0 else 0) + (B_TOOL if nxt >= 0 else 0)
    path = {"interruption": "ANE->CPU->ANE", "lead": "CPU->ANE", "trail": "ANE->CPU", "all": "CPU"}[kind]
    d = {"id": id_ if kind == "interruption" else 0, "function": function, "start_index": start, "end_index": end,
         "prev_focus_index": prev, "next_focus_index": nxt, "function_total_ops": 500, "path": path,
         "focus_device": "ANE", "device": device, "op_count": ops, "total_cost": cost, "runtime_ms": runtime_ms,
         "switch_penalty_ms": switch, "total_penalty_ms": switch + runtime_ms, "soft_ops": soft, "hard_ops": hard,
         "missing_runtime_ops": missing, "reason": reason, "first_type": first_type, "last_type": last_type or first_type,
         "first_short_type": first_type.split(".", 1)[-1], "last_short_type": (last_type or first_type).split(".", 1)[-1],
         "center_percent": 50.0, "is_interruption": 1 if kind == "interruption" else 0}
    if kind != "interruption":
        d["edge_kind"] = kind
    return d


def op_type(short, share_pct, total_ms, count=1, bound="Mem", weight_mb=0.0, gbps=50.0):
    return {"type": f"ios18.{short}", "short_type": short, "count": count, "ms_per_op": total_ms / count,
            "total_ms": total_ms, "gflop": 0.1, "gbps": gbps, "share_pct": share_pct, "bound": bound,
            "weight_mb": weight_mb}


def placement(function, index, name, short, device="ANE", cost=0.01, ane_supported=1):
    return {"function": function, "index": index, "name": name, "type": f"ios18.{short}", "short_type": short,
            "device": device, "cost": cost, "ane_supported": ane_supported}


def fallback(function, index, name, short, reason, device="CPU", cost=0.002, supported="CPU,GPU"):
    return {"function": function, "index": index, "name": name, "type": f"ios18.{short}", "short_type": short,
            "device": device, "cost": cost, "supported": supported, "reason": reason}


def profile(*, interruptions=(), edge_runs=(), op_types=(), placements=(), fallback_ops=(), reasons=None,
            measured=None, top=(), grand_runtime_ms=None, name="model.mlpackage", summary=None, status=None):
    interruptions, edge_runs = list(interruptions), list(edge_runs)
    grand = grand_runtime_ms if grand_runtime_ms is not None else sum(t["total_ms"] for t in op_types) or 1.0
    mp = measured if measured is not None else {"status": "ok", "steady_ms": 4.0, "average_ms": 4.0,
                                                "iter_per_sec": 250.0, "runs": 10, "gflops_per_sec": 100.0,
                                                "tops": 0.1, "weight_bw_gbps": 40.0, "speedup_vs_sequential": 1.1}
    n_int = len(interruptions)
    return {
        "tool": "anemll-profile", "version": "0.4.1",
        "model": {"input_path": f"/Users/dev/{name}", "compiled_model_path": "/var/folders/T/m.mlmodelc",
                  "display_name": name, "format": "ML Program", "size_bytes": 1000, "size_mb": 0.001,
                  "compiled_from_package": True},
        "compute": {"mode": "CPU+ANE", "interrupt_boundary_ms": B_TOOL, "compute_units_all": 0},
        "status": status or {"no_costmodel_entries": False, "log_data_masked": False},
        "summary": summary or {"total_ops": 100, "ane_ops": 80, "cpu_ops": 5, "gpu_ops": 0, "const_ops": 15,
                               "total_cost": 1.0, "ane_cost": 0.95, "cpu_cost": 0.05, "gpu_cost": 0,
                               "costmodel_entries": 100, "unique_costmodel_ops": 85, "grand_runtime_ms": grand,
                               "grand_gflop": 0.5},
        "measured_prediction": mp,
        "ordered_placements": list(placements),
        "graph_interruptions": {
            "focus_device": "ANE", "non_focus_runs": n_int + len(edge_runs), "graph_interruptions": n_int,
            "edge_runs_ignored": len(edge_runs), "interrupted_ops": sum(i["op_count"] for i in interruptions),
            "total_non_focus_ops": sum(i["op_count"] for i in interruptions + edge_runs),
            "interrupted_cost": sum(i["total_cost"] for i in interruptions),
            "total_non_focus_cost": sum(i["total_cost"] for i in interruptions + edge_runs),
            "estimated_switch_tax_ms": 2 * B_TOOL * n_int,
            "estimated_island_time_ms": sum(i["runtime_ms"] for i in interruptions),
            "estimated_total_tax_ms": sum(i["total_penalty_ms"] for i in interruptions),
            "best_case_savings_ms": sum(i["total_penalty_ms"] for i in interruptions),
            "interrupted_soft_ops": sum(i["soft_ops"] for i in interruptions),
            "interrupted_hard_ops": sum(i["hard_ops"] for i in interruptions),
            "interrupted_missing_runtime_ops": sum(i["missing_runtime_ops"] for i in interruptions),
            "interruptions": interruptions, "edge_runs": edge_runs, "timeline_by_function": []},
        "op_type_breakdown": list(op_types),
        "op_type_totals": {"grand_runtime_ms": grand, "grand_gflop": 0.5,
                           "grand_weight_mb": sum(t["weight_mb"] for t in op_types) or 1.0, "grand_gbps": 50.0},
        "top_operations": list(top), "conv_detail": [], "high_cost_ops": [],
        "ane_op_types": {}, "cpu_op_types": {}, "unsupported_reasons_by_type": reasons or {},
        "fallback_ops": list(fallback_ops),
    }


def costplan(ops, model="m.mlmodelc", no_device=0):
    """ops: [(index, short type, cost[, extra dict])]."""
    rows = []
    for o in ops:
        r = {"cost": o[2], "index": o[0], "type": f"ios18.{o[1]}"}
        if len(o) > 3:
            r.update(o[3])
        rows.append(r)
    rows.sort(key=lambda r: -r["cost"])
    return {"model": model, "no_device": no_device, "operations": rows, "total_cost": sum(r["cost"] for r in rows),
            "total_ops": len(rows), "with_device": len(rows) - no_device}


def _shuffle(obj, rng):
    if isinstance(obj, dict):
        items = list(obj.items())
        rng.shuffle(items)
        return {k: _shuffle(v, rng) for k, v in items}
    if isinstance(obj, list):
        return [_shuffle(v, rng) for v in obj]
    return obj


def _boolify(obj, as_int: bool):
    """The tool writes some booleans as true/false and some as 0/1; flip between the two spellings."""
    keys = ("compiled_from_package", "no_costmodel_entries", "log_data_masked", "compute_units_all", "is_interruption",
            "ane_supported")
    if isinstance(obj, dict):
        return {k: ((int(v) if as_int else bool(v)) if k in keys and isinstance(v, (bool, int)) else _boolify(v, as_int))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [_boolify(v, as_int) for v in obj]
    return obj


def dumps_like_the_tool(doc, *, seed=0, bools_as_int=False) -> str:
    """NSJSONSerialization pretty output: 2-space indent, ``"key" : value``, ``/`` escaped, unsorted keys."""
    doc = _shuffle(_boolify(doc, bools_as_int), random.Random(seed))
    return json.dumps(doc, indent=2, separators=(",", " : ")).replace("/", "\\/")
