"""`compare` decided case by case, fast and exactly: the Arm kit's keys against numpy/scipy, the summary sentence of
every regime and verdict, the warnings each situation must raise, warm-up and drift handling, the minimum
detectable effect from its formula. (The statistical properties are simulated in test_compare.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from simulate import compare_arms, lognormal_runs
import scipy.stats as ss

from edgeprof.analysis.compare import _kit_keys, _log_median_draws


def runs(median: float, n: int = 60, cv: float = 0.02, seed: int = 0) -> np.ndarray:
    return lognormal_runs(median, n, cv, seed)


cmp = compare_arms


def test_kit_keys_against_numpy_and_scipy():
    b, c = runs(10.0, seed=1), runs(5.0, cv=0.04, seed=2)
    k = _kit_keys("base", "cand", b, c)
    assert k["config1"]["median_ms"] == pytest.approx(np.median(b))
    assert k["config1"]["trimmed_mean_ms"] == pytest.approx(ss.trim_mean(b, 0.05))
    assert k["config2"]["cv_percent"] == pytest.approx(100 * np.std(c, ddof=1) / np.mean(c))
    assert k["speedup"]["median_based"] == pytest.approx(np.median(b) / np.median(c))
    assert k["speedup"]["trimmed_mean_based"] == pytest.approx(ss.trim_mean(b, 0.05) / ss.trim_mean(c, 0.05))
    assert k["speedup"]["description"] == f"cand is {np.median(b) / np.median(c):.2f}x faster than base"
    v = k["variability"]
    assert v["more_variable"] == "cand" and v["cv_ratio"] == pytest.approx(v["config1_cv"] / v["config2_cv"])
    assert _kit_keys("base", "cand", c, b)["speedup"]["description"] == \
        f"cand is {np.median(b) / np.median(c):.2f}x slower than base"
    assert _kit_keys("b", "c", b, b)["speedup"]["description"] == "c and b are equally fast"
    assert _kit_keys("b", "c", b, b)["variability"]["more_variable"] == "equal"
    assert _kit_keys("b", "c", b, c)["variability"]["more_variable"] == "c"
    assert _kit_keys("b", "c", c, b)["variability"]["more_variable"] == "b"
    empty = _kit_keys("b", "c", np.empty(0), c)
    assert empty["speedup"] == {"median_based": None, "trimmed_mean_based": None, "description": "not enough data"}
    assert empty["variability"]["more_variable"] is None and empty["config1"]["count"] == 0


def test_single_launch_sentence_and_scope():
    # one launch each with the default 25 % launch SD allowance: a 3× change is found
    r = cmp([runs(15.0)], [runs(5.0, seed=3)])
    assert r["regime"] == "single-launch" and r["verdict"] == "faster" and r["significant"]
    s = r["speedup"]["estimate"]
    assert s == pytest.approx(np.median(runs(15.0)) / np.median(runs(5.0, seed=3)))
    assert r["summary_line"].startswith(f"cand vs base: {s:.3g}× faster [speedup {s:.3f}, 95% CI ")
    assert r["summary_line"].endswith("threshold 2 % — verdict: faster (single-launch: allowance of 25 % "
                                      "launch-to-launch SD per arm)")
    assert "60 vs 60 runs in 1 vs 1 launch(es)" in r["summary_line"]
    assert any(w.startswith("1 and 1 launch(es): launch-to-launch variation cannot be measured") for w in r["warnings"])
    assert r["launch_allowance"] == {"launch_cv": 0.25, "applied": True, "source": "default", "from_arms": False}
    assert r["launch_sd_estimate"] is None and r["ci"]["degrees_of_freedom"] is None


def test_no_allowance_is_about_these_two_launches():
    r = cmp([runs(10.0)], [runs(10.0, seed=4)], launch_cv=0.0)
    assert r["regime"] == "single-launch, no allowance" and r["verdict"] in ("inconclusive", "equivalent")
    assert r["summary_line"].endswith(" (about these two launches)")
    assert "not established" in r["summary_line"] or r["verdict"] == "equivalent"
    assert any("no allowance: the interval covers run-to-run noise" in w for w in r["warnings"])
    assert r["launch_allowance"]["applied"] is False


def test_multi_launch_with_one_single_launch_arm():
    r = cmp([runs(10.0, seed=5)], [runs(5.0, seed=s) for s in (6, 7, 8)])
    # 2 launch-level df of the arms, nothing measured: the allowance counts as 2 df more (the 2-df floor)
    assert r["regime"] == "multi-launch" and r["ci"]["degrees_of_freedom"] == 4
    assert "widened to the launch-SD allowance (25 %, no measured launch noise: counted as 2 df" in r["ci"]["method"]
    assert "base has a single launch: the launch-to-launch variation is estimated from the other arm" in r["warnings"]
    assert r["summary_line"].endswith("(multi-launch)")
    assert r["launch_sd_estimate"] is not None and "mann_whitney_launch_medians" not in r["tests"]


def test_three_launches_each_add_a_test_on_launch_medians():
    b = [runs(10.0, seed=s) for s in (1, 2, 3)]
    c = [runs(8.0, seed=s) for s in (4, 5, 6)]
    r = cmp(b, c)
    lm = r["tests"]["mann_whitney_launch_medians"]
    want = ss.mannwhitneyu([np.median(x) for x in b], [np.median(x) for x in c], method="exact")
    assert lm["p_value"] == pytest.approx(want.pvalue)
    assert "multi-launch" in r["summary_line"] and "base has a single launch" not in " ".join(r["warnings"])


def test_slower_sentence():
    r = cmp([runs(5.0)], [runs(15.0, seed=3)])
    s = r["speedup"]["estimate"]
    assert r["verdict"] == "slower" and r["summary_line"].startswith(f"cand vs base: {1 / s:.3g}× slower [")


def test_too_few_runs_is_inconclusive_and_says_why():
    r = cmp([np.array([10.0])], [np.array([5.0, 5.1])])
    assert r["verdict"] == "inconclusive" and r["ci"] is None and not r["significant"]
    assert r["summary_line"] == "cand vs base: not enough data — verdict: inconclusive"
    assert "each arm needs at least 2 runs with positive latency for an interval" in r["warnings"]
    r = cmp([np.array([10.0, 0.0, 9.0])], [np.array([5.0, 5.1, 4.9])])
    assert r["ci"] is None


def test_fixed_warmup_and_drift_notes():
    b = runs(10.0, n=60)
    b[:4] *= 2
    r = cmp([b], [runs(10.0, n=60, seed=9)], warmup=4)
    assert r["baseline"]["launches"][0]["warmup_dropped"] == 4 and r["candidate"]["launches"][0]["warmup_dropped"] == 4
    assert "base: 4 warm-up run(s) left out (4 per launch)" in r["warnings"]
    assert r["baseline"]["count"] == 56
    r = cmp([b], [runs(10.0, n=60, seed=9)], warmup=100)       # never more than all runs but one
    assert r["baseline"]["launches"][0]["warmup_dropped"] == 59
    drift = 10.0 * (1 + 0.002 * np.arange(80)) * np.exp(np.random.default_rng(2).normal(0, 0.002, 80))
    r = cmp([drift], [runs(10.0, n=80)], warmup=0)
    note = [w for w in r["warnings"] if w.startswith("base: drift in launch 0")]
    assert note and "per 100 runs, Mann–Kendall p = " in note[0] and note[0].endswith("could bias the comparison")


def test_minimum_detectable_effect_and_the_plan():
    from scipy.special import ndtri
    r = cmp([runs(10.0, cv=0.05)], [runs(10.1, cv=0.05, seed=2)], launch_cv=0.0, threshold=0.001)
    se = r["ci"]["standard_error_log"]
    crit = float(ndtri(0.975))
    assert r["minimum_detectable_effect"] == pytest.approx(np.expm1((crit + float(ndtri(0.8))) * se), rel=1e-6)
    if r["verdict"] == "inconclusive":
        assert r["plan"]["statement"].startswith("to resolve a ")
        assert any(w.startswith("underpowered: the minimum detectable effect is ") and "add runs" in w
                   for w in r["warnings"])


def test_log_median_draws_of_a_large_launch_use_the_normal_limit():
    from edgeprof.analysis.stats import order_statistic_median_ci
    v = runs(10.0, n=6000, cv=0.05)
    d = _log_median_draws(v, 4000, np.random.default_rng(0))
    lo, hi = order_statistic_median_ci(v, 0.95)
    assert d.mean() == pytest.approx(np.log(np.median(v)), abs=3e-4)
    assert d.std() == pytest.approx((np.log(hi) - np.log(lo)) / (2 * 1.959963984540054), rel=0.05)
