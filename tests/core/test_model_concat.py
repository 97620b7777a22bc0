"""`concat_runs` (several launches of one program as one profile, the runs one after the other) on real
recordings, against each launch read on its own: the first launch's load/init block once, every execute run
renumbered in order, each event's parent the same event as in its own launch, the other tables (runs, debug
events, allocations) stacked the same way, and the column types of a single launch."""

from __future__ import annotations

import polars as pl
from testdata import DATA, recording

from edgeprof.io.readers import read_profile
from edgeprof.model import concat_runs

ORT = [DATA / "ort" / f for f in ("cnn_cpu_t1_l1.ort.json", "cnn_cpu_t1_l2.ort.json.gz", "cnn_cpu_t1_l3.ort.json.gz")]


def _check(parts, c) -> None:
    offsets = [sum(p.n_runs for p in parts[:k]) for k in range(len(parts))]
    assert c.n_runs == sum(p.n_runs for p in parts)
    for name in ("runs", "allocations", "debug_events"):  # the first launch whole, the others without their load block
        want = pl.concat([getattr(p, name).filter(pl.col("run_index") >= 0 if k else pl.lit(True))
                          .with_columns(pl.when(pl.col("run_index") >= 0).then(pl.col("run_index") + off)
                                        .otherwise(pl.col("run_index")).cast(pl.Int32))
                          .with_columns(pl.col(pl.Categorical).cast(pl.String))
                          for k, (p, off) in enumerate(zip(parts, offsets))], how="vertical_relaxed")
        got = getattr(c, name).with_columns(pl.col(pl.Categorical).cast(pl.String))
        assert got.equals(want), name
    assert c.events.schema == parts[0].events.schema and c.runs.schema == parts[0].runs.schema
    rows = []  # (launch, row in its own launch) of every row of the concatenation
    for k, p in enumerate(parts):
        keep = [i for i, r in enumerate(p.events["run_index"].to_list()) if k == 0 or r >= 0]
        rows += [(k, i) for i in keep]
    assert len(rows) == c.events.height
    own = [p.events.with_columns(pl.col(pl.Categorical).cast(pl.String)).to_dicts() for p in parts]
    cat = c.events.with_columns(pl.col(pl.Categorical).cast(pl.String)).to_dicts()
    for row, (k, i) in zip(cat, rows):
        mine = own[k][i]
        assert (row["name"], row["start_ns"], row["duration_ns"]) == (mine["name"], mine["start_ns"], mine["duration_ns"])
        if mine["parent"] is None:
            assert row["parent"] is None
        else:  # the parent is the same event as in its own launch
            par = cat[row["parent"]]
            assert (par["name"], par["start_ns"]) == (own[k][mine["parent"]]["name"], own[k][mine["parent"]]["start_ns"])
    assert c.latency_ms().tolist() == [x for p in parts for x in p.latency_ms().tolist()]
    assert c.source == ", ".join(p.source for p in parts) and c.file_size == parts[0].file_size  # the first's facts


def test_three_onnx_runtime_launches():
    parts = [read_profile(f) for f in ORT]
    _check(parts, concat_runs(parts))


def test_etdumps_with_debug_events_and_a_load_block(tmp_path):
    f = recording(tmp_path, "toycnn_xnn.N3.debug")
    parts = [read_profile(f), read_profile(f)]
    assert parts[0].debug_events.height > 0
    _check(parts, concat_runs(parts))


def test_one_launch_is_itself():
    p = read_profile(ORT[0])
    assert concat_runs([p]) is p
