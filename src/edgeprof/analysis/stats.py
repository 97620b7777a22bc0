"""Descriptive and robust statistics of one latency series (pure numpy; never NaN in results).

Conventions: percentiles use linear interpolation (numpy's default, as the Arm kit does); the trimmed
mean cuts ``int(p * n)`` values from each end (``scipy.stats.trim_mean``); MAD is the raw median absolute
deviation (``mad_ms``) and ``sigma_mad_ms`` = 1.4826 × MAD estimates σ for normal data; the standard
deviation is the sample one (ddof = 1). Values that cannot be computed (std of one value) are ``None``.
"""

from __future__ import annotations

import numpy as np

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


def bootstrap_median_ci(v: np.ndarray, *, level: float = 0.95, resamples: int = 2000, seed: int = 0) -> dict | None:
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


def order_statistic_median_ci(v: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The distribution-free interval of the median: order statistics at n/2 ∓ z·√n/2 (binomial(n, ½))."""
    from scipy.special import ndtri

    s = np.sort(np.asarray(v, dtype=float))
    n = s.size
    half = float(ndtri(1 - (1 - level) / 2)) * np.sqrt(n) / 2
    lo = int(max(0, np.floor(n / 2 - half) - 1))
    hi = int(min(n - 1, np.ceil(n / 2 + half)))
    return float(s[lo]), float(s[hi])


def bootstrap_medians(v: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Medians of ``resamples`` bootstrap resamples of ``v`` (computed in blocks of bounded memory)."""
    out = np.empty(resamples)
    step = max(1, 2_000_000 // max(v.size, 1))
    for a in range(0, resamples, step):
        b = min(resamples, a + step)
        out[a:b] = np.median(v[rng.integers(0, v.size, size=(b - a, v.size))], axis=1)
    return out


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
