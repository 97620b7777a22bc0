"""The breakdown as the Arm kit's ``analyze_etdump_csv.py`` files (its columns first, then ours) and a JSON."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl

from . import jsonfmt
from ..writer import Batch
from .tables import write_table

_OP_KIT = ("operator", "category", "total_ms", "avg_ms", "pct_of_e2e", "event_count")
_OP_OURS = ("subtype", "backend", "executions_per_run", "op", "dtypes", "op_types")


def _ops_frame(ops: list[dict]) -> pl.DataFrame:
    cols = {c: [o[c] for o in ops] for c in _OP_KIT + _OP_OURS}
    cols["op_types"] = [json.dumps(x) if x else None for x in cols["op_types"]]
    return pl.DataFrame(cols, schema_overrides={"pct_of_e2e": pl.Float64, "op_types": pl.String, "dtypes": pl.String})


def write_breakdown(result: dict, latencies_ms: np.ndarray, targets: dict[str, Path], fmt: str = "csv",
                    doc: dict | None = None) -> list[Path]:
    """The kit's category summary, operator details, e2e latency, other top ops (when there are OTHER operators),
    then graph breaks and the breakdown JSON (``doc``) at ``targets`` (keys of
    :func:`edgeprof.io.runfolder.breakdown_files`); written together or not at all."""
    model = result["name"]
    cats = pl.DataFrame({
        "category": [c["line"] for c in result["categories"]],
        "total_ms": [c["total_ms"] for c in result["categories"]],
        "avg_ms": [c["avg_ms"] for c in result["categories"]],
        "pct_of_e2e": [c["pct_of_e2e"] for c in result["categories"]],
        "operator_count": [c["operator_count"] for c in result["categories"]],
        "kind": [c["kind"] for c in result["categories"]],
        "executions_per_run": [c["executions_per_run"] for c in result["categories"]],
    }, schema_overrides={"pct_of_e2e": pl.Float64})
    lat = np.asarray(latencies_ms, dtype=float)
    e2e = pl.DataFrame({
        "model_name": [model], "num_runs": [int(lat.size)], "total_ms": [float(lat.sum())],
        "avg_ms": [float(lat.mean()) if lat.size else None], "min_ms": [float(lat.min()) if lat.size else None],
        "max_ms": [float(lat.max()) if lat.size else None], "median_ms": [float(np.median(lat)) if lat.size else None],
        "p90_ms": [float(np.percentile(lat, 90)) if lat.size else None],
    })
    segs = result["graph_breaks"]["segments"]
    breaks = pl.DataFrame({
        "index": [s["index"] for s in segs], "kind": [s["kind"] for s in segs], "backend": [s["backend"] for s in segs],
        "calls": [s["calls"] for s in segs], "mean_ms": [s["mean_ms"] for s in segs], "run0_ms": [s["run0_ms"] for s in segs],
        "ops": [" | ".join(s["op_names"]) for s in segs],
    }, schema_overrides={"index": pl.Int64, "calls": pl.Int64, "mean_ms": pl.Float64, "run0_ms": pl.Float64,
                         "kind": pl.String, "backend": pl.String, "ops": pl.String})
    doc = doc if doc is not None else {k: v for k, v in result.items() if k != "operators_all"}
    with Batch() as batch:
        write_table(cats, batch.path(targets["category_summary"]), fmt)
        write_table(_ops_frame(result["operators_all"]), batch.path(targets["operator_details"]), fmt)
        write_table(e2e, batch.path(targets["e2e_latency"]), fmt)
        if result["other_top"]:
            write_table(_ops_frame(result["other_top"]), batch.path(targets["other_top_ops"]), fmt)
        write_table(breaks, batch.path(targets["graph_breaks"]), fmt)
        with open(batch.path(targets["breakdown_json"]), "w", encoding="utf-8", errors="replace") as f:
            f.write(jsonfmt.dumps(doc))
        return batch.commit()
