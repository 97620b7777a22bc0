"""`edgeprof run model.onnx` through the real ONNX Runtime (the `ort` extra): interleaved launches of two models at
two thread counts, each launch's profile checked against the runtime's own events and the worker's wall clock, and
the folder taken by analyze, compare, report and ingest."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from testdata import DATA

from edgeprof.collect.worker_ort import timed_events

ORT_MODELS = DATA / "ort"

try:
    import onnxruntime  # noqa: F401
except ImportError:
    if os.environ.get("EDGEPROF_REQUIRE_ORT"):
        raise
    pytest.skip("the ort extra is not installed", allow_module_level=True)


def _ep(*args, check: bool = True):
    r = subprocess.run([sys.executable, "-m", "edgeprof", *map(str, args)], capture_output=True, text=True, timeout=600)
    assert not check or r.returncode == 0, r.stderr
    return r


def _runs_us(path: Path) -> list[int]:
    ev = json.loads(path.read_text())
    return [e["dur"] for e in sorted(ev, key=lambda e: e["ts"]) if e["cat"] == "Session" and e["name"] == "model_run"]


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    out = tmp_path_factory.mktemp("ortrun") / "runs"
    _ep("run", ORT_MODELS / "cnn.onnx", ORT_MODELS / "cnn_int8.onnx", "--runs", 6, "--warmup", 2, "--threads", "1,2",
        "--launches", 2, "--out", out, "--no-progress")
    return out, json.loads((out / "manifest.json").read_text())


def test_every_launch_is_recorded_with_its_runtime_and_providers(collected):
    out, manifest = collected
    results = manifest["results"]
    assert manifest["status"] == "complete" and len(results) == 2 * 2 * 2
    assert all(r["status"] == "ok" for r in results)
    assert {e["runtime"] for e in manifest["config"]["experiments"]} == {"onnxruntime"}
    assert all(e["providers"] == ["CPUExecutionProvider"] for e in manifest["config"]["experiments"])
    for r in results:
        m = r["metrics"]
        assert m["providers"] == ["CPUExecutionProvider"] and m["versions"]["onnxruntime"]
        assert m["threads"] == r["threads"] and len(m["wall_ms"]) == 6
        profile = out / m["etdump_rel"]
        assert profile.name.endswith(f"_t{r['threads']}_l{r['launch']}.ort.json")
        runs = _runs_us(profile)
        assert len(runs) == 6  # the 2 warm-up runs are not in the file
        assert m["latency_ms"] == [d / 1000 for d in runs]  # read back through the reader: the runtime's events
        # each model_run lies inside the worker's own clock around session.run (1 µs of rounding allowed)
        assert all(w * 1000 + 1 >= d for w, d in zip(m["wall_ms"], runs))
    # launches interleaved: each round runs every configuration once before any runs twice
    order = manifest["config"]["launch_order"]
    assert len(order) == 8 and all(label.endswith("launch 1") for label in order[:4])


def test_the_folder_goes_through_every_command(collected, tmp_path):
    out, _ = collected
    _ep("analyze", out, "--quiet")
    assert len(list(out.rglob("*_exec_all_runs_timeline.csv"))) == 8
    doc = json.loads(_ep("compare", out, "--baseline", "cnn", "--candidate", "cnn_int8", "--threads", 1, "--json").stdout)
    assert doc["baseline"]["count"] + doc["candidate"]["count"] >= 2 * 2 * 5
    assert doc["regime"] == "multi-launch"
    _ep("report", out, "-b", "cnn", "-c", "cnn_int8", "--threads", 2, "--out", tmp_path / "r.md", "--html",
        tmp_path / "r.html")
    md = (tmp_path / "r.md").read_text()
    assert "cnn_int8" in md
    # ONNX Runtime in its own words, with the version the run recorded (the oracle: the module this test ran)
    import onnxruntime

    assert f"| Runtime | ONNX Runtime (onnxruntime {onnxruntime.__version__}) |" in md
    assert "## CPUExecutionProvider vs other execution providers" in md
    for text in (md, (tmp_path / "r.html").read_text()):
        found = re.search(r".{0,60}(ETDump|ExecuTorch|Method::execute|portable).{0,30}", text, re.I)
        assert found is None, found.group(0)
    r = _ep("ingest", out, "--threads", 1, "--store", tmp_path / "h.duckdb", "--commit", "c1")
    assert "4 launch(es) added" in r.stdout + r.stderr


def test_a_provider_this_build_lacks_fails_the_launch_clearly(tmp_path):
    r = _ep("run", ORT_MODELS / "cnn.onnx", "--runs", 2, "--warmup", 0, "--launches", 1, "--providers",
            "OpenVINOExecutionProvider", "--out", tmp_path / "o", "--no-progress", check=False)
    assert r.returncode == 1
    m = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert m["results"][0]["status"] == "crashed"
    assert "OpenVINOExecutionProvider not in this onnxruntime build" in m["results"][0]["output_tail"]
    assert m["config"]["experiments"][0]["providers"] == ["OpenVINOExecutionProvider", "CPUExecutionProvider"]


def test_providers_are_for_onnx_models_and_are_named_properly(tmp_path):
    pte = DATA / "pte" / "tel_xnnq8.pte"
    r = _ep("run", pte, "--providers", "OpenVINOExecutionProvider", "--out", tmp_path / "p", "--dry-run", check=False)
    assert r.returncode == 2 and "providers is an option of ONNX Runtime (.onnx models)" in r.stderr
    r = _ep("run", ORT_MODELS / "cnn.onnx", "--providers", "openvino", "--dry-run", check=False)
    assert r.returncode == 2 and "execution provider names such as OpenVINOExecutionProvider" in r.stderr
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'runs = 3\n[[experiment]]\nname = "ov"\nmodel = "{ORT_MODELS / "cnn.onnx"}"\n'
                   'providers = ["OpenVINOExecutionProvider"]\n')
    r = _ep("run", "--config", cfg, "--dry-run")
    assert "edgeprof.collect.worker_ort" in r.stdout and "--providers OpenVINOExecutionProvider,CPUExecutionProvider" in r.stdout


def test_without_onnxruntime_the_message_names_the_extra(monkeypatch, tmp_path):
    import importlib

    from edgeprof.errors import UsageError

    api_run = importlib.import_module("edgeprof.api.run")

    monkeypatch.setattr(api_run, "_has", lambda m: m != "onnxruntime")
    with pytest.raises(UsageError, match=r"pip install 'edgeprof\[ort\]'"):
        api_run.run([ORT_MODELS / "cnn.onnx"], out=tmp_path / "x")


def test_warm_up_runs_are_cut_from_the_profile_and_nothing_else():
    load = {"cat": "Session", "name": "session_initialization", "ts": 0, "dur": 5}
    runs = [{"cat": "Session", "name": "model_run", "ts": t, "dur": 8} for t in (10, 20, 30, 40)]
    nodes = [{"cat": "Node", "name": f"n{t}_kernel_time", "ts": t + 1, "dur": 3} for t in (10, 20, 30, 40)]
    events = [load, *runs, *nodes]
    kept = timed_events(events, 2)
    assert kept == [load, runs[2], runs[3], nodes[2], nodes[3]]
    assert timed_events(events, 0) == events
    assert timed_events(events, 9) == [load]


def test_plan_groups_a_thread_sweep_by_configuration(collected):
    """``plan`` of every profile of the folder: each model × thread count is its own configuration (the manifest
    says which launch is which), its two launches grouped — never four thread-pooled launches, never one per
    file."""
    out, manifest = collected
    doc = json.loads(_ep("plan", *sorted(out.rglob("*.ort.json")), "--effect", "30%", "--json").stdout)
    got = {c["name"]: c["launches"] for c in doc["configurations"]}
    want = {f"{e['name']} t{t}": 2 for e in manifest["config"]["experiments"] for t in (1, 2)}
    assert got == want
    assert doc["launch_noise"]["df"] == 4  # 4 configurations × (2 launches − 1)


def test_a_folder_run_wrote_validates_before_and_after_analyze(tmp_path):
    """What ``run`` wrote validates as it is (its analysis outputs pending, not failed) and the report says OK with
    no validation finding; after ``analyze`` every output passes; one output removed from an analysed folder, or
    the same profiles without the manifest ``run`` wrote (a folder nobody collected), fail as before."""
    out = tmp_path / "runs"
    _ep("run", ORT_MODELS / "cnn.onnx", ORT_MODELS / "cnn_int8.onnx", "--runs", 4, "--warmup", 1, "--launches", 2, "--out", out,
        "--no-progress")
    doc = json.loads(_ep("validate", out, "--json").stdout)
    assert doc["ok"] and doc["counts"]["fail"] == 0
    pending = [c for c in doc["checks"] if c["status"] == "info" and "not written yet" in c["message"]]
    assert len(pending) == 2 * 2 * 3 + 1  # three outputs per launch and analysis_summary.json
    _ep("report", out, "--out", tmp_path / "r.md")
    md = (tmp_path / "r.md").read_text()
    assert "**OK**" in md and "13 analysis output(s) not written yet" in md and "[run-folder validation]" not in md
    _ep("analyze", out, "--quiet")
    doc = json.loads(_ep("validate", out, "--json").stdout)
    assert doc["ok"] and not [c for c in doc["checks"] if c["status"] == "info" and "not written yet" in c["message"]]
    next(out.rglob("*_exec_ops_stats.csv")).unlink()
    assert _ep("validate", out, check=False).returncode == 1
    bare = tmp_path / "bare"
    bare.mkdir()
    for f in out.rglob("*.ort.json"):
        shutil.copy(f, bare / f.name)
    assert _ep("validate", bare, check=False).returncode == 1


def test_report_of_a_thread_sweep_keeps_each_thread_count_apart(collected, tmp_path):
    """``report`` of the folder without --threads: each model × thread count is its own configuration with its own
    two launches (never 4 launches pooled under one thread count), and the report says how to compare two."""
    out, manifest = collected
    doc = json.loads(_ep("report", out, "--json").stdout)
    got = {(c["name"], c["latency"]["count"] // 6 if c["latency"].get("count") else None) for c in doc["configs"]}
    assert {n for n, _ in got} == {f"{e['name']} t{t}" for e in manifest["config"]["experiments"] for t in (1, 2)}
    assert all(len(c["files"]) == 2 for c in doc["configs"])
    assert any("--threads for one thread count" in m for m in doc["missing"])


def test_run_report_of_one_onnx_model_compares_its_thread_counts(tmp_path):
    out = tmp_path / "runs"
    _ep("run", ORT_MODELS / "cnn.onnx", "--runs", 4, "--warmup", 1, "--launches", 2, "--threads", "1,2", "--out", out,
        "--report", "--no-progress")
    md = (out / "report_t1_vs_t2.md").read_text()
    assert "cnn t2 vs cnn t1" in md and not (out / "report.md").exists()


def test_the_graph_optimization_level_is_an_experiment_variable(tmp_path):
    """``--graph-optimization disable`` runs the session at ORT_DISABLE_ALL: the manifest records it for the
    experiment and the runtime reports it in effect; every node of the model is then timed under its own name, so
    the profile joins the model with nothing unmatched (at the default level ONNX Runtime fuses and renames 10 of the
    CNN's nodes: tests/analysis/test_onnx_cost.py). The level is part of the configuration's identity."""
    out = tmp_path / "runs"
    _ep("run", ORT_MODELS / "cnn.onnx", "--runs", 4, "--warmup", 1, "--launches", 1, "--graph-optimization", "disable",
        "--out", out, "--no-progress")
    m = json.loads((out / "manifest.json").read_text())
    (exp,) = m["config"]["experiments"]
    assert exp["graph_optimization"] == "disable"
    (res,) = m["results"]
    assert res["metrics"]["graph_optimization"] == "ORT_DISABLE_ALL"
    prof = next(out.rglob("*.ort.json"))
    from edgeprof.api import breakdown

    joined = breakdown(prof, program=ORT_MODELS / "cnn.onnx")["program"]
    assert joined["unmatched"]["nodes"] == 0 and joined["program_instructions"] == 18
    from edgeprof.io.manifest import configuration, launch_facts

    facts = launch_facts(m, prof)
    assert facts["runtime_options"] == "providers CPUExecutionProvider; graph optimization disable"
    assert ("runtime_options", facts["runtime_options"]) in configuration(facts)
    bad = _ep("run", ORT_MODELS / "cnn.onnx", "--graph-optimization", "fast", "--out", tmp_path / "x", check=False)
    assert bad.returncode == 2 and "--graph-optimization" in bad.stderr
