"""Trace export: strictly valid Chrome trace-event JSON for every fixture, nesting repaired and marked."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import polars as pl
import pytest
from click.testing import CliRunner
from testdata import ETDUMP_NAMES
from trace_checker import check_trace

from edgeprof import load_etdump
from edgeprof.cli import main
from edgeprof.render.trace import build_trace, select_runs


@pytest.mark.parametrize("name", ETDUMP_NAMES)
def test_every_fixture_exports_a_strictly_valid_trace(name, etdump):
    prof = load_etdump(etdump(name), warn=False)
    out = build_trace(prof)
    doc = json.loads(json.dumps(out["trace"]))
    counts = check_trace(doc)
    expected = prof.events.filter(pl.col("duration_ns").is_not_null()).height
    assert counts["slices"] == out["stats"]["slices"] == expected
    assert counts["tracks"] == prof.n_runs + (1 if (prof.events["run_index"] < 0).any() else 0)
    # durations are the ETDump's (to the nanosecond) wherever nothing had to be adjusted
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X" and "adjusted" not in e["args"]]
    durs = dict(zip(zip(prof.events["run_index"].to_list(), prof.events["event_index"].to_list()),
                    prof.events["duration_ns"].to_list()))
    for e in xs[:2000]:
        assert round(e["dur"] * 1000) == durs[(e["args"]["run_index"], e["args"]["event_index"])]


def test_xnnpack_ops_sit_inside_their_delegate_call(etdump):
    prof = load_etdump(etdump("mobilenet_v3_small_xnn.N20"), warn=False)
    doc = build_trace(prof, runs=[0, 1])["trace"]
    check_trace(doc)
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    ops = [e for e in xs if e["cat"] == "delegate_op"]
    assert ops and all(e["args"]["synthesized_start"] and "instruction_id" in e["args"] for e in ops)
    assert all(e["args"]["category"] for e in xs)
    calls = {(e["tid"], e["args"]["event_index"]): e for e in xs if e["cat"] == "delegate_call"}
    for o in ops:
        parent = calls[(o["tid"], o["args"]["parent_event_index"])]
        assert parent["ts"] <= o["ts"] and o["ts"] + o["dur"] <= parent["ts"] + parent["dur"] + 1e-9


def test_overrunning_synthesized_ops_are_clamped_and_marked(tmp_path):
    from etdump_builder import PE, Run, build

    # two XNNPACK ops of 300 µs each inside a 500 µs delegate call: the second must be clamped
    ev = [PE(None, 1_000, 301_000, 0, dd_str="Fully Connected (NC, F32) GEMM #1"),
          PE(None, 301_000, 601_000, 0, dd_str="Add (ND) #1"),
          PE("DELEGATE_CALL", 1_000, 501_000, 0), PE("Method::execute", 0, 510_000, -1, chain_index=-1)]
    p = tmp_path / "overrun.etdp"
    p.write_bytes(build([Run("Execute", ev)]))
    prof = load_etdump(p, warn=False)
    out = build_trace(prof)
    check_trace(out["trace"])
    add = next(e for e in out["trace"]["traceEvents"] if e["name"] == "Add (ND) #1")
    assert add["args"]["adjusted"]["recorded_dur_us"] == 300.0 and add["dur"] == pytest.approx(200.0)
    assert out["stats"]["adjusted"] == 1


def test_run_selection_and_cli(tmp_path, etdump):
    prof = load_etdump(etdump("toycnn_xnn.N20"), warn=False)
    assert select_runs(prof, "0:5") == [0, 1, 2, 3, 4] and select_runs(prof, "3,7,-1") == [3, 7, 19]
    assert select_runs(prof, None) == list(range(20)) and select_runs(prof, "18:") == [18, 19]
    with pytest.raises(ValueError):
        select_runs(prof, "25")
    src = tmp_path / "toycnn_xnn.N20.etdp"
    shutil.copy(etdump("toycnn_xnn.N20"), src)
    res = CliRunner().invoke(main, ["trace", str(src), "--runs", "0:5", "--no-init", "--json"])
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)
    doc = json.loads((tmp_path / "toycnn_xnn.N20.trace.json").read_text())  # the whole stem: one trace per recording
    assert check_trace(doc)["tracks"] == 5 == info["tracks"] and info["runs"] == [0, 1, 2, 3, 4]
    res = CliRunner().invoke(main, ["trace", str(src), "--runs", "x:y"])
    assert res.exit_code == 2 and "--runs 'x:y'" in res.output
    res = CliRunner().invoke(main, ["trace", str(tmp_path / "missing.etdp")])
    assert res.exit_code == 2 and "missing.etdp" in res.output


def test_checker_rejects_broken_traces():
    good = {"traceEvents": [{"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "p"}},
                            {"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "t"}},
                            {"name": "a", "ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
                            {"name": "b", "ph": "X", "pid": 1, "tid": 1, "ts": 2, "dur": 3}]}
    check_trace(good)
    overlap = json.loads(json.dumps(good))
    overlap["traceEvents"][3]["dur"] = 9.5
    with pytest.raises(AssertionError, match="without nesting"):
        check_trace(overlap)
    unnamed = json.loads(json.dumps(good))
    del unnamed["traceEvents"][1]
    with pytest.raises(AssertionError, match="no thread_name"):
        check_trace(unnamed)
    bad_type = json.loads(json.dumps(good))
    bad_type["traceEvents"][2]["ts"] = "0"
    with pytest.raises(AssertionError, match="ts must be a number"):
        check_trace(bad_type)


def _trace_processor() -> str | None:
    return os.environ.get("TRACE_PROCESSOR_SHELL") or shutil.which("trace_processor_shell")


@pytest.mark.skipif(_trace_processor() is None, reason="trace_processor_shell is not installed (it cannot be "
                    "downloaded here); set TRACE_PROCESSOR_SHELL to run this check")
def test_trace_processor_loads_the_trace(tmp_path, etdump):
    prof = load_etdump(etdump("tel_xnn.N20"), warn=False)
    out = build_trace(prof, runs=[0, 1, 2])
    p = tmp_path / "t.json"
    p.write_text(json.dumps(out["trace"]))
    q = tmp_path / "q.sql"
    q.write_text("select count(*) as n from slice;")
    res = subprocess.run([_trace_processor(), "-q", str(q), str(p)], capture_output=True, text=True, timeout=120,
                         check=True)
    assert str(out["stats"]["slices"]) in res.stdout


@pytest.mark.parametrize("name", ETDUMP_NAMES)
def test_fast_writer_equals_the_reference(name, etdump, tmp_path):
    """The vectorized writer produces the per-event reference implementation's document, slice for slice
    (same order, names, times, nesting repairs and args), for every fixture, with and without load/init."""
    from trace_reference import reference_trace

    prof = load_etdump(etdump(name), warn=False)
    for kw in ({}, {"include_init": False, "runs": [0, 2]}):
        fast, ref = build_trace(prof, **kw), reference_trace(prof, **kw)
        assert fast["stats"] == ref["stats"]
        assert fast["trace"] == json.loads(json.dumps(ref["trace"]))
    from edgeprof.render.trace import write_trace

    write_trace(tmp_path / "t.json", prof)
    assert json.loads((tmp_path / "t.json").read_text()) == json.loads(json.dumps(reference_trace(prof)["trace"]))


def test_fast_writer_repairs_nesting_like_the_reference(tmp_path):
    """Random overlapping delegate ops inside delegate calls (the case that needs repairs): same adjusted times."""
    import random

    from etdump_builder import PE, Run, build
    from trace_reference import reference_trace

    rng = random.Random(5)
    for case in range(30):
        ev, t = [], 0
        for call in range(rng.randint(1, 4)):
            c0 = t + rng.randint(0, 50)
            c1 = c0 + rng.randint(100, 900)
            x = c0
            for k in range(rng.randint(1, 6)):
                d = rng.randint(10, 400)
                ev.append(PE(None, x, x + d, call, dd_str=f"Op {k} #{call}"))
                x += rng.choice([d, d // 2, d + 30])
            ev.append(PE("DELEGATE_CALL", c0, c1, call))
            t = c1 + rng.randint(-40, 60)
        ev.append(PE("Method::execute", 0, t + 1000, -1, chain_index=-1))
        p = tmp_path / f"c{case}.etdp"
        p.write_bytes(build([Run("Execute", ev), Run("Execute", ev)]))
        prof = load_etdump(p, warn=False)
        fast, ref = build_trace(prof), reference_trace(prof)
        assert fast["trace"] == json.loads(json.dumps(ref["trace"])), case
        check_trace(fast["trace"])
