"""ETRecord enrichment without torch: Inspector's op types and backend names, safe reading, mismatches."""

from __future__ import annotations

import json
import pickle
import zipfile

import polars as pl
import pytest

from testdata import ETRECORD_MODELS
from edgeprof import load_etdump
from edgeprof.analysis.inspector_order import inspector_order
from edgeprof.errors import EdgeprofWarning, ETRecordError
from edgeprof.io.etrecord import MAX_MAP_BYTES, op_type_of, read_etrecord


@pytest.mark.parametrize("model", ETRECORD_MODELS)
def test_op_types_and_backends_match_inspector(model, etdump, etrecord, ground_truth):
    prof = load_etdump(etdump(f"{model}.N20"), etrecord=etrecord(model))
    assert prof.etrecord.status == "attached"
    ours = pl.concat([prof.events, inspector_order(prof)], how="horizontal").filter(pl.col("block_run_index") == 0)
    gt = ground_truth(f"{model}.N20", "inspector_etrecord")
    joined = gt.join(ours.select(pl.col("block_index"), pl.col("block_event_index").alias("event_index"),
                                 "op_types", "delegate_backend", "backend_source", "kind", "name"),
                     on=["block_index", "event_index"], how="left")
    assert joined.height == gt.height
    for row in joined.rename({"op_types": "gt_op_types", "op_types_right": "our_op_types"}).iter_rows(named=True):
        assert json.loads(row["gt_op_types"]) == list(row["our_op_types"]), row["event_name"]
        gt_backend = row["delegate_backend_name"] or None
        ours_backend = row["delegate_backend"] if row["backend_source"] == "etrecord" else None
        assert gt_backend == ours_backend, row["event_name"]
        assert row["is_delegated_op"] == (row["kind"] == "delegate_op")


def test_portable_kernel_maps_to_its_aten_op(etdump, etrecord):
    prof = load_etdump(etdump("toycnn_portable.N20"), etrecord=etrecord("toycnn_portable"))
    conv = prof.run(0).filter(pl.col("name") == "native_call_convolution.out")
    assert conv["op_types"][0].to_list() == ["aten.convolution.default"]
    assert conv["module_path"][0] == "conv1"
    dc = load_etdump(etdump("tel_xnn.N20"), etrecord=etrecord("tel_xnn")).run(0).filter(pl.col("kind") == "delegate_call")
    assert dc["delegate_backend"].unique().to_list() == ["XnnpackBackend"]
    assert dc["backend_source"].unique().to_list() == ["etrecord"]
    assert dc["op_types"][0].to_list() == ["aten.permute_copy.default", "aten.linear.default", "aten.view_copy.default"]


def test_a_complete_real_etrecord_reads_like_its_json_members(etdump, etrecord):
    full = load_etdump(etdump("toycnn_xnnq8.N20"), etrecord=etrecord("toycnn_xnnq8", full=True))
    trimmed = load_etdump(etdump("toycnn_xnnq8.N20"), etrecord=etrecord("toycnn_xnnq8"))
    assert full.events.equals(trimmed.events)
    assert full.etrecord.status == "attached"


def test_pickled_members_are_never_loaded(monkeypatch, etdump, etrecord):
    def refuse(*a, **k):
        raise AssertionError("an ETRecord member was unpickled")

    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "Unpickler", refuse)
    prof = load_etdump(etdump("toycnn_xnnq8.N20"), etrecord=etrecord("toycnn_xnnq8", full=True))
    assert prof.etrecord.status == "attached"


def _copy_with(src, dst, replace: dict | None = None, add: dict | None = None, drop=()):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if info.filename in drop:
                continue
            data = (replace or {}).get(info.filename, zin.read(info))
            zout.writestr(info.filename, data)
        for name, data in (add or {}).items():
            zout.writestr(name, data)
    return dst


def test_zip_bomb_members_are_refused(tmp_path, etrecord):
    bomb = _copy_with(etrecord("toycnn_xnn"), tmp_path / "bomb.etrecord",
                      replace={"debug_handle_map": b" " * (MAX_MAP_BYTES + 1)})
    with pytest.raises(ETRecordError, match="refused"):
        read_etrecord(bomb)
    # a huge pickled member is simply never read
    big = _copy_with(etrecord("toycnn_xnn"), tmp_path / "big.etrecord", add={"exported_program_state_dict": b"\0" * 50_000_000})
    assert read_etrecord(big).debug_handle_map


@pytest.mark.parametrize("make,match", [
    (lambda p: p.write_bytes(b"not a zip at all"), "not a readable zip"),
    (lambda p: zipfile.ZipFile(p, "w").writestr("x.txt", "hi"), "not an ETRecord"),
    (lambda p: zipfile.ZipFile(p, "w").writestr("ETRECORD_V0", ""), "no debug_handle_map"),
])
def test_unreadable_etrecords(tmp_path, make, match):
    p = tmp_path / "x.etrecord"
    make(p)
    with pytest.raises(ETRecordError, match=match):
        read_etrecord(p)


def test_corrupt_json_member(tmp_path, etrecord):
    p = _copy_with(etrecord("tel_xnn"), tmp_path / "bad.etrecord", replace={"debug_handle_map": b'{"forward": {"0": [1,'})
    with pytest.raises(ETRecordError, match="not valid JSON"):
        read_etrecord(p)
    deep = b"[" * 100_000 + b"]" * 100_000
    p = _copy_with(etrecord("tel_xnn"), tmp_path / "deep.etrecord", replace={"delegate_map": deep})
    with pytest.raises(ETRecordError):
        read_etrecord(p)


def test_unreadable_etrecord_warns_and_analysis_continues(tmp_path, etdump):
    bad = tmp_path / "bad.etrecord"
    bad.write_bytes(b"garbage")
    with pytest.warns(EdgeprofWarning, match="continuing without it"):
        prof = load_etdump(etdump("tel_xnn.N20"), etrecord=bad)
    assert prof.etrecord.status == "unreadable" and prof.n_runs == 20
    with pytest.raises(ETRecordError):
        load_etdump(etdump("tel_xnn.N20"), etrecord=bad, strict_etrecord=True)
    with pytest.raises(ETRecordError, match="no such"):
        load_etdump(etdump("tel_xnn.N20"), etrecord=tmp_path / "missing.etrecord", strict_etrecord=True)


@pytest.mark.parametrize("dump,record", [("tel_xnn.N20", "toycnn_xnn"), ("toycnn_xnn.N20", "tel_xnn"),
                                         ("tel_xnn.N20", "tel_portable"), ("toycnn_portable.N20", "tel_portable")])
def test_mismatched_etrecord_is_detected(dump, record, etdump, etrecord):
    with pytest.warns(EdgeprofWarning, match="ignored"):
        prof = load_etdump(etdump(dump), etrecord=etrecord(record))
    assert prof.etrecord.status == "mismatch"
    assert prof.events["op_types"].null_count() == prof.n_events  # nothing attached
    from edgeprof.io.etrecord import check_match

    # the reason given (from the distinct keys enrich looks up) is the one a scan of the events gives
    assert prof.etrecord.message == check_match(load_etdump(etdump(dump)), read_etrecord(etrecord(record)))
    with pytest.raises(ETRecordError, match="does not match"):
        load_etdump(etdump(dump), etrecord=etrecord(record), strict_etrecord=True)


def test_unknown_method(tmp_path, etrecord):
    with pytest.raises(ETRecordError, match="no method 'decode'"):
        read_etrecord(etrecord("tel_xnn"), method="decode")


@pytest.mark.parametrize("target,expected", [
    ("executorch.exir.dialects.edge.ops.aten.convolution.default", "aten.convolution.default"),
    ("executorch.exir.dialects.edge.ops.dim_order_ops._clone_dim_order.default", "dim_order_ops._clone_dim_order.default"),
    ("torch.ops.higher_order.executorch_call_delegate", "executorch_call_delegate"),
    ("torch.ops.aten.sym_size.int", "aten.sym_size.int"),
])
def test_op_type_names(target, expected):
    assert op_type_of(target) == expected


@pytest.mark.parametrize("model", ["tel_xnn", "toycnn_xnnq8", "tel_xnnq8"])
def test_delegate_op_types_keep_their_multiplicity(model, etdump, etrecord, ground_truth):
    """Per inference, the op types behind the XNNPACK calls with their counts — Inspector's lists, summed here —
    in the ops-stats table and the breakdown (how many linear/bmm ops the calls fused)."""
    from collections import Counter

    from edgeprof.analysis.breakdown import breakdown
    from edgeprof.analysis.timeline import ops_stats_table

    gt = ground_truth(f"{model}.N20", "inspector_etrecord").filter(
        (pl.col("block_name") == "Execute") & (pl.col("event_name") == "DELEGATE_CALL"))
    want = Counter()
    for lst in gt["op_types"].to_list():
        want.update(json.loads(lst))
    assert max(want.values()) > 1  # a fused call repeats op types
    prof = load_etdump(etdump(f"{model}.N20"), etrecord=etrecord(model))
    row = ops_stats_table(prof, model).filter(pl.col("name") == "DELEGATE_CALL")
    assert json.loads(row["op_types"][0]) == dict(want)
    assert list(json.loads(row["op_types"][0]).values()) == sorted(want.values(), reverse=True)
    prof_ops = breakdown(prof)["operators_all"]
    assert all(isinstance(o["op_types"], dict) for o in prof_ops)


@pytest.mark.parametrize("model", ETRECORD_MODELS)
def test_op_types_by_reference_are_inspectors_lists(model, etdump, etrecord, ground_truth):
    """Blocks read for one pass take the op-type lists by id (no list column): each event's list, looked up by its
    id, is Inspector's; backends and module paths are those of the list-column form."""
    from edgeprof.conventions import OP_TYPES_ID
    from edgeprof.io.etrecord import enrich

    bare = load_etdump(etdump(f"{model}.N20"))
    rec = read_etrecord(etrecord(model))
    ref, inline = enrich(bare, rec, by_reference=True), enrich(bare, rec)
    assert "op_types" not in ref.events.columns and ref.op_type_lists is not None
    lists = [ref.op_type_lists[i] for i in ref.events[OP_TYPES_ID].to_list()]
    assert lists == inline.events["op_types"].to_list()
    assert ref.events.drop(OP_TYPES_ID).equals(inline.events.drop("op_types"))
    ours = pl.concat([ref.events, inspector_order(ref)], how="horizontal").with_columns(
        pl.Series("lists", lists, dtype=pl.List(pl.String))).filter(pl.col("block_run_index") == 0)
    gt = ground_truth(f"{model}.N20", "inspector_etrecord").join(
        ours.select("block_index", pl.col("block_event_index").alias("event_index"), "lists"),
        on=["block_index", "event_index"], how="left")
    assert gt.height and all(json.loads(a) == list(b) for a, b in zip(gt["op_types"], gt["lists"]))
    ids, _, groups = ref.op_type_groups()  # the groups the tables count by are the ids
    assert [groups[i] for i in ids.tolist()] == lists
