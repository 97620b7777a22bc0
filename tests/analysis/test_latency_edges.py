"""Drift direction for slopes below one percent per 100 runs, against scipy's Kendall tau and Theil–Sen slope."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss

from edgeprof.analysis.latency import detect_drift, drift_per_launch


@pytest.mark.parametrize("sign, direction", [(1, "slower over time"), (-1, "faster over time")])
def test_a_small_significant_trend_is_named_by_its_sign(sign, direction):
    """40 runs rising (falling) 0.005 ms per run around 100 ms: ~0.5 % per 100 runs, significant."""
    v = 100 + sign * 0.005 * np.arange(40)
    assert ss.kendalltau(np.arange(40), v).pvalue < 0.05
    slope = ss.theilslopes(v).slope
    pct = slope / np.median(v) * 1e4
    assert 0 < abs(pct) < 1
    d = detect_drift(v)
    assert d["significant"] is True and d["direction"] == direction
    assert d["slope_percent_per_100_runs"] == pytest.approx(pct, rel=1e-9)


def test_per_launch_drift_names_a_small_slope_by_its_sign():
    segs = [100 + 0.005 * np.arange(40), 100 + 0.005 * np.arange(40)]
    d = drift_per_launch(segs)
    pct = ss.theilslopes(segs[0]).slope / np.median(segs[0]) * 1e4
    assert 0 < pct < 1
    assert d["significant"] is True and d["direction"] == "slower over time"
    assert d["slope_percent_per_100_runs"] == pytest.approx(pct, rel=1e-9)


def test_a_significant_rise_with_a_zero_median_slope_is_slower_over_time():
    """Latency that steps up in ties (5 runs at 99, 30 at 100, 5 at 101): Mann–Kendall's S counts every pair, by hand
    5·30 + 5·5 + 30·5 = 325 rising pairs and none falling; the Theil–Sen slope, the median of the pairwise slopes,
    is exactly 0 (most pairs are ties). The direction follows the test that found the trend."""
    import numpy as np

    from edgeprof.analysis.latency import detect_drift

    d = detect_drift(np.r_[[99.0] * 5, [100.0] * 30, [101.0] * 5])
    assert d["mann_kendall"]["s"] == 325 and d["theil_sen_slope_ms_per_run"] == 0
    assert d["significant"] and d["direction"] == "slower over time"
    u = detect_drift(np.r_[[101.0] * 5, [100.0] * 30, [99.0] * 5])
    assert u["mann_kendall"]["s"] == -325 and u["direction"] == "faster over time"


# --- appended: the warm-up test at its exact level, a trendless series, a warm-up left out before ---------------

@pytest.mark.parametrize("top, kept", [(14.0, True), (12.8, False)])
def test_a_three_run_warmup_is_kept_only_below_the_bonferroni_level(top, kept):
    """3 leading runs vs 13 steady ones, 4 split lengths considered: α = 0.05 / 4 = 0.0125. One steady run (13.5)
    is above the two lowest leading runs (U of the rest = 2 pairs): exact one-sided p = 4/560 (of the C(16, 3) = 560
    rank sets, those with U ≤ 2: 1 + 1 + 2) < α, kept; above all three (U = 3): p = 7/560 = 0.0125 = α, not kept."""
    from edgeprof.analysis.latency import _warmup_significant

    lead = np.array([12.0, 12.5, top])
    rest = np.r_[10.0 + 0.01 * np.arange(12), 13.5]
    p = ss.mannwhitneyu(lead, rest, alternative="greater", method="exact").pvalue
    assert p == pytest.approx(4 / 560 if kept else 7 / 560, rel=1e-12)
    ok, evidence = _warmup_significant(np.r_[lead, rest], 3, 4)
    assert ok is kept
    assert evidence.startswith(f"one-sided Mann–Whitney p = {p:.3g} < 0.0125")


def test_a_trendless_series_has_no_drift():
    v = 100 + 0.5 * np.sin(np.arange(40) * 2.4)  # oscillates, no trend
    assert ss.kendalltau(np.arange(40), v, method="asymptotic").pvalue > 0.05
    d = detect_drift(v)
    assert d["testable"] is True and d["significant"] is False and d["direction"] == "none"
    assert d["mann_kendall"]["p_value"] == pytest.approx(ss.kendalltau(np.arange(40), v, method="asymptotic").pvalue,
                                                         rel=1e-9)


def test_a_warmup_left_out_before_is_not_looked_for_again():
    from edgeprof.analysis.latency import robust_latency

    v = np.r_[30.0, 25.0, 10.0 + 0.01 * np.arange(38)]  # would be a 2-run warm-up if one were looked for
    fresh = robust_latency(v, resamples=100)
    assert fresh["warmup"]["count"] == 2 and fresh["warmup"]["testable"] is True
    known = robust_latency(v, resamples=100, warmup_known=3)
    assert known["warmup"]["count"] == 0 and known["warmup"]["testable"] is False
    assert known["steady"]["first_run"] == 0 and known["steady"]["count"] == 40
