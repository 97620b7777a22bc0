"""Simulations of `compare` on real noise (used by the fast tests and by bench/bench_stats.py).

Noise shape: the per-run latencies of a real recorded ETDump (relative to their median), rescaled
to a chosen coefficient of variation and resampled; warm-up, drift and launch-to-launch offsets can
be injected. Everything is driven by one seed.
"""

from __future__ import annotations

import numpy as np

from edgeprof.analysis.compare import Arm, compare_latency


def noise_shape(latencies_ms: np.ndarray) -> np.ndarray:
    """Relative deviations r = x / median(x) of a real series (its shape, scale-free)."""
    x = np.asarray(latencies_ms, dtype=float)
    return x / np.median(x)


def draw(shape: np.ndarray, n: int, cv: float, rng: np.random.Generator) -> np.ndarray:
    """n runs resampled from ``shape`` with deviations rescaled to coefficient of variation ``cv`` (median 1)."""
    r = rng.choice(shape, size=n, replace=True)
    scale = cv / (shape.std(ddof=1) / shape.mean())
    return 1.0 + (r - 1.0) * scale


def launch(shape, n, cv, rng, *, level=1.0, warmup=0, warmup_factor=1.6, drift_pct_per_100=0.0):
    v = draw(shape, n, cv, rng) * level
    if drift_pct_per_100:
        v = v * (1 + drift_pct_per_100 / 100 * np.arange(n) / 100)
    if warmup:
        v[:warmup] *= warmup_factor
    return v


def run(shape, *, sims, n=100, cv=0.05, true_speedup=1.0, launches=1, launch_sigma=0.0, threshold=0.02,
        warmup=0, drift=0.0, seed=0, resamples=1000, launch_cv=None, launches_c=None):
    """Simulate ``sims`` comparisons; returns rates of verdicts and interval coverage of ``true_speedup``."""
    rng = np.random.default_rng(seed)
    verdicts, covered, widths = [], [], []
    for i in range(sims):
        def arm(name, factor, k):
            ls = [launch(shape, n, cv, rng, level=factor * np.exp(rng.normal(0, launch_sigma)) if launch_sigma else factor,
                         warmup=warmup, drift_pct_per_100=drift) for _ in range(k)]
            return Arm(name, ls)
        kw = {} if launch_cv is None else {"launch_cv": launch_cv}
        r = compare_latency(arm("b", 1.0, launches), arm("c", 1.0 / true_speedup, launches_c or launches),
                            threshold=threshold, seed=i, resamples=resamples, **kw)
        verdicts.append(r["verdict"])
        covered.append(r["ci"]["low"] <= true_speedup <= r["ci"]["high"])
        widths.append(float(np.log(r["ci"]["high"]) - np.log(r["ci"]["low"])))
    v = np.array(verdicts)
    return {"sims": sims, "faster": float((v == "faster").mean()), "slower": float((v == "slower").mean()),
            "equivalent": float((v == "equivalent").mean()), "inconclusive": float((v == "inconclusive").mean()),
            "coverage": float(np.mean(covered)), "width": float(np.mean(widths))}


def lognormal_runs(median: float, n: int = 60, cv: float = 0.02, seed: int = 0) -> np.ndarray:
    """``n`` runs around ``median`` with log-normal noise of about ``cv``, from a fixed seed."""
    return median * np.exp(np.random.default_rng(seed).normal(0, cv, n))


def compare_arms(b, c, **kw):
    """``compare_latency`` of two lists of launches named base and cand (300 bootstrap resamples unless given)."""
    from edgeprof.analysis.compare import Arm, compare_latency

    kw.setdefault("resamples", 300)
    return compare_latency(Arm("base", b), Arm("cand", c), **kw)
