"""Rank estimators against independent references: the Hodges–Lehmann interval's order statistics worked out by
hand for given sizes (k = ⌊mn/2 − z·√(mn(m+n+1)/12)⌋, Lehmann 1975, normal approximation), Mann–Kendall against
scipy's Kendall tau (asymptotic), Theil–Sen against scipy's theilslopes, exact U probabilities against scipy's."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss

from edgeprof.analysis import rank_tests as rt


@pytest.mark.parametrize("m,n,k", [(10, 10, 24), (7, 12, 18), (2, 2, 0), (30, 25, 289)])
def test_hodges_lehmann_interval_order_statistics(m, n, k):
    # by hand: (10,10): 50 − 1.96·√175 = 24.07 → 24; (7,12): 42 − 1.96·√140 = 18.81 → 18; (2,2): −0.53 → 0;
    # (30,25): 375 − 1.96·√(750·56/12) = 375 − 1.96·59.16 = 259.04 … see below
    rng = np.random.default_rng(m * 100 + n)
    x, y = rng.normal(1, 1, m), rng.normal(0, 1, n)
    d = np.sort(np.subtract.outer(x, y).ravel())
    if (m, n) == (30, 25):
        k = int(np.floor(375 - 1.959963984540054 * np.sqrt(750 * 56 / 12)))
        assert k == 259
    hl = rt.hodges_lehmann(x, y)
    assert hl["estimate"] == pytest.approx(np.median(d))
    assert (hl["low"], hl["high"]) == (d[k], d[d.size - k - 1])
    assert hl["subsampled"] is False and hl["level"] == 0.95


def test_hodges_lehmann_without_an_interval():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.5, 2.5])
    assert rt.hodges_lehmann(x[:1], y)["low"] is None and rt.hodges_lehmann(x, y[:1])["high"] is None
    assert rt.hodges_lehmann(x[:1], y)["estimate"] == pytest.approx(np.median(1.0 - y))
    # 3 × 3 pairs at a 1 % level: k = ⌊4.5 − 0.0125·√5.25⌋ = 4 = 9 − 4 − 1, no room for an interval
    assert rt.hodges_lehmann(x, y, level=0.01)["low"] is None
    assert rt.hodges_lehmann(x, y, level=0.2)["low"] is not None


def test_hodges_lehmann_subsampled_sizes():
    rng = np.random.default_rng(5)
    x, y = rng.normal(1, 1, 2001), rng.normal(0, 1, 2001)
    hl = rt.hodges_lehmann(x, y, seed=3)
    assert hl["subsampled"] is True and hl["low"] < hl["estimate"] < hl["high"]
    # the interval of a 2000 × 2000 subsample: k from m = n = 2000
    k = int(np.floor(2000 * 2000 / 2 - 1.959963984540054 * np.sqrt(2000 * 2000 * 4001 / 12)))
    rs = np.random.default_rng(3)
    xs, ys = rs.choice(x, 2000, replace=False), rs.choice(y, 2000, replace=False)
    d = np.sort(np.subtract.outer(xs, ys).ravel())
    assert (hl["low"], hl["high"]) == (d[k], d[d.size - k - 1]) and hl["estimate"] == np.median(d)


@pytest.mark.parametrize("n,ties", [(4, False), (5, True), (30, False), (60, True), (2000, True), (2001, True),
                                    (3001, False), (4096, True)])
def test_mann_kendall_against_scipy(n, ties):
    rng = np.random.default_rng(n)
    v = 0.01 * np.arange(n) + rng.normal(0, 1, n)
    if ties:
        v = np.round(v, 0)
    mk = rt.mann_kendall(v)
    want = ss.kendalltau(np.arange(n), v, method="asymptotic")
    assert mk["tau"] == pytest.approx(want.statistic, rel=1e-9)
    assert mk["p_value"] == pytest.approx(want.pvalue, rel=1e-9)
    i, j = np.triu_indices(n, 1)
    assert mk["s"] == float(np.sign(v[j] - v[i]).sum())


def test_theil_sen_is_the_median_of_every_pairwise_slope():
    rng = np.random.default_rng(7)
    for n in (2, 3, 10, 257):
        v = np.round(rng.normal(0, 1, n) + 0.02 * np.arange(n), 1)
        i, j = np.triu_indices(n, 1)
        assert rt.theil_sen(v) == np.median((v[j] - v[i]) / (j - i)) == pytest.approx(ss.theilslopes(v).slope)
    assert rt.theil_sen(np.array([1.0])) is None


def test_the_launch_sd_upper_bound_is_the_chi_square_one():
    from edgeprof.analysis.noise import upper_bound

    for df in (1, 2, 5, 40):
        for conf in (0.5, 0.8, 0.95):
            assert upper_bound(0.03, df, conf) == pytest.approx(0.03 * np.sqrt(df / ss.chi2.ppf(1 - conf, df)), rel=1e-12)
    assert upper_bound(0.03, 0) == np.inf


def test_mann_kendall_small_and_flat():
    assert rt.mann_kendall(np.array([1.0, 2.0, 3.0]))["p_value"] is None
    assert rt.mann_kendall(np.array([1.0, 2.0, 3.0, 4.0]))["s"] == 6.0
    flat = rt.mann_kendall(np.full(10, 3.0))
    assert (flat["s"], flat["tau"], flat["z"], flat["p_value"]) == (0.0, None, None, 1.0)


@pytest.mark.parametrize("n", [2, 3, 50, 2000, 2828])
def test_theil_sen_against_scipy(n):
    rng = np.random.default_rng(n)
    v = 0.5 * np.arange(n) + rng.normal(0, 1, n)
    assert rt.theil_sen(v) == pytest.approx(ss.theilslopes(v).slope, rel=1e-12)


def test_theil_sen_subsamples_beyond_four_million_pairs():
    n = 2829                                                     # 2829·2828/2 = 4,000,206 pairs
    v = 2.0 * np.arange(n) + np.random.default_rng(1).normal(0, 0.5, n)
    got = rt.theil_sen(v)
    assert np.isfinite(got) and got == pytest.approx(2.0, abs=0.005)
    assert got != ss.theilslopes(v).slope                        # a subsample, not all pairs
    assert rt.theil_sen(np.array([1.0])) is None


@pytest.mark.parametrize("n1,n2", [(1, 1), (2, 3), (4, 4), (3, 8), (5, 9)])
def test_exact_u_distribution_by_enumeration(n1, n2):
    # every way to place n1 of the n1 + n2 ranks: U = (sum of those ranks) − n1(n1 + 1)/2
    from itertools import combinations

    us = [sum(c) - n1 * (n1 + 1) // 2 for c in combinations(range(1, n1 + n2 + 1), n1)]
    counts = np.bincount(us, minlength=n1 * n2 + 1)
    cdf = np.cumsum(counts) / counts.sum()
    for t in range(n1 * n2 + 1):
        assert rt._exact_u_cdf(t, n1, n2) == pytest.approx(cdf[t], rel=1e-12), t
    assert rt._exact_u_cdf(n1 * n2 / 2 + 0.5, n1, n2) == pytest.approx(cdf[int(n1 * n2 / 2 + 0.5)])


def test_cliffs_delta_by_counting_pairs():
    rng = np.random.default_rng(3)
    x, y = np.round(rng.normal(0.5, 1, 17), 1), np.round(rng.normal(0, 1, 11), 1)      # with ties
    gt = sum(a > b for a in x for b in y)
    lt = sum(a < b for a in x for b in y)
    want = (gt - lt) / (x.size * y.size)
    assert rt.cliffs_delta(x, y) == pytest.approx(want)
    assert rt.cliffs_delta(x, y, rt.mann_whitney(x, y)["u"]) == pytest.approx(want)


def test_exact_two_sided_p_at_the_centre_is_one():
    x, y = np.array([1.0, 4.0]), np.array([2.0, 3.0])          # U = 2 = n1·n2/2
    r = rt.mann_whitney(x, y)
    assert r["method"] == "exact" and r["p_value"] == 1.0
    assert ss.mannwhitneyu(x, y, method="exact").pvalue == 1.0


def test_hodges_lehmann_defaults_and_the_narrowest_interval():
    rng = np.random.default_rng(8)
    x, y = rng.normal(1, 1, 2001), rng.normal(0, 1, 2001)
    assert rt.hodges_lehmann(x, y) == rt.hodges_lehmann(x, y, level=0.95, seed=0)
    assert rt.hodges_lehmann(x, y)["estimate"] != rt.hodges_lehmann(x, y, seed=1)["estimate"]
    # 2 × 5 pairs at a 30 % level: k = ⌊5 − 0.385·√(80/12)⌋ = 4, so the interval is [d(5), d(6)] (1-based)
    a, b = np.array([0.0, 10.0]), np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    d = np.sort(np.subtract.outer(a, b).ravel())
    hl = rt.hodges_lehmann(a, b, level=0.3)
    assert (hl["low"], hl["high"]) == (d[4], d[5])


def test_mann_kendall_degenerate_cases():
    assert rt.mann_kendall(np.array([1.0, 2.0, 3.0]))["s"] == 0
    flat = rt.mann_kendall(np.full(2001, 3.0))                  # the merge-sort path, all values equal
    assert (flat["s"], flat["p_value"]) == (0.0, 1.0)


def test_theil_sen_subsample_is_seeded():
    n = 2829
    v = 2.0 * np.arange(n) + np.random.default_rng(2).normal(0, 0.5, n)
    idx = np.sort(np.random.default_rng(0).choice(n, size=int(np.sqrt(8_000_000)), replace=False))
    assert rt.theil_sen(v) == pytest.approx(ss.theilslopes(v[idx], idx.astype(float)).slope, rel=1e-12)
