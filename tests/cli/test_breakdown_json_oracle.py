"""Every key of `breakdown --json` on real ONNX Runtime profiles (CPU provider; OpenVINO with a CPU fallback) against
the runtime's own events, read here with the standard library and numpy: the per-run time of each category and
operator (op types mapped to categories by hand), each backend's time, the overhead lines, the run's time, the
graph segments. A key the document gains without a check here fails the test."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict

import numpy as np
import pytest
from ort_truth import CATEGORY, events, run_of
from ort_truth import runs as model_runs
from testdata import needs, DATA

ORT = DATA / "ort"


def _truth(name: str) -> dict:
    ev = events(name)
    runs = model_runs(ev)
    n = len(runs)
    by_op, by_cat, by_backend, count = defaultdict(float), defaultdict(float), defaultdict(float), defaultdict(int)
    per_run_nodes = [[] for _ in runs]
    for e in ev:
        if e["cat"] != "Node":
            continue
        r = run_of(e, runs)
        op, prov = e["args"]["op_name"], e["args"]["provider"]
        backend = "portable" if prov == "CPUExecutionProvider" else prov
        by_op[(op, backend)] += e["dur"] / 1000 / n
        by_cat[CATEGORY[op]] += e["dur"] / 1000 / n
        by_backend[backend] += e["dur"] / 1000 / n
        count[(op, backend)] += 1
        per_run_nodes[r].append((e["ts"], op, backend, e["dur"]))
    e2e = np.array([d for _, d in runs]) / 1000
    unattributed = float(np.mean([d / 1000 - sum(x[3] for x in nodes) / 1000
                                  for (_, d), nodes in zip(runs, per_run_nodes)]))
    return {"n": n, "by_op": by_op, "by_cat": by_cat, "by_backend": by_backend, "count": count, "e2e": e2e,
            "unattributed": unattributed, "run0": sorted(per_run_nodes[0]), "per_run": per_run_nodes}


@pytest.fixture(scope="module", params=["cnn_cpu_t2_l1.ort.json.gz", "cnn_mixed_ov_t1_l1.ort.json.gz",
                                        "tfm_mixed_ov_t1_l2.ort.json.gz"])
def case(request, tmp_path_factory):
    out = tmp_path_factory.mktemp("bd")
    r = subprocess.run([sys.executable, "-m", "edgeprof", "breakdown", str(ORT / request.param), "--json",
                        "--output-dir", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["kind"] == "breakdown" and doc["schema_version"] == 1 and len(doc["breakdowns"]) == 1
    return request.param, doc["breakdowns"][0], _truth(request.param), out


def _ops(rows, t):
    for o in rows:
        key = (o["operator"], o["backend"])
        assert o["avg_ms"] == pytest.approx(t["by_op"][key], abs=1e-9), key
        assert o["event_count"] == t["count"][key] and o["executions_per_run"] == t["count"][key] / t["n"]
        assert o["category"] == CATEGORY[o["operator"]] and o["op_types"] == {o["operator"]: t["count"][key] / t["n"]}
        assert o["pct_of_e2e"] == pytest.approx(100 * o["avg_ms"] / t["e2e"].mean(), rel=1e-5)


def _categories(b, t):
    rows = {c["line"]: c for c in b["categories"]}
    for cat, ms in t["by_cat"].items():
        assert rows[cat]["avg_ms"] == pytest.approx(ms, abs=1e-9) and rows[cat]["total_ms"] == pytest.approx(
            ms * t["n"], abs=1e-8), cat
    assert {c for c, r in rows.items() if r["kind"] == "category"} == set(t["by_cat"])
    assert rows["unattributed"]["avg_ms"] == pytest.approx(t["unattributed"], abs=1e-9)
    assert rows["framework_overhead"]["avg_ms"] == rows["delegate_overhead"]["avg_ms"] == 0  # ORT times kernels only
    assert sum(r["pct_of_e2e"] for r in rows.values()) == pytest.approx(100, abs=1e-3)


def _backends(b, t):
    got = b["backends"]
    assert {k: v["avg_ms"] for k, v in got["leaf_time"].items()} == pytest.approx(dict(t["by_backend"]), abs=1e-9)
    assert got["unattributed_ms"] == pytest.approx(t["unattributed"], abs=1e-9)
    n_calls = sum(1 for _, _, backend, _ in t["run0"] if backend != "portable")
    assert got["delegate_calls_per_run"] == n_calls and got["framework_overhead_ms"] == got["delegate_overhead_ms"] == 0


def _graph(b, t):
    g = b["graph_breaks"]
    # segments of run 0: consecutive nodes of one side (CPU kernels) or each provider call on its own
    segs, prev = [], None
    for _, op, backend, _ in t["run0"]:
        if backend == "portable" and prev == "portable":
            segs[-1].append(op)
        else:
            segs.append([op])
        prev = backend
    assert [s["op_names"] if s["kind"] == "portable" else len(s["op_names"]) for s in g["segments"]] == \
        [s if CATEGORY[s[0]] != "OTHER" or len(s) > 1 else 1 for s in segs]
    assert g["runs"] == t["n"] and g["portable_islands"] == sum(1 for s in g["segments"] if s["kind"] == "portable")
    assert g["transitions"] == sum(1 for a, c in zip(g["segments"], g["segments"][1:]) if a["kind"] != c["kind"])


KEYS = {
    "accounting_check_max_abs_ns": lambda b, t, name, out: b["accounting_check_max_abs_ns"] == 0,
    "backends": lambda b, t, name, out: _backends(b, t),
    "categories": lambda b, t, name, out: _categories(b, t),
    "e2e_ms": lambda b, t, name, out: (b["e2e_ms"]["mean"], b["e2e_ms"]["median"]) == (
        pytest.approx(t["e2e"].mean(), abs=1e-9), pytest.approx(float(np.median(t["e2e"])), abs=1e-9)),
    "etrecord_status": lambda b, t, name, out: b["etrecord_status"] == "absent",
    "experiment": lambda b, t, name, out: b["experiment"] == name.split("_t")[0],
    "graph_breaks": lambda b, t, name, out: _graph(b, t),
    "input": lambda b, t, name, out: b["input"].endswith(name),
    "kind": lambda b, t, name, out: b["kind"] == "breakdown",
    "name": lambda b, t, name, out: b["name"] == name.split(".")[0],
    "notes": lambda b, t, name, out: isinstance(b["notes"], list),
    "operators": lambda b, t, name, out: _ops(b["operators"], t),
    "other_top": lambda b, t, name, out: [o["operator"] for o in b["other_top"]] == [
        o for (o, _), v in sorted(t["by_op"].items(), key=lambda kv: -kv[1]) if CATEGORY[o] == "OTHER"],
    "portable_hotspots": lambda b, t, name, out: [o["operator"] for o in b["portable_hotspots"]] == [
        o for (o, be), v in sorted(t["by_op"].items(), key=lambda kv: -kv[1]) if be == "portable"],
    "runs": lambda b, t, name, out: b["runs"] == t["n"],
    "runtime": lambda b, t, name, out: b["runtime"] == "onnxruntime",  # an ONNX Runtime profile, in its words
    "taxonomy_version": lambda b, t, name, out: b["taxonomy_version"] == "2026.12.2",
    "warnings": lambda b, t, name, out: b["warnings"] == [],
    "written": lambda b, t, name, out: all((out / p.split("/")[-1]).stat().st_size > 0 for p in b["written"]),
}


def test_every_key_has_a_check(case):
    name, b, t, out = case
    assert sorted(b) == sorted(KEYS), "a key of the breakdown needs its check here"
    for key, check in KEYS.items():
        assert check(b, t, name, out) is not False, key


def test_the_program_key_against_the_onnx_model(tmp_path):
    """`breakdown --program model.onnx`: the `program` key, against the model read with onnx and the profile."""
    needs("onnx", "ort")
    import onnx

    name = "cnn_cpu_t1_l1.ort.json"
    r = subprocess.run([sys.executable, "-m", "edgeprof", "breakdown", str(ORT / name), "--program", str(ORT / "cnn.onnx"),
                        "--json", "--no-write"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    (b,) = json.loads(r.stdout)["breakdowns"]
    p, t = b["program"], _truth(name)
    nodes = [n.name or n.op_type for n in onnx.load(str(ORT / "cnn.onnx")).graph.node]
    profiled = {e["name"].removesuffix("_kernel_time") for e in events(name) if e["cat"] == "Node"}
    assert p["program_instructions"] == len(nodes) and p["profile_instructions"] == len(profiled)
    assert p["matched"] == len(profiled & set(nodes)) and p["unmatched"]["nodes"] == len(profiled - set(nodes))
    assert sorted(p["unmatched"]["names"]) == sorted(profiled - set(nodes))[:len(p["unmatched"]["names"])]
    assert p["evidence"] == "ort_json+onnx" and p["program"].endswith("cnn.onnx")
    for row in p["category_rates"]:  # GFLOP/s = FLOPs per run / time per run, the time the profile's own
        assert row["ms_per_run"] == pytest.approx(t["by_cat"][row["category"]], abs=1e-4)
        if row["flops_known"] and row["ms_per_run"] > 0 and row["flops"]:
            assert row["gflops"] == pytest.approx(row["flops"] / row["ms_per_run"] / 1e6, rel=1e-5)
    # the FLOPs per node: tests/analysis/test_onnx_cost.py::test_flops_of_the_cnn_by_hand
