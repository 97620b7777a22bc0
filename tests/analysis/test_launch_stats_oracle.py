"""The per-launch values every launch-level test is built on — the log of a p90/p99 and its variance, the share
of slow runs, the trimmed mean of a per-run line, the mean — each against a hand-worked case or scipy, at the
boundaries of their rules (3 runs, exactly 2× the median, exactly half the runs zero)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from scipy.stats import mstats

from edgeprof.analysis.launches import (SLOW, TRIM, log_quantile_stats, mean_stats, metric_stats,
                                        slow_share_stats, trimmed_stats)

Z = 1.959963984540054


def test_p90_of_twenty_runs_by_hand():
    """1..20 ms: np.quantile's linear p90 is 1 + 0.9·19 = 18.1; the order-statistic interval of the 0.9-quantile
    takes n·q ∓ z·√(n·q·(1−q)) = 18 ∓ 2.63 → 0-based ranks floor(15.37) − 1 = 14 and ceil(20.63) capped at 19:
    15 and 20 ms."""
    y, v = log_quantile_stats([np.arange(1.0, 21.0)], 0.90)
    assert y.tolist() == [pytest.approx(math.log(18.1), rel=1e-12)]
    assert v.tolist() == [pytest.approx(((math.log(20) - math.log(15)) / (2 * Z)) ** 2, rel=1e-12)]


def test_p99_of_two_hundred_runs_by_hand():
    """1..200: p99 = 1 + 0.99·199 = 198.01; n·q = 198, half = 1.96·√1.98 = 2.758 → ranks 194 and 199 (cap)."""
    y, v = metric_stats([np.arange(1.0, 201.0)], "p99")
    assert y[0] == pytest.approx(math.log(198.01), rel=1e-12)
    assert v[0] == pytest.approx(((math.log(200) - math.log(195)) / (2 * Z)) ** 2, rel=1e-12)


def test_quantile_variance_at_the_run_count_boundaries():
    """3 runs take the order-statistic interval (here it spans all three); 2 runs the SD of their logs; 1 run
    no variance; an interval reaching a zero time gives no log-scale width (0, not an error)."""
    (y3, y2, y1), (v3, v2, v1) = log_quantile_stats([np.array([4.0, 1.0, 2.0]), np.array([1.0, 4.0]),
                                                     np.array([3.0])], 0.90)
    assert y3 == pytest.approx(math.log(2 + 0.8 * 2)) and v3 == pytest.approx((math.log(4) / (2 * Z)) ** 2)
    assert y2 == pytest.approx(math.log(1 + 0.9 * 3)) and v2 == pytest.approx(np.std(np.log([1, 4]), ddof=1) ** 2)
    assert y1 == pytest.approx(math.log(3.0)) and v1 == 0.0
    zeros = np.array([0.0] * 15 + [1, 2, 3, 4, 5])  # rank 14 (the interval's low end) is a zero
    y, v = log_quantile_stats([zeros], 0.90)
    assert y[0] == pytest.approx(math.log(3.1)) and v[0] == 0.0


@pytest.mark.parametrize("runs,slow", [
    ([10.0] * 8 + [20.0, 25.0], 2),        # exactly 2× the median counts as slow
    ([10.0] * 8 + [19.999, 25.0], 1),      # just under does not
    ([10.0] * 9 + [10.0], 0),
    ([1.0, 1.0, 5.0, 5.0, 5.0], 0),        # 2× the median (5) is 10: the fast runs are no tail
])
def test_slow_share_counts_runs_at_twice_the_launch_median(runs, slow):
    assert SLOW == 2.0
    y, v = slow_share_stats([np.array(runs)])
    assert y[0] == pytest.approx(math.asin(math.sqrt(slow / len(runs))), abs=1e-15)
    assert v[0] == pytest.approx(1 / (4 * len(runs)), rel=1e-15)


def test_slow_share_of_an_empty_launch_and_by_name():
    y, v = slow_share_stats([np.array([])])
    assert (y[0], v[0]) == (0.0, 0.25)
    ym, _vm = metric_stats([np.array([10.0] * 8 + [20.0, 25.0])], "slow_share")
    assert ym[0] == pytest.approx(math.asin(math.sqrt(0.2)))


@pytest.mark.parametrize("n", [7, 10, 11, 20, 37, 100])
def test_trimmed_mean_and_winsorized_variance_equal_scipy(n):
    """The 10 % trimmed mean is scipy's trim_mean; its variance is scipy's winsorized sample variance over
    (1 − 2g/n)²·n (g = ⌊0.1·n⌋ runs cut at each end), on the log scale by the delta method."""
    rng = np.random.default_rng(n)
    x = rng.lognormal(0.0, 0.4, n) * 3.0
    y, v = trimmed_stats([x])
    g = math.floor(TRIM * n)
    m = sps.trim_mean(x, TRIM)
    w = np.asarray(mstats.winsorize(x, limits=(TRIM, TRIM)), dtype=float)
    assert y[0] == pytest.approx(math.log(m), rel=1e-12)
    assert v[0] == pytest.approx(np.var(w, ddof=1) / ((1 - 2 * g / n) ** 2 * n) / m ** 2, rel=1e-10)


def test_trimmed_stats_boundaries():
    """Half the runs zero is still a line (a sub-µs op seen in every other run); fewer nonzero runs than half is
    not, nor a trimmed mean that is zero; a trim of half or more would leave nothing; one run has no variance."""
    half = np.array([0.0] * 5 + [1.0, 2.0, 3.0, 4.0, 5.0])
    y, _v = trimmed_stats([half])
    assert y[0] == pytest.approx(math.log(sps.trim_mean(half, 0.1)))
    assert trimmed_stats([np.array([0.0] * 6 + [1.0, 2.0, 3.0, 4.0])]) is None
    assert trimmed_stats([np.array([1.0] * 10), np.zeros(10)]) is None
    y2, _ = trimmed_stats([np.array([2.0, 6.0, 7.0])], trim=0.49)  # g = 1 each end of 3 runs: the middle one
    assert y2[0] == pytest.approx(math.log(6.0))
    for bad in (0.5, -0.1):
        with pytest.raises(ValueError, match="trim must be in"):
            trimmed_stats([half], trim=bad)
    y1, v1 = trimmed_stats([np.array([7.0])])
    assert (y1[0], v1[0]) == (pytest.approx(math.log(7.0)), 0.0)


def test_mean_stats_by_hand_on_both_scales():
    x = np.array([1.0, 2.0, 3.0, 6.0])  # mean 3, sample variance 14/3, over n: 7/6
    y, v = mean_stats([x])
    assert y[0] == pytest.approx(math.log(3.0)) and v[0] == pytest.approx(7 / 6 / 9)
    y, v = mean_stats([x, np.array([5.0])], log=False)
    assert y.tolist() == [3.0, 5.0] and v[0] == pytest.approx(7 / 6) and v[1] == 0.0
    ym, _vm = metric_stats([x], "mean")
    assert ym[0] == pytest.approx(math.log(3.0))
    with pytest.raises(ValueError, match="unknown metric 'p50'"):
        metric_stats([x], "p50")
