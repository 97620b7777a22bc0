"""Every slice of `trace` on real ONNX Runtime profiles against the runtime's own events: one slice per event
(the run, each node's wrapper and op, load and init), at the event's time from the first event (µs) and for its
duration, on its run's track, with its name in ONNX Runtime's own words (``model_run``, ``session_initialization``,
``model_loading``, each node's ``kernel_time`` and op), kind, backend (the provider's name:
``CPUExecutionProvider``) and category; the tracks and `otherData` as stated. A slice or argument the trace gains
without a check here fails the test."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest
from testdata import DATA

from edgeprof.taxonomy import classify

ORT = DATA / "ort"


def _events(name: str) -> list[dict]:
    raw = (ORT / name).read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def _expected(name: str) -> list[tuple]:
    """(track, name, kind, backend, ts µs, dur µs) of every slice, from the runtime's JSON."""
    ev = _events(name)
    origin = min(e["ts"] for e in ev if e.get("ph", "X") == "X" and e["cat"] in ("Session", "Node"))
    out = []
    loads = {"model_loading_uri": "model_loading", "session_initialization": "session_initialization"}
    for e in ev:
        if e["cat"] == "Session" and e["name"] in loads:
            out.append((0, loads[e["name"]], "framework", "framework", e["ts"] - origin, e["dur"]))
    runs = sorted((e["ts"], e["dur"]) for e in ev if e["cat"] == "Session" and e["name"] == "model_run")
    for r, (t0, d0) in enumerate(runs):
        out.append((r + 1, "model_run", "framework", "framework", t0 - origin, d0))
        for e in ev:
            if e["cat"] == "Node" and t0 <= e["ts"] and e["ts"] + e["dur"] <= t0 + d0:
                cpu = e["args"]["provider"] == "CPUExecutionProvider"
                backend = e["args"]["provider"]
                op = e["args"]["op_name"]
                out.append((r + 1, op, "kernel" if cpu else "delegate_op", backend, e["ts"] - origin, e["dur"]))
                out.append((r + 1, "kernel_time", "operator_call" if cpu else
                            "delegate_call", backend, e["ts"] - origin, e["dur"]))
    return sorted(out)


@pytest.mark.parametrize("name", ["cnn_cpu_t1_l1.ort.json", "cnn_mixed_ov_t1_l1.ort.json.gz"])
def test_every_slice_is_a_runtime_event(name, tmp_path):
    out = tmp_path / "t.json"
    r = subprocess.run([sys.executable, "-m", "edgeprof", "trace", str(ORT / name), "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert sorted(doc) == ["otherData", "traceEvents"]
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    meta = [e for e in doc["traceEvents"] if e["ph"] == "M"]
    assert len(slices) + len(meta) == len(doc["traceEvents"])
    got = sorted((e["tid"], e["name"], e["args"]["kind"], e["args"]["delegate_backend"], e["ts"], e["dur"])
                 for e in slices)
    assert got == _expected(name)
    origin0 = min(x["ts"] for x in _events(name) if x.get("ph", "X") == "X" and x["cat"] in ("Session", "Node"))
    by_time = {(x["ts"] - origin0, x["dur"]): x for x in _events(name) if x["cat"] == "Node"
               and x["name"].endswith("_kernel_time")}
    for e in slices:
        assert set(e) == {"name", "cat", "ph", "pid", "tid", "ts", "dur", "args"} and e["cat"] == e["args"]["kind"]
        a = e["args"]
        assert set(a) <= {"kind", "category", "timing_source", "delegate_backend", "event_index", "run_index",
                          "instruction_id", "op_types_id", "parent_event_index", "runtime_args"}, set(a)
        # a node's slice keeps every field ONNX Runtime recorded for it (shapes, sizes, memory, thread statistics),
        # the node event's own name with them — compared with the runtime's JSON event at the same time
        if e["name"] == "kernel_time":
            own = by_time[(e["ts"], e["dur"])]
            assert a["runtime_args"] == {"event": own["name"], **own["args"]}
        else:
            assert "runtime_args" not in a
        assert a["run_index"] == e["tid"] - 1 and a["timing_source"] == "measured"
        # the category of the event the name stands for (ONNX Runtime's Session events are the framework's)
        internal = {"model_run": "Method::execute", "session_initialization": "Method::init",
                    "model_loading": "Program::load_method", "kernel_time": "OPERATOR_CALL"}.get(e["name"], e["name"])
        want = classify(internal).category
        assert a["category"] == want, e["name"]
        if "op_types_id" in a:
            assert doc["otherData"]["op_types"][a["op_types_id"]] == [e["name"]] or e["name"] == "kernel_time"
    names = {e["tid"]: e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    runs = len({e["tid"] for e in slices if e["tid"] > 0})
    assert names == {0: "load & init", **{k: f"run {k - 1}" for k in range(1, runs + 1)}}
    assert doc["otherData"]["tool"] == "edgeprof" and doc["otherData"]["source"].endswith(name)
    first = min(e["ts"] for e in _events(name) if e["cat"] in ("Session", "Node"))
    assert doc["otherData"]["time_origin_ns"] == first * 1000


TRACE_KEYS = {  # `trace --json`: the summary of what was written, against the runtime's events
    "adjusted": lambda d, exp: d["adjusted"] == 0,  # no overlapping slice needed moving
    "input": lambda d, exp: d["input"].endswith("cnn_cpu_t1_l1.ort.json"),
    "kind": lambda d, exp: d["kind"] == "trace",
    "runs": lambda d, exp: d["runs"] == sorted({t - 1 for t, *_ in exp if t > 0}),
    "schema_version": lambda d, exp: d["schema_version"] == 1,
    "skipped_no_duration": lambda d, exp: d["skipped_no_duration"] == 0,
    "slices": lambda d, exp: d["slices"] == len(exp),
    "tracks": lambda d, exp: d["tracks"] == len({t for t, *_ in exp}),
    "written": lambda d, exp: d["written"].endswith("t.json"),
}


def test_every_key_of_the_trace_summary_has_a_check(tmp_path):
    name = "cnn_cpu_t1_l1.ort.json"
    r = subprocess.run([sys.executable, "-m", "edgeprof", "trace", str(ORT / name), "--out", str(tmp_path / "t.json"),
                        "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert sorted(d) == sorted(TRACE_KEYS), "a key of the trace summary needs its check here"
    for key, check in TRACE_KEYS.items():
        assert check(d, _expected(name)) is not False, key
