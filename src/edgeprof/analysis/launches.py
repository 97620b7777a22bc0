"""Launch-level inference for a baseline/candidate contrast (pure).

Runs of one process share that process's luck — its memory layout, core placement, clock and thermal state
— so the unit of replication is the launch, not the run. Each launch gives one value ``y`` (the log of its
median latency, or of a category's mean time per run) and the sampling variance ``v`` of that value within
the launch. The model: ``y = μ_arm + u + e`` with launch effects ``u ~ N(0, τ²)`` shared by both arms (the
same machine, the same noise process) and ``e ~ N(0, v)``.

Regimes (the output names the one used):

* **multi-launch** (at least 4 launches in all, so ≥ 2 degrees of freedom): τ² by restricted maximum
  likelihood; each arm's mean weighted by ``1/(τ² + v)`` (launches with fewer runs count less); the variance
  of the contrast by Knapp–Hartung (the weighted residual spread, so it reduces to the textbook pooled t test
  on log launch medians when launches are alike); a t interval on ``k_b + k_c − 2`` degrees of freedom.
  Chosen by simulation (``bench/bench_launches.py``): coverage 0.91–0.99 from 2 to 10 launches per arm,
  launch SD 0 to 0.2, lognormal and bimodal run noise, unequal launch and run counts; width within 2 % of
  the pooled t interval once launches differ at all, and robust where the pooled t is not (3 vs 5 launches
  of 20 vs 200 runs: 0.96 vs 0.85 coverage). The bootstrap-based interval it replaces was 30–45 % wider.
* **single-launch** (1 vs 1, 1 vs 2): one launch cannot show launch-to-launch variation, so an allowance
  stands in for it: each arm's launch effect is taken to have SD ``launch_cv`` (log scale ≈ relative) and the
  interval is normal with variance ``v_b + v_c + τ²_b + τ²_c``. ``launch_cv = 0`` keeps only the run-to-run
  noise within the two launches (the interval is then about these two launches, not the configurations).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr, ndtri, stdtr, stdtrit

# The single-launch allowance: launch-to-launch SD (log scale) assumed when it cannot be measured. Calibrated on
# real multi-launch recordings of the fixture programs (12 launches × 60 runs each, README "Statistics"): their
# launch SDs were 0.016–0.057; 0.10 keeps false faster/slower verdicts of same-model single-launch pairs at
# ≤ 10 % up to a launch SD of 0.13 (phones throttle more than this machine) while a true 1.5× is still found.
LAUNCH_CV_DEFAULT = 0.10
MULTI_MIN_LAUNCHES = 4
V_FLOOR = 1e-12
REGIMES = ("multi-launch", "single-launch", "single-launch, no allowance")


def log_median_stats(launches: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per launch: log median and its sampling variance (from the distribution-free order-statistic interval
    of the median, which stays honest for skewed and bimodal run noise)."""
    from .stats import order_statistic_median_ci

    y, v = [], []
    for x in launches:
        x = np.asarray(x, dtype=float)
        m = float(np.median(x))
        y.append(math.log(m))
        if x.size >= 3:
            lo, hi = order_statistic_median_ci(x, 0.95)
            se = (math.log(hi) - math.log(lo)) / (2 * 1.959963984540054) if lo > 0 and hi > 0 else 0.0
        else:
            se = float(np.std(np.log(x), ddof=1)) if x.size == 2 else 0.0
        v.append(se * se)
    return np.array(y), np.array(v)


def mean_stats(columns: list[np.ndarray], log: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Per launch: (log) mean of a per-run quantity and its sampling variance (delta method)."""
    y, v = [], []
    for x in columns:
        x = np.asarray(x, dtype=float)
        n, m = x.size, float(x.mean())
        var = float(x.var(ddof=1)) / n if n > 1 else 0.0
        if log:
            y.append(math.log(m))
            v.append(var / (m * m))
        else:
            y.append(m)
            v.append(var)
    return np.array(y), np.array(v)


def reml_tau2(groups: list[tuple[np.ndarray, np.ndarray]]) -> float:
    """Between-launch variance τ² shared by the groups, by restricted maximum likelihood (τ² ≥ 0)."""
    groups = [(y, np.maximum(v, V_FLOOR)) for y, v in groups]
    ys = [y - y.mean() for y, _ in groups if y.size > 1]
    if not ys:
        return 0.0
    spread = float(np.var(np.concatenate(ys))) if sum(y.size for y in ys) > 1 else 0.0
    vmax = max(float(v.max()) for _, v in groups)

    def nll(t2: float) -> float:
        tot = 0.0
        for y, v in groups:
            w = 1.0 / (t2 + v)
            mu = float((w * y).sum() / w.sum())
            tot += float(np.log(t2 + v).sum()) + math.log(float(w.sum())) + float((w * (y - mu) ** 2).sum())
        return 0.5 * tot

    hi = max(10 * spread, 10 * vmax, 1e-12)
    floor = max(vmax * 1e-9, 1e-18)
    grid = np.concatenate([[0.0], np.geomspace(floor, hi, 48)])
    vals = np.zeros(grid.size)
    for y, v in groups:  # the whole grid at once
        t = grid[:, None] + v[None, :]
        w = 1.0 / t
        mu = (w * y).sum(axis=1) / w.sum(axis=1)
        vals += np.log(t).sum(axis=1) + np.log(w.sum(axis=1)) + (w * (y[None, :] - mu[:, None]) ** 2).sum(axis=1)
    vals *= 0.5
    i = int(np.argmin(vals))
    a, b = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    for _ in range(40):  # golden-section refinement between the neighbours of the best grid point
        c1, c2 = a + 0.382 * (b - a), a + 0.618 * (b - a)
        if nll(c1) <= nll(c2):
            b = c2
        else:
            a = c1
    t2 = 0.5 * (a + b)
    return float(t2 if nll(t2) <= vals[i] else grid[i])


def _weighted(y: np.ndarray, v: np.ndarray, t2: float) -> tuple[float, float, np.ndarray]:
    w = 1.0 / (t2 + v)  # v is floored at V_FLOOR by the caller
    return float((w * y).sum() / w.sum()), float(w.sum()), w


def contrast(yb: np.ndarray, vb: np.ndarray, yc: np.ndarray, vc: np.ndarray, *, level: float = 0.95,
             launch_cv: float = LAUNCH_CV_DEFAULT, within_draws: np.ndarray | None = None) -> dict:
    """Baseline − candidate on the scale of ``y`` (log: speedup = exp of it), with its interval.

    ``within_draws``: bootstrap draws of the contrast within single launches, used for the 1 vs 1 interval
    when ``launch_cv`` is 0 (a percentile interval, as before the allowance existed)."""
    kb, kc = yb.size, yc.size
    a = (1 - level) / 2
    vb, vc = np.maximum(vb, V_FLOOR), np.maximum(vc, V_FLOOR)  # a launch of identical runs still has a resolution
    if kb + kc >= MULTI_MIN_LAUNCHES:
        t2 = reml_tau2([(yb, vb), (yc, vc)])
        mb, wb, w_b = _weighted(yb, vb, t2)
        mc, wc, w_c = _weighted(yc, vc, t2)
        df = kb + kc - 2
        q = float(((w_b * (yb - mb) ** 2).sum() + (w_c * (yc - mc) ** 2).sum()) / df)
        var = (1 / wb + 1 / wc) * q
        se = math.sqrt(max(var, 0.0))
        est = mb - mc
        crit = float(stdtrit(df, 1 - a))
        p = float(2 * stdtr(df, -abs(est) / se)) if se > 0 else (0.0 if est else 1.0)
        return {"estimate": est, "se": se, "low": est - crit * se, "high": est + crit * se, "df": float(df),
                "tau": math.sqrt(t2), "regime": "multi-launch", "p_value": p, "critical": crit,
                "method": (f"REML launch-effect model, Knapp–Hartung t interval on {df} launch-level degrees of "
                           "freedom (launches weighted by their precision)"),
                "allowance": None}
    mb, _, _ = _weighted(yb, vb, 0.0)
    mc, _, _ = _weighted(yc, vc, 0.0)
    est = mb - mc
    if launch_cv > 0:
        t2 = launch_cv ** 2
        var = 1 / float((1 / (t2 + vb)).sum()) + 1 / float((1 / (t2 + vc)).sum())
        se = math.sqrt(var)
        crit = float(ndtri(1 - a))
        return {"estimate": est, "se": se, "low": est - crit * se, "high": est + crit * se, "df": None,
                "tau": launch_cv, "regime": "single-launch", "p_value": float(2 * ndtr(-abs(est) / se)),
                "critical": crit, "allowance": launch_cv,
                "method": (f"normal interval: run-to-run noise within the launches plus an allowance of "
                           f"{100 * launch_cv:g} % launch-to-launch SD per arm (not measurable with "
                           f"{kb} and {kc} launch(es))")}
    if within_draws is not None and kb == 1 and kc == 1:
        lo, hi = np.quantile(within_draws, [a, 1 - a])
        se = float(np.std(within_draws, ddof=1))
        method = "percentile bootstrap over runs (within these two launches)"
    else:
        se = math.sqrt(float(vb.mean() / kb + vc.mean() / kc))
        lo, hi = est - float(ndtri(1 - a)) * se, est + float(ndtri(1 - a)) * se
        method = "normal interval from run-to-run noise within the launches"
    return {"estimate": est, "se": se, "low": float(lo), "high": float(hi), "df": None, "tau": 0.0,
            "regime": "single-launch, no allowance", "p_value": float(2 * ndtr(-abs(est) / se)) if se > 0 else 1.0,
            "critical": float(ndtri(1 - a)), "allowance": 0.0, "method": method}


def bh(p: list[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values (q-values)."""
    p = np.asarray(p, dtype=float)
    n = p.size
    if n == 0:
        return []
    order = np.argsort(p)
    q = p[order] * n / np.arange(1, n + 1)
    q = np.minimum.accumulate(q[::-1])[::-1]
    out = np.empty(n)
    out[order] = np.minimum(q, 1.0)
    return out.tolist()


def design(within_sd: float, tau: float, effect: float, *, level: float = 0.95, power: float = 0.80,
           threshold: float = 0.0, launches=(2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50),
           runs=(10, 20, 30, 50, 100, 200, 500, 1000)) -> dict:
    """How many launches per arm and runs per launch resolve ``effect`` (relative, e.g. 0.03) at this noise:
    the expected t interval (k + k − 2 df) of the log ratio excludes ``threshold`` with probability ``power``.
    ``within_sd``: per-run SD of log latency; ``tau``: launch-to-launch SD."""
    target = math.log1p(effect) - math.log1p(threshold)
    rows = []
    for k in launches:
        df = 2 * k - 2
        for n in runs:
            v = (math.pi / 2) * within_sd ** 2 / n  # variance of a median of n runs (normal noise)
            se = math.sqrt(2 * (tau ** 2 + v) / k)
            need = (float(stdtrit(df, 1 - (1 - level) / 2)) + float(stdtrit(df, power))) * se
            rows.append({"launches_per_arm": k, "runs_per_launch": n, "half_width_percent": 100 * math.expm1(
                float(stdtrit(df, 1 - (1 - level) / 2)) * se), "resolves": bool(target > 0 and need <= target),
                "total_runs": 2 * k * n})
    ok = [r for r in rows if r["resolves"]]
    best = min(ok, key=lambda r: (r["total_runs"] + 200 * r["launches_per_arm"], r["launches_per_arm"])) if ok else None
    floor = 100 * math.expm1(float(stdtrit(2 * launches[-1] - 2, 1 - (1 - level) / 2)) * math.sqrt(
        2 * tau ** 2 / launches[-1])) if tau > 0 else 0.0
    return {"effect": effect, "threshold": threshold, "level": level, "power": power, "within_sd": within_sd,
            "launch_sd": tau, "recommended": best, "options": rows,
            "launch_floor_half_width_percent": floor,
            "note": ("launch-to-launch variation dominates: more runs per launch barely help, more launches do"
                     if tau ** 2 > (math.pi / 2) * within_sd ** 2 / 100 else
                     "run-to-run noise dominates: more runs per launch help as much as more launches")}
