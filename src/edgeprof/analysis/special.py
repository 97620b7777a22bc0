"""The distribution functions the statistics need, for scalars, in plain Python (``math``): the normal CDF and its
inverse, Student's t CDF and its inverse, and the inverse of the χ² survival function.

They replace the five ``scipy.special`` functions edgeprof used (``ndtr``, ``ndtri``, ``stdtr``, ``stdtrit``,
``chdtri``, same arguments), so the core install carries no SciPy and a command imports none. Each is the
textbook construction: the normal CDF from ``math.erfc``; t through the regularized incomplete beta function
and χ² through the regularized incomplete gamma function, both by their series and continued fractions (modified
Lentz); every inverse by safeguarded Newton steps from a closed-form start, in log space in the tails. The tests
check them against SciPy to about 1e-12 relative over the ranges used (p down to 1e-300, 1 to 10⁶ degrees of freedom).
"""

from __future__ import annotations

import math
from functools import lru_cache

_SQRT2 = math.sqrt(2.0)
_EPS = 1e-16
_TINY = 1e-300
_MAX_ITER = 100_000
# a Newton step this small (relative) ends an inverse: the functions themselves are exact to a few units in the
# last place, so smaller steps only hop between neighbouring floats
_STEP = 1e-14


def ndtr(x) -> float:
    """Standard normal CDF."""
    x = float(x)
    if math.isnan(x):
        return math.nan
    return 0.5 * math.erfc(-x / _SQRT2)


def _normal_logpdf(x: float) -> float:
    return -0.5 * x * x - 0.5 * math.log(2 * math.pi)


@lru_cache(maxsize=4096)  # the statistics ask for the same few quantiles again and again
def ndtri(p) -> float:
    """Inverse of the standard normal CDF (−inf at 0, +inf at 1, nan outside [0, 1])."""
    p = float(p)
    if math.isnan(p) or p < 0 or p > 1:
        return math.nan
    if p == 0:
        return -math.inf
    if p == 1:
        return math.inf
    if p > 0.5:  # the upper half by symmetry, solved in the lower tail where ndtr is exact
        return -_lower_normal(1.0 - p) if 1.0 - p > 0 else math.inf
    return _lower_normal(p)


def _lower_normal(p: float) -> float:
    """x ≤ 0 with ndtr(x) = p (0 < p ≤ 0.5), by Newton steps on log ndtr."""
    if p == 0.5:
        return 0.0
    t = -2.0 * math.log(p)
    x = -math.sqrt(max(t - math.log(max(t, 1e-300)) - math.log(2 * math.pi), 0.0)) if p < 0.1 else \
        -math.sqrt(2 * math.pi) * (0.5 - p)
    lp = math.log(p)
    for _ in range(100):
        f = ndtr(x)
        if f <= 0:
            x *= 0.5
            continue
        step = (math.log(f) - lp) / math.exp(_normal_logpdf(x) - math.log(f))
        x_new = min(x - step, 0.0)
        if abs(x_new - x) <= 2e-16 * max(1.0, abs(x_new)):
            return x_new
        x = x_new
    return x


# -- incomplete beta and Student's t ------------------------------------------------------------------------------
def _stirling_tail(x: float) -> float:
    """lgamma(x) − ((x − ½)·ln x − x + ½·ln 2π) for x ≥ 10 (the Stirling series)."""
    r = 1.0 / (x * x)
    return (1.0 / 12 - r * (1.0 / 360 - r * (1.0 / 1260 - r * (1.0 / 1680 - r / 1188)))) / x


def _lgamma_ratio(a: float, b: float) -> float:
    """lgamma(a) − lgamma(a + b), without the cancellation of two large lgammas when a is large."""
    if a < 10:
        return math.lgamma(a) - math.lgamma(a + b)
    return (-b * math.log(a) - (a + b - 0.5) * math.log1p(b / a) + b
            + _stirling_tail(a) - _stirling_tail(a + b))


def _lbeta(a: float, b: float) -> float:
    if a < b:
        a, b = b, a
    return math.lgamma(b) + _lgamma_ratio(a, b)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_ITER):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


def _betainc(a: float, b: float, x: float, y: float) -> float:
    """I_x(a, b), with y = 1 − x given exactly by the caller."""
    if x <= 0:
        return 0.0
    if y <= 0:
        return 1.0
    log_x = math.log1p(-y) if y < 0.5 else math.log(x)  # the one near 1 from the other, exactly
    log_y = math.log1p(-x) if x < 0.5 else math.log(y)
    log_front = a * log_x + b * log_y - _lbeta(a, b)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, y) / b


def _t_lower(df: float, t: float) -> float:
    """P(T ≤ t) for t ≤ 0, accurate far into the tail."""
    tt = t * t
    return 0.5 * _betainc(0.5 * df, 0.5, df / (df + tt), tt / (df + tt))


def stdtr(df, t) -> float:
    """Student's t CDF with ``df`` > 0 degrees of freedom (any real df)."""
    df, t = float(df), float(t)
    if math.isnan(df) or math.isnan(t) or df <= 0:
        return math.nan
    if math.isinf(t):
        return 0.0 if t < 0 else 1.0
    if math.isinf(df):
        return ndtr(t)
    return _t_lower(df, t) if t <= 0 else 1.0 - _t_lower(df, -t)


def _t_logpdf(df: float, t: float) -> float:
    return -_lgamma_ratio(0.5 * df, 0.5) - 0.5 * math.log(df * math.pi) - 0.5 * (df + 1) * math.log1p(t * t / df)


@lru_cache(maxsize=4096)  # the statistics ask for the same few quantiles again and again
def stdtrit(df, p) -> float:
    """Inverse of :func:`stdtr` in its second argument."""
    df, p = float(df), float(p)
    if math.isnan(df) or math.isnan(p) or df <= 0 or p < 0 or p > 1:
        return math.nan
    if p == 0:
        return -math.inf
    if p == 1:
        return math.inf
    if math.isinf(df):
        return ndtri(p)
    if p > 0.5:
        return -_t_lower_inverse(df, 1.0 - p)
    return _t_lower_inverse(df, p)


def _t_lower_inverse(df: float, p: float) -> float:
    """t ≤ 0 with P(T ≤ t) = p (0 < p ≤ 0.5): Newton steps on log P from a closed-form start, kept inside a
    bracket that bisection tightens whenever a step would leave it."""
    if p == 0.5:
        return 0.0
    if df == 1.0:  # Cauchy
        return -1.0 / math.tan(math.pi * p)
    if df == 2.0:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    z = ndtri(p)  # Cornish–Fisher start, then a bracket [lo, 0]
    t = z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df * df)
    lo, hi = min(t, -1.0), 0.0
    while _t_lower(df, lo) > p:
        hi, lo = lo, lo * 2.0
        if lo < -1e300:
            return -math.inf
    t = min(max(t, lo), hi)
    lp = math.log(p)
    for _ in range(400):
        f = _t_lower(df, t)
        if f > p:
            hi = t
        else:
            lo = t
        if f <= 0:
            t_new = 0.5 * (lo + hi)
        else:
            t_new = t - (math.log(f) - lp) / math.exp(_t_logpdf(df, t) - math.log(f))
            if not lo <= t_new <= hi:
                t_new = 0.5 * (lo + hi)
        if abs(t_new - t) <= _STEP * max(1.0, abs(t_new)):
            return t_new
        t = t_new
    return t


# -- incomplete gamma and χ² -------------------------------------------------------------------------------------
def _gamma_series(a: float, x: float) -> float:
    """Regularized lower incomplete gamma function P(a, x) by its series (for x < a + 1)."""
    term = s = 1.0 / a
    ap = a
    for _ in range(_MAX_ITER):
        ap += 1.0
        term *= x / ap
        s += term
        if abs(term) < abs(s) * _EPS:
            break
    return s * math.exp(a * math.log(x) - x - math.lgamma(a))


def _gamma_cf(a: float, x: float) -> float:
    """Regularized upper incomplete gamma function Q(a, x) by its continued fraction (for x ≥ a + 1)."""
    b = x + 1.0 - a
    c, d = 1.0 / _TINY, 1.0 / b
    h = d
    for i in range(1, _MAX_ITER):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = b + an / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return math.exp(a * math.log(x) - x - math.lgamma(a)) * h


def _gamma_tail(a: float, x: float, upper: bool) -> float:
    """Q(a, x) (``upper``) or P(a, x), each from the expansion that is accurate where it is evaluated."""
    if x <= 0:
        return 1.0 if upper else 0.0
    if math.isinf(x):
        return 0.0 if upper else 1.0
    if x < a + 1.0:
        p = _gamma_series(a, x)
        return 1.0 - p if upper else p
    q = _gamma_cf(a, x)
    return q if upper else 1.0 - q


@lru_cache(maxsize=4096)  # the statistics ask for the same few quantiles again and again
def chdtri(df, y) -> float:
    """x with P(χ²_df > x) = y (the inverse of the χ² survival function). Solved on the smaller of the two tails
    (the upper one for y ≤ ½), by Newton steps on its logarithm inside a bracket that bisection tightens."""
    df, y = float(df), float(y)
    if math.isnan(df) or math.isnan(y) or df <= 0 or y < 0 or y > 1:
        return math.nan
    if y == 1:
        return 0.0
    if y == 0:
        return math.inf
    a = 0.5 * df
    upper = y <= 0.5
    target = y if upper else 1.0 - y  # exact for y > ½
    z = -ndtri(y)  # the normal upper quantile of y, without forming 1 − y
    k = 2.0 / (9.0 * df)
    base = 1.0 - k + z * math.sqrt(k)
    x = df * base ** 3 if base > 0 else 0.0  # Wilson–Hilferty
    if not upper:  # P(a, u) ≈ u^a / Γ(a + 1) for small u
        x = min(x, 2.0 * math.exp((math.log(target) + math.lgamma(a + 1.0)) / a)) if x > 0 else \
            2.0 * math.exp((math.log(target) + math.lgamma(a + 1.0)) / a)
    x = x if math.isfinite(x) and x > 0 else 1.0

    def beyond(v: float) -> bool:  # the root lies below v
        t = _gamma_tail(a, 0.5 * v, upper)
        return t < target if upper else t > target

    lo, hi = 0.0, max(2.0 * x, 1e-300)
    while not beyond(hi):
        lo, hi = hi, hi * 2.0
        if hi > 1e300:
            return math.inf
    x = min(max(x, lo), hi)
    lt = math.log(target)
    for _ in range(400):
        t = _gamma_tail(a, 0.5 * x, upper)
        if (t < target) == upper:
            hi = x
        else:
            lo = x
        log_dens = (a - 1.0) * math.log(0.5 * x) - 0.5 * x - math.lgamma(a) - math.log(2.0) if x > 0 else -math.inf
        if t > 0 and log_dens > -math.inf:
            slope = math.exp(log_dens - math.log(t)) * (-1.0 if upper else 1.0)  # d ln(tail) / dx
            x_new = x - (math.log(t) - lt) / slope
        else:
            x_new = 0.5 * (lo + hi)
        if not lo <= x_new <= hi:
            x_new = 0.5 * (lo + hi)
        if abs(x_new - x) <= _STEP * max(abs(x_new), 1e-300):
            return x_new
        x = x_new
    return x
