"""Edges of the shape statistics against independent recomputations: the mode finder's Silverman bandwidth (IQR from
scipy), its two-cluster masses and centres from a plain Gaussian kernel sum, its guards (all-equal, IQR 0, no piece
heavy enough), and the bimodality hint: Sarle's coefficient from scipy's moments, and the binned density used above
5,000 runs, checked on clusters narrower than its grid step where each cluster's count is its density."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as ss

from edgeprof.analysis import stats as st


def _two_cluster_oracle(v, split):
    """Silverman bandwidth on log values, Gaussian kernel sum on the 512-point grid min − 3h … max + 3h; masses and
    peak centres of the grid points below / above ``split`` (log scale, between two well-separated clusters)."""
    x = np.log(np.asarray(v, dtype=float))
    n = x.size
    sd, iqr = np.std(x, ddof=1), ss.iqr(x)
    h = 0.9 * min(sd, iqr / 1.34 if iqr > 0 else sd) * n ** -0.2
    grid = np.linspace(x.min() - 3 * h, x.max() + 3 * h, 512)
    dens = np.array([np.exp(-0.5 * ((g - x) / h) ** 2).sum() for g in grid])
    peaks = [np.argmax(np.where(grid < split, dens, -1)), np.argmax(np.where(grid >= split, dens, -1))]
    valley = peaks[0] + int(np.argmin(dens[peaks[0]:peaks[1] + 1]))   # the cut: the valley's grid point goes right
    lo = np.arange(grid.size) < valley
    masses = [dens[lo].sum() / dens.sum(), dens[~lo].sum() / dens.sum()]
    centres = [math.exp(grid[lo][np.argmax(dens[lo])]), math.exp(grid[~lo][np.argmax(dens[~lo])])]
    return masses, centres


def _normal_cluster(centre, sd, k):
    return centre + sd * ss.norm.ppf((np.arange(k) + 0.5) / k)


def setup_function():
    st.modes.cache_clear()


def _assert_two_modes(v):
    """modes() finds two modes of ``v`` with the oracle's masses and centres; returns the masses."""
    r = st.modes(v)
    masses, centres = _two_cluster_oracle(v, 0.5)
    assert r["multimodal"] is True
    assert r["masses"] == pytest.approx(masses, rel=1e-9)
    assert r["centres_ms"] == pytest.approx(centres, rel=1e-12)
    return masses


def test_two_clusters_one_log_unit_apart_are_two_modes():
    """15 runs at 1 ms and 15 at e ms (log range exactly 1): two modes of half the runs each."""
    v = np.r_[np.ones(15), np.full(15, math.e)]
    _assert_two_modes(v)


def test_all_equal_runs_are_one_mode_at_their_value():
    r = st.modes(np.full(40, 3.0))
    assert r == {"multimodal": False, "masses": [1.0], "centres_ms": [pytest.approx(3.0)]}


def test_zero_iqr_falls_back_to_the_sd_bandwidth():
    """25 runs at 1 ms and 7 at e ms: both quartiles are 0 (log), so the bandwidth comes from the SD; 7/32 ≥ 20 %."""
    v = np.r_[np.ones(25), np.full(7, math.e)]
    assert ss.iqr(np.log(v)) == 0.0
    masses = _assert_two_modes(v)
    assert masses[1] == pytest.approx(7 / 32, abs=1e-3)


def test_tight_main_cluster_sets_the_bandwidth_by_its_iqr():
    """39 runs around 1 ms (log SD 0.05) and 11 at e ms: IQR/1.34 (interpolated quartiles) < SD, so the IQR sets
    the bandwidth; the centres are the kernel sum's grid maxima."""
    x = np.r_[_normal_cluster(0.0, 0.05, 39), _normal_cluster(1.0, 0.05, 11)]
    v = np.exp(x)
    assert ss.iqr(x) / 1.34 < np.std(x, ddof=1) and ss.iqr(x) < 1
    _assert_two_modes(v)


def test_no_piece_heavy_enough_reports_the_whole_sample():
    """mass 0.9: neither half of a two-cluster sample holds it; one mode of mass 1 at the sample median."""
    v = np.r_[np.ones(15), np.full(15, math.e)]
    r = st.modes(v, mass=0.9)
    assert r == {"multimodal": False, "masses": [1.0], "centres_ms": [pytest.approx(math.exp(0.5))]}


# ---- bimodality ---------------------------------------------------------------------------------------------------

def test_skewed_unimodal_sample_above_five_ninths():
    """Gamma(½) quantiles: Sarle's BC (from scipy's unbiased skewness and excess kurtosis) between 5/9 and 6/9
    with a single density mode: the hint is on by the coefficient alone."""
    v = 1 + ss.gamma(0.5).ppf((np.arange(200) + 0.5) / 200)
    n = v.size
    g, k = ss.skew(v, bias=False), ss.kurtosis(v, bias=False)
    bc = (g * g + 1) / (k + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
    assert 5 / 9 < bc <= 6 / 9
    r = st.bimodality(v)
    assert r["bimodality_coefficient"] == pytest.approx(bc, rel=1e-9)
    assert r["modes"] == 1
    assert r["hint"] is True and r["note"].startswith("possibly multimodal")


def _narrow_clusters(n, offcentre=0, plateau=326):
    """Clusters far narrower than the density grid's step, at chosen grid points (bins above 5,000 runs):

    L 350 at the minimum (grid end), C 350, the main cluster A 3,260 (both quartiles inside it, so it sets the
    bandwidth through its IQR), a plateau of ``plateau`` runs at each of two adjacent grid points (326: exactly
    10 % of A), the maximum B with the rest, and ``offcentre`` runs 0.4 step past grid point 150."""
    a = 100.0 + np.linspace(0.0, 1e-4, 3260)
    rest = n - 350 - 350 - 3260 - 2 * plateau - offcentre
    assert 700 + offcentre <= 0.25 * (n - 1) and 700 + offcentre + 3260 - 1 >= 0.75 * (n - 1)
    # the grid depends only on min, max and the bandwidth (A's IQR, the SD being far larger)
    prov = np.r_[np.full(350, 1.0), np.full(350 + offcentre, 50.0), a, np.full(2 * plateau, 150.0), np.full(rest, 200.0)]
    iqr = ss.iqr(prov)
    h = 0.9 * min(np.std(prov, ddof=1), iqr / 1.34) * n ** -0.2
    grid = np.linspace(1.0 - 3 * h, 200.0 + 3 * h, 512)
    step = grid[1] - grid[0]
    v = np.r_[np.full(350, 1.0), np.full(350, grid[100]), np.full(offcentre, grid[150] + 0.4 * step), a,
              np.full(plateau, grid[400]), np.full(plateau, grid[401]), np.full(rest, 200.0)]
    assert v.size == n and ss.iqr(v) == iqr and np.std(v, ddof=1) > iqr / 1.34
    assert h < step / 100                                      # each cluster is a spike on the grid
    assert np.min(np.abs(grid - 100.0)) > 0.01 * step            # A (≈ 100) lies between grid points
    return v, h


def test_binned_density_counts_each_narrow_cluster_at_the_ten_percent_bar():
    """5,001 runs (binned density): C, A and the plateau (one peak, exactly 10 % of A's height) are modes; the
    clusters at the grid's ends are not interior peaks."""
    v, h = _narrow_clusters(5001)
    r = st.bimodality(v)
    assert r["bandwidth"] == pytest.approx(h, rel=1e-12)
    assert r["modes"] == 3 and r["hint"] is True


def test_binned_density_ignores_a_plateau_just_under_ten_percent():
    v, _ = _narrow_clusters(5001, plateau=325)
    assert st.bimodality(v)["modes"] == 2


@pytest.mark.parametrize("n, binned", [(5000, False), (5001, True)])
def test_density_switches_to_bins_above_5000_runs(n, binned):
    """Clusters between grid points (A and 340 off-centre runs): up to 5,000 runs the exact kernel sum is taken only
    at the grid points, where a cluster far narrower than the step leaves nothing, so only C and the plateau are
    modes; above 5,000 every run falls in a bin and counts: C, the off-centre cluster, A and the plateau."""
    v, _ = _narrow_clusters(n, offcentre=340)
    assert st.bimodality(v)["modes"] == (4 if binned else 2)


def test_binned_density_of_two_smooth_clusters_in_large_units():
    """6,000 runs in two normal clusters (1000 ± 50 and 2000 ± 50 ms; bandwidth > 1 ms): the binned density finds
    the same two modes as scipy's Gaussian KDE with that bandwidth evaluated on the same grid."""
    q = ss.norm.ppf((np.arange(3000) + 0.5) / 3000)
    v = np.r_[1000 + 50 * q, 2000 + 50 * q]
    r = st.bimodality(v)
    sd, iqr = np.std(v, ddof=1), ss.iqr(v)
    h = 0.9 * min(sd, iqr / 1.34) * v.size ** -0.2
    assert r["bandwidth"] == pytest.approx(h, rel=1e-12) and h > 1
    grid = np.linspace(v.min() - 3 * h, v.max() + 3 * h, 512)
    dens = ss.gaussian_kde(v, bw_method=h / sd)(grid)
    inner = dens[1:-1]
    peaks = np.flatnonzero((inner > dens[:-2]) & (inner >= dens[2:])) + 1
    assert int((dens[peaks] >= 0.1 * dens.max()).sum()) == 2
    assert r["modes"] == 2 and r["hint"] is True
