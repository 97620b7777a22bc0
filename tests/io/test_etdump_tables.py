"""The reader's smaller tables and decisions at their edges, on hand-built dumps: which delegate ops count as
laid end to end, allocator names by id, and why a profile has nothing to analyse."""

from __future__ import annotations

import polars as pl
import pytest

from etdump_builder import AE, PE, Run, build
from edgeprof.errors import NoRunsError
from edgeprof.io.etdump import read_etdump


def write(tmp_path, runs, name="x.etdp"):
    p = tmp_path / name
    p.write_bytes(build(runs))
    return p


def _timing(tmp_path, ops, call=(100, 200)):
    runs = [Run("Execute", ops + [PE("DELEGATE_CALL", *call, 3), PE("Method::execute", 90, 210, -1)])]
    ev = read_etdump(write(tmp_path, runs)).run(0)
    return ev.filter(pl.col("kind") == "delegate_op")["timing_source"].cast(pl.String).to_list()


def test_two_ops_laid_end_to_end_from_the_call_start_are_synthesized(tmp_path):
    assert _timing(tmp_path, [PE(None, 100, 130, 3, dd_int=1), PE(None, 130, 170, 3, dd_int=2)]) == \
        ["synthesized_start"] * 2


def test_one_op_alone_is_measured(tmp_path):
    assert _timing(tmp_path, [PE(None, 100, 130, 3, dd_int=1)]) == ["measured"]


@pytest.mark.parametrize("ops", [
    [PE(None, 101, 130, 3, dd_int=1), PE(None, 130, 170, 3, dd_int=2)],   # first start ≠ the call's start
    [PE(None, 100, 130, 3, dd_int=1), PE(None, 131, 170, 3, dd_int=2)],   # a gap between ops
    [PE(None, 100, 130, 3, dd_int=1), PE(None, 129, 170, 3, dd_int=2)],   # an overlap
])
def test_a_broken_chain_is_measured(tmp_path, ops):
    assert _timing(tmp_path, ops) == ["measured"] * 2


def test_two_delegate_calls_are_judged_apart(tmp_path):
    runs = [Run("Execute", [PE(None, 100, 130, 3, dd_int=1), PE(None, 130, 170, 3, dd_int=2),
                            PE("DELEGATE_CALL", 100, 200, 3),
                            PE(None, 300, 310, 4, dd_int=3), PE(None, 311, 320, 4, dd_int=4),
                            PE("DELEGATE_CALL", 300, 400, 4), PE("Method::execute", 90, 410, -1)])]
    ev = read_etdump(write(tmp_path, runs)).run(0)
    assert ev.filter(pl.col("kind") == "delegate_op")["timing_source"].cast(pl.String).to_list() == \
        ["synthesized_start"] * 2 + ["measured"] * 2


def test_allocator_names_by_id_and_ids_out_of_range(tmp_path):
    runs = [Run("Execute", [AE(0, 8), AE(1, 16), AE(2, 32), PE("Method::execute", 0, 30, -1)],
                allocators=["method", "temp"]),
            Run("Execute", [AE(0, 64), PE("Method::execute", 40, 50, -1)])]   # a run without allocators
    a = read_etdump(write(tmp_path, runs)).allocations
    assert a["allocator"].to_list() == ["method", "temp", None, None]
    assert a["run_index"].to_list() == [0, 0, 0, 1] and a["size_bytes"].to_list() == [8, 16, 32, 64]


@pytest.mark.parametrize("runs,why", [
    ([], "holds no RunData block: nothing to analyse"),
    ([Run("Execute", []), Run("Execute", [])], "its 2 RunData block(s) hold no events: nothing to analyse"),
    ([Run("Default", [PE("Method::init", 0, 5, 0, -1)])],
     "holds only a load/init block (Default, no Method::execute) and no execute run: nothing to analyse"),
    ([Run("Execute", [PE("Method::execute", 5, 5, -1)]), Run("Execute", [PE("Method::execute", 5, 5, -1)]),
      Run("Execute", [PE("Method::execute", 2**40, 2**40 - 5, -1)])],
     "none of its 3 execute run(s) has a valid end-to-end time (2 zero duration, 1 its timed events have invalid "
     "timestamps): nothing to measure"),
])
def test_why_a_profile_has_nothing_to_analyse(tmp_path, runs, why):
    with pytest.raises(NoRunsError) as e:
        read_etdump(write(tmp_path, runs))
    assert str(e.value).endswith(why)
    assert read_etdump(write(tmp_path, runs), allow_empty=True) is not None


def test_one_valid_run_is_enough(tmp_path):
    runs = [Run("Execute", [PE("Method::execute", 5, 5, -1)]), Run("Execute", [PE("Method::execute", 5, 9, -1)])]
    assert read_etdump(write(tmp_path, runs)).latency_ns().tolist()[-1] == 4


def test_version_bundled_index_and_events_without_one_payload(tmp_path):
    runs = [Run("Execute", [None, (PE("native_call_a.out", 1, 3, 0), AE(0, 8)), None, (AE(0, 16), PE("b", 4, 5, 1)),
                            PE("Method::execute", 0, 10, -1)], allocators=["m"]),
            Run("Execute", [PE("Method::execute", 20, 30, -1)], bundled_input_index=4)]
    p = tmp_path / "v.etdp"
    p.write_bytes(build(runs, version=7))
    prof = read_etdump(p)
    assert prof.version == 7
    assert prof.runs["bundled_input_index"].to_list() == [-1, 4]
    # an Event with several payloads counts as its first one in the order profile, allocation, debug
    assert prof.run(0)["name"].cast(pl.String).to_list() == ["native_call_a.out", "b", "Method::execute"]
    assert prof.allocations.height == 0
    assert "2 Event table(s) hold no payload and were skipped" in prof.warnings
    assert "2 Event table(s) hold more than one payload; the first was used" in prof.warnings
    q = tmp_path / "w.etdp"
    q.write_bytes(build([Run("Execute", [PE("Method::execute", 0, 10, -1)])]))
    assert read_etdump(q).version == 0 and not read_etdump(q).warnings
