"""Selecting runs of a profile (warm-up removal, invalid runs): renumbering, parent links, side tables and counts,
checked against the original profile event by event (by name and start time, not by the code's row numbers)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from etdump_builder import AE, PE, Run, build
from edgeprof.io.etdump_read import read_etdump


def _run(t0: int, ms: int) -> Run:
    return Run("Execute", [AE(0, t0), PE("native_call_add.out", t0 + 2, t0 + ms - 2, 0),
                           PE("OPERATOR_CALL", t0 + 1, t0 + ms - 1, 0), PE("Method::execute", t0, t0 + ms, -1)],
               allocators=["a"])


@pytest.fixture
def prof(tmp_path):
    runs = [Run("Default", [PE("Method::init", 1, 2, 0, -1), PE("Program::load_method", 0, 3, 0, -1)]),
            _run(100, 50), _run(200, 40), _run(300, 30), _run(400, 20)]
    p = tmp_path / "p.etdp"
    p.write_bytes(build(runs))
    return read_etdump(p)


def _links(profile):
    """(run, name, start) of each event → (name, start) of its parent, read through the row numbers."""
    ev = profile.events
    names, starts, par, run = (ev["name"].cast(pl.String).to_list(), ev["start_ns"].to_list(), ev["parent"].to_list(),
                               ev["run_index"].to_list())
    return {(names[i], starts[i]): (None if par[i] is None else (names[par[i]], starts[par[i]]), run[i])
            for i in range(ev.height)}


def test_select_runs_keeps_links_and_renumbers(prof):
    before = _links(prof)
    out = prof.select_runs([True, False, True, False])
    after = _links(out)
    kept_starts = {100, 101, 102, 300, 301, 302}
    assert set(after) == {k for k in before if k[1] in kept_starts or before[k][1] == -1}
    for k, (parent, run) in after.items():
        assert parent == before[k][0], k                        # the same parent event
        assert run == {-1: -1, 0: 0, 2: 1}[before[k][1]], k   # runs 0 and 2 become 0 and 1
    assert out.n_runs == 2 and out.latency_ns().tolist() == [50, 30]
    assert out.runs["run_index"].to_list() == [-1, 0, 1]
    assert out.allocations["size_bytes"].to_list() == [100, 300] and out.allocations["run_index"].to_list() == [0, 1]
    assert prof.select_runs([True] * 4) is prof


def test_without_leading_runs_counts_and_clamps(prof):
    out = prof.without_leading_runs(1)
    assert out.latency_ns().tolist() == [40, 30, 20] and out.runs_dropped == 1
    assert out.without_leading_runs(1).runs_dropped == 2
    assert prof.without_leading_runs(0) is prof and prof.without_leading_runs(-3) is prof
    all_gone = prof.without_leading_runs(9)
    assert all_gone.n_runs == 0 and all_gone.runs_dropped == 4


def test_valid_runs_leave_out_zero_and_invalid_times(tmp_path):
    runs = [_run(100, 50), Run("Execute", [PE("Method::execute", 200, 200, -1)]),
            Run("Execute", [PE("Method::execute", 2**40, 2**40 - 5, -1)]), _run(400, 1)]
    p = tmp_path / "v.etdp"
    p.write_bytes(build(runs))
    prof = read_etdump(p)
    out = prof.valid_runs()
    assert out.latency_ns().tolist() == [50, 1] and out.runs_invalid == 2
    assert out.valid_runs() is out


def test_execute_events_when_the_load_block_comes_last(tmp_path):
    runs = [_run(100, 50), Run("Default", [PE("Method::init", 1, 2, 0, -1)]), _run(200, 40)]
    p = tmp_path / "l.etdp"
    p.write_bytes(build(runs))
    prof = read_etdump(p)
    ex = prof.execute_events()
    assert ex["run_index"].to_list() == [0, 0, 0, 1, 1, 1]
    assert np.array_equal(ex["start_ns"].to_numpy(), [102, 101, 100, 202, 201, 200])
    assert prof.latency_source == "method_execute"


@pytest.mark.parametrize("name", ["toycnn_xnn.N20", "tel_xnnq8.N20", "mobilenet_v3_small_portable.N20"])
def test_select_runs_slices_equal_a_filtered_copy(name, tmp_path):
    """Keeping runs takes slices of the event table (no copy of every column) — the same table as filtering a copy
    and renumbering runs and parent links by hand, for a warm-up drop, scattered runs and every other run."""
    import gzip

    import numpy as np
    import polars as pl
    from polars.testing import assert_frame_equal

    from edgeprof.io.etdump_read import read_etdump

    f = tmp_path / "p.etdp"
    from pathlib import Path

    f.write_bytes(gzip.decompress((Path(__file__).resolve().parent.parent / "data" / "etdump" / f"{name}.etdp.gz").read_bytes()))
    p = read_etdump(f)
    n = p.n_runs
    ev = p.events
    r = ev["run_index"].to_numpy().astype(np.int64)
    for keep in (np.arange(n) >= 1, np.arange(n) >= 5, np.random.default_rng(1).random(n) > 0.4, np.arange(n) % 2 == 0):
        kept = (r < 0) | keep[np.clip(r, 0, n - 1)]
        removed_before = np.cumsum(~kept)
        pv = ev["parent"].fill_null(0).to_numpy()
        parent = pl.Series("parent", pv - removed_before[pv], dtype=pl.Int64).set(ev["parent"].is_null(), None)
        ref = ev.with_columns(parent).filter(pl.Series(kept))
        rr = ref["run_index"].to_numpy().astype(np.int64)
        ref = ref.with_columns(pl.Series("run_index", np.where(rr >= 0, (np.cumsum(keep) - 1)[np.maximum(rr, 0)], rr),
                                         dtype=pl.Int32))
        got = p.select_runs(keep).events
        assert_frame_equal(got, ref)
    warm = p.select_runs(np.arange(n) >= 1).events  # the load block and the runs after the warm-up: two slices
    assert (r < 0).any() and warm["name"].n_chunks() == 2
