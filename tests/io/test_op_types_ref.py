"""The op-type lists of a timeline CSV and a trace in their reference form (the default): an id per distinct list,
the lists written once beside the table (``<timeline>_op_types.csv``) or once in the trace's ``otherData``. Checked
against ExecuTorch Inspector's own op-type lists (its table with the ETRecord) and against the inline form; the
lists round-trip to the same profile; a missing or bent list file is a warning or a one-line error naming it."""

from __future__ import annotations

import json
import shutil

import polars as pl
import pytest
from click.testing import CliRunner

import edgeprof
from edgeprof.cli import main
from edgeprof.errors import InputError
from edgeprof.io.timeline_csv import op_types_file, read_timeline_csv

MODELS = ("toycnn_xnnq8", "tel_xnn", "toycnn_portable")


def _analyze(etdp, etrec, out, *extra):
    r = CliRunner().invoke(main, ["analyze", str(etdp), "--etrecord", str(etrec), "--output-dir", str(out),
                                  "--no-progress", "--quiet", *extra])
    assert r.exit_code == 0, r.output
    return out / f"{etdp.name.split('.etdp')[0]}_exec_all_runs_timeline.csv"


@pytest.mark.parametrize("model", MODELS)
def test_the_reference_resolves_to_inspectors_lists(model, etdump, etrecord, ground_truth, tmp_path):
    e, rec = etdump(f"{model}.N20"), etrecord(model)
    ref = _analyze(e, rec, tmp_path / "ref")
    inline = _analyze(e, rec, tmp_path / "inline", "--op-types", "inline")
    a = pl.read_csv(ref, infer_schema_length=None)
    b = pl.read_csv(inline, infer_schema_length=None)
    assert "op_types_id" in a.columns and "op_types" not in a.columns and "op_types" in b.columns
    # every other column byte for byte the same
    assert a.drop("op_types_id").equals(b.drop("op_types"))
    side = pl.read_csv(op_types_file(ref))
    assert side.columns == ["op_types_id", "op_types"] and side["op_types_id"].to_list() == list(range(side.height))
    assert side["op_types"].n_unique() == side.height  # each distinct list once
    lists = dict(zip(side["op_types_id"].to_list(), side["op_types"].to_list()))
    assert [lists[i] for i in a["op_types_id"].to_list()] == b["op_types"].to_list()
    # against Inspector: run 0's events, in Inspector's order (node_id), op types as its ETRecord table has them
    gt = ground_truth(f"{model}.N20", "inspector_etrecord").filter(pl.col("block_name") == "Execute")
    first = gt["block_index"].min()
    gt = gt.filter(pl.col("block_index") == first).sort("event_index")
    run0 = a.filter(pl.col("run_index") == 0).sort("node_id")
    assert run0.height == gt.height > 0 and side.height >= 2
    assert [json.loads(lists[i]) for i in run0["op_types_id"].to_list()] == [json.loads(x) for x in gt["op_types"]]
    # smaller: the ids instead of the lists
    assert ref.stat().st_size + op_types_file(ref).stat().st_size < inline.stat().st_size
    # read back: the same profile as from the inline table
    pa, pb = read_timeline_csv(ref), read_timeline_csv(inline)
    assert pa.events["op_types"].to_list() == pb.events["op_types"].to_list() and not pa.warnings


def test_no_etrecord_no_list_file(etdump, tmp_path):
    r = CliRunner().invoke(main, ["analyze", str(etdump("toycnn_xnn.N20")), "--output-dir", str(tmp_path),
                                  "--no-progress", "--quiet"])
    assert r.exit_code == 0, r.output
    t = tmp_path / "toycnn_xnn.N20_exec_all_runs_timeline.csv"
    assert pl.read_csv(t)["op_types_id"].null_count() == pl.read_csv(t).height
    assert not list(tmp_path.glob("*_op_types.csv"))
    summary = json.loads((tmp_path / "analysis_summary.json").read_text())
    assert summary["per_etdump"][0]["csv_op_types"] == []


def test_a_missing_or_bent_list_file(etdump, etrecord, tmp_path):
    ref = _analyze(etdump("tel_xnn.N20"), etrecord("tel_xnn"), tmp_path / "ref")
    side = op_types_file(ref)
    good = side.read_text()
    lone = tmp_path / "lone" / ref.name
    lone.parent.mkdir()
    shutil.copy(ref, lone)
    prof = read_timeline_csv(lone)
    assert prof.events["op_types"].null_count() == prof.events.height
    assert any(f"{op_types_file(lone).name}, which is not beside it" in w for w in prof.warnings)
    # an id the list file does not hold: that event's list is left empty, and said
    side.write_text("\n".join(good.splitlines()[:2]) + "\n")
    prof = read_timeline_csv(ref)
    assert any("op_types_id value(s) are not in" in w for w in prof.warnings)
    # a list that is not a JSON list of strings: left empty, counted
    side.write_text('op_types_id,op_types\n0,"[1, 2]"\n1,"{""a"": 1}"\n2,[\n')
    assert any("3 op-type list(s)" in w for w in read_timeline_csv(ref).warnings)
    for text, message in (("a,b\n0,[]\n", "not an op-types table"),
                          ("op_types_id,op_types\n0,[]\n0,[]\n", "row 2: op_types_id 0 repeated"),
                          ("op_types_id,op_types\n,[]\n", "row 1: op_types_id missing"),
                          ("op_types_id,op_types\nzero,[]\n", "not a readable CSV")):
        side.write_text(text)
        with pytest.raises(InputError, match=message) as e:
            read_timeline_csv(ref)
        assert str(side) in str(e.value) and "\n" not in str(e.value)
        r = CliRunner().invoke(main, ["latency", str(ref), "--no-write"])
        assert r.exit_code == 2 and side.name in r.output


def test_the_trace_names_each_list_once(etdump, etrecord, tmp_path):
    e, rec = etdump("tel_xnn.N20"), etrecord("tel_xnn")
    edgeprof.trace(e, etrecord=rec, out=tmp_path / "ref.json")
    edgeprof.trace(e, etrecord=rec, out=tmp_path / "inline.json", op_types="inline")
    a, b = (json.loads((tmp_path / f"{k}.json").read_text()) for k in ("ref", "inline"))
    lists = a["otherData"]["op_types"]
    assert len(lists) == len({json.dumps(x) for x in lists}) >= 2
    resolved = []
    for ev in a["traceEvents"]:
        args = dict(ev.get("args", {}))
        if "op_types_id" in args:
            args["op_types"] = lists[args.pop("op_types_id")]
        resolved.append({**ev, "args": args} if "args" in ev else ev)
    assert resolved == b["traceEvents"]
    assert {k: v for k, v in a["otherData"].items() if k != "op_types"} == b["otherData"]
    assert (tmp_path / "ref.json").stat().st_size < (tmp_path / "inline.json").stat().st_size
    with pytest.raises(edgeprof.errors.UsageError, match="unknown op-types form"):
        edgeprof.trace(e, out=tmp_path / "x.json", op_types="both")


@pytest.mark.parametrize("model", MODELS)
def test_a_workspace_holds_the_lists_by_id_or_inline(model, etdump, etrecord):
    """The commands' workspaces hold an ETRecord's lists by id (no list column of the events' length); the analyses
    read them through Profile.op_type_groups, which gives each event the same list either way; a profile handed to
    the user (load_profile) keeps a list per row."""
    from edgeprof.api._common import workspace
    from edgeprof.conventions import OP_TYPES_ID

    path, rec = etdump(f"{model}.N20"), etrecord(model)
    ref = workspace(None, etrecord=rec).profile(path)
    inline = edgeprof.Workspace(etrecord=rec).profile(path)
    assert OP_TYPES_ID in ref.events.columns and "op_types" not in ref.events.columns
    assert "op_types" in inline.events.columns and OP_TYPES_ID not in inline.events.columns
    (ri, _, rl), (ii, _, il) = ref.op_type_groups(), inline.op_type_groups()
    assert [rl[i] for i in ri.tolist()] == [il[i] for i in ii.tolist()] == inline.events["op_types"].to_list()
    assert "op_types" in edgeprof.api.load_profile(path, etrecord=rec).events.columns
    with pytest.raises(ValueError, match="op_types"):
        edgeprof.Workspace(op_types="both")
