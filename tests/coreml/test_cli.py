"""``edgeprof coreml`` end to end: JSON, Markdown, the anemll-shaped estimate that ``edgeprof ane`` reads back,
``coreml diff``, folders with roles, the macOS-only commands on Linux, and one-line errors with exit 2."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from edgeprof.api.coreml import profile_document
from edgeprof.render import jsonfmt

from .conftest import DATA, package

BIN = Path(sys.executable).parent


def _ep(*args) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(["edgeprof", *map(str, args)], env=env, capture_output=True, text=True, timeout=120)


def test_json_and_markdown(tmp_path):
    r = _ep("coreml", package("int32_kvcache_state_ios18"), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["kind"] == "coreml_static" and doc["schema_version"] == 1 and len(doc["models"]) == 1
    m = doc["models"][0]
    assert {h["rule"] for h in m["hazards"]} == {"int32", "gather", "kv_state"}
    assert m["totals"]["weight_files"] == {"@model_path/weights/weight.bin": 6528}
    md = tmp_path / "c.md"
    r = _ep("coreml", package("int32_kvcache_state_ios18"), "--markdown", md)
    assert r.returncode == 0 and "ANE placement estimate" in md.read_text() and "kv_state" in md.read_text()
    assert "Hazards" in r.stdout  # the terminal view


def test_estimate_as_anemll_is_read_by_edgeprof_ane(tmp_path):
    est = tmp_path / "estimate.json"
    r = _ep("coreml", package("int32_kvcache_state_ios18"), "--as-anemll", est, "--json")
    assert r.returncode == 0, r.stderr
    ours = json.loads(r.stdout)["models"][0]["estimate"]["graph_interruptions"]
    doc = json.loads(est.read_text())
    assert doc["tool"] == "edgeprof-coreml-estimate" and doc["measured_prediction"]["status"] == "not_run"
    r = _ep("ane", est, "--json")
    assert r.returncode == 0, r.stderr
    ane = json.loads(r.stdout)
    assert any("static estimate" in w for w in ane["warnings"])
    gi = next(f for f in ane["findings"] if f["id"] == "graph_interruptions")
    assert gi["evidence"]["interruptions"] == ours["graph_interruptions"] >= 1
    # the diff of two estimates works too
    est2 = tmp_path / "estimate2.json"
    assert _ep("coreml", package("int32_gather_fp32prec_ios17"), "--as-anemll", est2).returncode == 0
    assert _ep("ane", "diff", est, est2, "--json").returncode == 0


def test_coreml_diff_names_what_compression_changed():
    r = _ep("coreml", "diff", package("conv_relu_linear_ios18"), package("conv_palettized4_ios18"), "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["kind"] == "coreml_diff"
    assert d["totals"]["flops"]["before"] == d["totals"]["flops"]["after"]
    assert d["totals"]["weight_stored_unique"]["after"] < d["totals"]["weight_stored_unique"]["before"] / 3
    assert d["hazards"]["added"] == ["lut_expansion"]
    assert any(s.startswith("weights on disk") for s in d["statements"])
    assert any(s == "constexpr_lut_to_dense: 0 → 2 ops" for s in d["statements"])


def test_a_folder_gives_one_analysis_per_submodel_and_reports_a_bad_one(tmp_path):
    shutil.copytree(package("attention_block_ios17"), tmp_path / "llama_prefill.mlpackage")
    shutil.copytree(package("int32_gather_fp32prec_ios17"), tmp_path / "llama_embeddings.mlpackage")
    (tmp_path / "broken.mlpackage").mkdir()
    r = _ep("coreml", tmp_path, "--json")
    assert r.returncode == 2
    doc = json.loads(r.stdout)
    assert [(m["model"], m["role"]) for m in doc["models"]] == [("llama_embeddings.mlpackage", "embeddings"),
                                                                ("llama_prefill.mlpackage", "prefill")]
    assert len(doc["errors"]) == 1 and "no Manifest.json" in doc["errors"][0]["error"]
    assert r.stderr.strip().endswith("broken.mlpackage: not an .mlpackage: no Manifest.json")


@pytest.mark.parametrize("args, needle", [
    (["coreml", "nothing.mlpackage"], "no such file or folder"),
    (["coreml", DATA / "sample_conv_palettized4_ios16.model.mil.txt"], "not a Core ML bundle"),
    (["coreml", package("conv_int8_ios16"), "--chip", "Z9"], "unknown chip 'Z9'"),
    (["coreml", package("conv_int8_ios16"), "--boundary-ms", "-1"], "must not be negative"),
])
def test_bad_input_is_one_line_and_exit_2(args, needle):
    r = _ep(*args)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and needle in r.stderr


@pytest.mark.skipif(sys.platform == "darwin", reason="on macOS the collector runs for real (test below)")
@pytest.mark.parametrize("cmd", ["profile", "plan"])
def test_macos_collectors_say_plainly_they_need_macos(tmp_path, cmd):
    r = _ep("coreml", cmd, package("conv_int8_ios16"), "--out", tmp_path / "o.json")
    assert r.returncode == 2 and "needs macOS" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o.json").exists()


def test_recorded_compute_plan_and_timing_become_a_report_edgeprof_ane_reads(tmp_path):
    """The layer above the macOS adapter, on a recorded plan: what MLComputePlan reports per op (device,
    supported devices, cost; consts without cost) and a timing, as the adapter returns them."""
    recs = [{"function": "main", "index": i, "name": name, "type": typ, "device": dev, "supported": sup, "cost": cost}
            for i, (name, typ, dev, sup, cost) in enumerate([("w", "ios18.const", "?", [], None),
                                                             ("c", "ios18.conv", "ANE", ["ANE", "CPU"], 0.5),
                                                             ("g", "ios18.gather", "CPU", ["CPU"], 0.1),
                                                             ("s", "ios18.cast", "CPU", ["ANE", "CPU"], 0.05),
                                                             ("l", "ios18.linear", "ANE", ["ANE"], 0.35)])]
    doc = profile_document("m.mlpackage", recs, {"status": "ok", "load_ms": 20.0, "steady_ms": 2.0,
                                                 "times_ms": [1.0, 2.0, 3.0]}, "cpu_and_ne", 0.2)
    p = tmp_path / "profile.json"
    p.write_text(jsonfmt.dumps(doc))
    r = _ep("ane", p, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    gi = next(f for f in out["findings"] if f["id"] == "graph_interruptions")
    assert gi["evidence"]["interruptions"] == 1
    isl = doc["graph_interruptions"]["interruptions"][0]
    assert (isl["start_index"], isl["end_index"], isl["soft_ops"], isl["hard_ops"]) == (2, 3, 1, 1)
    assert doc["measured_prediction"]["average_ms"] == 2.0 and doc["summary"]["const_ops"] == 1
    assert [f["index"] for f in doc["fallback_ops"]] == [2, 3]


@pytest.mark.skipif(sys.platform != "darwin", reason="Core ML compute plans and predictions exist only on macOS")
def test_macos_collector_on_a_real_model(tmp_path):  # pragma: no cover - runs on macOS only
    out = tmp_path / "p.json"
    r = _ep("coreml", "profile", package("conv_relu_linear_ios18"), "--runs", "3", "--out", out)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["measured_prediction"]["status"] in ("ok", "prediction_failed")
    assert _ep("ane", out, "--json").returncode == 0


def test_measured_report_joined_with_the_model(tmp_path):
    """`edgeprof ane PROFILE --model MODEL`: the estimate is graded against the measured placement, and the
    measured per-type time is turned into achieved GFLOP/s and GB/s with the static counts."""
    from edgeprof.analysis.mil_static import analyze_program
    from edgeprof.io.coreml import read_bundle

    m = analyze_program(read_bundle(package("int32_kvcache_state_ios18")), boundary_ms=0.2)
    measured = {"scores": "CPU", "embed_cast_uint16_cast_uint16": "CPU", "probs": "ANE", "argmax": "ANE"}
    recs = [{"function": o["function"], "index": o["index"], "name": o["output"], "type": "ios18." + o["type"],
             "device": measured[o["output"]], "supported": ["ANE", "CPU"], "cost": 0.1}
            for o in m["ops"] if o["output"] in measured]
    doc = profile_document("int32_kvcache_state_ios18.mlpackage", recs, {"status": "ok", "steady_ms": 1.0,
                                                                           "times_ms": [1.0]}, "cpu_and_ne", 0.2)
    doc["op_type_breakdown"] = [{"type": "ios18.matmul", "short_type": "matmul", "count": 1, "ms_per_op": 0.01,
                                 "total_ms": 0.01, "gflop": 0.0, "gbps": 0.0, "share_pct": 50.0, "bound": "Mem",
                                 "weight_mb": 0.0}]
    p = tmp_path / "profile.json"
    p.write_text(jsonfmt.dumps(doc))
    r = _ep("ane", p, "--model", package("int32_kvcache_state_ios18"), "--json")
    assert r.returncode == 0, r.stderr
    f = next(x for x in json.loads(r.stdout)["findings"] if x["id"] == "static_crosscheck")
    ev = f["evidence"]
    # the estimate: scores (matmul) ANE, gather CPU, probs (softmax) ANE, argmax CPU (int32 output)
    assert (ev["matched_ops"], ev["agree"], ev["disagree"]) == (4, 2, 2)
    assert sorted((w["name"], w["predicted"], w["measured"]) for w in ev["wrong"]) == [
        ("argmax", "CPU", "ANE"), ("scores", "ANE", "CPU")]
    mm = ev["op_types"][0]
    flops = 2 * 64 * 32                        # (1,1,32) × (1,32,64)ᵀ
    moved = 32 * 2 + 64 * 32 * 2 + 64 * 2      # fp16 query, cache, scores
    assert mm["achieved_gflops"] == pytest.approx(flops / 0.01 / 1e6)
    assert mm["achieved_gbps"] == pytest.approx(moved / 0.01 / 1e6)
    assert f["source"] == "anemll_json+mil_static"
