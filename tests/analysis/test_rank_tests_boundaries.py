"""Rank tests at their switch points, against scipy: the exact Mann–Whitney distribution (one side ≤ 8, at most
200 values, no ties) and the tie- and continuity-corrected normal approximation beyond; the pairwise-difference
estimators at exactly 4M pairs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss

from edgeprof.analysis import rank_tests as rt


@pytest.mark.parametrize("n1,n2,method", [(3, 5, "exact"), (8, 30, "exact"), (30, 8, "exact"), (8, 192, "exact"),
                                          (8, 193, "normal"), (9, 9, "normal"), (9, 40, "normal")])
def test_mann_whitney_method_and_p_value_equal_scipy(n1, n2, method):
    rng = np.random.default_rng(n1 * 1000 + n2)
    x, y = rng.normal(0.3, 1, n1), rng.normal(0, 1, n2)
    got = rt.mann_whitney(x, y)
    want = ss.mannwhitneyu(x, y, alternative="two-sided", method="exact" if method == "exact" else "asymptotic",
                           use_continuity=True)
    assert got["method"].startswith(method)
    assert got["u"] == pytest.approx(want.statistic)
    assert got["p_value"] == pytest.approx(want.pvalue, rel=1e-9)


def test_mann_whitney_with_ties_uses_the_tie_correction():
    x = np.array([1, 2, 2, 3, 3, 3, 4, 5, 6, 7], dtype=float)
    y = np.array([2, 3, 3, 4, 4, 5], dtype=float)
    got = rt.mann_whitney(x, y)
    want = ss.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic", use_continuity=True)
    assert got["method"].startswith("normal") and got["p_value"] == pytest.approx(want.pvalue, rel=1e-9)
    assert rt.mann_whitney(np.ones(4), np.ones(5)) == {"u": 10.0, "p_value": 1.0, "method": "all values equal"}


@pytest.mark.parametrize("n1,n2,sub", [(2000, 2000, False), (2000, 2001, True)])
def test_pairwise_estimators_subsample_only_beyond_four_million_pairs(n1, n2, sub):
    rng = np.random.default_rng(1)
    x, y = rng.normal(1, 1, n1), rng.normal(0, 1, n2)
    hl = rt.hodges_lehmann(x, y)
    assert hl["subsampled"] is sub
    if not sub:
        assert hl["estimate"] == pytest.approx(float(np.median(np.subtract.outer(x, y))))


@pytest.mark.parametrize("nx,ny", [(2, 2), (2, 7), (5, 3), (30, 40)])
def test_brunner_munzel_equals_scipy(nx, ny):
    rng = np.random.default_rng(nx * 100 + ny)
    x, y = rng.normal(0.5, 1, nx), rng.normal(0, 2, ny)
    if nx == 2 == ny:
        x, y = np.array([1.0, 3.0]), np.array([2.0, 4.0])
    got = rt.brunner_munzel(x, y)
    want = ss.brunnermunzel(x, y, distribution="t")
    assert got["statistic"] == pytest.approx(want.statistic, rel=1e-9)
    assert got["p_value"] == pytest.approx(want.pvalue, rel=1e-9)


def test_brunner_munzel_undefined_cases():
    assert rt.brunner_munzel(np.array([1.0]), np.array([2.0, 3.0]))["note"] == "needs ≥ 2 runs per arm"
    assert rt.brunner_munzel(np.array([1.0, 2.0]), np.array([3.0]))["p_value"] is None
    sep = rt.brunner_munzel(np.array([1.0, 2.0, 3.0]), np.array([7.0, 8.0, 9.0]))
    assert sep["p_value"] is None and "complete separation" in sep["note"]
