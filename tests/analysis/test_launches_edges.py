"""Edges of the launch model, each against a hand computation or scipy: per-launch quantile and trimmed-mean
statistics at their guards, the multi-launch interval widened by a measured launch SD, the single-launch method
text, and the design table's defaults, cost rule and boundaries."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as ss

from edgeprof.analysis.launches import contrast, design, log_quantile_stats, trimmed_stats

Z975 = 1.959963984540054


# ---- per-launch statistics -------------------------------------------------------------------------------------

def test_quantile_interval_below_one_millisecond_still_gives_a_variance():
    """Sub-ms runs: the p90's order-statistic interval lies in (0, 1) and still gives a log-scale variance."""
    x = np.arange(1, 11) * 0.05                                    # 0.05 … 0.50 ms
    # ranks n·q ∓ z·√(n·q(1−q)) = 9 ∓ 1.859: lower floor(7.14) − 1 = 6, upper ceil(10.86) clipped to 9
    lo, hi = x[6], x[9]
    y, v = log_quantile_stats([x], 0.90)
    assert y[0] == pytest.approx(math.log(0.455))                 # linear interpolation at 8.1
    assert v[0] == pytest.approx(((math.log(hi) - math.log(lo)) / (2 * Z975)) ** 2, rel=1e-12)
    assert v[0] > 0


def test_trimmed_stats_accepts_no_trimming_and_rejects_half():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    y, v = trimmed_stats([x], trim=0.0)                            # trim 0: the plain mean, var(ddof=1)/n / mean²
    assert y[0] == pytest.approx(math.log(2.5))
    assert v[0] == pytest.approx((np.var(x, ddof=1) / 4) / 2.5 ** 2)
    for bad in (0.5, -0.01):
        with pytest.raises(ValueError):
            trimmed_stats([x], trim=bad)


def test_trimmed_stats_of_sub_millisecond_and_two_run_launches():
    """A positive mean below 1 is testable; two runs (nothing trimmed) give var(ddof=1)/2 / mean²."""
    y, v = trimmed_stats([np.array([0.2, 0.4, 0.6]), np.array([1.0, 3.0])])
    assert y.tolist() == pytest.approx([math.log(0.4), math.log(2.0)])
    assert v.tolist() == pytest.approx([(0.04 / 3) / 0.16, (2.0 / 2) / 4.0])


def test_trimmed_mean_of_exactly_zero_is_not_testable():
    # every run non-zero, but the mean is 0: no log exists
    assert trimmed_stats([np.array([-1.0, 1.0, -2.0, 2.0])]) is None
    assert trimmed_stats([np.array([1.0, 2.0]), np.array([-1.0, 1.0])]) is None


# ---- multi-launch: a measured launch SD widens the interval ------------------------------------------------------

def _widened_oracle(yb, yc, m_sd, m_df):
    kb, kc = yb.size, yc.size
    ssq = ((yb - yb.mean()) ** 2).sum() + ((yc - yc.mean()) ** 2).sum()
    df = kb + kc - 2 + m_df
    se = math.sqrt((ssq + m_df * m_sd ** 2) / df * (1 / kb + 1 / kc))
    return se, ss.t.ppf(0.975, df), df


@pytest.mark.parametrize("m_df", [1, 4])
def test_measured_launch_sd_pools_with_the_arms_spread(m_df):
    """2 vs 3 launches that agree closely, a machine launch SD of 0.5 measured on m_df df: the interval is the t
    interval on the pooled spread ((SS + df_m·sd²)/(df + df_m), 1/k_b + 1/k_c) with df + df_m degrees of freedom."""
    yb, yc = np.array([0.00, 0.01]), np.array([0.20, 0.21, 0.22])
    v = np.full(2, 1e-4), np.full(3, 1e-4)
    r = contrast(yb, v[0], yc, v[1], measured=(0.5, m_df))
    se, crit, df = _widened_oracle(yb, yc, 0.5, m_df)
    assert r["regime"] == "multi-launch"
    assert r["df"] == df
    assert r["se"] == pytest.approx(se, rel=1e-9)
    assert r["critical"] == pytest.approx(crit, rel=1e-9)
    assert r["tau"] == 0.5
    est = yb.mean() - yc.mean()                                    # equal within-launch variances: plain means
    assert r["estimate"] == pytest.approx(est, abs=1e-12)
    assert (r["low"], r["high"]) == pytest.approx((est - crit * se, est + crit * se), rel=1e-9)
    assert "measured on this machine" in r["method"]


def test_measured_launch_sd_on_zero_df_is_ignored():
    yb, yc = np.array([0.00, 0.01, 0.02]), np.array([0.20, 0.21, 0.22])
    v = np.full(3, 1e-4)
    r = contrast(yb, v, yc, v, measured=(0.5, 0))
    assert r["df"] == 4.0 and r["tau"] < 0.5 and "widened" not in r["method"]


# ---- single launch --------------------------------------------------------------------------------------------------

def test_single_launch_method_names_the_arms_only_when_they_exceed_the_allowance():
    r = contrast(np.array([0.0]), np.array([1e-4]), np.array([0.1]), np.array([1e-4]), launch_cv=0.25)
    assert r["tau"] == 0.25 and r["allowance_from_arms"] is False
    assert "differed" not in r["method"]
    # 1 vs 2 whose two launches differ by SD 0.5/√2·… > 0.25: the arms' own spread is the allowance
    yc = np.array([0.0, 0.5])
    r = contrast(np.array([0.0]), np.array([1e-4]), yc, np.full(2, 1e-4), launch_cv=0.25)
    assert r["tau"] == pytest.approx(np.std(yc, ddof=1)) and r["allowance_from_arms"] is True
    assert "differed by that much" in r["method"]


def test_identical_within_launch_draws_give_no_evidence_of_a_change():
    """1 vs 1 with no allowance: bootstrap draws that are all equal have SD 0; the p-value is then 1."""
    r = contrast(np.array([0.0]), np.array([1e-4]), np.array([0.0]), np.array([1e-4]), launch_cv=0,
                 within_draws=np.zeros(40))
    assert r["se"] == 0.0 and r["p_value"] == 1.0 and (r["low"], r["high"]) == (0.0, 0.0)


# ---- design ---------------------------------------------------------------------------------------------------------

def test_design_default_grid_and_threshold():
    d = design(0.1, 0.05, 0.10)
    assert sorted({r["launches_per_arm"] for r in d["options"]}) == [2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50]
    assert sorted({r["runs_per_launch"] for r in d["options"]}) == [10, 20, 30, 50, 100, 200, 500, 1000]
    assert d["threshold"] == 0.0
    # the widest design (50 launches): power from the t test against log(1.1) itself (threshold 0)
    row = next(r for r in d["options"] if r["launches_per_arm"] == 50 and r["runs_per_launch"] == 1000)
    se = math.sqrt(2 * (0.05 ** 2 + math.pi / 2 * 0.01 / 1000) / 50)
    assert row["power"] == pytest.approx(ss.t.cdf(math.log(1.1) / se - ss.t.ppf(0.975, 98), 98), rel=1e-9)
    # the launch floor from the largest launch count: t(98) · √(2τ²/50)
    assert d["launch_floor_half_width_percent"] == pytest.approx(
        100 * math.expm1(ss.t.ppf(0.975, 98) * math.sqrt(2 * 0.05 ** 2 / 50)), rel=1e-9)


def test_design_without_launch_noise_has_no_launch_floor():
    d = design(0.1, 0.0, 0.10)
    assert d["launch_floor_half_width_percent"] == 0.0


def test_design_note_at_its_exact_boundary():
    """τ² = (π/2)·SD²/100 (a 100-run median's variance) is not yet launch-dominated; just above it is."""
    assert design(0.0, 0.0, 0.0)["note"].startswith("run-to-run")        # 0 = 0
    sd, tau = 0.1, 0.1 * math.sqrt(math.pi / 200)
    assert tau ** 2 <= (math.pi / 2) * sd ** 2 / 100
    assert design(sd, tau, 0.1)["note"].startswith("run-to-run")
    assert design(sd, tau * 1.001, 0.1)["note"].startswith("launch-to-launch")


def test_an_effect_equal_to_the_threshold_is_never_resolved():
    """Target 0 (effect = threshold): no design resolves it, even at a power so low its t quantile is negative."""
    d = design(0.05, 0.0, 0.03, threshold=0.03, power=0.01, launches=(20,), runs=(1000,), floor_sd=0)
    assert ss.t.ppf(0.975, 38) + ss.t.ppf(0.01, 38) < 0                      # need would be negative
    assert [r["resolves"] for r in d["options"]] == [False] and d["recommended"] is None
    assert d["options"][0]["power"] == 0.0


def test_design_recommends_the_cheapest_counting_200_runs_per_launch():
    """Cost = total runs + 200 per launch per arm: 5 launches × 1 run (10 + 1000) beats 2 × 153 (612 + 400)."""
    sd = 0.1
    effect = math.expm1(0.4)
    d = design(sd, 0.0, effect, launches=(2, 5), runs=(1, 153), floor_sd=0)

    def resolves(k, n):
        se = math.sqrt(2 * (math.pi / 2) * sd ** 2 / n / k)
        return (ss.t.ppf(0.975, 2 * k - 2) + ss.t.ppf(0.8, 2 * k - 2)) * se <= 0.4

    got = {(r["launches_per_arm"], r["runs_per_launch"]): r["resolves"] for r in d["options"]}
    assert got == {(k, n): resolves(k, n) for k in (2, 5) for n in (1, 153)}
    assert got == {(2, 1): False, (2, 153): True, (5, 1): True, (5, 153): True}
    rec = d["recommended"]
    assert (rec["launches_per_arm"], rec["runs_per_launch"]) == (5, 1)


def test_design_resolves_an_effect_exactly_at_the_required_width():
    """2 launches per arm (2 df), power 0.5 (t quantile 0), no run noise: the required width is t(2)·√(2τ²/2), with
    the closed-form t(2) quantile (2p − 1)/√(2p(1 − p)). An effect whose log equals it resolves; one ulp less does not."""
    tau, p = 0.1, 1 - (1 - 0.95) / 2
    need = (2 * p - 1) / math.sqrt(2 * p * (1 - p)) * math.sqrt(2 * (tau ** 2 + 0.0) / 2)
    effect = math.expm1(need)
    for _ in range(8):                                             # the effect whose log1p is exactly `need`
        if math.log1p(effect) == need:
            break
        effect = np.nextafter(effect, np.inf if math.log1p(effect) < need else -np.inf)
    assert math.log1p(effect) == need
    below = float(np.nextafter(effect, -np.inf))
    while math.log1p(below) == need:
        below = float(np.nextafter(below, -np.inf))
    kw = {"level": 0.95, "power": 0.5, "launches": (2,), "runs": (10,), "floor_sd": 0}
    assert design(0.0, tau, float(effect), **kw)["options"][0]["resolves"] is True
    assert design(0.0, tau, below, **kw)["options"][0]["resolves"] is False
