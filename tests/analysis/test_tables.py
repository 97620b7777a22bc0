"""Timeline and operator-statistics tables against independent reference computations."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from edgeprof import load_etdump
from edgeprof.analysis.groupstats import group_stats
from edgeprof.analysis.timeline import Timeline, ops_stats_table, timeline_table


@pytest.mark.parametrize("lo,hi", [(0, 10**9), (-(2**62), 2**62), (2**62, 2**62 + 1000)])
def test_group_stats_match_numpy_per_group(lo, hi):
    rng = np.random.default_rng(7)
    gid = rng.integers(0, 50, size=5000)
    vals = rng.integers(lo, hi, size=5000)
    valid = rng.random(5000) > 0.1
    st = group_stats(gid, vals, valid, 50)
    for g in range(50):
        v = vals[(gid == g) & valid]
        assert st["count"][g] == v.size
        if v.size == 0:
            assert np.isnan(st["median"][g])
            continue
        assert st["min"][g] == v.min() and st["max"][g] == v.max()
        assert hi > 2**40 or st["sum"][g] == v.sum()  # (an int64 sum of values near 2**62 wraps)
        assert st["median"][g] == pytest.approx(np.median(v))
        if v.size > 1:
            assert st["std"][g] == pytest.approx(np.std(v, ddof=1), rel=1e-9)


@pytest.mark.parametrize("extra,sorts", [(-1, 0), (0, 1)])
def test_group_stats_sort_one_key_while_group_times_span_fits(extra, sorts, monkeypatch):
    """Values sorted within groups by one integer sort of group × span + value while that stays under 2**62; a
    two-key sort at the bound and past it; the same figures either way."""
    import edgeprof.analysis.groupstats as gs

    G, width = 4, (1 << 62) // 4 + extra  # G × width: just under 2**62, then exactly it
    gid = np.array([0, 1, 2, 3, 3, 2, 1, 0, 3])
    vals = np.array([0, width - 1, 5, 7, width - 1, 0, 3, 9, 2], dtype=np.int64)
    calls = []
    real = np.lexsort
    monkeypatch.setattr(gs.np, "lexsort", lambda keys: calls.append(1) or real(keys))
    st = group_stats(gid, vals, None, G)
    assert len(calls) == sorts
    for g in range(G):
        v = vals[gid == g]
        assert (st["min"][g], st["max"][g]) == (v.min(), v.max()) and st["median"][g] == np.median(v)


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
    chunks = [c.to_polars() for c in Timeline(prof, "m").chunks(max_rows=200)]
    assert len(chunks) > 5
    assert pl.concat(chunks).equals(whole)
    assert timeline_table(prof, "m", run_index=3).equals(whole.filter(pl.col("run_index") == 3))
