"""Every key of `latency --json` on a real 60-run ONNX Runtime launch against an independent computation: numpy and
scipy on the runtime's own `model_run` durations (summaries, percentiles, MAD, trimmed means, Tukey fences, the
median's bootstrap interval, Mann–Kendall / Kendall's tau and Theil–Sen on the steady runs), or the test that
checks it on known truth. A key the report gains without a check here fails the test."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats
from summary_oracle import check_summary
from testdata import DATA

FILE = DATA / "ort" / "cnn_cpu_t1_r60.ort.json.gz"


@pytest.fixture(scope="module")
def case():
    ev = json.loads(gzip.decompress(FILE.read_bytes()))
    x = np.array([e["dur"] for e in sorted(ev, key=lambda e: e["ts"]) if e["name"] == "model_run"]) / 1000
    r = subprocess.run([sys.executable, "-m", "edgeprof", "latency", str(FILE), "--json", "--no-write"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["kind"] == "latency" and doc["schema_version"] == 1 and len(doc["reports"]) == 1
    return doc["reports"][0], x


def _stats(s: dict, x: np.ndarray) -> None:
    check_summary(s, x)


def _ci(ci: dict, x: np.ndarray) -> None:
    ref = stats.bootstrap((x,), np.median, n_resamples=4000, method="percentile",
                          random_state=np.random.default_rng(3)).confidence_interval
    assert ci["low_ms"] == pytest.approx(ref.low, rel=0.02) and ci["high_ms"] == pytest.approx(ref.high, rel=0.02)


def _outliers(o: dict, x: np.ndarray) -> None:
    q1, q3 = np.percentile(x, [25, 75])
    lo, hi = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
    idx = [i for i, v in enumerate(x) if v < lo or v > hi]
    assert (o["bounds"]["lower"], o["bounds"]["upper"]) == (pytest.approx(lo), pytest.approx(hi))
    assert o["indices"] == idx and o["count"] == len(idx) and o["values"] == pytest.approx(list(x[idx]))
    assert o["percentage"] == pytest.approx(100 * len(idx) / x.size)


def _robust(r: dict, x: np.ndarray) -> None:
    keep = np.delete(x, r["outliers"]["indices"])
    _stats(r["robust_stats"], keep)


def _drift(d: dict, x: np.ndarray, first: int) -> None:
    v = x[first:]  # the steady runs, after the warm-up
    n = v.size
    s = sum(np.sign(v[j] - v[i]) for i in range(n) for j in range(i + 1, n))
    tau = stats.kendalltau(np.arange(n), v)
    mk = d["mann_kendall"]
    assert mk["s"] == s and mk["tau"] == pytest.approx(tau.statistic, abs=1e-6)
    assert mk["p_value"] == pytest.approx(tau.pvalue, rel=1e-3)
    ts = stats.theilslopes(v)
    assert d["theil_sen_slope_ms_per_run"] == pytest.approx(ts.slope, abs=1e-6)
    assert d["slope_percent_per_100_runs"] == pytest.approx(ts.slope / np.median(v) * 1e4, rel=1e-3)
    assert d["significant"] == (tau.pvalue < d["alpha"]) and d["direction"] == "slower over time"


def _steady(st: dict, x: np.ndarray, first: int) -> None:
    _stats(st, x[first:])
    assert st["runs_total"] == x.size and st["first_run"] == first
    _ci(st["ci_median"], x[first:])


KEYS = {
    "ci": lambda r, x: _ci(r["ci"]["median"], x),
    "count": lambda r, x: r["count"] == x.size,
    "cv_percent": _stats, "iqr_ms": _stats, "mad_ms": _stats, "max_ms": _stats, "mean_ms": _stats, "median_ms": _stats,
    "min_ms": _stats, "percentiles": _stats, "sigma_mad_ms": _stats, "std_dev_ms": _stats, "trimmed_mean_10_ms": _stats,
    "trimmed_mean_5_ms": _stats,
    "drift": lambda r, x: _drift(r["drift"], x, r["steady"]["first_run"]),
    "input": lambda r, x: r["input"].endswith(FILE.name),
    "kind": lambda r, x: r["kind"] == "latency",
    "latencies_ms": lambda r, x: r["latencies_ms"] == pytest.approx(list(x), abs=1e-9),
    "multimodality": "checked on known truth: tests/analysis/test_stats_rules.py (modes of constructed mixtures)",
    "name": lambda r, x: r["name"].startswith("cnn_cpu_t1_r60"),
    "outliers": lambda r, x: _outliers(r["outliers"], x),
    "robust_stats": lambda r, x: _robust(r, x),
    "run_indices": lambda r, x: r["run_indices"] == list(range(x.size)),
    "runtime": lambda r, x: r["runtime"] == "onnxruntime",  # the runs of an ONNX Runtime profile
    "source": lambda r, x: r["source"] == "method_execute",
    "steady": lambda r, x: _steady(r["steady"], x, r["warmup"]["count"]),
    # the warm-up split is checked on known truth (tests/analysis/test_latency_boundaries.py); here its figures
    "warmup": lambda r, x: (r["warmup"]["warmup_median_ms"], r["warmup"]["steady_median_ms"]) == (
        pytest.approx(float(np.median(x[:r["warmup"]["count"]]))), pytest.approx(float(np.median(x[r["warmup"]["count"]:])))),
    "warnings": lambda r, x: isinstance(r["warnings"], list),
}


def test_every_key_has_a_check(case):
    r, x = case
    assert sorted(r) == sorted(KEYS), "a key of the latency report needs its check here"
    for key, check in KEYS.items():
        if callable(check):
            got = check(r, x)
            assert got is not False, key


def test_the_written_file_holds_the_report_printed(tmp_path):
    import shutil

    shutil.copy(FILE, tmp_path / FILE.name)
    r = subprocess.run([sys.executable, "-m", "edgeprof", "latency", FILE.name, "--json", "--output-dir", "."],
                       capture_output=True, text=True, cwd=tmp_path)  # with --json, the file only when asked
    assert r.returncode == 0, r.stderr
    (rep,) = json.loads(r.stdout)["reports"]
    saved = json.loads((tmp_path / rep["written"]).read_text())
    assert rep["written"].endswith("_robust_stats.json")
    assert saved["latencies_ms"] == rep["latencies_ms"] == pytest.approx(list(np.array(
        [e["dur"] for e in sorted(json.loads(gzip.decompress(FILE.read_bytes())), key=lambda e: e["ts"])
         if e["name"] == "model_run"]) / 1000))
    assert {k: v for k, v in saved.items() if k not in ("kind", "schema_version")} == {
        k: v for k, v in rep.items() if k not in ("written", "kind")}
