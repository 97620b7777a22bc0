"""Summary statistics against independent references: trimmed means against scipy, the median's order-statistic
interval against the textbook ranks (Conover: n = 100 → x(40), x(61)), the bootstrap against a direct draw,
Sarle's bimodality coefficient against scipy's unbiased skewness and kurtosis, mode counting and Tukey fences at
their edges."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss

from edgeprof.analysis.stats import (
    MIN_RUNS_SHAPE,
    bimodality,
    bootstrap_median_ci,
    bootstrap_medians,
    order_statistic_median_ci,
    outliers,
    trimmed_mean,
)


@pytest.mark.parametrize("n,p", [(11, 0.4), (11, 0.45), (10, 0.3), (7, 0.1), (20, 0.05), (5, 0.2)])
def test_trimmed_mean_is_scipys(n, p):
    v = np.random.default_rng(n).lognormal(0, 1, n)
    assert trimmed_mean(v, p) == pytest.approx(ss.trim_mean(v, p))


def test_trimmed_mean_of_everything_cut_is_the_median():
    assert trimmed_mean(np.array([1.0, 2.0, 9.0, 10.0]), 0.5) == 5.5
    assert trimmed_mean(np.array([]), 0.1) is None


@pytest.mark.parametrize("n,ranks", [(100, (40, 61)), (1000, (469, 532)), (400, (180, 221))])
def test_order_statistic_interval_ranks(n, ranks):
    # 1-based ranks r = n/2 − 1.96·√n/2 rounded down, s = n − r + 1 (Conover, Practical Nonparametric Statistics)
    v = np.random.default_rng(0).permutation(np.arange(1.0, n + 1))
    assert order_statistic_median_ci(v, 0.95) == (float(ranks[0]), float(ranks[1]))


def test_order_statistic_interval_is_clipped_to_the_sample():
    v = np.array([3.0, 1.0, 2.0])
    assert order_statistic_median_ci(v) == (1.0, 3.0)


def test_bootstrap_medians_are_direct_resample_medians():
    v = np.random.default_rng(1).normal(10, 1, 2001)           # 2,001 values: three blocks of 999 resamples
    got = bootstrap_medians(v, 3000, np.random.default_rng(0))
    rng = np.random.default_rng(0)
    want = np.median(v[rng.integers(0, v.size, size=(3000, v.size))], axis=1)
    assert np.array_equal(got, want)


def test_bootstrap_ci_defaults_and_minimum():
    v = np.random.default_rng(2).normal(10, 1, 50)
    r = bootstrap_median_ci(v)
    assert (r["resamples"], r["seed"], r["level"], r["method"]) == (2000, 0, 0.95, "percentile bootstrap")
    med = bootstrap_medians(v, 2000, np.random.default_rng(0))
    assert (r["low_ms"], r["high_ms"]) == pytest.approx(tuple(np.quantile(med, [0.025, 0.975])))
    assert bootstrap_median_ci(v[:2]) is not None and bootstrap_median_ci(v[:1]) is None


def test_tukey_fences_edges():
    assert outliers(np.array([1.0, 2.0, 3.0])) == {"count": 0, "percentage": 0.0, "values": [], "indices": [],
                                                   "bounds": None, "method": "Tukey fences 1.5×IQR (needs ≥ 4 runs)"}
    base = [10.0] * 5 + [20.0] * 5                              # q1 10, q3 20: fences −5 and 35
    r = outliers(np.array([-5.0, *base, 35.0]))
    assert r["bounds"] == {"lower": -5.0, "upper": 35.0} and r["count"] == 0      # on a fence: not outside it
    r = outliers(np.array([-5.0001, *base, 35.0001]))
    assert r["indices"] == [0, 11] and r["percentage"] == pytest.approx(200 / 12)


@pytest.mark.parametrize("seed", range(4))
def test_bimodality_coefficient_from_scipys_moments(seed):
    rng = np.random.default_rng(seed)
    v = np.r_[rng.normal(10, 1, 40 + 10 * seed), rng.lognormal(2.5, 0.3, 30)]
    g, k = ss.skew(v, bias=False), ss.kurtosis(v, bias=False)
    n = v.size
    want = (g * g + 1) / (k + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
    assert bimodality(v)["bimodality_coefficient"] == pytest.approx(want, rel=1e-10)


def test_bimodality_minimum_runs_and_equal_runs():
    v = np.random.default_rng(3).normal(10, 1, MIN_RUNS_SHAPE)
    assert bimodality(v)["testable"] is True and bimodality(v)["bimodality_coefficient"] is not None
    b = bimodality(v[:-1])
    assert (b["testable"], b["bimodality_coefficient"], b["modes"], b["hint"]) == (False, None, 1, False)
    assert b["note"] == f"too few runs to tell (needs ≥ {MIN_RUNS_SHAPE} runs, has {MIN_RUNS_SHAPE - 1})"
    e = bimodality(np.full(40, 7.0))
    assert (e["testable"], e["modes"], e["note"]) == (True, 1, "all runs equal")
    assert bimodality(np.array([]))["modes"] == 0


@pytest.mark.parametrize("third,modes", [(9, 2), (11, 3)])
def test_a_mode_must_reach_ten_percent_of_the_highest(third, modes):
    # three far-apart tight clusters: each density peak is about its cluster's size
    rng = np.random.default_rng(2)
    v = np.r_[rng.normal(0, 1, 100), rng.normal(100, 1, 100), rng.normal(200, 1, third)]
    b = bimodality(v)
    assert b["modes"] == modes and b["hint"] is True
    assert b["bimodality_coefficient"] < 5 / 9                  # the hint comes from the modes alone
    assert b["note"] == "possibly multimodal: compare distributions, not only medians"


def test_hint_from_the_coefficient_alone_and_neither():
    rng = np.random.default_rng(0)
    skew = np.r_[10 * np.exp(rng.normal(0, 0.01, 180)), 11 * np.exp(rng.normal(0, 0.05, 20))]
    b = bimodality(skew)
    assert b["modes"] == 1 and b["bimodality_coefficient"] > 5 / 9 and b["hint"] is True
    assert b["note"] == "possibly multimodal: compare distributions, not only medians"
    n = bimodality(rng.normal(10, 1, 200))
    assert n["modes"] == 1 and n["bimodality_coefficient"] < 5 / 9 and n["hint"] is False and n["note"] == ""


@pytest.mark.parametrize("n", [5000, 5001, 20000])
def test_two_clusters_give_two_modes_on_either_density(n):
    rng = np.random.default_rng(n)
    v = np.r_[rng.normal(10, 0.1, n // 2), rng.normal(12, 0.1, n - n // 2)]
    assert bimodality(v)["modes"] == 2
    u = rng.normal(10, 0.1, n)
    assert bimodality(u)["modes"] == 1


def test_uniform_runs_sit_just_below_five_ninths():
    b = bimodality(np.linspace(10.0, 12.0, 120))
    assert 0.5 < b["bimodality_coefficient"] < 5 / 9 and b["modes"] == 1 and b["hint"] is False and b["note"] == ""


@pytest.mark.parametrize("seed", range(3))
def test_bandwidth_is_silvermans_rule(seed):
    v = np.random.default_rng(seed).lognormal(2, 0.3 + 0.3 * seed, 300)
    sd, iqr = np.std(v, ddof=1), ss.iqr(v)
    assert bimodality(v)["bandwidth"] == pytest.approx(0.9 * min(sd, iqr / 1.34) * 300 ** -0.2, rel=1e-12)
    flat_iqr = np.r_[np.full(80, 5.0), np.linspace(1, 9, 20)]     # IQR 0: the standard deviation alone
    assert bimodality(flat_iqr)["bandwidth"] == pytest.approx(0.9 * np.std(flat_iqr, ddof=1) * 100 ** -0.2)


def test_summary_against_numpy_and_scipy():
    from edgeprof.analysis.stats import summarize

    v = np.random.default_rng(9).lognormal(1, 0.4, 57)
    s = summarize(v)
    q1, q3 = np.percentile(v, [25, 75])
    mad = np.median(np.abs(v - np.median(v)))
    assert (s["count"], s["mean_ms"], s["median_ms"], s["min_ms"], s["max_ms"]) == \
        (57, pytest.approx(v.mean()), pytest.approx(np.median(v)), v.min(), v.max())
    assert s["std_dev_ms"] == pytest.approx(np.std(v, ddof=1))
    assert s["cv_percent"] == pytest.approx(100 * np.std(v, ddof=1) / v.mean())
    assert s["mad_ms"] == pytest.approx(mad) and s["sigma_mad_ms"] == pytest.approx(ss.median_abs_deviation(v, scale="normal"),
                                                                                    rel=1e-4)
    assert s["iqr_ms"] == pytest.approx(ss.iqr(v)) and s["iqr_ms"] == pytest.approx(q3 - q1)
    assert s["percentiles"] == {f"p{p}": pytest.approx(np.percentile(v, p)) for p in (50, 75, 90, 95, 99)}
    assert s["trimmed_mean_5_ms"] == pytest.approx(ss.trim_mean(v, 0.05))
    assert s["trimmed_mean_10_ms"] == pytest.approx(ss.trim_mean(v, 0.10))
    one = summarize(np.array([4.0]))
    assert (one["std_dev_ms"], one["cv_percent"], one["trimmed_mean_5_ms"]) == (None, 0.0, 4.0)
    assert summarize(np.array([])) == {"count": 0}
    assert trimmed_mean(np.array([5.0]), 0.1) == 5.0
    two = summarize(np.array([0.2, 0.4]))                       # two runs, below a millisecond
    assert two["std_dev_ms"] == pytest.approx(np.sqrt(0.02)) and two["cv_percent"] == pytest.approx(100 * np.sqrt(0.02) / 0.3)


def test_equal_runs_at_the_minimum_count_are_testable():
    e = bimodality(np.full(MIN_RUNS_SHAPE, 7.0))
    assert (e["testable"], e["note"]) == (True, "all runs equal")


def test_bandwidth_with_a_small_interquartile_range():
    v = 1.0 + 0.01 * np.random.default_rng(4).standard_t(2, 200)      # heavy tails: IQR/1.34 below the SD
    sd, iqr = np.std(v, ddof=1), ss.iqr(v)
    assert 0 < iqr < 1 and iqr / 1.34 < sd
    assert bimodality(v)["bandwidth"] == pytest.approx(0.9 * min(sd, iqr / 1.34) * 200 ** -0.2, rel=1e-12)
