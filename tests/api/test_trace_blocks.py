"""``trace`` of every run, block by block of runs: the whole file's document, byte for byte, holding a block at a time."""

from __future__ import annotations

import json

import pytest

from edgeprof import api
from edgeprof.errors import InputError, NoRunsError
from edgeprof.io.etdump_read import read_etdump
from edgeprof.io.workspace import Workspace
from edgeprof.render.trace import TraceParts
from etdump_builder import PE, Run, build, portable_run
from reader_spies import built_blocks, second_block_attaches_differently
from testdata import DATA, recording
from trace_reference import reference_trace


def _trace(f, out, etrecord=None, **kw):
    ws = Workspace(f.parent, **({"etrecord": etrecord} if etrecord else {}))
    res = api.trace(f, out=out, ws=ws, **kw)
    return out.read_bytes(), ws, res


@pytest.mark.parametrize("name,etrecord", [("tel_xnnq8.N20", "tel_xnnq8"), ("toycnn_portable.N20", "toycnn_portable"),
                                           ("mobilenet_v3_small_xnnq8.N200", None)])
def test_blocks_write_the_whole_file_s_trace(tmp_path, name, etrecord):
    f = recording(tmp_path, name)
    rec = DATA / "etrecord" / f"{etrecord}.etrecord" if etrecord else None
    for kw in ({}, {"op_types": "inline"}, {"include_init": False}):
        whole, _, wres = _trace(f, tmp_path / "whole.json", rec, block_events=0, **kw)
        for b in (1, 500, None):
            got, ws, res = _trace(f, tmp_path / f"b{b}.json", rec, block_events=b, **kw)
            assert got == whole, (kw, b)
            keys = ("slices", "adjusted", "skipped_no_duration", "runs", "tracks")
            assert [res[k] for k in keys] == [wres[k] for k in keys]
            assert ws.reads["profile_read"] == 1  # read once, block by block: no fallback
    # and the document is the per-event reference implementation's (the op-type lists inline)
    ws = Workspace(f.parent, **({"etrecord": rec} if rec else {}))
    got, _, _ = _trace(f, tmp_path / "inline.json", rec, block_events=1, op_types="inline")
    assert json.loads(got) == json.loads(json.dumps(reference_trace(ws.profile(f))["trace"]))


def test_the_reference_ids_resolve_to_the_inline_lists(tmp_path):
    f = recording(tmp_path, "tel_xnnq8.N20")
    rec = DATA / "etrecord" / "tel_xnnq8.etrecord"
    ref = json.loads(_trace(f, tmp_path / "r.json", rec, block_events=1)[0])
    inline = json.loads(_trace(f, tmp_path / "i.json", rec, block_events=0, op_types="inline")[0])
    lists = ref["otherData"].pop("op_types")
    for e in ref["traceEvents"]:
        if "op_types_id" in e.get("args", {}):
            e["args"]["op_types"] = lists[e["args"].pop("op_types_id")]
    assert ref == inline
    assert len(lists) == len({json.dumps(v) for v in lists}) > 1  # each distinct list once


def test_slices_out_of_the_file_s_order_are_read_whole(tmp_path):
    """Load/init events after an execute run (they sort first: track 0), and a run that starts before the time
    origin of the blocks before it: the blocks cannot write the whole file's order, so the file is read whole."""
    init = Run("Default", [PE("Program::load_method", 7_000_000, 7_000_050), PE("Method::init", 7_000_010, 7_000_040)])
    init_between = Run("Default", [PE("Program::load_method", 7_000_060, 7_000_070)])
    cases = {"late_init": [portable_run(0), init, portable_run(10_000_000)],
             # two load/init blocks: the second's event falls between the first's (after its time origin)
             "init_between": [init, init_between, portable_run(10_000_000)],
             "earlier_start": [portable_run(5_000_000), portable_run(0), portable_run(9_000_000)]}
    for name, runs in cases.items():
        f = tmp_path / f"{name}.etdp"
        f.write_bytes(build(runs))
        whole, _, _ = _trace(f, tmp_path / f"{name}_whole.json", block_events=0)
        got, ws, _ = _trace(f, tmp_path / f"{name}_b.json", block_events=1)
        assert got == whole, name
        assert ws.reads["profile_read"] == 2, name  # the blocks gave up, the whole file was read
        assert json.loads(got) == json.loads(json.dumps(reference_trace(read_etdump(f))["trace"]))
    # in file order the same runs stream (one read)
    f = tmp_path / "in_order.etdp"
    f.write_bytes(build([init, portable_run(10_000_000), portable_run(20_000_000)]))
    got, ws, _ = _trace(f, tmp_path / "o.json", block_events=1)
    assert ws.reads["profile_read"] == 1 and got == _trace(f, tmp_path / "ow.json", block_events=0)[0]


def test_slices_without_a_duration_are_counted_over_blocks(tmp_path):
    """An operator whose end precedes its start has no duration: not exported, counted, in every block."""
    runs = []
    for i in range(6):
        r = portable_run(1_000_000 * i)
        if i % 2:
            r.events[0] = PE("native_call_convolution.out", 2**40, 2**40 - 1, 0)  # backwards, beyond a 32-bit wrap
        runs.append(r)
    f = tmp_path / "nodur.etdp"
    f.write_bytes(build(runs))
    whole = api.trace(f, out=tmp_path / "w.json", ws=Workspace(tmp_path), block_events=0)
    got = api.trace(f, out=tmp_path / "b.json", ws=Workspace(tmp_path), block_events=1)
    assert got["skipped_no_duration"] == whole["skipped_no_duration"] == 3  # runs 1, 3 and 5 (hand count)
    assert got["slices"] == whole["slices"] == 6 * 5 - 3
    assert (tmp_path / "b.json").read_bytes() == (tmp_path / "w.json").read_bytes()


def test_a_block_is_all_the_events_held(tmp_path, monkeypatch):
    """Memory by counting: no event table larger than a block is built or turned into slices."""
    f = tmp_path / "x.etdp"
    f.write_bytes(build([portable_run(1_000_000 * i) for i in range(40)]))
    built, sliced, real_slices = built_blocks(monkeypatch), [], TraceParts.slices

    def spy_slices(self, block, first_row=0):
        sliced.append(block.n_events)
        return real_slices(self, block, first_row)

    monkeypatch.setattr(TraceParts, "slices", spy_slices)
    _, _, res = _trace(f, tmp_path / "t.json", block_events=12)
    n = read_etdump(f).n_events
    assert built[:len(sliced)] == sliced and max(sliced) <= 12 and sum(sliced) == n
    assert res["slices"] == n and res["tracks"] == 40


def test_no_run_and_a_failing_block_leave_nothing_behind(tmp_path, monkeypatch):
    f = tmp_path / "d" / "init_only.etdp"
    f.parent.mkdir()
    f.write_bytes(build([Run("Default", [PE("Program::load_method", 0, 50)])]))
    with pytest.raises(NoRunsError, match="no execute run"):
        api.trace(f, out=tmp_path / "d" / "t.json", ws=Workspace(f.parent), block_events=1)
    assert sorted(p.name for p in f.parent.iterdir()) == ["init_only.etdp"]

    g = tmp_path / "e" / "runs.etdp"
    g.parent.mkdir()
    g.write_bytes(build([portable_run(1_000_000 * i) for i in range(6)]))
    (g.parent / "t.json").write_text("the trace before")
    real, calls = TraceParts.slices, []

    def fail_third(self, block, first_row=0):
        calls.append(1)
        if len(calls) == 3:
            raise InputError(g, "unreadable block")
        return real(self, block, first_row)

    monkeypatch.setattr(TraceParts, "slices", fail_third)
    with pytest.raises(InputError, match="unreadable block"):
        api.trace(g, out=g.parent / "t.json", ws=Workspace(g.parent), block_events=8)
    assert sorted(p.name for p in g.parent.iterdir()) == ["runs.etdp", "t.json"]
    assert (g.parent / "t.json").read_text() == "the trace before"


def test_an_etrecord_that_attaches_differently_to_a_later_block_sends_the_file_whole(tmp_path, monkeypatch):
    f = recording(tmp_path, "tel_xnnq8.N20")
    rec = DATA / "etrecord" / "tel_xnnq8.etrecord"
    whole, _, _ = _trace(f, tmp_path / "whole.json", rec, block_events=0)
    seen = second_block_attaches_differently(monkeypatch)
    got, ws, _ = _trace(f, tmp_path / "b.json", rec, block_events=200)
    assert ws.reads["profile_read"] == 2 and len(seen) >= 3
    assert got == whole
