"""Edges of the breakdown on small ETDumps written with the reference FlatBuffers runtime: a run without a valid
end-to-end time, and the default length of the operator tables (the CLI's ``--top`` default, 15)."""

from __future__ import annotations

import pytest
from etdump_builder import PE, build, portable_run

from edgeprof import load_etdump
from edgeprof.analysis.breakdown import EventLines, breakdown, per_run_lines


@pytest.fixture(scope="module")
def zero_run(tmp_path_factory):
    # run 0: portable_run(0) — convolution (100 ns overhead, 5000 ns kernel) then relu (200, 300), Method::execute
    # from 0 to 100 + 6000 + 50 + 500 + 50 + 100 = 6800 ns; run 1 the same ops, but its Method::execute lasts 0 ns
    r1 = portable_run(1_000_000)
    r1.events[-1] = PE("Method::execute", 1_000_000, 1_000_000, -1, chain_index=-1)
    p = tmp_path_factory.mktemp("bd") / "zero.etdp"
    p.write_bytes(build([portable_run(0), r1]))
    return load_etdump(p, warn=False)


def test_a_run_without_a_valid_end_to_end_time_counts_no_time(zero_run):
    mat, e2e, runs = per_run_lines(zero_run, EventLines(zero_run))
    assert runs == [0, 1]
    assert e2e.tolist() == [6800, 0]
    assert mat.sum(axis=1).tolist() == [6800, 0]     # the lines still add up to it


def test_the_accounting_check_is_exact_with_a_run_without_time(zero_run):
    b = breakdown(zero_run)
    assert b["accounting_check_max_abs_ns"] == 0


def test_the_operator_tables_list_fifteen_rows_by_default(tmp_path):
    ops = tuple((f"op{k}.out", 100, 1000 + 10 * k) for k in range(16))   # 16 kernels, op15 the longest
    p = tmp_path / "many.etdp"
    p.write_bytes(build([portable_run(0, ops=ops)]))
    b = breakdown(load_etdump(p, warn=False))
    assert len(b["operators_all"]) == 16
    assert [o["operator"] for o in b["operators"]] == [f"native_call_op{k}.out" for k in range(15, 0, -1)]
    assert len(b["portable_hotspots"]) == 15 and len(b["other_top"]) == 15
