"""Descriptive and robust statistics of one latency series (pure numpy; never NaN in results).

Conventions: percentiles use linear interpolation (numpy's default, as the Arm kit does); the trimmed
mean cuts ``int(p * n)`` values from each end (``scipy.stats.trim_mean``); MAD is the raw median absolute
deviation (``mad_ms``) and ``sigma_mad_ms`` = 1.4826 × MAD estimates σ for normal data; the standard
deviation is the sample one (ddof = 1). Values that cannot be computed (std of one value) are ``None``.
"""

from __future__ import annotations

import copy
import functools

import numpy as np
from ..conventions import LEVEL


def by_values(fn):
    """Memoize ``fn(v, **options)`` — a pure function of one launch's run values — on those values: a launch met
    again (in several comparisons of one command, in resamplings) is answered from a small cache. Callers get
    their own copy of the result."""
    @functools.lru_cache(maxsize=1024)
    def cached(raw: bytes, options: tuple):
        return fn(np.frombuffer(raw, dtype=float), **dict(options))

    @functools.wraps(fn)
    def wrapper(v, **options):
        return copy.deepcopy(cached(np.ascontiguousarray(v, dtype=float).tobytes(), tuple(sorted(options.items()))))
    wrapper.cache_clear = cached.cache_clear  # type: ignore[attr-defined]  # for tests that must compute afresh
    return wrapper

PERCENTILES = (50, 75, 90, 95, 99)
MIN_RUNS_SHAPE = 30  # fewer runs make spurious density modes: the shape hint says "too few runs to tell"
MAD_TO_SIGMA = 1.4826


def _f(x) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


def trimmed_mean(v: np.ndarray, proportion: float) -> float | None:
    """Mean after cutting ``int(proportion * n)`` values from each end (as ``scipy.stats.trim_mean``)."""
    v = np.sort(np.asarray(v, dtype=float))
    n = v.size
    if n == 0:
        return None
    k = int(proportion * n)
    return _f(v[k: n - k].mean()) if n - 2 * k > 0 else _f(np.median(v))


def mad(v: np.ndarray) -> float | None:
    v = np.asarray(v, dtype=float)
    return _f(np.median(np.abs(v - np.median(v)))) if v.size else None


def tukey_fences(v: np.ndarray, k: float = 1.5) -> tuple[float, float]:
    q1, q3 = np.percentile(v, [25, 75])
    iqr = q3 - q1
    return float(q1 - k * iqr), float(q3 + k * iqr)


def summarize(v: np.ndarray) -> dict:
    """n, mean, median, std, MAD, CV, min/max, percentiles, IQR and trimmed means of ``v`` (ms)."""
    v = np.asarray(v, dtype=float)
    n = int(v.size)
    if n == 0:
        return {"count": 0}
    mean = float(v.mean())
    std = float(v.std(ddof=1)) if n > 1 else None
    q1, q3 = np.percentile(v, [25, 75])
    m = mad(v)
    return {
        "count": n,
        "mean_ms": mean,
        "median_ms": float(np.median(v)),
        "std_dev_ms": std,
        "cv_percent": (std / mean * 100) if std is not None and mean > 0 else (0.0 if n == 1 else None),
        "mad_ms": m,
        "sigma_mad_ms": m * MAD_TO_SIGMA if m is not None else None,
        "min_ms": float(v.min()),
        "max_ms": float(v.max()),
        "iqr_ms": float(q3 - q1),
        "percentiles": {f"p{p}": float(x) for p, x in zip(PERCENTILES, np.percentile(v, PERCENTILES))},
        "trimmed_mean_5_ms": trimmed_mean(v, 0.05),
        "trimmed_mean_10_ms": trimmed_mean(v, 0.10),
    }


def outliers(v: np.ndarray, k: float = 1.5) -> dict:
    """Tukey-fence outliers: flagged and counted (indices into ``v``), never removed by this function."""
    v = np.asarray(v, dtype=float)
    if v.size < 4:
        return {"count": 0, "percentage": 0.0, "values": [], "indices": [], "bounds": None,
                "method": f"Tukey fences {k}×IQR (needs ≥ 4 runs)"}
    lo, hi = tukey_fences(v, k)
    idx = np.flatnonzero((v < lo) | (v > hi))
    return {"count": int(idx.size), "percentage": float(idx.size / v.size * 100), "values": v[idx].tolist(),
            "indices": idx.tolist(), "bounds": {"lower": lo, "upper": hi}, "method": f"Tukey fences {k}×IQR"}


BOOTSTRAP_MAX_N = 5000  # beyond this many values the median's interval comes from order statistics (O(n log n))


def bootstrap_median_ci(v: np.ndarray, *, level: float = LEVEL, resamples: int = 2000, seed: int = 0) -> dict | None:
    """Confidence interval of the median: percentile bootstrap (deterministic for a given seed); for more than
    5,000 values the distribution-free order-statistic interval (binomial, normal approximation), which the
    bootstrap converges to and which costs one sort."""
    v = np.asarray(v, dtype=float)
    if v.size < 2:
        return None
    if v.size > BOOTSTRAP_MAX_N:
        lo, hi = order_statistic_median_ci(v, level)
        return {"low_ms": lo, "high_ms": hi, "level": level, "method": "order statistics (binomial)",
                "resamples": 0, "seed": seed}
    med = bootstrap_medians(v, resamples, np.random.default_rng(seed))
    a = (1 - level) / 2
    lo, hi = np.quantile(med, [a, 1 - a])
    return {"low_ms": float(lo), "high_ms": float(hi), "level": level, "method": "percentile bootstrap",
            "resamples": resamples, "seed": seed}


def order_statistic_median_ci(v: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The distribution-free interval of the median: order statistics at n/2 ∓ z·√n/2 (binomial(n, ½))."""
    return order_statistic_quantile_ci(v, 0.5, level)


def order_statistic_quantile_ci(v: np.ndarray, q: float, level: float = LEVEL) -> tuple[float, float]:
    """The distribution-free interval of the ``q``-quantile: order statistics at n·q ∓ z·√(n·q·(1 − q))
    (binomial(n, q)); the median's for q = ½."""
    from .special import ndtri

    s = np.sort(np.asarray(v, dtype=float))
    n = s.size
    half = float(ndtri(1 - (1 - level) / 2)) * np.sqrt(n * q * (1 - q))
    lo = int(max(0, np.floor(n * q - half) - 1))
    hi = int(min(n - 1, np.ceil(n * q + half)))
    return float(s[lo]), float(s[hi])


def bootstrap_medians(v: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Medians of ``resamples`` bootstrap resamples of ``v`` (computed in blocks of bounded memory)."""
    out = np.empty(resamples)
    step = max(1, 2_000_000 // max(v.size, 1))
    for a in range(0, resamples, step):
        b = min(resamples, a + step)
        out[a:b] = np.median(v[rng.integers(0, v.size, size=(b - a, v.size))], axis=1)
    return out


# A second mode counts when it holds at least MODE_MASS of the runs and the density between it and its
# neighbour falls to MODE_DIP of the smaller peak or below (calibrated on the real-noise corpus: heavy tails and
# load spikes are not modes; README "Statistics").
MODE_MASS = 0.20
MODE_DIP = 0.35


@by_values
def modes(v: np.ndarray, *, mass: float = MODE_MASS, dip: float = MODE_DIP) -> dict:
    """Modes of one launch's runs that a median can jump between: a Gaussian kernel density of log latency
    (Silverman bandwidth) cut at valleys that fall to ``dip`` × the smaller neighbouring peak; the pieces holding
    ≥ ``mass`` of the runs are modes. A long tail or rare spikes are one mode."""
    x = np.log(np.asarray(v, dtype=float))
    x = x[np.isfinite(x)]
    n = x.size
    if n < MIN_RUNS_SHAPE or np.ptp(x) == 0:
        return {"multimodal": False, "masses": [1.0] if n else [], "centres_ms": [float(np.exp(np.median(x)))] if n else []}
    sd = x.std(ddof=1)
    iqr = np.subtract(*np.percentile(x, [75, 25]))
    bw = 0.9 * min(sd, iqr / 1.34 if iqr > 0 else sd) * n ** -0.2
    grid = np.linspace(x.min() - 3 * bw, x.max() + 3 * bw, 512)
    dens = np.zeros(grid.size)
    for a in range(0, n, 4096):  # bounded memory: 512 × 4,096 at a time
        dens += np.exp(-0.5 * ((grid[:, None] - x[None, a:a + 4096]) / bw) ** 2).sum(axis=1)
    peaks = np.flatnonzero((dens[1:-1] > dens[:-2]) & (dens[1:-1] >= dens[2:])) + 1
    kept, cuts = [int(peaks[0])] if peaks.size else [int(np.argmax(dens))], []
    for pk in peaks[1:]:
        q = kept[-1]
        low = q + int(np.argmin(dens[q:pk + 1]))
        if dens[low] <= dip * min(dens[q], dens[pk]):
            kept.append(int(pk))
            cuts.append(low)
        elif dens[pk] > dens[q]:
            kept[-1] = int(pk)
    edges = [0, *cuts, grid.size]
    total = dens.sum()
    pieces = [(float(dens[a:b].sum() / total), float(np.exp(grid[k]))) for a, b, k in zip(edges, edges[1:], kept)]
    real = [(w, c) for w, c in pieces if w >= mass]
    return {"multimodal": len(real) > 1, "masses": [w for w, _ in real] or [1.0],
            "centres_ms": [c for _, c in real] or [float(np.exp(np.median(x)))]}


def bimodality(v: np.ndarray) -> dict:
    """A multimodality hint: Sarle's bimodality coefficient and the number of density modes.

    BC = (g² + 1) / (k + 3(n−1)²/((n−2)(n−3))) with sample skewness g and excess kurtosis k; BC > 5/9
    (the value of a uniform distribution) suggests more than one mode. Modes are counted on a Gaussian
    kernel density (Silverman bandwidth) as local maxima above 10 % of the highest.
    """
    v = np.asarray(v, dtype=float)
    n = v.size
    if n < MIN_RUNS_SHAPE or np.ptp(v) == 0:
        return {"hint": False, "bimodality_coefficient": None, "modes": 1 if n else 0, "testable": n >= MIN_RUNS_SHAPE,
                "note": (f"too few runs to tell (needs ≥ {MIN_RUNS_SHAPE} runs, has {n})" if n < MIN_RUNS_SHAPE
                         else "all runs equal")}
    d = v - v.mean()
    m2, m3, m4 = (d ** 2).mean(), (d ** 3).mean(), (d ** 4).mean()
    g = m3 / m2 ** 1.5 * np.sqrt(n * (n - 1)) / (n - 2)
    k = (n - 1) / ((n - 2) * (n - 3)) * ((n + 1) * (m4 / m2 ** 2 - 3) + 6)
    bc = (g * g + 1) / (k + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
    sd = v.std(ddof=1)
    iqr = np.subtract(*np.percentile(v, [75, 25]))
    bw = 0.9 * min(sd, iqr / 1.34 if iqr > 0 else sd) * n ** -0.2
    grid = np.linspace(v.min() - 3 * bw, v.max() + 3 * bw, 512)
    if n <= 5000:
        dens = np.exp(-0.5 * ((grid[:, None] - v[None, :]) / bw) ** 2).sum(axis=1)
    else:  # binned kernel density: the counts on the grid smoothed by the same Gaussian kernel
        step = grid[1] - grid[0]
        counts = np.histogram(v, bins=grid.size, range=(grid[0] - step / 2, grid[-1] + step / 2))[0].astype(float)
        half = int(np.ceil(4 * bw / step))
        kernel = np.exp(-0.5 * (np.arange(-half, half + 1) * step / bw) ** 2)
        dens = np.convolve(counts, kernel)[half: half + counts.size]
    peaks = np.flatnonzero((dens[1:-1] > dens[:-2]) & (dens[1:-1] >= dens[2:])) + 1
    modes = int((dens[peaks] >= 0.1 * dens.max()).sum())
    return {"hint": bool(bc > 5 / 9 or modes > 1), "bimodality_coefficient": float(bc), "modes": max(modes, 1),
            "bandwidth": float(bw), "testable": True,
            "note": "possibly multimodal: compare distributions, not only medians" if (bc > 5 / 9 or modes > 1) else ""}
