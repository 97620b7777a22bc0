"""Every profile command on real ONNX Runtime profiles (tests/data/ort), each figure against the JSON the runtime
wrote, read here with the standard library: analyze's timeline, compare's speedup over launches, report, trace,
ingest and history."""

from __future__ import annotations

import csv
import gzip
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from testdata import DATA

ORT = DATA / "ort"
T1 = [ORT / "cnn_cpu_t1_l1.ort.json", ORT / "cnn_cpu_t1_l2.ort.json.gz", ORT / "cnn_cpu_t1_l3.ort.json.gz"]
T2 = [ORT / f"cnn_cpu_t2_l{k}.ort.json.gz" for k in (1, 2, 3)]
MIXED = ORT / "tfm_mixed_ov_t1_l1.ort.json.gz"


def _ep(*args, check: bool = True):
    r = subprocess.run([sys.executable, "-m", "edgeprof", *map(str, args)], capture_output=True, text=True,
                       timeout=300, env={**os.environ, "NO_COLOR": "1"})
    assert not check or r.returncode == 0, r.stderr
    return r


def _events(path: Path) -> list[dict]:
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def _run_us(path: Path) -> list[int]:
    return [e["dur"] for e in sorted(_events(path), key=lambda e: e["ts"]) if e["name"] == "model_run"]


def test_analyze_writes_the_kit_timeline_of_an_ort_profile(tmp_path):
    _ep("analyze", T1[1], "--output-dir", tmp_path, "--quiet")
    table = tmp_path / "cnn_cpu_t1_l2_exec_all_runs_timeline.csv"
    rows = list(csv.DictReader(table.open()))
    ev = _events(T1[1])
    nodes = [e for e in ev if e["cat"] == "Node" and e["name"].endswith("_kernel_time")]
    runs = _run_us(T1[1])
    assert len(rows) == 2 * len(nodes) + len(runs)  # wrapper + op per node, a run event each (execute runs only)
    execute = [float(r["duration_ms"]) for r in rows if r["name"] == "Method::execute"]
    assert execute == [d / 1000 for d in runs]
    kernels = sorted(float(r["duration_ms"]) for r in rows if r["kind"] == "kernel")
    assert kernels == sorted(e["dur"] / 1000 for e in nodes)
    assert {r["model_id"] for r in rows} == {"cnn_cpu_t1_l2"}


def test_compare_over_launches_gives_the_speedup_of_the_recorded_runs(tmp_path):
    args = ["compare", "--json", "--output-dir", tmp_path]
    for f in T1:
        args += ["-b", f]
    for f in T2:
        args += ["-c", f]
    doc = json.loads(_ep(*args).stdout)
    # the runtime's own model_run durations, the first run of each launch left out as warm-up
    base = [d for f in T1 for d in _run_us(f)[1:]]
    cand = [d for f in T2 for d in _run_us(f)[1:]]
    assert doc["baseline"]["count"] == len(base) == 27
    assert doc["speedup"]["median_based"] == pytest.approx(statistics.median(base) / statistics.median(cand), rel=1e-5)
    assert doc["regime"] == "multi-launch" and doc["verdict"] in ("faster", "slower", "equivalent", "inconclusive")


def test_report_trace_and_breakdown_name_the_fallback(tmp_path):
    out = tmp_path / "r.md"
    _ep("report", T1[0], MIXED, "--out", out)
    text = out.read_text()
    assert "OpenVINOExecutionProvider" in text and "Hardmax" in text
    trace = tmp_path / "t.json"
    _ep("trace", MIXED, "--out", trace)
    doc = json.loads(trace.read_text())
    slices = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    ev = _events(MIXED)
    n_nodes = sum(1 for e in ev if e["cat"] == "Node")
    assert len(slices) == 2 * n_nodes + len(_run_us(MIXED)) + 2
    bd = json.loads(_ep("breakdown", MIXED, "--json", "--output-dir", tmp_path).stdout)
    assert [o["operator"] for o in bd["breakdowns"][0]["portable_hotspots"]] == ["Hardmax"]


def test_ingest_and_history_keep_the_launches(tmp_path):
    store = tmp_path / "h.duckdb"
    _ep("ingest", *T1, "--store", store, "--commit", "a1", "--model", "cnn")
    _ep("ingest", *T2, "--store", store, "--commit", "b2", "--model", "cnn")
    doc = json.loads(_ep("history", "--store", store, "--json").stdout)
    text = json.dumps(doc)
    assert '"a1"' in text and '"b2"' in text
    again = _ep("ingest", T1[0], "--store", store, "--commit", "a1", "--model", "cnn")
    assert "0 launch(es) added, 1 already stored" in again.stdout + again.stderr


def test_a_json_that_is_no_profile_is_refused_in_one_line(tmp_path):
    p = tmp_path / "config.json"
    p.write_text('{"threads": 4}')
    r = _ep("breakdown", p, check=False)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "ONNX Runtime profile" in r.stderr and str(p) in r.stderr
