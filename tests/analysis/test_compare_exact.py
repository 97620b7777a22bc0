"""`compare` at its switches: which interval method each launch layout takes, the minimum run counts, fixed
warm-up on short launches, the plan's effect size, the multimodality wording, and the summary sentence's direction
at and around a speedup of 1. Small inputs, so every case runs in milliseconds."""

from __future__ import annotations

import numpy as np
import pytest
from simulate import compare_arms, lognormal_runs

from edgeprof.analysis.compare import Arm, _log_median_draws, _prepare, arm_selection, compare_latency
from edgeprof.analysis.stats import BOOTSTRAP_MAX_N


def runs(median: float, n: int = 40, cv: float = 0.02, seed: int = 0) -> np.ndarray:
    return lognormal_runs(median, n, cv, seed)


def cmp(b, c, **kw):
    kw.setdefault("resamples", 200)
    return compare_arms(b, c, **kw)


def test_bootstrap_draws_up_to_5000_runs_then_the_normal_limit():
    assert BOOTSTRAP_MAX_N == 5000
    rng = np.random.default_rng(1)
    v = np.arange(1.0, BOOTSTRAP_MAX_N + 1)             # distinct whole numbers: a median of 5000 is k or k + 0.5
    d = np.exp(_log_median_draws(v, 40, rng))
    assert np.allclose(2 * d, np.round(2 * d), rtol=0, atol=1e-6)
    w = np.arange(1.0, BOOTSTRAP_MAX_N + 2)             # 5001: drawn from a normal, not from the values
    d = np.exp(_log_median_draws(w, 40, rng))
    assert not np.allclose(2 * d, np.round(2 * d), rtol=0, atol=1e-6)


def test_fixed_warmup_never_empties_a_launch():
    a = Arm("a", [np.array([5.0]), np.arange(1.0, 11.0), np.array([3.0, 4.0])])
    steady, per, notes = _prepare(a, arm_selection(a, 3))
    assert [p["warmup_dropped"] for p in per] == [0, 3, 1]
    assert [p["median_ms"] for p in per] == [5.0, 7.0, 4.0]
    assert [s.tolist() for s in steady] == [[5.0], list(np.arange(4.0, 11.0)), [4.0]]
    assert notes == ["a: 4 warm-up run(s) left out (0, 3, 1 per launch)"]
    a = Arm("a", [runs(10.0, seed=3)])
    _, per, notes = _prepare(a, arm_selection(a, 0))
    assert per[0]["warmup_dropped"] == 0 and notes == []      # stationary: no warm-up note and no drift note


def test_documented_defaults():
    r = cmp([runs(10.0, seed=k) for k in range(3)], [runs(9.0, seed=10 + k) for k in range(3)], resamples=2000)
    assert (r["threshold"], r["level"], r["seed"], r["resamples"]) == (0.02, 0.95, 0, 2000)
    d = compare_latency(Arm("b", [runs(10.0, seed=k) for k in range(3)]), Arm("c", [runs(9.0, seed=10 + k) for k in range(3)]))
    assert d["resamples"] == 2000 and d["threshold"] == 0.02


@pytest.mark.parametrize("b,c,has_ci", [
    ([[1.0, 2.0]], [[1.5, 2.5]], True),                  # two runs each: enough
    ([[1.0]], [[1.5, 2.5]], False), ([[1.0, 2.0]], [[1.5]], False),
    ([[1.0, 0.0]], [[1.5, 2.5]], False), ([[1.0, 2.0]], [[0.0, 2.5]], False),   # a zero latency: no log
    ([], [[1.5, 2.5]], False), ([[1.5, 2.5]], [], False),
    ([[1.0, 2.0]], [[0.5, 0.7]], True),                 # sub-millisecond runs are fine
])
def test_minimum_runs_for_an_interval(b, c, has_ci):
    r = cmp([np.array(x) for x in b], [np.array(x) for x in c], warmup=0)
    assert (r["ci"] is not None) == has_ci
    if not has_ci:
        assert r["verdict"] == "inconclusive" and "at least 2 runs" in r["warnings"][-1]
        assert r["summary_line"] == "cand vs base: not enough data — verdict: inconclusive"
    assert r["config1"]["count"] == sum(len(x) for x in b) and r["config2"]["count"] == sum(len(x) for x in c)


@pytest.mark.parametrize("kb,kc,cv,method,estimator", [
    (1, 1, 0.0, "percentile bootstrap", "ratio of the two launches' medians"),
    (1, 1, 0.02, "normal interval: run-to-run noise within the launches plus an allowance", "ratio of"),
    (2, 1, 0.0, "normal interval from run-to-run noise", "ratio of"),
    (1, 2, 0.0, "normal interval from run-to-run noise", "ratio of"),
    (3, 3, 0.0, "REML launch-effect model", "precision-weighted mean of log launch medians"),
])
def test_interval_method_by_launch_layout(kb, kc, cv, method, estimator):
    r = cmp([runs(10.0, seed=k) for k in range(kb)], [runs(9.0, seed=10 + k) for k in range(kc)], launch_cv=cv)
    assert r["ci"]["method"].startswith(method) and r["estimator"].startswith(estimator)
    assert (r["launch_sd_estimate"] is not None) == (r["regime"] == "multi-launch")


def test_single_launch_warning_in_the_multi_launch_regime():
    r = cmp([runs(10.0, seed=k) for k in range(3)], [runs(9.0, seed=9)], launch_cv=0.02)
    assert r["regime"] == "multi-launch" and "cand has a single launch" in " ".join(r["warnings"])
    r = cmp([runs(10.0, seed=k) for k in range(3)], [runs(9.0, seed=10 + k) for k in range(2)])
    assert r["regime"] == "multi-launch" and not any("single launch" in w for w in r["warnings"])
    r = cmp([runs(10.0, seed=1)], [runs(9.0, seed=10 + k) for k in range(3)])
    assert r["regime"] == "multi-launch" and "base has a single launch" in " ".join(r["warnings"])


def test_launch_medians_test_needs_three_launches_each():
    r = cmp([runs(10.0, seed=k) for k in range(3)], [runs(9.0, seed=10 + k) for k in range(3)])
    assert "mann_whitney_launch_medians" in r["tests"]
    r = cmp([runs(10.0, seed=k) for k in range(3)], [runs(9.0, seed=10 + k) for k in range(2)])
    assert "mann_whitney_launch_medians" not in r["tests"]
    r = cmp([runs(10.0, seed=k) for k in range(2)], [runs(9.0, seed=10 + k) for k in range(3)])
    assert "mann_whitney_launch_medians" not in r["tests"]


def test_plan_effect_size_floor():
    # the same arms (no difference): the plan resolves max(|change|, 2·threshold, 1 %)
    same = [runs(10.0, n=12, cv=0.05, seed=k) for k in range(2)]
    r = cmp(same, same, threshold=0.02)
    assert r["verdict"] == "inconclusive" and r["plan"]["statement"].startswith("to resolve a 4.0 % change")
    r = cmp(same, same, threshold=0.004)
    assert r["plan"]["statement"].startswith("to resolve a 1.0 % change")
    # two launches per arm and nothing measured: the 25 % allowance floors the launch spread, so no feasible
    # number of launches resolves 1 % — said as such
    assert any(w.startswith("underpowered: the minimum detectable effect is ") and
               "more than 50 launches per arm would be needed — launch-to-launch variation dominates" in w
               for w in r["warnings"])
    # on the arms' spread alone (--launch-cv 0) the advice follows the noise that dominates, with the number
    r = cmp(same, same, threshold=0.004, launch_cv=0.0)
    assert any(w.startswith("underpowered: the minimum detectable effect is ") and " add " in w for w in r["warnings"])
    one = [runs(10.0, n=12, cv=0.05, seed=1)]
    r = cmp(one, one, threshold=0.004)
    # one launch each: no number of runs can separate a 1 % change from a 25 % launch-to-launch SD
    assert any(w.startswith("inconclusive — one launch per arm cannot separate this from launch-to-launch variation")
               and w.endswith("more than 50 launches per arm would be needed for a change this small")
               for w in r["warnings"]) and not any(w.startswith("underpowered") for w in r["warnings"])
    r = cmp(one, [x / 1.3 for x in one], threshold=0.02)  # a 30 % change: the launches it would take
    assert any("record ≥ " in w and w.endswith(" launches per arm") for w in r["warnings"])


def test_plan_uses_every_launch_with_two_or_more_runs():
    two = [np.array([10.0, 10.6]), np.array([10.3, 9.9])]
    r = cmp(two, two, warmup=0, threshold=0.02)
    # within-launch SD of log latency: the root mean of the four launches' variances (two runs each)
    expected = np.sqrt(np.mean([np.var(np.log(x), ddof=1) for x in two + two]))
    assert r["plan"]["within_sd"] == pytest.approx(expected, rel=1e-12)
    b, c = [np.array([10.0]), np.array([11.0, 9.0])], [np.array([9.0]), np.array([11.5, 10.5])]
    r = cmp(b, c, warmup=0, threshold=0.02)
    assert r["verdict"] == "inconclusive"                   # single-run launches add no within-launch noise
    var = [np.var(np.log(x), ddof=1) for x in (b[1], c[1])]
    assert r["plan"]["within_sd"] == pytest.approx(np.sqrt(np.mean(var)), rel=1e-12)


def test_multimodal_wording():
    rng = np.random.default_rng(0)
    two = rng.permutation(np.r_[10 * np.exp(rng.normal(0, 0.01, 60)), 12 * np.exp(rng.normal(0, 0.01, 60))])
    skew = rng.permutation(np.r_[10 * np.exp(rng.normal(0, 0.01, 180)), 11 * np.exp(rng.normal(0, 0.05, 20))])
    two_b = rng.permutation(np.r_[10 * np.exp(rng.normal(0, 0.01, 60)), 12 * np.exp(rng.normal(0, 0.01, 60))])
    r = cmp([two, two_b], [skew, skew[::-1]], warmup=0)
    w = " ".join(r["warnings"])
    assert "base: latency is multimodal within 2 of 2 launch(es) (modes at 9.99" in w and "(50 %)" in w
    assert "cand:" not in w  # a 10 % tail is no mode a median jumps to
    r = cmp([two], [skew], warmup=0)  # one launch cannot tell a second mode from a state change part-way
    assert not any("multimodal" in x for x in r["warnings"])
    r = cmp([runs(10.0)], [runs(9.0, seed=5)], warmup=0)
    assert not any("multimodal" in x for x in r["warnings"])


def test_significance_and_interval_of_the_hodges_lehmann_estimate():
    r = cmp([runs(15.0, seed=1)], [runs(10.0, seed=2)], launch_cv=0)
    assert r["significant"] is True and r["verdict"] == "faster" and 1.0 < r["ci"]["low"] < 2.0
    hl = r["hodges_lehmann"]
    assert hl["low"] is not None and hl["low"] < hl["speedup"] < hl["high"]
    r = cmp([runs(10.0, seed=1)], [runs(15.0, seed=2)], launch_cv=0)
    assert r["significant"] is True and r["verdict"] == "slower"
    r = cmp([runs(10.0, seed=1)], [runs(10.0, seed=2)], launch_cv=0)
    assert r["significant"] is False


def test_summary_direction_around_one():
    r = cmp([runs(15.0, seed=1)], [runs(10.0, seed=2)], launch_cv=0)
    assert "1.5" in r["summary_line"] and " faster [speedup" in r["summary_line"]
    r = cmp([runs(10.0, seed=1)], [runs(15.0, seed=2)], launch_cv=0)
    assert " slower [speedup" in r["summary_line"]
    same = [runs(10.0, seed=k) for k in range(3)]
    r = cmp(same, same)
    assert r["speedup"]["estimate"] == 1.0
    assert "point estimate 1× faster, not established" in r["summary_line"]
    near = [x * 1.01 for x in same]
    r = cmp(near, same, threshold=0.05)
    assert r["verdict"] != "faster" and "faster, not established" in r["summary_line"]
    r = cmp(same, near, threshold=0.05)
    assert "slower, not established" in r["summary_line"]


def test_separated_arms_name_mann_whitney():
    r = cmp([np.array([10.0, 11.0, 12.0, 10.5])], [np.array([1.0, 2.0, 3.0, 1.5])], warmup=0)
    assert r["tests"]["brunner_munzel"]["p_value"] is None and r["tests"]["mann_whitney"]["p_value"] < 0.05
    # the headline p is the launch-level one; the run-level tests are labelled as about these launches only
    assert ", launch-level p = " in r["summary_line"] and "Mann" not in r["summary_line"]
    assert r["tests"]["scope"].startswith("within these launches only")
    r = cmp([runs(10.0, seed=1)], [runs(10.1, seed=2)], warmup=0)          # overlapping runs
    assert r["tests"]["brunner_munzel"]["p_value"] is not None and f"p = {r['p_value']:.2g}" in r["summary_line"]
