"""The distribution functions of ``edgeprof.analysis.special`` against SciPy's (the oracle, a test dependency only):
over the ranges the statistics use and beyond, at their edges, and for the inputs that have no answer."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sc

from edgeprof.analysis import special

RNG = np.random.default_rng(7)
P_GRID = np.r_[10.0 ** -np.arange(1, 300, 7), RNG.uniform(size=200), 1 - 10.0 ** -np.arange(1, 16),
               [0.5, 0.025, 0.975, 0.05, 0.95, 0.8, 0.2, 0.9, 0.1, 0.995, 0.005]]
DFS = [1, 1.5, 2, 2.5, 3, 4, 5.5, 7, 10, 19, 30, 57.3, 100, 1000, 1e4]


def _close(got, want, rtol, atol=0.0):
    if math.isinf(want) or math.isnan(want):
        return got == want or (math.isnan(got) and math.isnan(want))
    return abs(got - want) <= atol + rtol * abs(want)


def test_normal_cdf():
    for x in np.r_[np.linspace(-37, 37, 1481), RNG.normal(size=200) * 5]:
        # in the far tail x/√2 rounds: erfc's relative error grows as x² × 1e-16 (in both implementations)
        assert _close(special.ndtr(x), float(sc.ndtr(x)), 1e-13 if abs(x) <= 10 else 1e-11, 1e-300), x


def test_normal_quantile():
    for p in P_GRID:
        # near ½ the quantile is tiny and as exact as p itself (its last bit moves it by ~1e-16)
        assert _close(special.ndtri(p), float(sc.ndtri(p)), 1e-13, 3e-16), p
    assert special.ndtri(0.975) == pytest.approx(1.959963984540054, rel=1e-15)  # the textbook 97.5 % point


@pytest.mark.parametrize("df", DFS)
def test_t_cdf(df):
    for t in np.r_[-np.logspace(-3, 3, 60), np.logspace(-3, 3, 60), 0.0]:
        assert _close(special.stdtr(df, t), float(sc.stdtr(df, t)), 1e-12, 1e-300), (df, t)


@pytest.mark.parametrize("df", DFS)
def test_t_quantile(df):
    for p in np.r_[10.0 ** -np.arange(1, 40, 3), RNG.uniform(size=40), 1 - 10.0 ** -np.arange(2, 15, 2)]:
        assert _close(special.stdtrit(df, p), float(sc.stdtrit(df, p)), 1e-12), (df, p)


def test_t_at_very_many_degrees_of_freedom_is_the_normal_to_within_its_accuracy():
    """10⁵–10⁶ degrees of freedom (runs of a long recording): within 1e-9 of SciPy, and tending to the normal."""
    for df in (1e5, 1e6):
        for p in (1e-5, 0.025, 0.3, 0.975):
            assert _close(special.stdtrit(df, p), float(sc.stdtrit(df, p)), 1e-9), (df, p)
        for t in (-4.26, -1.96, -0.1, 2.5):
            assert _close(special.stdtr(df, t), float(sc.stdtr(df, t)), 1e-9), (df, t)
    assert special.stdtrit(math.inf, 0.975) == special.ndtri(0.975)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 9, 10, 19, 39, 99, 199, 999, 9999])
def test_chi2_inverse_survival(df):
    for y in np.r_[10.0 ** -np.arange(1, 60, 5), RNG.uniform(size=30), [0.95, 0.975, 0.99, 0.05, 0.025],
                   1 - 10.0 ** -np.arange(2, 15, 2)]:
        assert _close(special.chdtri(df, y), float(sc.chdtri(df, y)), 1e-12), (df, y)


def test_closed_forms_hand_checked():
    assert special.stdtrit(1, 0.975) == pytest.approx(math.tan(math.pi * 0.475), rel=1e-15)  # Cauchy
    assert special.stdtrit(2, 0.975) == pytest.approx(0.95 / math.sqrt(2 * 0.975 * 0.025), rel=1e-15)
    assert special.stdtr(1, 1.0) == pytest.approx(0.75, rel=1e-15)  # ½ + atan(1)/π
    assert special.chdtri(2, 0.05) == pytest.approx(-2 * math.log(0.05), rel=1e-14)  # χ²₂ is exponential
    assert special.ndtr(0.0) == 0.5 and special.stdtr(7, 0.0) == 0.5 and special.stdtrit(7, 0.5) == 0.0


def test_edges_and_inputs_without_an_answer():
    inf, nan = math.inf, math.nan
    assert special.ndtri(0.0) == -inf and special.ndtri(1.0) == inf
    assert special.stdtrit(5, 0.0) == -inf and special.stdtrit(5, 1.0) == inf
    assert special.stdtr(5, -inf) == 0.0 and special.stdtr(5, inf) == 1.0
    assert special.chdtri(5, 1.0) == 0.0 and special.chdtri(5, 0.0) == inf
    for v in (special.ndtri(-0.1), special.ndtri(1.1), special.ndtri(nan), special.ndtr(nan),
              special.stdtr(0, 1.0), special.stdtr(-1, 1.0), special.stdtrit(5, 1.5), special.stdtrit(0, 0.5),
              special.chdtri(0, 0.5), special.chdtri(5, -0.1), special.chdtri(5, 1.1)):
        assert math.isnan(v)
    for v in (special.ndtri(nan), special.stdtrit(nan, 0.5), special.chdtri(nan, 0.5)):  # as SciPy
        assert math.isnan(v)


def test_inverses_converge_in_a_few_steps(monkeypatch):
    """Counted, not timed: an inverse ends in a handful of evaluations of its CDF (a Newton step that hops between
    two neighbouring floats must end it, not run it to the iteration limit)."""
    calls = {"t": 0, "gamma": 0}
    real_t, real_g = special._t_lower, special._gamma_tail

    def t_lower(*a):
        calls["t"] += 1
        return real_t(*a)

    def gamma_tail(*a):
        calls["gamma"] += 1
        return real_g(*a)

    monkeypatch.setattr(special, "_t_lower", t_lower)
    monkeypatch.setattr(special, "_gamma_tail", gamma_tail)
    for f in (special.ndtri, special.stdtrit, special.chdtri):
        f.cache_clear()  # every inverse below is computed here, not remembered from another test
    for df in (3, 5.5, 11, 30, 1000, 1e4):
        for p in (1e-20, 1e-5, 0.025, 0.3, 0.975):
            calls["t"] = 0
            special.stdtrit(df, p)
            assert calls["t"] <= 25, (df, p, calls["t"])
    for df in (1, 4, 11, 99, 9999):
        for y in (1e-30, 0.05, 0.5, 0.9, 0.999):
            calls["gamma"] = 0
            special.chdtri(df, y)
            assert calls["gamma"] <= 40, (df, y, calls["gamma"])
