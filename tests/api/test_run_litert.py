"""`edgeprof run model.tflite` through the real LiteRT runtime (ai-edge-litert, the `litert` extra): the XNNPACK
delegate and the builtin kernels as experiments, two thread counts, interleaved launches; each launch's runs
read back as recorded, and the folder taken by analyze, compare, report and ingest."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import pytest
from testdata import DATA

try:
    from ai_edge_litert import interpreter as lite
except ImportError:
    if os.environ.get("EDGEPROF_REQUIRE_LITERT"):
        raise
    pytest.skip("the litert extra is not installed", allow_module_level=True)

MODEL = DATA / "litert" / "cnn.tflite"


def _ep(*args, check: bool = True):
    r = subprocess.run([sys.executable, "-m", "edgeprof", *map(str, args)], capture_output=True, text=True, timeout=600)
    assert not check or r.returncode == 0, r.stderr
    return r


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("litert")
    cfg = tmp / "c.toml"
    cfg.write_text(f'runs = 8\nwarmup = 2\nlaunches = 2\nthreads = [1, 2]\n'
                   f'[[experiment]]\nname = "xnn"\nmodel = "{MODEL}"\n'
                   f'[[experiment]]\nname = "cpu"\nmodel = "{MODEL}"\ndelegate = "none"\n')
    out = tmp / "runs"
    _ep("run", "--config", cfg, "--out", out, "--no-progress")
    return out, json.loads((out / "manifest.json").read_text())


def test_launches_record_their_runs_and_the_delegate(collected):
    out, m = collected
    assert m["status"] == "complete" and len(m["results"]) == 2 * 2 * 2
    exps = {e["name"]: e for e in m["config"]["experiments"]}
    assert exps["xnn"]["delegate"] == "xnnpack" and exps["cpu"]["delegate"] == "none"
    assert {e["runtime"] for e in exps.values()} == {"litert"}
    # what LiteRT itself says of the model: XNNPACK replaces nodes by DELEGATE nodes, the builtin resolver does not
    def delegated(resolver):
        it = lite.Interpreter(model_path=str(MODEL), experimental_op_resolver_type=resolver)
        it.allocate_tensors()
        return any(o["op_name"] == "DELEGATE" for o in it._get_ops_details())

    truth = {"xnn": delegated(lite.OpResolverType.AUTO),
             "cpu": delegated(lite.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)}
    assert truth == {"xnn": True, "cpu": False}
    for r in m["results"]:
        met = r["metrics"]
        assert r["status"] == "ok" and met["delegated"] == truth[r["experiment"]]
        f = out / met["etdump_rel"]
        assert f.name.endswith(f"_t{r['threads']}_l{r['launch']}.litert.csv")
        rows = list(csv.DictReader(f.open()))
        assert [float(x["duration_ms"]) for x in rows] == pytest.approx(met["wall_ms"], abs=1e-6) and len(rows) == 8
        assert [int(x["run_index"]) for x in rows] == list(range(8))
        assert met["latency_ms"] == pytest.approx(met["wall_ms"], abs=1e-6)  # read back to the nanosecond


def test_the_folder_goes_through_the_commands(collected, tmp_path):
    out, _ = collected
    _ep("analyze", out, "--quiet")
    assert len(list(out.rglob("*_exec_all_runs_timeline.csv"))) == 8
    doc = json.loads(_ep("compare", out, "--baseline", "cpu", "--candidate", "xnn", "--threads", 1, "--json").stdout)
    assert doc["regime"] == "multi-launch" and doc["baseline"]["count"] + doc["candidate"]["count"] >= 2 * 2 * 6
    _ep("report", out, "-b", "cpu", "-c", "xnn", "--threads", 2, "--out", tmp_path / "r.md")
    r = _ep("ingest", out, "--threads", 1, "--store", tmp_path / "h.duckdb", "--commit", "c1")
    assert "4 launch(es) added" in r.stdout + r.stderr


def test_delegate_is_for_litert_models(tmp_path):
    r = _ep("run", DATA / "ort" / "cnn.onnx", "--delegate", "none", "--dry-run", check=False)
    assert r.returncode == 2 and "delegate is an option of LiteRT (.tflite models)" in r.stderr
    r = _ep("run", MODEL, "--delegate", "none", "--runs", 2, "--dry-run")
    assert "edgeprof.collect.worker_litert" in r.stdout and "--delegate none" in r.stdout


def test_every_op_of_the_converted_models_has_a_category():
    from edgeprof.taxonomy import classify

    ops = set()
    for name in ("cnn", "cnn_int8", "tfm"):
        for resolver in (lite.OpResolverType.AUTO, lite.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES):
            it = lite.Interpreter(model_path=str(DATA / "litert" / f"{name}.tflite"), experimental_op_resolver_type=resolver)
            it.allocate_tensors()
            ops |= {o["op_name"] for o in it._get_ops_details()}
    assert len(ops) >= 20 and "DELEGATE" in ops
    for op in ops:
        c = classify(op)
        assert (c.source, c.category != "OTHER") == ("litert", True) or (op, c.subtype) == ("DELEGATE", "delegated-subgraph"), op
