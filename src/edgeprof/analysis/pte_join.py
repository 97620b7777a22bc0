"""A profile joined with the program it ran (pure): per instruction and per category, the measured time
next to the work the program records — achieved GFLOP/s and GB/s, arithmetic intensity, share of the
model's weight bytes, and for XNNPACK calls the node mix behind the time.

Instructions are matched by ``instruction_id`` (the runtime's index into the method's chain); the time of an
instruction is its ``OPERATOR_CALL``/``DELEGATE_CALL`` event per run (mean over the profile's runs).
"""

from __future__ import annotations

import polars as pl

from ..conventions import ms
from ..model import Profile
from ..taxonomy import classify


def join_program(profile: Profile, summary: dict, costs: list[dict], method: str | None = None) -> dict:
    """``method``: the program method the profile ran — the ETRecord's when one is attached, else the program's
    only method, else ``forward``."""
    if method is None:
        method = profile.etrecord.method if profile.etrecord is not None and profile.etrecord.method else (
            summary["methods"][0] if len(summary["methods"]) == 1 else "forward")
    ev = profile.execute_events().filter(pl.col("kind").is_in(["operator_call", "delegate_call"]))
    n_runs = max(profile.n_runs, 1)
    t = ev.group_by("instruction_id").agg(pl.col("duration_ns").sum().alias("ns"))
    per = dict(zip(t["instruction_id"].to_list(), t["ns"].to_list()))
    instr = [i for i in summary["instructions"] if i["plan"] == method]
    cost = {c["index"]: c for c in costs if c["plan"] == method}
    total_w = sum(c["weight_bytes"] or 0 for c in cost.values()) or 1
    rows: list[dict] = []
    cats: dict[str, dict] = {}
    for i in instr:
        c = cost.get(i["index"], {})
        ns = per.get(i["index"])
        if ns is None:
            continue
        t_ms = ms(ns) / n_runs
        moved = (c.get("act_read") or 0) + (c.get("weight_bytes") or 0) + (c.get("written") or 0)
        name = i["name"]
        cat = "DELEGATE" if i["kind"] == "delegate" else classify(name.split(".")[0]).category
        row = {"index": i["index"], "name": name, "category": cat, "ms_per_run": t_ms, "flops": c.get("flops"),
               "macs": c.get("macs"), "bytes": moved or None,
               "gflops": c["flops"] / t_ms / 1e6 if c.get("flops") is not None and t_ms > 0 else None,
               "gbps": moved / t_ms / 1e6 if moved and t_ms > 0 and i["kind"] != "delegate" else None,
               "intensity": c["flops"] / moved if c.get("flops") is not None and moved and i["kind"] != "delegate" else None,
               "weight_share_pct": 100 * (c.get("weight_bytes") or 0) / total_w}
        if i.get("delegate") and i["delegate"].get("nodes"):
            row["nodes"] = i["delegate"]["nodes"]["mix"]
        rows.append(row)
        k = cats.setdefault(cat, {"category": cat, "ms_per_run": 0.0, "flops": 0, "flops_known": True, "instructions": 0,
                                  "weight_share_pct": 0.0})
        k["ms_per_run"] += t_ms
        k["instructions"] += 1
        k["weight_share_pct"] += row["weight_share_pct"]
        if c.get("flops") is None:
            k["flops_known"] = False
        else:
            k["flops"] += c["flops"]
    for k in cats.values():
        k["gflops"] = k["flops"] / k["ms_per_run"] / 1e6 if k["flops_known"] and k["ms_per_run"] > 0 else None
    matched = len(rows)
    timed = sum(1 for k, v in per.items() if k is not None and k >= 0 and v is not None)  # the unknown id is no instruction
    return {"program": summary["file"], "method": method, "instructions": rows,
            "categories": sorted(cats.values(), key=lambda k: -k["ms_per_run"]),
            "matched": matched, "profile_instructions": timed, "program_instructions": len(instr),
            "evidence": "etdump+program"}
