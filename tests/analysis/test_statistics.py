"""Robust statistics: equal to scipy/numpy references on real fixture latencies; well-defined at n = 1, 2."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.stats as ss

from testdata import ETDUMP_NAMES
from edgeprof import load_etdump
from edgeprof.analysis import rank_tests as rt
from edgeprof.analysis.latency import detect_drift, detect_warmup, robust_latency
from edgeprof.analysis.stats import bimodality, mad, summarize, trimmed_mean
from edgeprof.render.jsonfmt import dumps


def lat(etdump, name):
    return load_etdump(etdump(name), warn=False).latency_ms()


@pytest.mark.parametrize("name", [n for n in ETDUMP_NAMES if ".N3." not in n])
def test_descriptive_statistics_equal_numpy_and_scipy(name, etdump):
    v = lat(etdump, name)
    s = summarize(v)
    assert s["median_ms"] == np.median(v) and s["mean_ms"] == pytest.approx(v.mean())
    assert s["std_dev_ms"] == pytest.approx(np.std(v, ddof=1))
    for p in (50, 75, 90, 95, 99):
        assert s["percentiles"][f"p{p}"] == pytest.approx(np.percentile(v, p))
    assert s["trimmed_mean_5_ms"] == pytest.approx(ss.trim_mean(v, 0.05))
    assert s["trimmed_mean_10_ms"] == pytest.approx(ss.trim_mean(v, 0.10))
    assert s["mad_ms"] == pytest.approx(ss.median_abs_deviation(v))
    assert s["sigma_mad_ms"] == pytest.approx(ss.median_abs_deviation(v, scale="normal"), rel=1e-4)
    assert s["iqr_ms"] == pytest.approx(ss.iqr(v))
    mk = rt.mann_kendall(v)
    kt = ss.kendalltau(np.arange(v.size), v, method="asymptotic")
    assert mk["tau"] == pytest.approx(kt.statistic) and mk["p_value"] == pytest.approx(kt.pvalue)
    assert rt.theil_sen(v) == pytest.approx(ss.theilslopes(v).slope)


@pytest.mark.parametrize("a,b", [("toycnn_xnn.N20", "toycnn_xnnq8.N20"), ("tel_xnn.N20", "tel_xnnq8.N20"),
                                 ("mobilenet_v3_small_xnn.N20", "mobilenet_v3_small_xnnq8.N200")])
def test_two_sample_tests_equal_scipy(a, b, etdump):
    x, y = lat(etdump, a), lat(etdump, b)
    mw = rt.mann_whitney(x, y)
    ref = ss.mannwhitneyu(x, y, alternative="two-sided")
    assert mw["u"] == ref.statistic and mw["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
    bm = rt.brunner_munzel(x, y)
    assert bm["p_value"] == pytest.approx(ss.brunnermunzel(x, y).pvalue, rel=1e-9)
    diffs = np.subtract.outer(x, y)
    assert rt.cliffs_delta(x, y) == pytest.approx((diffs > 0).mean() - (diffs < 0).mean())
    hl = rt.hodges_lehmann(x, y)
    assert hl["estimate"] == pytest.approx(np.median(diffs))
    assert hl["low"] <= hl["estimate"] <= hl["high"]


def test_small_exact_mann_whitney_and_ties():
    rng = np.random.default_rng(3)
    for n1, n2 in ((3, 4), (8, 25), (25, 8), (6, 6)):
        x, y = rng.normal(size=n1), rng.normal(0.7, size=n2)
        assert rt.mann_whitney(x, y)["p_value"] == pytest.approx(ss.mannwhitneyu(x, y, alternative="two-sided").pvalue)
    x, y = np.round(rng.normal(size=30)), np.round(rng.normal(0.5, size=40))
    assert rt.mann_whitney(x, y)["p_value"] == pytest.approx(ss.mannwhitneyu(x, y, alternative="two-sided").pvalue)


def test_bimodality_coefficient_matches_scipy_moments(etdump):
    v = lat(etdump, "mobilenet_v3_small_xnnq8.N200")
    n = v.size
    g, k = ss.skew(v, bias=False), ss.kurtosis(v, bias=False)
    ref = (g ** 2 + 1) / (k + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
    assert bimodality(v)["bimodality_coefficient"] == pytest.approx(ref)
    unimodal = np.random.default_rng(0).normal(10, 0.3, size=500)
    assert not bimodality(unimodal)["hint"]
    two = np.r_[np.random.default_rng(1).normal(5, 0.2, 300), np.random.default_rng(2).normal(9, 0.2, 300)]
    assert bimodality(two)["hint"] and bimodality(two)["modes"] == 2


@pytest.mark.parametrize("values", [[1.5], [1.5, 2.5], [2.0, 2.0], [3.0, 3.0, 3.0]])
def test_tiny_samples_are_well_defined(values):
    rep = robust_latency(np.array(values))
    text = dumps(rep)  # raises on NaN/inf
    assert "NaN" not in text and json.loads(text)["count"] == len(values)
    assert rep["median_ms"] == float(np.median(values))
    assert rep["std_dev_ms"] is None if len(values) == 1 else rep["std_dev_ms"] >= 0
    assert rep["warmup"]["count"] == 0 and rep["drift"]["significant"] is False
    assert trimmed_mean(np.array(values), 0.1) == pytest.approx(np.mean(values))
    assert mad(np.array(values)) is not None


def test_warmup_found_in_fixtures_whose_first_runs_are_slower(etdump):
    # the fixtures whose leading runs stand out from the rest (others are multimodal noise from the start)
    expected = {"toycnn_xnn.N20": 1, "mobilenet_v3_small_xnn.N20": 1, "toycnn_xnnq8.N20": 2, "tel_xnnq8.N20": 2}
    for name, k in expected.items():
        v = lat(etdump, name)
        w = detect_warmup(v)
        assert w["count"] == k, name
        assert np.median(v[:k]) > np.median(v[k:])
    # a first run that is not slower than the rest is not called warm-up
    v = lat(etdump, "toycnn_portable.N20")
    assert v[0] <= np.percentile(v[1:], 75) and detect_warmup(v)["count"] == 0


def test_warmup_injected_into_real_noise_is_found_and_shuffles_are_clean(etdump):
    base = lat(etdump, "mobilenet_v3_small_xnnq8.N200")[5:]
    rng = np.random.default_rng(0)
    found, false = 0, 0
    for _i in range(100):
        v = rng.permutation(base)
        false += detect_warmup(v)["count"] > 0
        v[:3] = v[:3] + 3 * np.percentile(base, 95)
        found += detect_warmup(v)["count"] >= 3
    assert found == 100 and false <= 3


def test_drift_fires_on_injected_drift_and_not_on_shuffles(etdump):
    base = lat(etdump, "mobilenet_v3_small_xnnq8.N200")
    rng = np.random.default_rng(1)
    fired_shuffled = sum(detect_drift(rng.permutation(base))["significant"] for _ in range(200))
    assert fired_shuffled / 200 <= 0.07
    fired = 0
    for _ in range(50):
        v = rng.permutation(base) * (1 + 0.30 * np.arange(base.size) / base.size)  # +30 % over the launch
        d = detect_drift(v)
        fired += d["significant"] and d["slope_percent_per_100_runs"] > 0
    assert fired >= 45


def test_claims_need_enough_runs_at_their_boundaries():
    """Warm-up needs 10 runs, drift and the shape hint 30: below that the answer is "too few runs to tell"."""
    from edgeprof.analysis.latency import MIN_RUNS_DRIFT, MIN_RUNS_WARMUP
    from edgeprof.analysis.stats import MIN_RUNS_SHAPE

    assert (MIN_RUNS_WARMUP, MIN_RUNS_DRIFT, MIN_RUNS_SHAPE) == (10, 30, 30)
    rng = np.random.default_rng(3)
    for n, testable in ((9, False), (10, True)):
        v = np.r_[5.0, rng.normal(1.0, 0.01, n - 1)]  # an obvious warm-up run
        w = detect_warmup(v)
        assert w["testable"] is testable and (w["count"] == 1) is testable
        if not testable:
            assert w["note"] == f"too few runs to tell (needs ≥ 10 runs, has {n})"
    for n, testable in ((29, False), (30, True)):
        v = 1.0 + 0.01 * np.arange(n) + rng.normal(0, 0.001, n)  # a strong trend
        d = detect_drift(v)
        assert d["testable"] is testable and d["significant"] is testable
        if not testable:
            assert d["slope_percent_per_100_runs"] is None and "too few runs to tell" in d["note"]
        two = np.r_[rng.normal(1.0, 0.01, n // 2), rng.normal(2.0, 0.01, n - n // 2)]
        b = bimodality(two)
        assert b["testable"] is testable and b["hint"] is testable
    rep = robust_latency(1.0 + 0.01 * np.arange(20))
    assert rep["drift"]["note"] == "too few runs to tell (needs ≥ 30 runs, has 20)"
