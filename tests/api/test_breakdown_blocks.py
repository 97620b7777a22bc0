"""``breakdown`` of an ETDump block by block of runs (the CLI's way): the whole file's accounting and files, byte
for byte, holding only the accounting's columns of the events seen."""

from __future__ import annotations

import pytest

from edgeprof import api
from edgeprof.api.breakdown import BREAKDOWN_COLUMNS
from edgeprof.io.workspace import Workspace
from etdump_builder import build, portable_run, runs_with_invalid
from reader_spies import built_blocks, second_block_attaches_differently
from testdata import DATA, recording


def _breakdown(f, out, rec=None, **kw):
    ws = Workspace(f.parent, **({"etrecord": rec} if rec else {}))
    (bd,) = api.breakdowns([f], write=True, output_dir=out, ws=ws, **kw)
    files = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    return bd, files, ws


@pytest.mark.parametrize("name,etrecord", [("tel_xnnq8.N20", "tel_xnnq8"), ("toycnn_portable.N20", "toycnn_portable"),
                                           ("mobilenet_v3_small_xnnq8.N200", None)])
def test_blocks_give_the_whole_file_s_breakdown(tmp_path, name, etrecord):
    f = recording(tmp_path, name)
    rec = DATA / "etrecord" / f"{etrecord}.etrecord" if etrecord else None
    whole, whole_files, _wws = _breakdown(f, tmp_path / "whole", rec, block_events=0)
    assert set(whole.profile.events.columns) > set(BREAKDOWN_COLUMNS)  # read whole: every column
    for b in (1, 500, None):
        got, files, ws = _breakdown(f, tmp_path / f"b{b}", rec, block_events=b)
        assert files == whole_files, b
        assert {**got.to_json(), "written": None} == {**whole.to_json(), "written": None}, b
        assert ws.reads["profile_read"] == 1
        assert set(got.profile.events.columns) == set(BREAKDOWN_COLUMNS) - {"op_types"} | {"op_types_id"}


def test_invalid_and_warm_up_runs_across_blocks(tmp_path):
    f = tmp_path / "in" / "bad.etdp"
    f.parent.mkdir()
    f.write_bytes(build(runs_with_invalid()))
    for skip in (0, 3):
        ws = Workspace(f.parent)
        whole = api.breakdown(f, ws=ws, block_events=0, skip_runs=skip)
        assert whole["runs"] == 7 - skip  # 9 runs, 2 invalid (hand count), then the warm-up left out
        for b in (1, 11, 20):
            assert api.breakdown(f, ws=Workspace(f.parent), block_events=b, skip_runs=skip).to_json() == whole.to_json()


def test_a_block_is_all_the_events_held(tmp_path, monkeypatch):
    f = tmp_path / "x.etdp"
    f.write_bytes(build([portable_run(1_000_000 * i) for i in range(30)]))
    built = built_blocks(monkeypatch)
    bd = api.breakdown(f, ws=Workspace(tmp_path), block_events=10)
    assert built and max(built) <= 10 and sum(built) == 30 * 5
    assert bd["runs"] == 30


def test_what_blocks_cannot_do_is_read_whole(tmp_path, monkeypatch):
    """A timeline CSV, a breakdown joined with its program (it needs every column), and an ETRecord that
    attaches to a later block differently: each read whole, the same answer."""
    f = recording(tmp_path, "tel_xnnq8.N20")
    rec = DATA / "etrecord" / "tel_xnnq8.etrecord"
    whole = api.breakdown(f, ws=Workspace(f.parent, etrecord=rec), block_events=0)
    prog = api.breakdown(f, ws=Workspace(f.parent, etrecord=rec), block_events=None,
                         program=DATA / "pte" / "tel_xnnq8.pte")
    assert "program" in prog.data and set(prog.profile.events.columns) > set(BREAKDOWN_COLUMNS)
    seen = second_block_attaches_differently(monkeypatch)
    ws = Workspace(f.parent, etrecord=rec)
    got = api.breakdown(f, ws=ws, block_events=200)
    assert ws.reads["profile_read"] == 2 and len(seen) >= 3
    assert got.to_json() == whole.to_json()
    monkeypatch.undo()
    api.analyze([f], output_dir=tmp_path / "a", ws=Workspace(f.parent, etrecord=rec), jobs=1, op_types="inline")
    (csv,) = (tmp_path / "a").glob("*_all_runs_timeline.csv")
    ws = Workspace(csv.parent)
    from_csv = api.breakdown(csv, ws=ws, block_events=None)
    assert ws.reads["profile_read"] == 1 and from_csv["runs"] == whole["runs"]
    assert from_csv.to_json() == api.breakdown(csv, ws=Workspace(csv.parent), block_events=0).to_json()
