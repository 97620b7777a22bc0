"""``analyze`` block by block of runs writes what it writes reading each file whole, holding a block at a time."""

from __future__ import annotations

import json

import polars as pl
import pytest

from edgeprof import api
from edgeprof.analysis.inspector_order import StreamOrder, inspector_order
from edgeprof.io.etdump_read import ETDumpBlocks, read_etdump
from edgeprof.io.workspace import Workspace
from edgeprof.model import BlockStack
from etdump_builder import build, portable_run, runs_with_invalid, xnnpack_runs
from reader_spies import built_blocks
from testdata import DATA, recording


def _outputs(f, out, **kw):
    ws = Workspace(f.parent, **({"etrecord": kw.pop("etrecord")} if "etrecord" in kw else {}))
    res = api.analyze([f], output_dir=out, ws=ws, jobs=1, **kw)
    files = {p.name: p for p in out.rglob("*") if p.is_file() and p.name != "analysis_summary.json"}
    doc = json.loads((out / "analysis_summary.json").read_text())
    for e in doc["per_etdump"]:
        for k in ("csv_timeline", "csv_timeline_all", "csv_stats", "csv_op_types"):
            e.pop(k)
    doc.pop("csv_files")
    return files, doc, ws, res


def _assert_same(a, b, fmt="csv"):
    assert sorted(a[0]) == sorted(b[0])
    for name in a[0]:
        if fmt == "parquet" and name.endswith(".parquet"):
            assert pl.read_parquet(a[0][name]).equals(pl.read_parquet(b[0][name])), name
        else:
            assert a[0][name].read_bytes() == b[0][name].read_bytes(), name
    assert a[1] == b[1]


@pytest.mark.parametrize("name,etrecord", [("tel_xnnq8.N20", "tel_xnnq8"), ("toycnn_portable.N20", "toycnn_portable"),
                                           ("mobilenet_v3_small_xnnq8.N200", None)])
def test_blocks_write_the_whole_file_s_outputs(tmp_path, name, etrecord):
    f = recording(tmp_path, name)
    rec = {"etrecord": DATA / "etrecord" / f"{etrecord}.etrecord"} if etrecord else {}
    whole = _outputs(f, tmp_path / "whole", block_events=0, **rec)
    for b in (1, 500, None):
        got = _outputs(f, tmp_path / f"b{b}", block_events=b, **rec)
        _assert_same(got, whole)
        assert got[2].reads["profile_read"] == 1  # read once: no fallback to the whole file
    for fmt, op_types in (("parquet", "ref"), ("csv", "inline")):
        _assert_same(_outputs(f, tmp_path / f"{fmt}{op_types}", block_events=300, fmt=fmt, op_types=op_types, **rec),
                     _outputs(f, tmp_path / f"w{fmt}{op_types}", block_events=0, fmt=fmt, op_types=op_types, **rec),
                     fmt)


def test_invalid_runs_and_warnings_across_blocks(tmp_path):
    f = tmp_path / "in" / "bad.etdp"
    f.parent.mkdir()
    f.write_bytes(build(runs_with_invalid()))
    whole = _outputs(f, tmp_path / "whole", block_events=0)
    assert whole[1]["per_etdump"][0]["runs_invalid"] == 2
    for b in (1, 11, 20):
        _assert_same(_outputs(f, tmp_path / f"b{b}", block_events=b), whole)


def test_runs_that_do_not_repeat_their_group_are_read_whole(tmp_path):
    """Two runs of equal length with different operators: Inspector numbers them as two event blocks from the
    whole file; the blocked path cannot know that ahead, so it gives the file to the whole reader (two reads)."""
    a = portable_run(0)
    b = portable_run(10_000_000, ops=(("add.out", 100, 200), ("relu.out", 200, 300)))
    f = tmp_path / "in" / "mixed.etdp"
    f.parent.mkdir()
    f.write_bytes(build([a, portable_run(5_000_000), b]))
    whole = _outputs(f, tmp_path / "whole", block_events=0)
    got = _outputs(f, tmp_path / "blocks", block_events=1)
    _assert_same(got, whole)
    assert got[2].reads["profile_read"] == 2


def test_stream_order_numbers_alternating_groups_as_inspector_does(tmp_path):
    """Runs of two shapes alternating (a group each), spread over blocks: node ids equal the whole file's."""
    shapes = [(("convolution.out", 1000, 5000), ("relu.out", 200, 300)),
              (("add.out", 10, 20), ("mul.out", 10, 20), ("relu.out", 5, 5))]
    runs = [portable_run(1_000_000 * i, ops=shapes[i % 2]) for i in range(7)]
    f = tmp_path / "alt.etdp"
    f.write_bytes(build(runs))
    expected = inspector_order(read_etdump(f))["node_id"].to_numpy()
    assert len(set(expected.tolist())) == 5 + 7  # two event blocks: 5 and 7 events (hand count)
    for b in (1, 9, 20, 100):
        order = StreamOrder()
        got = [order.node_ids(block) for block in ETDumpBlocks(f, b)]
        assert all(g is not None for g in got)
        assert pl.Series([x for g in got for x in g.tolist()]).equals(pl.Series(expected.tolist()))


def test_a_block_is_all_the_events_held_in_full(tmp_path, monkeypatch):
    """Memory by counting: no full event table larger than a block is built, and what is kept of the events seen
    is the statistics' columns, with each distinct op-type list held once."""
    f = tmp_path / "in" / "x.etdp"
    f.parent.mkdir()
    f.write_bytes(build(xnnpack_runs([("Convolution (NHWC, F32) GEMM", 5), ("Add (ND, F32)", 1)], runs=60)))
    built, kept, real_profile = built_blocks(monkeypatch), [], BlockStack.profile

    def spy_profile(self, warnings):
        p = real_profile(self, warnings)
        kept.append(p)
        assert all(b.events.width == 0 for b in self._blocks)  # each column held once: the blocks gave theirs up
        return p

    monkeypatch.setattr(BlockStack, "profile", spy_profile)
    _outputs(f, tmp_path / "out", block_events=20)
    assert built and max(built) <= 20 and sum(built) == 60 * 4
    (p,) = kept
    assert set(p.events.columns) == {"run_index", "name", "kind", "duration_ns", "self_ns", "parent",
                                     "delegate_backend", "timing_source", "op_types_id"}
    assert not any(isinstance(t, pl.List) for t in p.events.schema.values())
    assert p.op_type_lists == [None]  # no ETRecord: one list (unknown) for every event


def test_an_etrecord_that_attaches_differently_to_a_later_block_sends_the_file_whole(tmp_path, monkeypatch):
    """Each block gets the ETRecord as the whole file would; when a later block's outcome (status, warnings)
    differs from the first's, the whole file's outcome is unknown block by block: it is read whole."""
    import dataclasses

    f = recording(tmp_path, "tel_xnnq8.N20")
    rec = {"etrecord": DATA / "etrecord" / "tel_xnnq8.etrecord"}
    whole = _outputs(f, tmp_path / "whole", block_events=0, **rec)
    real = Workspace._with_etrecord
    seen = []

    def second_differs(self, path, prof, **kw):
        out = real(self, path, prof, **kw)
        seen.append(prof.n_events)
        if len(seen) == 2 and prof.n_runs and not prof.events.is_empty() and prof.runs["run_index"].min() >= 0:
            out = dataclasses.replace(out, warnings=[*out.warnings, "this block attached differently"])
        return out

    monkeypatch.setattr(Workspace, "_with_etrecord", second_differs)
    got = _outputs(f, tmp_path / "blocks", block_events=200, **rec)
    assert got[2].reads["profile_read"] == 2 and len(seen) >= 3
    _assert_same(got, whole)
