"""The ETDump reader on constructed files (built with the reference FlatBuffers runtime) and fixtures."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from etdump_builder import AE, DE, PE, Run, TensorMeta, build, portable_run
from edgeprof import load_etdump
from edgeprof.errors import NoRunsError
from edgeprof.io.etdump_read import read_etdump


def write(tmp_path, runs, name="x.etdp", **kw):
    p = tmp_path / name
    p.write_bytes(build(runs, **kw))
    return p


def test_round_trip_of_every_profile_event_field(tmp_path):
    runs = [Run("Default", [PE("Method::init", 10, 20, 0, -1), PE("Program::load_method", 5, 30, 0, -1)]),
            Run("Execute", [PE(None, 100, 110, 7, 0, dd_str="Add (ND) #1", metadata=b"\x01\x02"),
                            PE(None, 110, 140, 7, 0, dd_int=42),
                            PE("DELEGATE_CALL", 95, 150, 7, 0),
                            PE("Method::execute", 90, 160, -1, -1)], bundled_input_index=3)]
    prof = read_etdump(write(tmp_path, runs))
    ev = prof.events
    assert prof.n_runs == 1 and ev.height == 6
    ex = prof.run(0)
    assert ex["name"].to_list() == ["Add (ND) #1", "42", "DELEGATE_CALL", "Method::execute"]
    assert ex["kind"].cast(pl.String).to_list() == ["delegate_op", "delegate_op", "delegate_call", "framework"]
    assert ex["delegate_debug_id_int"].to_list() == [None, 42, None, None]
    assert ex["delegate_debug_id_str"].to_list() == ["Add (ND) #1", None, None, None]
    assert ex["instruction_id"].to_list() == [7, 7, 7, -1]
    assert ex["duration_ns"].to_list() == [10, 30, 55, 70]
    # nesting: ops in the delegate call, the call in Method::execute; self time excludes children
    assert ex["depth"].to_list() == [2, 2, 1, 0]
    assert ex["self_ns"].to_list() == [10, 30, 55 - 40, 70 - 55]
    # delegate ops laid end to end from the delegate start? No: the first starts at 100, the call at 95
    assert set(ex["timing_source"].to_list()) <= {"measured", "synthesized_start"}
    assert ex.filter(pl.col("name") == "42")["timing_source"].item() == "measured"
    assert ex.filter(pl.col("name") == "Add (ND) #1")["delegate_backend"].item() == "XnnpackBackend"
    assert ex.filter(pl.col("name") == "Add (ND) #1")["backend_source"].item() == "inferred"
    assert prof.runs.filter(pl.col("run_index") == 0)["bundled_input_index"].item() == 3
    # the load block: run_index -1, Method::init nested in Program::load_method
    d = prof.events.filter(pl.col("run_index") == -1)
    assert d["block"].unique().to_list() == ["Default"] and d["depth"].to_list() == [1, 0]


def test_portable_nesting_and_exact_self_time_accounting(tmp_path):
    runs = [portable_run(1000), portable_run(50_000), portable_run(90_000)]
    prof = read_etdump(write(tmp_path, runs))
    ev = prof.execute_events()
    # every run: Σ self time of all its events == Method::execute
    per_run = ev.group_by("run_index").agg(pl.col("self_ns").sum()).sort("run_index")["self_ns"].to_numpy()
    assert np.array_equal(per_run, prof.latency_ns().astype(np.int64))
    k = ev.filter(pl.col("kind") == "kernel")
    parents = ev.with_row_index("row")  # kernels' parents are OPERATOR_CALLs of the same instruction
    rows = prof.events.with_row_index("row")
    for parent, instr in zip(k["parent"].to_list(), k["instruction_id"].to_list()):
        p = rows.filter(pl.col("row") == parent)
        assert p["name"].item() == "OPERATOR_CALL" and p["instruction_id"].item() == instr
    assert parents.height == 15


def test_synthesized_starts_are_detected_from_contiguity(tmp_path):
    # a non-XNNPACK delegate whose per-op starts are laid end to end from the call's start
    ops = [PE(None, 100, 130, 3, dd_int=1), PE(None, 130, 170, 3, dd_int=2), PE(None, 170, 171, 3, dd_int=3)]
    runs = [Run("Execute", [*ops, PE("DELEGATE_CALL", 100, 200, 3), PE("Method::execute", 90, 210, -1)])]
    ev = read_etdump(write(tmp_path, runs)).run(0)
    assert ev.filter(pl.col("kind") == "delegate_op")["timing_source"].unique().to_list() == ["synthesized_start"]
    assert ev.filter(pl.col("kind") == "delegate_op")["delegate_backend"].unique().to_list() == ["delegated"]


def test_fixture_xnnpack_ops_are_synthesized_and_inferred(etdump):
    prof = load_etdump(etdump("tel_xnn.N20"))
    ops = prof.execute_events().filter(pl.col("kind") == "delegate_op")
    assert ops["timing_source"].unique().to_list() == ["synthesized_start"]
    assert ops["delegate_backend"].unique().to_list() == ["XnnpackBackend"]
    assert (ops["duration_ns"] % 1000 == 0).all()  # XNNPACK measures whole microseconds
    portable = prof.execute_events().filter(pl.col("kind") == "kernel")
    assert portable["timing_source"].unique().to_list() == ["measured"]
    assert "native_call_native_layer_norm.out" in portable["name"].to_list()


def test_allocation_and_debug_events(tmp_path):
    runs = [Run("Execute", [AE(2, 4096), PE("native_call_add.out", 10, 20, 0), PE("OPERATOR_CALL", 5, 25, 0),
                            DE(None, 0, tensor=TensorMeta(6, [1, 3, 4], [12, 4, 1], 128)),
                            DE("out", -1, int_value=7, output=True),
                            PE("Method::execute", 0, 30, -1)], allocators=["method", "temp"])]
    prof = read_etdump(write(tmp_path, runs))
    a = prof.allocations
    assert a.rows() == [(0, "Execute", 0, 2, "temp", 4096)]  # ids count from 1, as ETDumpGen writes them
    assert prof.allocators == [(0, "method"), (0, "temp")]
    d = prof.debug_events
    assert d["value_type"].to_list() == ["tensor", "int"]
    assert d["tensors"][0].to_list() == [{"scalar_type": "float32", "sizes": [1, 3, 4], "strides": [12, 4, 1], "offset": 128}]
    assert d["int_value"].to_list() == [None, 7.0] and d["is_output"].to_list() == [False, True]
    assert d["name"].to_list() == [None, "out"] and d["sequence"].to_list() == [3, 4]


def test_fixture_debug_events_carry_tensor_metadata(etdump):
    prof = load_etdump(etdump("toycnn_portable.N3.debug"))
    d = prof.debug_events
    assert d.height > 0 and set(d["value_type"].unique().to_list()) <= {"tensor", "tensor_list"}
    first = d["tensors"][0].to_list()[0]
    assert first["scalar_type"] == "float32" and first["sizes"][:2] == [1, 16]


def test_32bit_timer_wraparound_and_impossible_intervals(tmp_path):
    u32 = 2**32 - 1
    runs = [Run("Execute", [PE("native_call_x.out", u32 - 10, 5, 0), PE("OPERATOR_CALL", u32 - 20, 15, 0),
                            PE("weird", 2**40, 2**40 - 5, 1), PE("Method::execute", u32 - 30, 20, -1)])]
    prof = read_etdump(write(tmp_path, runs))
    ev = prof.run(0)
    assert ev["duration_ns"].to_list() == [15, 35, None, 50]
    assert "left out as invalid: 1 event(s) with end before start (not a 32-bit timer wrap) (their durations are " \
           "left empty)" in prof.warnings


def test_runs_without_method_execute_fall_back_to_top_level_events(tmp_path):
    runs = [Run("Execute", [PE("native_call_x.out", 10, 20, 0), PE("OPERATOR_CALL", 5, 25, 0),
                            PE("native_call_y.out", 30, 32, 1), PE("OPERATOR_CALL", 28, 40, 1)])]
    prof = read_etdump(write(tmp_path, runs))
    assert prof.latency_ns().tolist() == [20 + 12]
    assert prof.runs["e2e_source"].to_list() == ["top_level_events"]
    assert any("no Method::execute" in w for w in prof.warnings)


def test_several_method_execute_in_one_run_are_summed(tmp_path):
    ev = [PE("Method::execute", 0, 10, -1), PE("Method::execute", 20, 35, -1)]
    prof = read_etdump(write(tmp_path, [Run("Execute", ev)]))
    assert prof.latency_ns().tolist() == [25]


def test_plain_buffer_without_size_prefix(tmp_path):
    prof = read_etdump(write(tmp_path, [portable_run(0)], size_prefixed=False))
    assert prof.n_runs == 1


def test_long_and_invalid_utf8_names(tmp_path):
    long = "native_call_" + "x" * 300 + ".out"
    runs = [Run("Execute", [PE(long, 1, 2, 0), PE(long, 3, 4, 1), PE("OPERATOR_CALL", 0, 5, 0),
                            PE("Method::execute", 0, 9, -1)])]
    data = bytearray(build(runs))
    prof = read_etdump(write(tmp_path, runs))
    assert prof.run(0)["name"].to_list()[:2] == [long, long]
    i = bytes(data).find(b"OPERATOR_CALL")
    data[i] = 0xFF  # not UTF-8
    (tmp_path / "bad.etdp").write_bytes(bytes(data))
    prof = read_etdump(tmp_path / "bad.etdp")
    assert "\ufffdPERATOR_CALL" in prof.run(0)["name"].to_list()
    assert any("UTF-8" in w for w in prof.warnings)


def test_load_only_file_has_no_runs(tmp_path):
    p = write(tmp_path, [Run("Default", [PE("Method::init", 0, 5, 0), PE("Program::load_method", 0, 9, 0)])])
    with pytest.raises(NoRunsError, match="holds only a load/init block"):
        load_etdump(p)
    prof = load_etdump(p, allow_empty=True)
    assert prof.n_runs == 0 and prof.events.height == 2


def test_runs_numbered_in_file_order_and_empty_blocks_skipped(tmp_path):
    runs = [Run("Default", [PE("Method::init", 0, 5, 0)]), portable_run(100), Run("Execute", []), portable_run(900)]
    prof = read_etdump(write(tmp_path, runs))
    assert prof.runs["run_index"].to_list() == [-1, 0, -1, 1]
    assert any("hold no events" in w for w in prof.warnings)


def test_to_pandas(etdump):
    prof = load_etdump(etdump("toycnn_xnn.N20"))
    df = prof.to_pandas()
    assert list(df.columns) == prof.events.columns and len(df) == prof.n_events
    assert df["duration_ns"].sum() == prof.events["duration_ns"].sum()
    assert df["delegate_debug_id_int"].isna().all()


def test_every_derived_column_of_a_hand_built_dump(tmp_path):
    # rows (file order): 0 init, 1 load | run 0: 2 nameless, 3 delegate op "7", 4 DELEGATE_CALL, 5 kernel,
    # 6 OPERATOR_CALL, 7 Method::execute | an empty Execute block (skipped) | run 1: 8 kernel, 9 OPERATOR_CALL, 10 execute
    runs = [Run("Default", [PE("Method::init", 10, 20, 0, -1), PE("Program::load_method", 5, 30, 0, -1)]),
            Run("Execute", [PE(None, 100, 105, 1),
                            PE(None, 106, 110, 2, dd_int=7),
                            PE("DELEGATE_CALL", 95, 150, 2),
                            PE("native_call_add.out", 151, 158, 3),
                            PE("OPERATOR_CALL", 150, 160, 3),
                            PE("Method::execute", 90, 170, -1, -1)]),
            Run("Execute", []),
            Run("Execute", [PE("native_call_add.out", 1002, 1010, 3), PE("OPERATOR_CALL", 1000, 1012, 3),
                            PE("Method::execute", 990, 1020, -1, -1)])]
    prof = read_etdump(write(tmp_path, runs))
    ev = prof.events
    assert ev["run_index"].to_list() == [-1, -1, 0, 0, 0, 0, 0, 0, 1, 1, 1]
    assert ev["event_index"].to_list() == [0, 1, 0, 1, 2, 3, 4, 5, 0, 1, 2]
    assert ev["name"].cast(pl.String).to_list() == [
        "Method::init", "Program::load_method", "", "7", "DELEGATE_CALL", "native_call_add.out", "OPERATOR_CALL",
        "Method::execute", "native_call_add.out", "OPERATOR_CALL", "Method::execute"]
    assert ev["kind"].cast(pl.String).to_list() == [
        "framework", "framework", "other", "delegate_op", "delegate_call", "kernel", "operator_call", "framework",
        "kernel", "operator_call", "framework"]
    assert ev["parent"].to_list() == [1, None, 7, 4, 7, 6, 7, None, 9, 10, None]
    assert ev["depth"].to_list() == [1, 0, 1, 2, 1, 2, 1, 0, 2, 1, 0]
    assert ev["duration_ns"].to_list() == [10, 25, 5, 4, 55, 7, 10, 80, 8, 12, 30]
    assert ev["self_ns"].to_list() == [10, 15, 5, 4, 51, 7, 3, 80 - 5 - 55 - 10, 8, 4, 18]
    assert ev["delegate_backend"].cast(pl.String).to_list() == [
        "framework", "framework", "portable", "delegated", "delegated", "portable", "portable", "framework",
        "portable", "portable", "framework"]
    assert ev["chain_index"].to_list() == [-1, -1, 0, 0, 0, 0, 0, -1, 0, 0, -1]
    assert ev["instruction_id"].to_list() == [0, 0, 1, 2, 2, 3, 3, -1, 3, 3, -1]
    assert ev["start_ns"].to_list()[:3] == [10, 5, 100] and ev["end_ns"].to_list()[:3] == [20, 30, 105]
    assert ev["block"].cast(pl.String).to_list() == ["Default"] * 2 + ["Execute"] * 9
    assert prof.n_runs == 2 and prof.latency_ns().tolist() == [80, 30]
    r = prof.runs
    assert r["block"].to_list() == ["Default", "Execute", "Execute", "Execute"]
    assert r["run_index"].to_list() == [-1, 0, -1, 1] and r["n_events"].to_list() == [2, 6, 0, 3]
    assert r["e2e_ns"].to_list() == [None, 80, None, 30]
    assert any("1 RunData block(s) hold no events" in w for w in prof.warnings)


@pytest.mark.parametrize("start,end,e2e,problem", [(5, 6, 1, None), (5, 5, None, "zero duration")])
def test_a_run_is_timed_from_one_nanosecond(tmp_path, start, end, e2e, problem):
    runs = [Run("Execute", [PE("Method::execute", 0, 100, -1, -1)]),
            Run("Execute", [PE("Method::execute", start, end, -1, -1)])]
    r = read_etdump(write(tmp_path, runs), allow_empty=True).runs
    assert r["e2e_ns"].to_list() == [100, e2e] and r["e2e_problem"].to_list() == [None, problem]
    assert r["e2e_source"].to_list() == ["method_execute"] * 2
    assert r["start_ns"].to_list() == [0, start] and r["end_ns"].to_list() == [100, end]
