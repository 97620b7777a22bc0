"""End-to-end latency per run and its basic summary (pure; numpy only)."""

from __future__ import annotations

import numpy as np
import polars as pl

from ..model import Profile


def per_run_latency_ms(profile: Profile) -> tuple[np.ndarray, str]:
    """(latency per execute run in ms, source): ``method_execute``, or ``top_level_events`` when any run lacks it."""
    runs = profile.runs.filter(pl.col("run_index") >= 0).sort("run_index")
    values = runs["e2e_ns"].cast(pl.Float64).to_numpy() / 1e6
    sources = set(runs["e2e_source"].drop_nulls().to_list())
    source = "method_execute" if sources <= {"method_execute"} else "top_level_events"
    return values, source


def basic_summary(values_ms: np.ndarray) -> dict:
    """n, mean, median, min, max, sample std (None for n < 2), p90 — never NaN."""
    v = np.asarray(values_ms, dtype=float)
    v = v[np.isfinite(v)]
    n = int(v.size)
    if n == 0:
        return {"count": 0, "mean_ms": None, "median_ms": None, "min_ms": None, "max_ms": None,
                "std_dev_ms": None, "p90_ms": None}
    return {
        "count": n,
        "mean_ms": float(v.mean()),
        "median_ms": float(np.median(v)),
        "min_ms": float(v.min()),
        "max_ms": float(v.max()),
        "std_dev_ms": float(v.std(ddof=1)) if n > 1 else None,
        "p90_ms": float(np.percentile(v, 90)),
    }


def framework_times_ms(profile: Profile) -> dict:
    """Load/init times from the Default block (``Program::load_method``, ``Method::init``) in ms."""
    ev = profile.events.filter((pl.col("run_index") < 0) & (pl.col("kind") == "framework"))
    out = {}
    for name, key in (("Program::load_method", "load_method_ms"), ("Method::init", "method_init_ms")):
        d = ev.filter(pl.col("name") == name)["duration_ns"]
        out[key] = float(d.sum()) / 1e6 if d.len() and d.null_count() < d.len() else None
    return out
