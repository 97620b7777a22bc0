"""Descriptive statistics at their edges against numpy/scipy: one value, non-positive means, trimming amounts,
Tukey fences at the fence itself, the bootstrap/order-statistics switch at 5,000 runs, and the order-statistic
interval's binomial coverage."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss

from edgeprof.analysis import stats as st


def test_one_value_and_non_positive_means():
    one = st.summarize(np.array([4.0]))
    assert one["std_dev_ms"] is None and one["cv_percent"] == 0.0 and one["iqr_ms"] == 0.0
    assert st.summarize(np.array([-1.0, 1.0, 0.0]))["cv_percent"] is None
    assert st.summarize(np.array([]))["count"] == 0
    v = np.array([1.0, 2.0, 4.0, 8.0])
    s = st.summarize(v)
    assert s["cv_percent"] == pytest.approx(100 * np.std(v, ddof=1) / v.mean())
    assert s["sigma_mad_ms"] == pytest.approx(1.4826 * np.median(np.abs(v - np.median(v))))
    assert s["percentiles"] == pytest.approx(dict(zip(("p50", "p75", "p90", "p95", "p99"),
                                                      np.percentile(v, [50, 75, 90, 95, 99]))))


@pytest.mark.parametrize("n,p", [(19, 0.05), (20, 0.05), (21, 0.1), (10, 0.1), (9, 0.1), (7, 0.25), (40, 0.05)])
def test_trimmed_mean_equals_scipy(n, p):
    v = np.random.default_rng(n).lognormal(0, 1, n)
    assert st.trimmed_mean(v, p) == pytest.approx(ss.trim_mean(v, p))


def test_trimming_everything_leaves_the_median():
    assert st.trimmed_mean(np.array([1.0, 2.0, 10.0, 11.0]), 0.5) == 6.0
    assert st.trimmed_mean(np.array([]), 0.1) is None and st.mad(np.array([])) is None


def test_tukey_fences_flag_strictly_outside():
    v = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])   # q1 2.75, q3 6.25, IQR 3.5: fences −2.5 and 11.5
    assert st.tukey_fences(v) == (-2.5, 11.5)
    # with a ninth, largest value x the quartiles are the 3rd and 7th values (3 and 7): the upper fence is 13
    assert st.outliers(np.r_[v, 13.0])["count"] == 0
    o = st.outliers(np.r_[v, 13.01])
    assert o["count"] == 1 and o["indices"] == [8] and o["percentage"] == pytest.approx(100 / 9)
    assert o["bounds"] == {"lower": -3.0, "upper": 13.0}
    assert st.outliers(np.array([1.0, 1.0, 1.0, 99.0]))["count"] == 1       # 4 runs: fences apply
    assert st.outliers(np.array([1.0, 1.0, 99.0]))["bounds"] is None         # 3 runs: too few


def test_median_interval_switches_to_order_statistics_above_5000_runs():
    rng = np.random.default_rng(3)
    at, above = rng.lognormal(0, 0.1, 5000), rng.lognormal(0, 0.1, 5001)
    assert st.bootstrap_median_ci(at, resamples=50)["method"] == "percentile bootstrap"
    ci = st.bootstrap_median_ci(above, resamples=50)
    assert ci["method"] == "order statistics (binomial)" and ci["resamples"] == 0
    assert (ci["low_ms"], ci["high_ms"]) == st.order_statistic_median_ci(above)
    assert st.bootstrap_median_ci(np.array([1.0])) is None
    b = st.bootstrap_median_ci(np.array([1.0, 2.0, 3.0, 4.0]), resamples=400, level=0.9, seed=4)
    med = st.bootstrap_medians(np.array([1.0, 2.0, 3.0, 4.0]), 400, np.random.default_rng(4))
    assert (b["low_ms"], b["high_ms"]) == tuple(np.quantile(med, [0.05, 0.95]))


@pytest.mark.parametrize("n", [11, 50, 101, 1000, 6001])
def test_order_statistic_interval_has_its_binomial_coverage(n):
    s = np.arange(n, dtype=float)             # values equal their order index
    lo, hi = st.order_statistic_median_ci(s, 0.95)
    # the interval [s(lo), s(hi)] holds the median unless fewer than lo+1 or more than hi values fall below it
    cover = ss.binom.cdf(hi, n, 0.5) - ss.binom.cdf(lo, n, 0.5)
    assert 0.95 <= cover <= 0.99
    assert lo >= 0 and hi <= n - 1


def test_bimodality_coefficient_from_scipys_moments_and_mode_counts():
    rng = np.random.default_rng(8)
    one = rng.normal(10, 0.2, 300)
    two = np.r_[rng.normal(10, 0.2, 150), rng.normal(12, 0.2, 150)]
    for v in (one, two):
        n = v.size
        g, k = ss.skew(v, bias=False), ss.kurtosis(v, bias=False)
        bc = (g * g + 1) / (k + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
        assert st.bimodality(v)["bimodality_coefficient"] == pytest.approx(bc, rel=1e-9)
    b1, b2 = st.bimodality(one), st.bimodality(two)
    assert (b1["modes"], b1["hint"], b1["note"]) == (1, False, "")
    assert b2["modes"] == 2 and b2["hint"] and b2["note"].startswith("possibly multimodal")
    # a third cluster of 4 % of the runs is below the 10 %-of-the-highest-peak rule; 20 % is above it
    small = np.r_[two, rng.normal(14, 0.2, 12)]
    big = np.r_[two, rng.normal(14, 0.2, 60)]
    assert st.bimodality(small)["modes"] == 2 and st.bimodality(big)["modes"] == 3
    # beyond 5,000 runs the density is a histogram on the same grid
    many = np.r_[rng.normal(10, 0.2, 3000), rng.normal(12, 0.2, 3000)]
    assert st.bimodality(many)["modes"] == 2


def test_bimodality_needs_thirty_distinct_runs():
    v = np.random.default_rng(1).normal(10, 1, 30)
    assert st.bimodality(v[:29]) == {"hint": False, "bimodality_coefficient": None, "modes": 1, "testable": False,
                                     "note": "too few runs to tell (needs ≥ 30 runs, has 29)"}
    assert st.bimodality(v)["testable"] is True
    assert st.bimodality(np.full(40, 3.0))["note"] == "all runs equal"
    assert st.bimodality(np.array([]))["modes"] == 0
