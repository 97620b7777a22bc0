"""The launch SD a plan uses from a pilot (:func:`edgeprof.analysis.noise.pilot_noise`), checked against scipy's
χ² by hand: the pilot's spread pooled with the machine's evidence — a measurement with its own df, else the
allowance counted as 2 df — at the upper 80 % bound on the pooled df; and the batched contrast the plan bench
judges with equals compare's own contrast draw for draw."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import noise_corpus as nc

from edgeprof.analysis import noise as nz
from edgeprof.analysis.launches import contrast, design, log_median_stats


def _bound(sd, df):
    return sd * math.sqrt(df / stats.chi2.ppf(0.20, df))


@pytest.mark.parametrize("sd, df", [(0.01, 2), (0.12, 2), (0.4, 2), (0.05, 7)])
def test_the_default_enters_as_two_df(sd, df):
    got = nz.pilot_noise(sd, df, df + 1, nz.default(), 1)
    pooled = math.sqrt((df * sd ** 2 + 2 * 0.25 ** 2) / (df + 2))
    assert got.sd == pytest.approx(_bound(pooled, df + 2), rel=1e-9)
    assert got.estimate == sd and got.df == df and got.source == "arms"
    assert f"{100 * pooled:.1f} %" in got.detail and "counted as 2 df" in got.detail


def test_a_measured_noise_profile_enters_with_its_own_df():
    machine = nz.measured(0.03, 22, 24, "noise profile", "noise.json")
    got = nz.pilot_noise(0.20, 2, 3, machine, 1)
    pooled = math.sqrt((2 * 0.20 ** 2 + 22 * 0.03 ** 2) / 24)
    assert got.sd == pytest.approx(_bound(pooled, 24), rel=1e-9)
    assert "measured on this machine (noise profile, 22 df)" in got.detail


def test_launch_cv_zero_leaves_the_pilot_alone():
    got = nz.pilot_noise(0.05, 2, 3, nz.given(0.0), 1)
    assert got.sd == pytest.approx(_bound(0.05, 2), rel=1e-9) and "pooled" not in got.detail


def test_a_two_launch_design_expects_compares_widened_interval():
    """At 2 launches per arm the expected interval is compare's: the allowance pooled as 2 df when that is wider
    (the half-width checked by hand), and no wider than the arms' alone with ``floor_sd`` 0."""
    within, tau = 0.05, 0.02
    row = next(r for r in design(within, tau, 0.3, threshold=0.02)["options"]
               if (r["launches_per_arm"], r["runs_per_launch"]) == (2, 100))
    v = tau ** 2 + math.pi / 2 * within ** 2 / 100
    se = math.sqrt((2 * v + 2 * 0.25 ** 2) / 4 * 2 / 2)
    assert row["half_width_percent"] == pytest.approx(100 * math.expm1(stats.t.ppf(0.975, 4) * se), rel=1e-9)
    bare = next(r for r in design(within, tau, 0.3, threshold=0.02, floor_sd=0.0)["options"]
                if (r["launches_per_arm"], r["runs_per_launch"]) == (2, 100))
    assert bare["half_width_percent"] == pytest.approx(
        100 * math.expm1(stats.t.ppf(0.975, 2) * math.sqrt(v)), rel=1e-9)


@pytest.mark.parametrize("k", [2, 3, 6])
def test_the_batched_contrast_is_compares(k):
    ls = nc.session(nc.SESSIONS[1])["tel_xnn"]
    st = [log_median_stats([x.steady[:30]]) for x in ls]
    y, v = np.array([s[0][0] for s in st]), np.array([s[1][0] for s in st])
    rng = np.random.default_rng(k)
    ib, ic = rng.integers(0, len(ls), (60, k)), rng.integers(0, len(ls), (60, k))
    est, lo, hi = nc.contrast_many(y[ib], v[ib], y[ic] - 0.2, v[ic], launch_cv=0.25)
    for d in range(60):
        ct = contrast(y[ib[d]], v[ib[d]], y[ic[d]] - 0.2, v[ic[d]], launch_cv=0.25)
        assert (est[d], lo[d], hi[d]) == pytest.approx((ct["estimate"], ct["low"], ct["high"]), abs=1e-12)
