"""The keys of the documents that collect others — `latency` of several inputs (with `--compare`: the comparison)
and `breakdown` of several inputs — against the documents each input gives alone (whose every key has its own
oracle: test_latency_json_oracle.py, test_breakdown_json_oracle.py, test_compare_json_oracle.py) and the runtime's
own `model_run` durations. A key the collections gain without a check here fails the test."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import numpy as np
import pytest
from testdata import DATA

CAND, BASE = DATA / "ort" / "cnn_cpu_t1_l1.ort.json", DATA / "ort" / "cnn_cpu_t2_l1.ort.json.gz"


def edgeprof(*args) -> dict:
    r = subprocess.run([sys.executable, "-m", "edgeprof", *map(str, args), "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def model_runs(path) -> np.ndarray:
    raw = path.read_bytes()
    ev = json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)
    return np.array([e["dur"] for e in sorted(ev, key=lambda e: e["ts"]) if e["name"] == "model_run"]) / 1000


def _reports(d):
    for r, f in zip(d["reports"], (CAND, BASE), strict=True):
        assert r == edgeprof("latency", f, "--no-write")["reports"][0] | {"name": r["name"]}
        assert r["latencies_ms"] == pytest.approx(list(model_runs(f)), abs=1e-6)


def _comparison(d):
    alone = edgeprof("compare", "-b", BASE, "-c", CAND, "--no-write")
    assert {k: v for k, v in d["comparison"].items() if k not in ("inputs", "roles", "config1", "config2")} == {
        k: v for k, v in alone.items() if k not in ("inputs", "roles", "config1", "config2", "schema_version")}
    b, c = (model_runs(f)[d["comparison"][arm]["launches"][0]["warmup_dropped"]:] for f, arm in
            ((BASE, "baseline"), (CAND, "candidate")))
    assert d["comparison"]["speedup"]["estimate"] == pytest.approx(np.median(b) / np.median(c), rel=1e-5)


LATENCY_KEYS = {"comparison": _comparison, "kind": lambda d: d["kind"] == "latency", "reports": _reports,
                "schema_version": lambda d: d["schema_version"] == 1}


def test_every_key_of_latency_over_two_inputs_has_a_check():
    d = edgeprof("latency", "--timeline-csv", CAND, "--compare", BASE, "--no-write")
    assert sorted(d) == sorted(LATENCY_KEYS), "a key of the latency collection needs its check here"
    for key, check in LATENCY_KEYS.items():
        assert check(d) is not False, key


def _breakdowns(d):
    for b, f in zip(d["breakdowns"], (CAND, BASE), strict=True):
        (alone,) = edgeprof("breakdown", f, "--no-write")["breakdowns"]
        assert b == alone
        assert b["runs"] == model_runs(f).size


BREAKDOWN_KEYS = {
    "breakdowns": _breakdowns,
    "kind": lambda d: d["kind"] == "breakdown",
    "schema_version": lambda d: d["schema_version"] == 1,
}


def test_every_key_of_breakdown_over_two_inputs_has_a_check():
    d = edgeprof("breakdown", CAND, BASE, "--no-write")
    assert sorted(d) == sorted(BREAKDOWN_KEYS), "a key of the breakdown collection needs its check here"
    for key, check in BREAKDOWN_KEYS.items():
        assert check(d) is not False, key
