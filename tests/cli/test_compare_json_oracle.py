"""Every key of `compare --json` on real ONNX Runtime launches (three per arm) against an independent computation:
numpy and scipy on the runtime's own `model_run` durations (the first run of each launch left out as warm-up, as the
document says), hand-worked formulas, or the test that checks it on known truth. A key the document gains without a
check here fails the test."""

from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats
from summary_oracle import check_summary
from testdata import DATA

ORT = DATA / "ort"
B = [ORT / "cnn_cpu_t1_l1.ort.json", ORT / "cnn_cpu_t1_l2.ort.json.gz", ORT / "cnn_cpu_t1_l3.ort.json.gz"]
C = [ORT / f"cnn_cpu_t2_l{k}.ort.json.gz" for k in (1, 2, 3)]


def _runs_ms(path) -> np.ndarray:
    raw = path.read_bytes()
    ev = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    return np.array([e["dur"] for e in sorted(ev, key=lambda e: e["ts"]) if e["name"] == "model_run"]) / 1000


@pytest.fixture(scope="module")
def doc():
    args = [sys.executable, "-m", "edgeprof", "compare", "--json", "--no-write"]
    for f in B:
        args += ["-b", str(f)]
    for f in C:
        args += ["-c", str(f)]
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    # the document says the first run of each launch is warm-up: the oracle takes the same runs
    assert all("1, 1, 1 per launch" in w for w in d["warnings"][:2])
    return d, [_runs_ms(f)[1:] for f in B], [_runs_ms(f)[1:] for f in C]


def _summary(s: dict, runs: list[np.ndarray]) -> None:
    check_summary(s, np.concatenate(runs))
    assert len(s["launches"]) == len(runs)
    for launch, r in zip(s["launches"], runs):
        assert launch["runs"] == r.size + 1 and launch["warmup_dropped"] == 1
        assert launch["median_ms"] == pytest.approx(np.median(r), rel=1e-6)


def _speedup(d, b, c):
    sp = d["speedup"]
    x, y = np.concatenate(b), np.concatenate(c)
    assert sp["median_based"] == pytest.approx(np.median(x) / np.median(y), rel=1e-5)
    assert sp["trimmed_mean_based"] == pytest.approx(stats.trim_mean(x, 0.05) / stats.trim_mean(y, 0.05), rel=1e-5)
    # the estimate pools launch medians (REML-weighted): it lies within the launch medians' ratios
    lb, lc = [math.log(np.median(r)) for r in b], [math.log(np.median(r)) for r in c]
    assert min(lb) - max(lc) <= math.log(sp["estimate"]) <= max(lb) - min(lc)
    assert (sp["ci_low"], sp["ci_high"]) == (d["ci"]["low"], d["ci"]["high"]) == (
        d["metrics"]["median"]["ci_low"], d["metrics"]["median"]["ci_high"])
    # the sentence quotes the estimate beside it (one figure), not the pooled medians' ratio
    est = sp["estimate"]
    quoted = f"{est:.2f}x faster" if est > 1 else f"{1 / est:.2f}x slower"
    assert quoted in sp["description"]


def _tests(d, b, c):
    x, y = np.concatenate(b), np.concatenate(c)
    t = d["tests"]
    mw = stats.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic", use_continuity=True)
    assert t["mann_whitney"]["u"] == pytest.approx(mw.statistic) and t["mann_whitney"]["p_value"] == pytest.approx(
        mw.pvalue, rel=1e-2, abs=1e-6)
    bm = stats.brunnermunzel(x, y)
    assert t["brunner_munzel"]["statistic"] == pytest.approx(bm.statistic, rel=1e-5)
    assert t["brunner_munzel"]["p_value"] == pytest.approx(bm.pvalue, rel=1e-2, abs=1e-6)
    gt = (x[:, None] > y[None, :]).mean() - (x[:, None] < y[None, :]).mean()
    assert t["cliffs_delta"] == pytest.approx(gt, abs=1e-6)
    lm = stats.mannwhitneyu([np.median(r) for r in b], [np.median(r) for r in c], method="exact")
    assert t["mann_whitney_launch_medians"]["p_value"] == pytest.approx(lm.pvalue, abs=1e-6)
    hl = math.exp(np.median(np.subtract.outer(np.log(x), np.log(y))))
    assert d["hodges_lehmann"]["speedup"] == pytest.approx(hl, rel=1e-5)
    assert d["hodges_lehmann"]["low"] <= hl <= d["hodges_lehmann"]["high"]


def _slow(d, b, c):
    def share(runs):
        return sum(int((r >= 2 * np.median(r)).sum()) for r in runs) / sum(r.size for r in runs)
    assert d["slow_runs"]["baseline_share"] == pytest.approx(share(b))
    assert d["slow_runs"]["candidate_share"] == pytest.approx(share(c))


def _variability(d, b, c):
    v = d["variability"]
    assert v["config1_cv"] == d["baseline"]["cv_percent"] and v["config2_cv"] == d["candidate"]["cv_percent"]
    assert v["cv_ratio"] == pytest.approx(v["config1_cv"] / v["config2_cv"], rel=1e-5)
    assert v["more_variable"] == (d["candidate"]["name"] if v["config2_cv"] > v["config1_cv"] else d["baseline"]["name"])


def _configs(d, b, c):
    for cfg, arm in (("config1", "baseline"), ("config2", "candidate")):
        for k in ("count", "cv_percent", "median_ms", "name"):
            assert d[cfg][k] == d[arm][k], (cfg, k)
        assert d[cfg]["trimmed_mean_ms"] == d[arm]["trimmed_mean_5_ms"]


def _rule(low: float, high: float, delta: float) -> str:
    """The verdict rule as the README states it, written out here."""
    if low > 1 + delta:
        return "faster"
    if high < 1 / (1 + delta):
        return "slower"
    if delta > 0 and 1 / (1 + delta) <= low and high <= 1 + delta:
        return "equivalent"
    return "inconclusive"


ELSEWHERE = "checked on known truth elsewhere"
KEYS = {  # key → its check here (d, baseline runs, candidate runs), or where it is checked against a truth
    "advice": lambda d, b, c: d["advice"].startswith("underpowered") == (d["verdict"] == "inconclusive"),
    "baseline": lambda d, b, c: _summary(d["baseline"], b),
    "candidate": lambda d, b, c: _summary(d["candidate"], c),
    "by_category": ELSEWHERE + ": tests/analysis/test_breakdown_oracle.py, test_compare_rules.py",
    "ci": lambda d, b, c: d["ci"]["level"] == 0.95 and d["ci"]["degrees_of_freedom"] == len(b) + len(c) - 2,
    "comparability": lambda d, b, c: d["comparability"]["variable_under_test"] == ["threads"],
    "config1": _configs, "config2": _configs,
    "convention": lambda d, b, c: d["convention"] == "speedup = baseline / candidate (> 1: candidate faster)",
    "estimator": lambda d, b, c: "log launch medians" in d["estimator"],
    "hodges_lehmann": _tests,
    "inputs": lambda d, b, c: [p.split("/")[-1] for p in d["inputs"]["baseline"]] == [f.name for f in B],
    "kind": lambda d, b, c: d["kind"] == "comparison",
    "launch_allowance": lambda d, b, c: d["launch_allowance"]["applied"] is False,  # several launches measure it
    "launch_noise": lambda d, b, c: d["launch_noise"]["source"] == "default",
    "launch_sd_estimate": ELSEWHERE + ": tests/analysis/test_launches.py (REML τ against scipy.optimize)",
    "level": lambda d, b, c: d["level"] == 0.95,
    "metric": lambda d, b, c: d["metric"] == "median",
    "metrics": lambda d, b, c: d["metrics"]["median"]["speedup"] == d["speedup"]["estimate"],
    "minimum_detectable_effect": ELSEWHERE + ": tests/analysis/test_launches_rules.py (design table)",
    "output_stem": lambda d, b, c: d["output_stem"].endswith("_robust_comparison"),
    "p_value": lambda d, b, c: d["p_value"] == d["metrics"]["median"]["p_value"],
    "p_value_scope": lambda d, b, c: d["p_value_scope"] == "launch-level (multi-launch)",
    # one program at two thread counts: the same operators on the same backends (a move: test_placement*.py)
    "placement": lambda d, b, c: (d["placement"]["verdict"] == "same_placement" and d["placement"]["moved"] == []
                                  and d["placement"]["baseline_fingerprint"] == d["placement"]["candidate_fingerprint"]),
    "plan": ELSEWHERE + ": tests/cli/test_compare_launches.py (a plan checked by simulating its design)",
    "regime": lambda d, b, c: d["regime"] == "multi-launch",
    "resamples": lambda d, b, c: d["resamples"] == 2000,
    "roles": lambda d, b, c: d["roles"] == "as given (--baseline/--candidate)",
    "schema_version": lambda d, b, c: d["schema_version"] == 1,
    "seed": lambda d, b, c: d["seed"] == 0,
    "significant": lambda d, b, c: d["significant"] == (d["verdict"] in ("faster", "slower")),
    "slow_runs": _slow,
    "speedup": _speedup,
    "summary_line": lambda d, b, c: f"{d['speedup']['estimate']:.3f}" in d["summary_line"],
    "tail_regression": lambda d, b, c: d["tail_regression"] is None,
    "tests": _tests,
    "threshold": lambda d, b, c: d["threshold"] == 0.02,
    "variability": _variability,
    "verdict": lambda d, b, c: d["verdict"] == _rule(d["ci"]["low"], d["ci"]["high"], d["threshold"]),
    "warnings": lambda d, b, c: isinstance(d["warnings"], list),
}


def test_every_key_has_a_check(doc):
    d, b, c = doc
    assert sorted(d) == sorted(KEYS), "a key of the comparison needs its check here"
    # "memory" is there only when `edgeprof run` recorded the launches' memory (not these): its figures are checked
    # against the manifest in tests/analysis/test_memory_collect.py
    assert "memory" not in d
    for key, check in KEYS.items():
        if callable(check):
            assert check(d, b, c) is not False, key


def test_the_written_file_and_the_verdict_an_incomparable_pair_would_have(tmp_path):
    """Another model at another thread count: `verdict` is not_comparable and `verdict_if_comparable` the verdict
    the rule gives the interval; the file `written` names holds the document printed."""
    import shutil

    names = ["cnn_cpu_t1_l1.ort.json", "tfm_cpu_t2_l1.ort.json.gz", "tfm_cpu_t2_l2.ort.json.gz"]
    for n in names:
        shutil.copy(ORT / n, tmp_path / n)
    r = subprocess.run([sys.executable, "-m", "edgeprof", "compare", "-b", names[0], "-c", names[1], "-c", names[2],
                        "--json", "--output-dir", "."], capture_output=True, text=True, cwd=tmp_path)  # asked for
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["verdict"] == "not_comparable" and d["comparability"]["critical_differences"] == ["threads"]
    assert d["verdict_if_comparable"] == _rule(d["ci"]["low"], d["ci"]["high"], d["threshold"])
    written = tmp_path / d["written"]
    assert written.name.endswith("_robust_comparison.json") and json.loads(written.read_text()) == {
        k: v for k, v in d.items() if k != "written"}
