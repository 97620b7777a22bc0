"""Drift of several launches (analysis/latency.drift_per_launch): tested within each launch, combined at α/k —
the p-value, significance at its boundary, the slopes (scipy's Theil–Sen as the oracle) and the direction; and
robust_latency splitting its runs at the launch sizes it is given (or not, when they do not add up)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from edgeprof.analysis import latency as lat


def _series(n: int, slope: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return 10.0 + slope * np.arange(n) + rng.normal(0, 0.05, n)


def test_one_launch_is_the_plain_test():
    x = _series(40, 0.01, 1)
    assert lat.drift_per_launch([x]) == lat.detect_drift(x)


def test_two_launches_against_scipy():
    up, flat = _series(40, 0.01, 1), _series(50, 0.0, 2)
    d = lat.drift_per_launch([up, flat])
    p_up = lat.detect_drift(up)["mann_kendall"]["p_value"]
    assert d["mann_kendall"]["p_value"] == pytest.approx(min(1.0, 2 * p_up)) and d["significant"]
    assert d["testable"] is True and d["direction"] == "slower over time" and len(d["per_launch"]) == 2
    ts = [stats.theilslopes(x).slope for x in (up, flat)]
    assert d["theil_sen_slope_ms_per_run"] == pytest.approx(np.median(ts), rel=1e-9)
    pct = [t / np.median(x) * 1e4 for t, x in zip(ts, (up, flat))]
    assert d["slope_percent_per_100_runs"] == pytest.approx(np.median(pct), rel=1e-9)
    down = lat.drift_per_launch([_series(40, -0.01, 3), flat])
    assert down["significant"] and down["direction"] == "faster over time"


def _fake(monkeypatch, results):
    it = iter(results)
    monkeypatch.setattr(lat, "detect_drift", lambda v: next(it))


def _d(p, slope=1.0, ms=0.01, testable=True, s=1):
    return {"mann_kendall": {"s": s, "z": 1.0, "p_value": p, "note": ""}, "theil_sen_slope_ms_per_run": ms,
            "slope_percent_per_100_runs": slope, "significant": p < 0.05, "testable": testable, "direction": "",
            "alpha": 0.05}


@pytest.mark.parametrize("p,significant", [(0.025, False), (0.0249, True)])
def test_significance_at_alpha_over_k(monkeypatch, p, significant):
    _fake(monkeypatch, [_d(p), _d(0.9)])
    d = lat.drift_per_launch([np.zeros(2), np.zeros(2)])
    assert d["mann_kendall"]["p_value"] == pytest.approx(2 * p) and d["significant"] is significant


def test_the_combined_p_value_is_at_most_one(monkeypatch):
    _fake(monkeypatch, [_d(0.8), _d(0.9)])
    assert lat.drift_per_launch([np.zeros(2), np.zeros(2)])["mann_kendall"]["p_value"] == 1.0


def test_slopes_a_launch_cannot_give_are_left_out_and_the_direction_is_the_tests(monkeypatch):
    _fake(monkeypatch, [_d(0.001, slope=None, ms=None), _d(0.5, slope=4.0, ms=0.2), _d(0.5, slope=2.0, ms=0.1)])
    d = lat.drift_per_launch([np.zeros(2)] * 3)
    assert d["slope_percent_per_100_runs"] == 3.0 and d["theil_sen_slope_ms_per_run"] == pytest.approx(0.15)
    # the strongest launch gives no slope: its Mann–Kendall S (+1) still says which way the trend goes
    assert d["significant"] and d["direction"] == "slower over time"
    _fake(monkeypatch, [_d(0.001, slope=0.0, s=-3), _d(0.5)])          # a flat median slope, falling pairs
    assert lat.drift_per_launch([np.zeros(2)] * 2)["direction"] == "faster over time"
    _fake(monkeypatch, [_d(0.001, slope=0.5, s=0), _d(0.5)])           # no pair either way: no direction
    assert lat.drift_per_launch([np.zeros(2)] * 2)["direction"] == "none"


def test_untestable_launches_say_so(monkeypatch):
    d = lat.drift_per_launch([_series(20, 0.1, 1), _series(25, 0.1, 2)])
    assert d == {**d, "testable": False, "significant": False, "direction": "none",
                 "slope_percent_per_100_runs": None, "theil_sen_slope_ms_per_run": None}
    assert d["mann_kendall"]["p_value"] is None and "(20, 25 runs;" in d["note"] and len(d["per_launch"]) == 2


def test_robust_latency_splits_at_the_launch_sizes():
    a, b = _series(40, 0.01, 1), _series(40, 0.0, 2) + 5   # a level step between launches, a trend within one
    v = np.concatenate([a, b])
    per = lat.robust_latency(v, warmup_known=0, launch_sizes=[40, 40])["drift"]
    assert per == lat.drift_per_launch([a, b])
    assert lat.robust_latency(v, warmup_known=0, launch_sizes=[40, 39])["drift"] == lat.detect_drift(v)
    assert lat.robust_latency(v, warmup_known=0)["drift"] == lat.detect_drift(v)
    assert lat.robust_latency(v, warmup_known=0, launch_sizes=[80])["drift"] == lat.detect_drift(v)
