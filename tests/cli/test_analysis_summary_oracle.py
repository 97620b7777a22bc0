"""Every key of `analysis_summary.json` (what `analyze` found) on a real 60-run ONNX Runtime launch against the
runtime's own events read with the standard library and numpy: the run latencies, the mean time per run of each
category (op types mapped by hand) and backend, the load and init times, the event and row counts, the files
written. A key the summary gains without a check here fails the test."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict

import numpy as np
import pytest
from ort_truth import CATEGORY, events, run_of, runs

NAME = "cnn_cpu_t1_r60.ort.json.gz"


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    from ort_truth import ORT

    out = tmp_path_factory.mktemp("as")
    r = subprocess.run([sys.executable, "-m", "edgeprof", "analyze", str(ORT / NAME), "--output-dir", str(out),
                        "--quiet"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads((out / "analysis_summary.json").read_text()), events(NAME), out


def test_every_key_of_the_summary(case):
    doc, ev, out = case
    assert set(doc) == {"analysed_count", "csv_files", "errors", "etdump_count", "etrecord", "format", "kind",
                        "per_etdump", "run_dir", "schema_version", "taxonomy_version", "tool", "warnings"}
    assert (doc["analysed_count"], doc["etdump_count"], doc["errors"], doc["warnings"]) == (1, 1, [], [])
    assert (doc["kind"], doc["schema_version"], doc["tool"], doc["format"]) == ("analysis_summary", 1, "edgeprof", "csv")
    assert doc["etrecord"] is None and doc["taxonomy_version"] == "2026.12.2" and doc["run_dir"].endswith("data/ort")
    assert all(_written(p) for p in doc["csv_files"])
    (e,) = doc["per_etdump"]
    assert set(e) == {"backends_ms", "categories_ms", "csv_op_types", "csv_stats", "csv_timeline", "csv_timeline_all",
                      "delegate_calls_per_run", "etdump", "etrecord", "etrecord_status", "events", "experiment",
                      "kernel_evidence", "latency_ms", "load_method_ms", "method_init_ms", "model", "model_id",
                      "platform", "rows", "runs", "runs_invalid", "threads", "warnings"}
    spans = runs(ev)
    nodes = [x for x in ev if x["cat"] == "Node"]
    lat = np.array([d for _, d in spans]) / 1000
    n = len(spans)
    want = {"count": n, "mean_ms": lat.mean(), "median_ms": np.median(lat), "min_ms": lat.min(), "max_ms": lat.max(),
            "p90_ms": np.percentile(lat, 90), "std_dev_ms": lat.std(ddof=1)}
    assert e["latency_ms"]["source"] == "method_execute"
    for k, v in want.items():
        assert e["latency_ms"][k] == pytest.approx(v, rel=1e-5, abs=1e-6), k
    cats = defaultdict(float)
    for x in nodes:
        run_of(x, spans)  # every node lies in a run
        cats[CATEGORY[x["args"]["op_name"]]] += x["dur"] / 1000 / n
    unattributed = (sum(d for _, d in spans) - sum(x["dur"] for x in nodes)) / 1000 / n
    assert {k: v for k, v in e["categories_ms"].items() if k.isupper()} == pytest.approx(dict(cats), abs=1e-6)
    assert e["categories_ms"]["unattributed"] == pytest.approx(unattributed, abs=1e-6)
    assert e["categories_ms"]["framework_overhead"] == e["categories_ms"]["delegate_overhead"] == 0
    assert e["backends_ms"] == pytest.approx({"portable": sum(cats.values()), "unattributed": unattributed,
                                              "framework_overhead": 0.0, "delegate_overhead": 0.0}, abs=1e-6)
    assert e["delegate_calls_per_run"] == 0.0
    loads = {x["name"]: x["dur"] / 1000 for x in ev if x["cat"] == "Session"}
    assert (e["load_method_ms"], e["method_init_ms"]) == (pytest.approx(loads["model_loading_uri"]),
                                                          pytest.approx(loads["session_initialization"]))
    # events: a wrapper and an op per node, a run event per run, load and init; rows: the execute runs' events
    assert e["events"] == 2 * len(nodes) + n + 2 and e["rows"] == 2 * len(nodes) + n
    assert (e["runs"], e["runs_invalid"], e["warnings"]) == (n, 0, [])
    assert (e["etdump"], e["model_id"]) == (NAME, "cnn_cpu_t1_r60")
    assert (e["etrecord"], e["etrecord_status"]) == (None, "absent")
    assert (e["experiment"], e["model"], e["platform"], e["threads"]) == (None, None, None, None)
    for key in ("csv_stats", "csv_timeline", "csv_timeline_all"):
        assert _written(e[key]) and e[key].startswith(str(out))
    assert all(_written(p) for p in e["csv_op_types"])
    k = e["kernel_evidence"]  # no XNNPACK here: nothing ran through it (the evidence rules: test_kernel_evidence.py)
    assert (k["evidence"], k["sme_executed"], k["kleidiai_executed"], k["operators"]) == ("executed", False, False, [])
    assert k["gemm_conv_ms_per_run"] == k["sme_ms_per_run"] == k["qp8_ms_per_run"] == 0.0
    assert k["kleidiai_share_of_gemm_conv"] is None and "nothing ran through XNNPACK" in k["statement"]


def _written(p: str) -> bool:
    from pathlib import Path

    return Path(p).is_file() and Path(p).stat().st_size > 0
