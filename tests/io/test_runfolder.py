"""Run-folder conventions of the Arm kit: names → model/experiment/threads, and finding the ETRecord."""

from __future__ import annotations

import json
from pathlib import Path

from edgeprof.io.runfolder import describe, find_etdumps, find_etrecord, read_manifest


def touch(p: Path) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(b"x")
    return p


def test_nested_layout(tmp_path):
    f = touch(tmp_path / "out_toy" / "runs" / "mac" / "mac_sme2_on" / "toy_cnn_xnnpack_fp16_mac_sme2_on_t4.etdump")
    rf = describe(f)
    assert (rf.model, rf.experiment, rf.platform, rf.threads) == ("toy_cnn_xnnpack_fp16", "mac_sme2_on", "mac", 4)


def test_flat_layout_with_pipeline_summary(tmp_path):
    d = tmp_path / "runs" / "android"
    touch(d / "mv3_xnnpack_fp32_pipeline_summary.json")
    f = touch(d / "mv3_xnnpack_fp32_android_sme2_off_t1.etdump")
    rf = describe(f)
    assert (rf.model, rf.experiment, rf.platform, rf.threads) == ("mv3_xnnpack_fp32", "android_sme2_off", "android", 1)


def test_plain_file(tmp_path):
    rf = describe(touch(tmp_path / "model.N20.etdp"))
    assert (rf.model, rf.experiment, rf.threads) == (None, None, None)


def test_find_etdumps_skips_hidden_and_dedups(tmp_path):
    a = touch(tmp_path / "a" / "x.etdump")
    touch(tmp_path / ".cache" / "y.etdump")
    touch(tmp_path / "a" / "notes.txt")
    b = touch(tmp_path / "b.etdp")
    assert find_etdumps([tmp_path, a]) == [a, b]


def test_etrecord_by_longest_prefix_in_artifacts(tmp_path):
    f = touch(tmp_path / "out_tel" / "runs" / "linux" / "exp" / "tel_xnnq8_exp_t1.etdump")
    touch(tmp_path / "out_tel" / "artifacts" / "tel.etrecord")
    best = touch(tmp_path / "out_tel" / "artifacts" / "tel_xnnq8.etrecord")
    touch(tmp_path / "out_tel" / "artifacts" / "tel_xnnq8x.etrecord")  # not at a boundary
    assert find_etrecord(f)[0] == best


def test_etrecord_pte_suffix_and_no_false_match(tmp_path):
    f = touch(tmp_path / "m_portable_t1.etdump")
    touch(tmp_path / "other.etrecord")
    assert find_etrecord(f)[0] is None
    rec = touch(tmp_path / "m_portable.pte.etrecord")
    assert find_etrecord(f)[0] == rec


def test_manifest_model_wins(tmp_path):
    f = touch(tmp_path / "runs" / "mac" / "x_t1.etdump")
    rec = touch(tmp_path / "models" / "net.pte.etrecord")
    (tmp_path / "runs" / "manifest.json").write_text(json.dumps({"model": "../models/net.pte"}))
    manifest, mpath, problem = read_manifest(tmp_path / "runs" / "mac")
    assert problem is None and manifest["model"] == "../models/net.pte"
    found, how = find_etrecord(f, manifest, mpath)
    assert found.resolve() == rec.resolve() and how == "manifest.json model"
    # an ETRecord named after the ETDump does not override the manifest's when the ETDump is named after that model
    g = touch(tmp_path / "runs" / "mac" / "net_mac_sme2_on_t1.etdump")
    touch(tmp_path / "runs" / "mac" / "net_mac.etrecord")
    found, how = find_etrecord(g, manifest, mpath)
    assert found.resolve() == rec.resolve() and how == "manifest.json model"


def test_an_etdump_of_another_model_gets_its_own_etrecord(tmp_path):
    """Two models profiled into one folder: the manifest names one; the other's ETDumps keep their own ETRecord."""
    run = tmp_path / "out_tel" / "runs" / "mac"
    xnn = touch(run / "mac_sme2_on" / "tel_xnn_mac_sme2_on_t1.etdump")
    port = touch(run / "mac_portable" / "tel_portable_mac_portable_t1.etdump")
    other = touch(run / "mac_other" / "mnv3_mac_other_t1.etdump")
    art = tmp_path / "out_tel" / "artifacts"
    rx, rp = touch(art / "tel_xnn.etrecord"), touch(art / "tel_portable.etrecord")
    manifest = {"model": "tel_xnn.pte"}
    assert find_etrecord(xnn, manifest, run / "manifest.json", root=run)[0] == rx
    assert find_etrecord(port, manifest, run / "manifest.json", root=run)[0] == rp
    # nothing named after it: the manifest's model is still the best guess (and a mismatch is then reported)
    assert find_etrecord(other, manifest, run / "manifest.json", root=run)[0] == rx


def test_broken_manifest_is_a_warning(tmp_path):
    (tmp_path / "manifest.json").write_text("{nope")
    manifest, _, problem = read_manifest(tmp_path)
    assert manifest is None and "manifest.json: not valid JSON" in problem and problem.endswith("; ignored")


def test_kit_timeline_csv_names_read_as_their_etdump():
    """The Arm kit's CSV names (``<stem>_<platform>_<name>_t<T>_exec_all_runs_timeline.csv``, and the legacy name
    without ``_exec``) give the model, experiment, platform and threads their ETDump's name gives."""
    for name in ("gpt_xnn_mac_sme2_on_t1_exec_all_runs_timeline.csv", "gpt_xnn_mac_sme2_on_t1_all_runs_timeline.csv",
                 "gpt_xnn_mac_sme2_on_t1.etdump"):
        rf = describe(Path("/x") / name)
        assert (rf.model, rf.experiment, rf.platform, rf.threads) == ("gpt_xnn", "mac_sme2_on", "mac", 1), name
    rf = describe(Path("/x/mv3_android_sme2_off_t4_exec_all_runs_timeline.csv"))
    assert (rf.model, rf.experiment, rf.platform, rf.threads) == ("mv3", "android_sme2_off", "android", 4)
    # no platform word: the whole base is the experiment, as before
    rf = describe(Path("/x/toycnn_xnn_t2_exec_all_runs_timeline.csv"))
    assert (rf.model, rf.experiment, rf.threads) == (None, "toycnn_xnn", 2)


def test_every_command_finds_the_etrecord_in_the_folder_beside_runs(tmp_path):
    """``<D>/runs/<platform>`` beside ``<D>/artifacts`` (the example's layout, D not named out_<model>): analyze,
    report and validate all attach the ETRecord from ``<D>/artifacts``; bounded by the agent server's root at
    ``runs/<platform>``, the search stops there."""
    import edgeprof
    from edgeprof import access

    ex = tmp_path / "any-name"
    edgeprof.example(ex)
    run = ex / "runs" / "linux"
    rep = edgeprof.report([str(run)], baseline=["portable"], candidate=["xnnpack_fp32"]).data
    assert [c["etrecord"] for c in rep["configs"]] == ["attached", "attached"]
    assert not [m for m in rep["missing"] if "no ETRecord" in m]
    an = edgeprof.analyze(run, output_dir=tmp_path / "out").data
    assert [x["etrecord_status"] for x in an["per_etdump"]] == ["attached"] * 3
    access.confine([str(run)])
    try:
        rep = edgeprof.report([str(run)], baseline=["portable"], candidate=["xnnpack_fp32"]).data
    finally:
        access.release()
    assert [c["etrecord"] for c in rep["configs"]] == ["absent", "absent"]


def test_a_collection_of_several_models_gives_each_etdump_its_own_models_etrecord(tmp_path):
    """`edgeprof run a.pte b.pte` writes one manifest (``model``: the first, ``models``: experiment → model); an
    ETDump of the second model, named directly (the search bounded to its own folder), gets the second model's
    ETRecord — by its experiment's folder, or by its experiment's name beginning the file's — not the first's."""
    models = tmp_path / "models"
    ra, rb = touch(models / "a.pte.etrecord"), touch(models / "b.pte.etrecord")
    out = tmp_path / "out"
    manifest = {"model": str(models / "a.pte"), "models": {"a": str(models / "a.pte"), "fast": str(models / "b.pte")}}
    ea, eb = touch(out / "a" / "a_t1_l1.etdump"), touch(out / "fast" / "fast_t1_l1.etdump")
    loose = touch(out / "fast_t2_l1.etdump")  # not in its experiment's folder: the name tells
    mpath = out / "manifest.json"
    assert find_etrecord(ea, manifest, mpath)[0] == ra
    assert find_etrecord(eb, manifest, mpath) == (rb, "manifest.json model")
    assert find_etrecord(loose, manifest, mpath)[0] == rb
    # one model, or an ETDump of no experiment: the manifest's model, as before
    other = touch(out / "elsewhere" / "x_t1.etdump")
    assert find_etrecord(other, manifest, mpath)[0] == ra
    assert find_etrecord(eb, {"model": str(models / "a.pte")}, mpath)[0] == ra
