"""The reader's smaller tables and decisions at their edges, on hand-built dumps: which delegate ops count as
laid end to end, allocator names by id, and why a profile has nothing to analyse."""

from __future__ import annotations

import polars as pl
import pytest

from etdump_builder import AE, PE, Run, build
from edgeprof.errors import NoRunsError
from edgeprof.io.etdump_read import read_etdump


def write(tmp_path, runs, name="x.etdp"):
    p = tmp_path / name
    p.write_bytes(build(runs))
    return p


def _timing(tmp_path, ops, call=(100, 200)):
    runs = [Run("Execute", [*ops, PE("DELEGATE_CALL", *call, 3), PE("Method::execute", 90, 210, -1)])]
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
    """ETDumpGen numbers a block's allocators from 1 (recorded by the C++ runtime: tests/analysis/test_memory.py);
    0 and ids past the list name none."""
    runs = [Run("Execute", [AE(0, 8), AE(1, 16), AE(2, 32), PE("Method::execute", 0, 30, -1)],
                allocators=["method", "temp"]),
            Run("Execute", [AE(1, 64), PE("Method::execute", 40, 50, -1)])]   # a run without allocators
    a = read_etdump(write(tmp_path, runs)).allocations
    assert a["allocator"].to_list() == [None, "method", "temp", None]
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


@pytest.mark.parametrize("load_first", [False, True])
def test_method_init_nests_in_load_method_whatever_their_name_codes(tmp_path, load_first):
    # names are coded in the order they first appear: Method::init is code 0 when it comes first, and
    # Program::load_method when a load event precedes it — nesting must not depend on a name's code being non-zero
    from edgeprof.io import etdump_decode
    head = [PE("Program::load_method", 1, 3, 0, -1)] if load_first else []
    runs = [Run("Default", [*head, PE("Method::init", 10, 20, 0, -1), PE("Program::load_method", 5, 30, 0, -1)])]
    data = build(runs)
    assert etdump_decode.decode(data, "x")["pe_names"][0] == ("Program::load_method" if load_first else "Method::init")
    p = tmp_path / "i.etdp"
    p.write_bytes(data)
    d = read_etdump(p, allow_empty=True).events.filter(pl.col("run_index") == -1)
    k = len(head)
    assert d["parent"].to_list() == [None] * k + [k + 1, None] and d["depth"].to_list() == [0] * k + [1, 0]


def test_two_delegate_int_ids_keep_their_own_names_and_one_xnnpack_op_makes_the_call_xnnpack(tmp_path):
    runs = [Run("Execute", [PE(None, 100, 110, 2, dd_int=9), PE(None, 110, 120, 2, dd_int=7),
                            PE("DELEGATE_CALL", 95, 125, 2),
                            PE(None, 130, 140, 3, dd_str="Add (ND, F32) #1"), PE("DELEGATE_CALL", 128, 145, 3),
                            PE("Method::execute", 90, 150, -1, -1)])]
    ev = read_etdump(write(tmp_path, runs)).run(0)
    assert ev["name"].cast(pl.String).to_list() == ["9", "7", "DELEGATE_CALL", "Add (ND, F32) #1", "DELEGATE_CALL",
                                                    "Method::execute"]
    assert ev["delegate_backend"].cast(pl.String).to_list() == ["delegated", "delegated", "delegated",
                                                                "XnnpackBackend", "XnnpackBackend", "framework"]


def test_a_block_named_default_that_executes_is_a_run(tmp_path):
    runs = [Run("Default", [PE("Method::init", 1, 2, 0, -1)]),
            Run("Default", [PE("native_call_x.out", 12, 18, 0), PE("Method::execute", 10, 20, -1, -1)])]
    prof = read_etdump(write(tmp_path, runs))
    assert prof.n_runs == 1 and prof.latency_ns().tolist() == [10]


def test_operator_calls_end_to_end_under_method_execute_stay_measured(tmp_path):
    runs = [Run("Execute", [PE("OPERATOR_CALL", 100, 110, 0), PE("OPERATOR_CALL", 110, 130, 1),
                            PE("Method::execute", 100, 140, -1, -1)])]
    ev = read_etdump(write(tmp_path, runs)).run(0)
    assert ev["timing_source"].cast(pl.String).to_list() == ["measured"] * 3


def test_a_kernel_after_its_operator_call_is_not_nested_in_it(tmp_path):
    # parents are recorded after their children; a kernel event recorded after the only OPERATOR_CALL of its
    # instruction has no operator parent and hangs under Method::execute
    runs = [Run("Execute", [PE("OPERATOR_CALL", 100, 120, 0), PE("native_call_x.out", 105, 110, 0),
                            PE("Method::execute", 90, 130, -1, -1)])]
    ev = read_etdump(write(tmp_path, runs)).run(0)
    assert ev["parent"].to_list() == [2, 2, None] and ev["depth"].to_list() == [1, 1, 0]


def test_every_kind_of_debug_value(tmp_path):
    from etdump_builder import DE, TensorMeta
    t1, t2 = TensorMeta(6, [2, 3], [3, 1], 0), TensorMeta(15, [4], [1], 64)
    runs = [Run("Execute", [
        DE("i", 0, int_value=-7, dd_int=3), DE("f", 1, float_value=0.5, dd_str="Conv #1", chain_index=2),
        DE("d", 2, double_value=2.25, output=True), DE("b", 3, bool_value=True), DE("b0", 3, bool_value=False),
        DE("t", 4, tensor=t1), DE("tl", 5, tensor_list=[t1, t2]), DE("tl0", 5, tensor_list=[]),
        DE("n", 6), DE("odd", 7, value_type=9), DE("s", 8, value_type=7),
        PE("Method::execute", 0, 10, -1)])]
    d = read_etdump(write(tmp_path, runs)).debug_events
    assert d["name"].to_list() == ["i", "f", "d", "b", "b0", "t", "tl", "tl0", "n", "odd", "s"]
    assert d["value_type"].to_list() == ["int", "float", "double", "bool", "bool", "tensor", "tensor_list",
                                         "tensor_list", "null", "unknown(9)", "string"]
    assert d["int_value"].to_list() == [-7.0] + [None] * 10
    assert d["float_value"].to_list()[:4] == [None, 0.5, 2.25, None]
    assert d["bool_value"].to_list()[:6] == [None, None, None, True, False, None]
    assert d["is_output"].to_list() == [False, False, True] + [False] * 8
    assert d["delegate_debug_id_int"].to_list()[:2] == [3, None]
    assert d["delegate_debug_id_str"].to_list()[:2] == [None, "Conv #1"]
    assert d["chain_index"].to_list()[:2] == [0, 2] and d["instruction_id"].to_list()[:3] == [0, 1, 2]
    tensors = d["tensors"].to_list()
    one = {"scalar_type": "float32", "sizes": [2, 3], "strides": [3, 1], "offset": 0}
    two = {"scalar_type": "bfloat16", "sizes": [4], "strides": [1], "offset": 64}
    assert tensors[5] == [one] and tensors[6] == [one, two] and tensors[7] == [] and tensors[0] == []
