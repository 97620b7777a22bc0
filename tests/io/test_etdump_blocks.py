"""An ETDump read block by block of whole runs is the file read whole: every table, warning and digest."""

from __future__ import annotations

import gzip

import numpy as np
import polars as pl
import pytest

from edgeprof.errors import CorruptETDumpError
from edgeprof.io.etdump_read import ETDumpBlocks, plan_blocks, read_etdump
from etdump_builder import AE, DE, PE, Run, build, portable_run, xnnpack_runs
from testdata import DATA

TABLES = ("events", "runs", "allocations", "debug_events")


def _same_as_whole(path, max_events):
    whole = read_etdump(path)
    reader = ETDumpBlocks(path, max_events)
    blocks = list(reader)
    for name in TABLES:
        got = pl.concat([getattr(b, name) for b in blocks])
        assert got.equals(getattr(whole, name)), (path, max_events, name)
    assert [a for b in blocks for a in b.allocators] == whole.allocators
    assert (reader.warnings, reader.sha256, reader.file_size) == (whole.warnings, whole.sha256, whole.file_size)
    assert (reader.n_runs, reader.n_events) == (whole.n_runs, whole.n_events)
    return whole, blocks, reader


@pytest.mark.parametrize("name", ["etdump/mobilenet_v3_small_xnnq8.N200", "etdump/toycnn_portable.N3.debug",
                                  "etdump/tel_portable.N20", "llm/llm_kv_xnn.G2S64"],
                         ids=lambda n: n.split("/")[1])
def test_real_recordings_in_blocks_equal_the_whole_file(name, tmp_path):
    raw = tmp_path / (name.split("/")[1] + ".etdp")  # uncompressed: the mapped-file path
    raw.write_bytes(gzip.decompress((DATA / f"{name}.etdp.gz").read_bytes()))
    whole = read_etdump(raw)
    per_run = int(whole.runs["n_events"].max())
    for max_events in (1, per_run * 3 + 1, 10**9):
        _, blocks, _ = _same_as_whole(raw, max_events)
        sizes = [b.runs.height for b in blocks]
        if max_events == 1:  # one RunData per block
            assert sizes == [1] * whole.runs.height
        if max_events == 10**9:
            assert len(blocks) == 1
    _same_as_whole(DATA / f"{name}.etdp.gz", 50)  # gzip: decompressed in memory, then the same blocks


def test_warnings_counted_across_blocks_equal_the_whole_file(tmp_path):
    """Every kind of reader warning, spread over several blocks: the counts add up (hand-counted here)."""
    runs = [Run("Default", [PE("Program::load_method", 0, 50), PE("Method::init", 10, 40)])]
    for i in range(6):
        r = portable_run(1_000_000 * (i + 1))
        if i in (1, 4):  # one end-before-start kernel each (a value above 2^32: not a timer wrap)
            r.events[0] = PE("native_call_convolution.out", 2**40, 2**40 - 5, 0)
        if i == 2:  # no Method::execute: timed from its top-level events
            r.events = r.events[:-1]
        if i == 3:
            r.events.append(None)  # an empty Event
            r.events.append(PE("native_call_add.out", 5, 6, 9))
        if i == 5:
            r.events[-1] = PE("Method::execute", 2**40, 2**40 - 1, -1, chain_index=-1)  # its e2e is invalid
        runs.append(r)
    runs.insert(3, Run("Execute", []))  # an empty RunData in the middle
    runs.append(Run("Execute", [AE(0, 64), DE("out", 1, int_value=3)]))
    path = tmp_path / "warn.etdp"
    path.write_bytes(build(runs))
    whole = read_etdump(path)
    text = " | ".join(whole.warnings)
    assert "1 RunData block(s) hold no events" in text
    assert "3 event(s) with end before start" in text  # two kernels, one Method::execute
    assert ("2 of 7 run(s) have no valid end-to-end time (1: its timed events have invalid timestamps, "
            "1: no profiling events)") in text  # run 5, and the run of only an allocation and a debug event
    assert "1 run(s) have no Method::execute event" in text
    assert "1 Event table(s) hold no payload" in text
    for max_events in (1, 7, 16, 30):
        _same_as_whole(path, max_events)


def test_blocks_are_planned_at_their_boundaries():
    c = np.array([3, 3, 3])
    assert plan_blocks(c, 9) == [(0, 3)]
    assert plan_blocks(c, 8) == [(0, 2), (2, 3)]
    assert plan_blocks(c, 6) == [(0, 2), (2, 3)]
    assert plan_blocks(c, 5) == [(0, 1), (1, 2), (2, 3)]
    assert plan_blocks(np.array([2, 10, 1]), 4) == [(0, 1), (1, 2), (2, 3)]  # a RunData above the limit: alone
    assert plan_blocks(np.array([0, 0, 4]), 4) == [(0, 3)]
    assert plan_blocks(np.array([], dtype=np.int64), 4) == [(0, 0)]  # a file without RunData: one empty block
    assert plan_blocks(c, None) == [(0, 3)]


def test_a_corrupt_block_is_a_one_line_error_naming_the_file(tmp_path):
    data = bytearray(build(xnnpack_runs([("Convolution (NHWC, F32) GEMM", 5)], runs=40)))
    path = tmp_path / "cut.etdp"
    path.write_bytes(bytes(data[: len(data) // 2]))
    with pytest.raises(CorruptETDumpError) as e:
        list(ETDumpBlocks(path, 10))
    assert str(path) in str(e.value) and "\n" not in str(e.value)


def test_a_file_that_shrinks_while_it_is_read_is_an_input_error(tmp_path):
    """The file is mapped: pages cut off under the mapping would fault, so the size is checked before each block."""
    path = tmp_path / "shrinks.etdp"
    path.write_bytes(build(xnnpack_runs([("Convolution (NHWC, F32) GEMM", 5)], runs=40)))
    blocks = iter(ETDumpBlocks(path, 12))
    assert next(blocks).n_runs == 4
    with open(path, "r+b") as f:
        f.truncate(100)
    with pytest.raises(CorruptETDumpError) as e:
        next(blocks)
    assert "shrank while it was read" in str(e.value) and str(path) in str(e.value)
