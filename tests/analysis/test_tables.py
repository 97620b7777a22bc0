"""Timeline and operator-statistics tables against independent reference computations."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from edgeprof import load_etdump
from edgeprof.analysis.groupstats import group_stats
from edgeprof.analysis.timeline import Timeline, ops_stats_table, timeline_table


def test_group_stats_match_numpy_per_group():
    rng = np.random.default_rng(7)
    gid = rng.integers(0, 50, size=5000)
    vals = rng.integers(0, 10**9, size=5000)
    valid = rng.random(5000) > 0.1
    st = group_stats(gid, vals, valid, 50)
    for g in range(50):
        v = vals[(gid == g) & valid]
        assert st["count"][g] == v.size
        if v.size == 0:
            assert np.isnan(st["median"][g])
            continue
        assert st["sum"][g] == v.sum() and st["min"][g] == v.min() and st["max"][g] == v.max()
        assert st["median"][g] == pytest.approx(np.median(v))
        if v.size > 1:
            assert st["std"][g] == pytest.approx(np.std(v, ddof=1), rel=1e-9)


@pytest.mark.parametrize("name,record", [("tel_xnn.N20", "tel_xnn"), ("mobilenet_v3_small_portable.N20", None)])
def test_ops_stats_against_a_polars_group_by(name, record, etdump, etrecord):
    prof = load_etdump(etdump(name), etrecord=etrecord(record) if record else None)
    ours = ops_stats_table(prof, "m")
    ev = prof.execute_events().with_columns(
        pl.col("name").cast(pl.String).str.replace(r" #\d+$", "").alias("type"))
    n_runs = prof.n_runs
    ref = (ev.group_by("type", pl.col("delegate_backend").cast(pl.String), pl.col("kind").cast(pl.String))
             .agg(pl.len().alias("occ"), pl.col("duration_ns").sum().alias("tot"), pl.col("duration_ns").median().alias("med"),
                  pl.col("duration_ns").std().alias("std"), pl.col("self_ns").sum().alias("self")))
    joined = ours.with_columns(pl.col("delegate_backend").cast(pl.String), pl.col("kind").cast(pl.String)).join(
        ref, on=["type", "delegate_backend", "kind"], how="full", coalesce=True)
    assert joined.height == ours.height == ref.height
    assert (joined["occurrences"] == joined["occ"]).all()
    assert np.allclose(joined["total_ms"], joined["tot"] / n_runs / 1e6, atol=1e-6)
    assert np.allclose(joined["median_ms"], joined["med"] / 1e6, atol=1e-6)
    assert np.allclose(joined["std_ms"].fill_null(0), joined["std"].fill_null(0) / 1e6, atol=1e-6)
    assert np.allclose(joined["self_total_ms"], joined["self"] / n_runs / 1e6, atol=1e-6)


def test_timeline_blocks_equal_the_whole(etdump):
    prof = load_etdump(etdump("tel_xnnq8.N20"))
    whole = timeline_table(prof, "m")
    chunks = list(Timeline(prof, "m").chunks(max_rows=200))
    assert len(chunks) > 5
    assert pl.concat(chunks).equals(whole)
    assert timeline_table(prof, "m", run_index=3).equals(whole.filter(pl.col("run_index") == 3))
