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
from .special import ndtr, ndtri, stdtr, stdtrit
from ..conventions import LEVEL

# The single-launch allowance: the launch-to-launch SD (log scale) assumed when nothing measured it (see
# :mod:`.noise` for the evidence that replaces it). The noisiest program of the real-noise corpus
# (tests/data/noise: a shared 2-core machine under bursty and constant background load) measured 0.18 over 12
# launches, 0.23 at its upper 80 % bound; rounded up. Keeps 1-vs-1 A/A false verdicts ≤ 10 % on every program
# of the corpus while a 3× change is still found (README "Statistics").
LAUNCH_SD_DEFAULT = 0.25
MULTI_MIN_LAUNCHES = 4
# with 2 launch-level degrees of freedom (2 vs 2, 1 vs 3) and no measured launch noise, the arms' spread alone has
# no floor: two launches of one arm that agree by chance give an interval far narrower than the machine's launch
# noise. The launch-SD allowance then enters as a measurement worth this many degrees of freedom.
FLOOR_DF = 2
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


def log_quantile_stats(launches: list[np.ndarray], q: float) -> tuple[np.ndarray, np.ndarray]:
    """Per launch: log of the ``q``-quantile and its sampling variance (its order-statistic interval)."""
    from .stats import order_statistic_quantile_ci

    y, v = [], []
    for x in launches:
        x = np.asarray(x, dtype=float)
        m = float(np.quantile(x, q))
        y.append(math.log(m))
        if x.size >= 3:
            lo, hi = order_statistic_quantile_ci(x, q, 0.95)
            se = (math.log(hi) - math.log(lo)) / (2 * 1.959963984540054) if lo > 0 and hi > 0 else 0.0
        else:
            se = float(np.std(np.log(x), ddof=1)) if x.size == 2 else 0.0
        v.append(se * se)
    return np.array(y), np.array(v)


SLOW = 2.0  # a run at least this many times its launch's median is a slow run (the tail check)


def slow_share_stats(launches: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per launch: the share of runs at least :data:`SLOW` × the launch's own median, on the arcsine-square-root
    scale (variance 1/(4n) whatever the share) — scale-free, so a launch that is slow as a whole is not a tail."""
    y, v = [], []
    for x in launches:
        x = np.asarray(x, dtype=float)
        share = float(np.mean(x >= SLOW * np.median(x))) if x.size else 0.0
        y.append(math.asin(math.sqrt(share)))
        v.append(1.0 / (4 * max(x.size, 1)))
    return np.array(y), np.array(v)


def metric_stats(launches: list[np.ndarray], metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Per launch: the log of ``metric`` (median, mean, p90, p99) of its runs and that value's sampling variance
    (``slow_share``: :func:`slow_share_stats`)."""
    if metric == "slow_share":
        return slow_share_stats(launches)
    if metric == "median":
        return log_median_stats(launches)
    if metric == "mean":
        return mean_stats(launches)
    if metric in ("p90", "p99"):
        return log_quantile_stats(launches, 0.90 if metric == "p90" else 0.99)
    raise ValueError(f"unknown metric {metric!r}")


TRIM = 0.10  # each end's share left out of a line's per-launch mean when lines are tested


def trimmed_stats(columns: list[np.ndarray], trim: float = TRIM) -> tuple[np.ndarray, np.ndarray] | None:
    """Per launch: log of the ``trim``-trimmed mean of a per-run time and its sampling variance (the winsorized
    variance over (1 − 2·trim)²·n, by the delta method); None when a launch's trimmed mean is not positive — a
    line absent from most of a launch's runs (a sub-µs op that shows up as rare spikes) cannot be tested."""
    if not 0 <= trim < 0.5:
        raise ValueError(f"trim must be in [0, 0.5), not {trim}")
    y, v = [], []
    for x in columns:
        x = np.sort(np.asarray(x, dtype=float))
        n = x.size
        g = math.floor(trim * n)  # < n/2: the core keeps at least one run
        core = x[g:n - g]
        m = float(core.mean())
        if m <= 0 or np.count_nonzero(x) * 2 < n:
            return None
        w = np.clip(x, core[0], core[-1])
        var = float(w.var(ddof=1)) / ((1 - 2 * g / n) ** 2 * n) if n > 1 else 0.0
        y.append(math.log(m))
        v.append(var / (m * m))
    return np.array(y), np.array(v)


SPIKE_FACTOR = 3.0  # a run more than this multiple of its launch's median is a spike


def spiky(columns: list[np.ndarray], trim: float = TRIM) -> bool:
    """Whether some launch of a line has more spikes (runs > 3× the launch's median) than a ``trim``-trimmed mean
    leaves out: then the trimmed mean follows the spikes and the line is estimated by its median instead."""
    for x in columns:
        x = np.asarray(x, dtype=float)
        med = float(np.median(x)) if x.size else 0.0
        if med > 0 and np.count_nonzero(x > SPIKE_FACTOR * med) > math.floor(trim * x.size):
            return True
    return False


def line_stats(b_cols: list[np.ndarray], c_cols: list[np.ndarray]):
    """The per-launch statistics a line is tested on, one estimator for both arms: the 10 %-trimmed mean, or the
    median when either arm is :func:`spiky`. Returns (estimator name, baseline stats, candidate stats)."""
    if spiky(b_cols) or spiky(c_cols):
        if any(float(np.median(x)) <= 0 for x in b_cols + c_cols):
            return "median", None, None  # absent from most runs of a launch: not testable
        return "median", log_median_stats(b_cols), log_median_stats(c_cols)
    return "10 %-trimmed mean", trimmed_stats(b_cols), trimmed_stats(c_cols)


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

    def nll(grid: np.ndarray) -> np.ndarray:  # the restricted −log-likelihood at every τ² of the grid at once
        vals = np.zeros(grid.size)
        for y, v in groups:
            t = grid[:, None] + v[None, :]
            w = 1.0 / t
            mu = (w * y).sum(axis=1) / w.sum(axis=1)
            vals += np.log(t).sum(axis=1) + np.log(w.sum(axis=1)) + (w * (y[None, :] - mu[:, None]) ** 2).sum(axis=1)
        return 0.5 * vals

    hi = max(10 * spread, 10 * vmax, 1e-12)
    floor = max(vmax * 1e-9, 1e-18)
    grid = np.concatenate([[0.0], np.geomspace(floor, hi, 48)])
    vals = nll(grid)
    i = int(np.argmin(vals))
    best, best_val = float(grid[i]), float(vals[i])
    a, b = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    for _ in range(7):  # refinement: 33 points between the neighbours of the best one, 7 times (16⁻⁷ ≈ 4e-9 of them)
        grid = np.linspace(a, b, 33)
        vals = nll(grid)
        i = int(np.argmin(vals))
        if vals[i] < best_val:
            best, best_val = float(grid[i]), float(vals[i])
        a, b = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    return best


def _weighted(y: np.ndarray, v: np.ndarray, t2: float) -> tuple[float, float, np.ndarray]:
    w = 1.0 / (t2 + v)  # v is floored at V_FLOOR by the caller
    return float((w * y).sum() / w.sum()), float(w.sum()), w


def contrast(yb: np.ndarray, vb: np.ndarray, yc: np.ndarray, vc: np.ndarray, *, level: float = LEVEL,
             launch_cv: float = LAUNCH_SD_DEFAULT, within_draws: np.ndarray | None = None,
             measured: tuple[float, int] | None = None, sampling_floor: bool = False) -> dict:
    """Baseline − candidate on the scale of ``y`` (log: speedup = exp of it), with its interval.

    ``within_draws``: bootstrap draws of the contrast within single launches, used for the 1 vs 1 interval
    when ``launch_cv`` is 0 (a percentile interval, as before the allowance existed). ``measured``: (SD, df) of
    the launch values measured on this machine elsewhere (a noise profile, a history store): with several
    launches per arm it is pooled with the arms' own spread, so three launches that happen to agree do not
    claim less launch noise than the machine shows. ``sampling_floor``: with several launches, the interval is never
    narrower than the launches' within-launch variances give (for values that tie, see below)."""
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
        # never narrower than the textbook t interval on the log launch values: when REML puts the launch
        # variance at zero while launch medians visibly differ, their spread still bounds what is known
        ss = float(((yb - yb.mean()) ** 2).sum() + ((yc - yc.mean()) ** 2).sum())
        var = max(var, ss / df * (1 / kb + 1 / kc))
        if sampling_floor:  # nor narrower than the launches' own sampling variances say: launches of a discrete
            # value (a count of slow runs) tie exactly — the same count in each measures no launch spread, while
            # each launch's runs still only sampled it
            var = max(var, float(1 / (1 / vb).sum() + 1 / (1 / vc).sum()))
        se = math.sqrt(max(var, 0.0))
        est = mb - mc
        crit = float(stdtrit(df, 1 - a))
        method = (f"REML launch-effect model, Knapp–Hartung t interval on {df} launch-level degrees of freedom "
                  "(launches weighted by their precision)")
        tau = math.sqrt(t2)
        floor = (measured is None or measured[1] <= 0) and df <= FLOOR_DF and launch_cv > 0
        if floor:
            measured = (launch_cv, FLOOR_DF)
        if measured is not None and measured[1] > 0:
            # the arms' spread pooled with the machine's measured launch spread: a t interval on both dfs
            m_sd, m_df = measured
            df_m = df + m_df
            se_m = math.sqrt((ss + m_df * m_sd ** 2) / df_m * (1 / kb + 1 / kc))
            crit_m = float(stdtrit(df_m, 1 - a))
            if crit_m * se_m > crit * se:
                se, crit, df = se_m, crit_m, df_m
                tau = max(tau, m_sd)
                method += ((f"; widened to the launch-SD allowance ({100 * m_sd:.3g} %, no measured launch noise: "
                            f"counted as {m_df} df, the arms' {df - m_df} df alone have no floor)") if floor else
                           (f"; widened to the launch spread measured on this machine ({100 * m_sd:.3g} %, "
                            f"{m_df} df), pooled with the arms' ({df} df in all)"))
        p = float(2 * stdtr(df, -abs(est) / se)) if se > 0 else (0.0 if est else 1.0)
        return {"estimate": est, "centres": (mb, mc), "se": se, "low": est - crit * se, "high": est + crit * se,
                "df": float(df), "tau": tau, "regime": "multi-launch", "p_value": p, "critical": crit, "method": method,
                "allowance": None}
    mb, _, _ = _weighted(yb, vb, 0.0)
    mc, _, _ = _weighted(yc, vc, 0.0)
    est = mb - mc
    if launch_cv > 0:
        # an arm of two launches shows some of the launch variation itself: never assume less than it showed
        shown = max((float(np.std(y, ddof=1)) for y in (yb, yc) if y.size >= 2), default=0.0)
        tau = max(launch_cv, shown)
        t2 = tau ** 2
        var = 1 / float((1 / (t2 + vb)).sum()) + 1 / float((1 / (t2 + vc)).sum())
        se = math.sqrt(var)
        crit = float(ndtri(1 - a))
        return {"estimate": est, "centres": (mb, mc), "se": se, "low": est - crit * se, "high": est + crit * se,
                "df": None, "tau": tau, "regime": "single-launch", "p_value": float(2 * ndtr(-abs(est) / se)),
                "critical": crit, "allowance": tau, "allowance_from_arms": tau > launch_cv,
                "method": (f"normal interval: run-to-run noise within the launches plus an allowance of "
                           f"{100 * tau:.3g} % launch-to-launch SD per arm (not measurable with "
                           f"{kb} and {kc} launch(es)"
                           + ("; the two launches of one arm differed by that much" if tau > launch_cv else "")
                           + ")")}
    if within_draws is not None and kb == 1 and kc == 1:
        lo, hi = np.quantile(within_draws, [a, 1 - a])
        se = float(np.std(within_draws, ddof=1))
        method = "percentile bootstrap over runs (within these two launches)"
    else:
        se = math.sqrt(float(vb.mean() / kb + vc.mean() / kc))
        lo, hi = est - float(ndtri(1 - a)) * se, est + float(ndtri(1 - a)) * se
        method = "normal interval from run-to-run noise within the launches"
    return {"estimate": est, "centres": (mb, mc), "se": se, "low": float(lo), "high": float(hi), "df": None,
            "tau": 0.0,
            "regime": "single-launch, no allowance", "p_value": float(2 * ndtr(-abs(est) / se)) if se > 0 else 1.0,
            "critical": float(ndtri(1 - a)), "allowance": 0.0, "method": method}


def bh(p: list[float] | np.ndarray) -> list[float]:
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


def design(within_sd: float, tau: float, effect: float, *, level: float = LEVEL, power: float = 0.80,
           threshold: float = 0.0, launches=(2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50),
           runs=(10, 20, 30, 50, 100, 200, 500, 1000), floor_sd: float = LAUNCH_SD_DEFAULT) -> dict:
    """How many launches per arm and runs per launch resolve ``effect`` (relative, e.g. 0.03) at this noise:
    the t interval (k + k − 2 df) of the log ratio excludes ``threshold`` with probability ``power`` (the power
    of the t test: F_t(target / se − t_crit), which is ≥ ``power`` exactly when (t_crit + t_power)·se ≤ target).
    ``within_sd``: per-run SD of log latency; ``tau``: launch-to-launch SD; ``floor_sd``: the allowance compare
    pools with two launches per arm and nothing measured (0: none, as with ``--launch-cv 0``)."""
    target = math.log1p(effect) - math.log1p(threshold)
    rows = []
    for k in launches:
        df = 2 * k - 2
        for n in runs:
            v = (math.pi / 2) * within_sd ** 2 / n  # variance of a median of n runs (normal noise)
            se, df_used = math.sqrt(2 * (tau ** 2 + v) / k), df
            crit = float(stdtrit(df, 1 - (1 - level) / 2))
            if df <= FLOOR_DF and floor_sd > 0:
                # compare widens an interval on ≤ FLOOR_DF launch-level df to the allowance counted as FLOOR_DF df
                # (see contrast): the design expects that interval when it is the wider one
                se_f = math.sqrt((df * (tau ** 2 + v) + FLOOR_DF * floor_sd ** 2) / (df + FLOOR_DF) * 2 / k)
                crit_f = float(stdtrit(df + FLOOR_DF, 1 - (1 - level) / 2))
                if crit_f * se_f > crit * se:
                    se, crit, df_used = se_f, crit_f, df + FLOOR_DF
            need = (crit + float(stdtrit(df_used, power))) * se
            rows.append({"launches_per_arm": k, "runs_per_launch": n, "half_width_percent": 100 * math.expm1(crit * se),
                         "power": float(stdtr(df_used, target / se - crit)) if target > 0 else 0.0,
                         "resolves": bool(target > 0 and need <= target), "total_runs": 2 * k * n})
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
