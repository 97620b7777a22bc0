"""ONNX Runtime profiles (real recordings, tests/data/ort: onnxruntime 1.32 CPU provider at 1 and 2 threads, three
launches of four models; onnxruntime-openvino 1.24 with the OpenVINO provider, whose unsupported Hardmax falls back
to the CPU provider) read into the event model and through the analyses.

The oracle is the JSON itself, read here with the standard library only: ``model_run`` durations, ``*_kernel_time``
node events summed by ``op_name``/``provider``, counted by hand-written op-type sets.
"""

from __future__ import annotations

import gzip
import json
import shutil
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from testdata import DATA

from edgeprof.analysis.breakdown import breakdown
from edgeprof.errors import InputError
from edgeprof.io.ort_profile import read_ort_profile
from edgeprof.io.readers import profile_format, read_profile
from edgeprof.taxonomy import classify

ORT = DATA / "ort"
PROFILES = sorted([*ORT.glob("*.ort.json"), *ORT.glob("*.ort.json.gz")])
CONV = {"Conv", "QLinearConv", "FusedConv"}  # by hand: the op types of these models that are convolutions
GEMM = {"Gemm", "QGemm", "MatMul", "FusedMatMul", "MatMulInteger", "MatMulIntegerToFloat", "DynamicQuantizeMatMul"}


def _events(path: Path) -> list[dict]:
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def _truth(path: Path) -> dict:
    """Per run (in time order): the model_run duration (µs) and the node kernel time by (op, provider)."""
    ev = _events(path)
    runs = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev if e["cat"] == "Session" and e["name"] == "model_run")
    per_op = [defaultdict(int) for _ in runs]
    for e in ev:
        if e["cat"] == "Node" and e["name"].endswith("_kernel_time"):
            k = [i for i, (a, b) in enumerate(runs) if a <= e["ts"] and e["ts"] + e["dur"] <= b]
            assert len(k) == 1
            per_op[k[0]][(e["args"]["op_name"], e["args"]["provider"])] += e["dur"]
    return {"e2e_us": [b - a for a, b in runs], "ops": per_op}


def test_the_recordings_are_what_the_tests_say():
    names = {p.name.split(".")[0] for p in PROFILES}
    # and one with the graph optimizer off, nodes run in parallel; and one launch of 60 runs
    assert len(names) == 4 * 2 * 3 + 3 * 2 + 1 + 1
    assert any(p.suffix == ".json" for p in PROFILES) and any(p.suffix == ".gz" for p in PROFILES)


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.name)
def test_latency_and_operator_times_equal_the_runtime_events(path):
    truth = _truth(path)
    prof = read_ort_profile(path)
    # per-run latency: the runtime's own model_run events, to the nanosecond
    assert prof.latency_ns().tolist() == [d * 1000 for d in truth["e2e_us"]]
    assert prof.latency_source == "method_execute" and not prof.warnings
    # per-operator time in every run: the summed kernel events of that op type on that provider
    ev = prof.events.filter(prof.events["kind"].is_in(["kernel", "delegate_op"]))
    got = [defaultdict(int) for _ in truth["e2e_us"]]
    for r, name, backend, dur in ev.select("run_index", "name", "delegate_backend", "duration_ns").iter_rows():
        got[r][(name, "CPUExecutionProvider" if backend == "portable" else backend)] += dur
    assert [dict(g) for g in got] == [{k: v * 1000 for k, v in t.items()} for t in truth["ops"]]
    # the load/init block: model loading and session initialization, outside the runs
    load = prof.events.filter(prof.events["run_index"] < 0)["name"].cast(str).to_list()
    assert load == ["Program::load_method", "Method::init"]


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.name)
def test_conv_and_gemm_time_per_run_equal_a_hand_count(path):
    truth = _truth(path)
    n = len(truth["e2e_us"])
    conv = sum(v for t in truth["ops"] for (op, _), v in t.items() if op in CONV) / n / 1000
    gemm = sum(v for t in truth["ops"] for (op, _), v in t.items() if op in GEMM) / n / 1000
    cats = {r["line"]: r["avg_ms"] for r in breakdown(read_ort_profile(path))["categories"]}
    assert cats.get("CONV", 0.0) == pytest.approx(conv, abs=1e-9)
    assert cats.get("GEMM", 0.0) == pytest.approx(gemm, abs=1e-9)
    # on the CPU provider every model has GEMM time and the CNNs convolution time; OpenVINO fuses them out of sight
    assert (gemm > 0) == ("_cpu_" in path.name)
    assert (conv > 0) == (path.name.startswith("cnn") and ("_cpu_" in path.name or "mixed" in path.name))


def test_every_op_of_the_recorded_models_has_a_category():
    ops = {e["args"]["op_name"] for p in PROFILES for e in _events(p) if e["cat"] == "Node"}
    assert len(ops) >= 30
    for op in ops:
        c = classify(op)
        assert c.category != "OTHER" or c.subtype == "delegated-subgraph", op
        assert c.source in ("onnx", "subgraph"), op


def test_a_cpu_node_in_an_openvino_session_is_a_named_fallback():
    for name in ("cnn_mixed_ov_t1_l1", "tfm_mixed_ov_t1_l2"):
        bd = breakdown(read_ort_profile(ORT / f"{name}.ort.json.gz"))
        assert set(bd["backends"]["leaf_time"]) == {"portable", "OpenVINOExecutionProvider"}
        assert "Hardmax" in {o["operator"] for o in bd["portable_hotspots"]}
        assert all(o["backend"] == "portable" for o in bd["portable_hotspots"])
        segs = bd["graph_breaks"]["segments"]
        assert bd["graph_breaks"]["transitions"] >= 1
        assert {s["backend"] for s in segs if s["kind"] == "delegated"} == {"OpenVINOExecutionProvider"}
    # the tfm: OpenVINO, then the Hardmax on the CPU provider, then OpenVINO again
    bd = breakdown(read_ort_profile(ORT / "tfm_mixed_ov_t1_l1.ort.json.gz"))
    assert [s["kind"] for s in bd["graph_breaks"]["segments"]] == ["delegated", "portable", "delegated"]
    assert bd["graph_breaks"]["segments"][1]["op_names"] == ["Hardmax"]
    # fully delegated: no portable time at all
    bd = breakdown(read_ort_profile(ORT / "cnn_ov_t1_l1.ort.json.gz"))
    assert set(bd["backends"]["leaf_time"]) == {"OpenVINOExecutionProvider"} and not bd["portable_hotspots"]


def test_nodes_keep_their_names_indices_and_op_types():
    path = ORT / "cnn_cpu_t1_l1.ort.json"
    nodes = [e for e in _events(path) if e["cat"] == "Node"]
    prof = read_ort_profile(path)
    k = prof.events.filter((prof.events["kind"] == "kernel") & (prof.events["run_index"] == 0))
    first_run = [e for e in nodes if e["ts"] < min(x["ts"] for x in _events(path) if x["name"] == "model_run") + 10**9]
    first_run = sorted(first_run, key=lambda e: e["ts"])[: k.height]
    assert k["module_path"].cast(str).to_list() == [e["name"].removesuffix("_kernel_time") for e in first_run]
    assert k["instruction_id"].to_list() == [int(e["args"]["node_index"]) for e in first_run]
    assert [x[0] for x in k["op_types"].to_list()] == [e["args"]["op_name"] for e in first_run]
    # the wrapper of each kernel is its OPERATOR_CALL, and every top-level event is inside Method::execute
    parents = prof.events["parent"].to_list()
    names = prof.events["name"].cast(str).to_list()
    kinds = prof.events["kind"].cast(str).to_list()
    for i, kind in enumerate(kinds):
        if kind == "kernel":
            assert names[parents[i]] == "OPERATOR_CALL"
        elif kind == "operator_call":
            assert names[parents[i]] == "Method::execute"


def test_detected_by_content_whatever_the_name(tmp_path):
    odd = tmp_path / "profile_of_tuesday.txt"
    shutil.copyfile(ORT / "cnn_cpu_t1_l1.ort.json", odd)
    assert profile_format(odd) == "ort_json"
    assert read_profile(odd).n_runs == 10
    gz = tmp_path / "noext"
    gz.write_bytes(gzip.compress((ORT / "cnn_cpu_t1_l1.ort.json").read_bytes()))
    assert profile_format(gz) == "ort_json" and read_profile(gz).n_runs == 10
    wrapped = tmp_path / "trace.json"
    wrapped.write_text(json.dumps({"traceEvents": _events(ORT / "cnn_cpu_t1_l1.ort.json")}))
    assert read_profile(wrapped).latency_ns().tolist() == read_profile(odd).latency_ns().tolist()
    # another tool's Chrome trace is not taken for one
    other = tmp_path / "chrome.json"
    other.write_text(json.dumps([{"cat": "gpu", "name": "draw", "ph": "X", "ts": 1, "dur": 2}]))
    with pytest.raises(InputError, match="not a profile"):
        profile_format(other)


def _write(tmp_path, events, name="p.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(events))
    return p


def _run(ts, dur):
    return {"cat": "Session", "name": "model_run", "ph": "X", "ts": ts, "dur": dur, "args": {}}


def _node(ts, dur, op="Conv", provider="CPUExecutionProvider", name="n"):
    return {"cat": "Node", "name": f"{name}_kernel_time", "ph": "X", "ts": ts, "dur": dur,
            "args": {"op_name": op, "provider": provider, "node_index": "3"}}


def test_one_line_errors_name_the_file_and_where(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('[{"cat": "Session", "name": "model_run",\n "ts": 1, "dur": }]')
    with pytest.raises(InputError) as e:
        read_ort_profile(bad)
    assert str(e.value).startswith(str(bad)) and "(line 2)" in str(e.value) and "\n" not in str(e.value)
    p = _write(tmp_path, [_run(0, 10), dict(_node(1, 2), dur=-5)])
    with pytest.raises(InputError, match=r"event 1 \('n_kernel_time'\): 'dur' is -5, not a time"):
        read_ort_profile(p)
    p = _write(tmp_path, [_node(1, 2)])
    with pytest.raises(InputError, match="1 node events but no model_run event"):
        read_ort_profile(p)
    p = _write(tmp_path, {"events": []})
    with pytest.raises(InputError, match="expected a JSON list of trace events"):
        read_ort_profile(p)
    p = _write(tmp_path, [_run(0, 10), 7])
    with pytest.raises(InputError, match="event 1 is a int"):
        read_ort_profile(p)
    gz = tmp_path / "t.json.gz"
    gz.write_bytes(gzip.compress(json.dumps([_run(0, 10)]).encode())[:-6])
    with pytest.raises(InputError, match="truncated"):
        read_ort_profile(gz)


def test_boundaries_of_a_run(tmp_path):
    # a node ending exactly at its run's end is inside; one microsecond later it is outside (left out, said)
    p = _write(tmp_path, [_run(100, 50), _node(100, 50, name="a"), _node(140, 11, name="b"), _run(200, 20),
                          _node(150, 50, name="c"), _node(200, 0, name="d")])
    prof = read_ort_profile(p)
    k = prof.events.filter(prof.events["kind"] == "kernel")
    assert k["module_path"].cast(str).to_list() == ["a", "d"] and k["run_index"].to_list() == [0, 1]
    assert prof.warnings == ["2 node event(s) lie outside every model_run: left out"]
    assert prof.latency_ns().tolist() == [50_000, 20_000]


def test_providers_and_fallbacks_from_a_constructed_session(tmp_path):
    p = _write(tmp_path, [_run(0, 100), _node(1, 10, "QLinearConv", "XnnpackExecutionProvider", "q"),
                          _node(12, 5, "Hardmax", name="h"), _node(20, 30, "MatMul", "QNNExecutionProvider", "m"),
                          {"cat": "Node", "name": "q_fence_before", "ph": "X", "ts": 0, "dur": 1, "args": {}}])
    prof = read_ort_profile(p)
    ev = prof.events
    leaves = ev.filter(ev["kind"].is_in(["kernel", "delegate_op"]))
    assert leaves.select("name", "delegate_backend", "backend_source").rows() == [
        ("QLinearConv", "XnnpackExecutionProvider", "profile"), ("Hardmax", "portable", ""),
        ("MatMul", "QNNExecutionProvider", "profile")]
    bd = breakdown(prof)
    assert [o["operator"] for o in bd["portable_hotspots"]] == ["Hardmax"]
    assert bd["backends"]["leaf_time"]["XnnpackExecutionProvider"]["avg_ms"] == pytest.approx(0.010)
    assert bd["backends"]["unattributed_ms"] == pytest.approx(0.055)  # 100 − 10 − 5 − 30 µs; the fence is not an op
    lines = {r["line"]: r["avg_ms"] for r in bd["categories"]}
    assert lines["CONV"] == pytest.approx(0.010) and lines["GEMM"] == pytest.approx(0.030)
    assert bd["accounting_check_max_abs_ns"] == 0


def test_fuzzed_profiles_give_a_profile_or_one_input_error(tmp_path):
    raw = (ORT / "cnn_cpu_t1_l1.ort.json").read_bytes()[:6000].rsplit(b"},", 1)[0] + b"}]"
    rng = np.random.default_rng(7)
    p = tmp_path / "f.json"
    for _ in range(300):
        b = bytearray(raw)
        for i in rng.integers(0, len(b), rng.integers(1, 6)):
            b[i] = int(rng.integers(0, 256))
        p.write_bytes(bytes(b))
        try:
            read_ort_profile(p)
        except InputError as e:
            assert "\n" not in str(e) and str(e).startswith(str(p))
