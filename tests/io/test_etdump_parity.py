"""The reader's first test: ExecuTorch Inspector's numbers, reproduced exactly for every fixture ETDump."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from testdata import ETDUMP_NAMES
from edgeprof import load_etdump
from edgeprof.analysis.inspector_order import inspector_order


@pytest.mark.parametrize("name", ETDUMP_NAMES)
def test_durations_runs_and_order_match_inspector(name, etdump, ground_truth):
    prof = load_etdump(etdump(name))
    gt = ground_truth(name)
    ours = pl.concat([prof.events, inspector_order(prof)], how="horizontal")
    # same number of blocks, runs per block and events per run
    gt_shape = gt.group_by("block_index", "block_name").agg(pl.col("run_index").n_unique().alias("runs"),
                                                             pl.col("event_index").n_unique().alias("events")).sort("block_index")
    our_shape = ours.group_by("block_index", pl.col("block").alias("block_name")).agg(
        pl.col("block_run_index").n_unique().alias("runs"), pl.col("block_event_index").n_unique().alias("events")
    ).sort("block_index")
    assert gt_shape.rows() == our_shape.cast({"block_index": pl.Int64}).rows()
    assert ours.height == gt.height
    joined = gt.join(
        ours.select(pl.col("block_index"), pl.col("block_event_index").alias("event_index"),
                    pl.col("block_run_index").alias("run_index"), pl.col("name").alias("our_name"),
                    pl.col("instruction_id").alias("our_instruction"), pl.col("duration_ns")),
        on=["block_index", "event_index", "run_index"], how="full", coalesce=True)
    assert joined["duration_ns"].null_count() == 0 and joined["duration_ms"].null_count() == 0
    err = (joined["duration_ms"] - joined["duration_ns"] / 1e6).abs().max()
    assert err <= 1e-9
    # same event names at the same positions (= same event order) and same instructions
    assert (joined["event_name"] == joined["our_name"]).all()
    assert (joined["instruction_id"] == joined["our_instruction"]).all()
    # delegated flag ↔ our kind
    deleg = ours.filter(pl.col("kind") == "delegate_op").height
    assert deleg == gt.filter(pl.col("is_delegated_op")).height


@pytest.mark.parametrize("name", ETDUMP_NAMES)
def test_method_execute_per_run_is_the_end_to_end_latency(name, etdump, ground_truth):
    prof = load_etdump(etdump(name))
    gt = ground_truth(name).filter(pl.col("event_name") == "Method::execute").sort("run_index")
    lat = prof.latency_ms()
    assert lat.size == gt.height == prof.n_runs
    assert np.abs(lat - gt["duration_ms"].to_numpy()).max() <= 1e-9
    assert set(prof.runs.filter(pl.col("run_index") >= 0)["e2e_source"].to_list()) == {"method_execute"}
