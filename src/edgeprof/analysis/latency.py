"""End-to-end latency per run: robust statistics, warm-up and drift (pure; numpy and :mod:`edgeprof.analysis.special`).

The headline statistics use every run; outliers are flagged and counted, never removed from them.
Warm-up runs (leading runs significantly slower than the rest) are detected and reported with the
statistics recomputed without them; drift is a Mann–Kendall trend with a Theil–Sen slope.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from ..conventions import LOAD_METHOD, METHOD_INIT, ms
from ..model import Profile
from .stats import by_values


def framework_times_ms(profile: Profile) -> dict:
    """Load/init times (``Program::load_method``, ``Method::init``) in ms: from the load/init block, or from the
    first run when the runtime wrote them in the same block as the first execute (a ``Default`` block holding
    load, init and execute is that run); None when there is no such event or none with a valid time."""
    ev = profile.events.filter(pl.col("kind") == "framework")
    out = {}
    for name, key in ((LOAD_METHOD, "load_method_ms"), (METHOD_INIT, "method_init_ms")):
        d = ev.filter(pl.col("name") == name)["duration_ns"]
        out[key] = ms(float(d.sum())) if d.len() and d.null_count() < d.len() else None
    return out


# ---------------------------------------------------------------------------------------------------
# warm-up and drift
# ---------------------------------------------------------------------------------------------------

WARMUP_MAX_FRACTION = 0.25   # at most this share of the runs can be warm-up
WARMUP_MAX_RUNS = 50
WARMUP_ALPHA = 0.05          # one-sided Mann–Whitney level for a warm-up of ≥ 3 runs
WARMUP_Z = 3.5               # modified z-score for a warm-up of 1–2 runs (Iglewicz & Hoaglin)
WARMUP_MIN_GAIN = 0.02       # warm-up runs must be ≥ 2 % slower (median) than the rest
DRIFT_ALPHA = 0.05
# Claims need enough runs. Below these counts the reports say "too few runs to tell" instead of a number:
# a warm-up split needs a few steady runs to compare with; a trend of "+x % per 100 runs" extrapolated from a
# couple of dozen runs is mostly noise (and one launch's slow phase); a density of fewer than 30 points has
# spurious modes.
MIN_RUNS_WARMUP = 10
MIN_RUNS_DRIFT = 30
TOO_FEW = "too few runs to tell (needs ≥ {} runs, has {})"


def _modified_z(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    med = np.median(ref)
    m = np.median(np.abs(ref - med))
    if m == 0:
        m = max(abs(med) * 0.01, 1e-12)  # identical runs: 1 % of the median as the scale
    return 0.6745 * (x - med) / m


def _warmup_significant(v: np.ndarray, k: int, candidates: int) -> tuple[bool, str]:
    lead, rest = v[:k], v[k:]
    if np.median(lead) <= np.median(rest) * (1 + WARMUP_MIN_GAIN):
        return False, ""
    if k >= 3:
        from .rank_tests import mann_whitney

        p = mann_whitney(lead, rest, alternative="greater")["p_value"]
        alpha = WARMUP_ALPHA / candidates  # the split was chosen among `candidates` lengths: Bonferroni
        return p < alpha, f"one-sided Mann–Whitney p = {p:.3g} < {alpha:.3g}"
    z = _modified_z(lead, rest)
    return bool((z > WARMUP_Z).all()), f"modified z-score vs the rest {', '.join(f'{x:.1f}' for x in z)}"


@by_values
def detect_warmup(v: np.ndarray) -> dict:
    """How many leading runs are warm-up: significantly slower than the runs after them.

    The split point minimizes the total absolute deviation from the medians of the two segments
    (a one-change-point L1 fit over the first quarter of the runs, at most 50); it is then kept only
    if the leading segment is at least 2 % slower in median and significantly slower (≥ 3 runs:
    one-sided Mann–Whitney p < 0.05 divided by the number of split lengths considered; 1–2 runs: every
    run's modified z-score against the rest > 3.5), and shrunk until it is.
    """
    v = np.asarray(v, dtype=float)
    n = v.size
    if n < MIN_RUNS_WARMUP:
        return {"count": 0, "testable": False, "note": TOO_FEW.format(MIN_RUNS_WARMUP, n),
                "method": "L1 change point + significance"}
    kmax = max(1, min(WARMUP_MAX_RUNS, int(n * WARMUP_MAX_FRACTION)))
    costs = [np.abs(v - np.median(v)).sum()]
    for k in range(1, kmax + 1):
        lead, rest = v[:k], v[k:]
        costs.append(np.abs(lead - np.median(lead)).sum() + np.abs(rest - np.median(rest)).sum())
    k = int(np.argmin(costs))
    evidence = ""
    while k > 0:
        ok, evidence = _warmup_significant(v, k, kmax)
        if ok:
            break
        k -= 1
    out = {"count": k, "testable": True, "method": "L1 change point + significance", "evidence": evidence if k else ""}
    if k:
        out["warmup_median_ms"] = float(np.median(v[:k]))
        out["steady_median_ms"] = float(np.median(v[k:]))
    return out


@by_values
def detect_drift(v: np.ndarray) -> dict:
    """Monotonic trend over the runs: Mann–Kendall test and Theil–Sen slope (% of the median per 100 runs)."""
    from .rank_tests import mann_kendall, theil_sen

    v = np.asarray(v, dtype=float)
    if v.size < MIN_RUNS_DRIFT:
        note = TOO_FEW.format(MIN_RUNS_DRIFT, v.size)
        return {"mann_kendall": {"s": None, "z": None, "p_value": None, "note": note},
                "theil_sen_slope_ms_per_run": None, "slope_percent_per_100_runs": None, "significant": False,
                "testable": False, "direction": "none", "alpha": DRIFT_ALPHA, "note": note}
    mk = mann_kendall(v)
    slope = theil_sen(v)
    med = float(np.median(v)) if v.size else 0.0
    pct = slope / med * 100 * 100 if slope is not None and med > 0 else None
    significant = mk["p_value"] is not None and mk["p_value"] < DRIFT_ALPHA
    return {
        "mann_kendall": mk,
        "theil_sen_slope_ms_per_run": slope,
        "slope_percent_per_100_runs": pct,
        "significant": bool(significant),
        "testable": True,
        "direction": _direction(mk["s"]) if significant else "none",
        "alpha": DRIFT_ALPHA,
    }


def _direction(s: float | None) -> str:
    """A significant trend's direction: the sign of the Mann–Kendall S that made it significant (the Theil–Sen
    slope, a median of pairwise slopes, can be exactly 0 under a rising trend with many ties)."""
    if s is None or s == 0:
        return "none"
    return "slower over time" if s > 0 else "faster over time"


def drift_per_launch(segments: list[np.ndarray]) -> dict:
    """Drift of runs that come from several launches: tested within each launch, never across a boundary (three
    20-run launches strung together are no 60-run trend). Each launch at α/k (Bonferroni: k launches, one
    family-wise α); the slope is the median of the testable launches'; ``per_launch`` holds each launch's test."""
    if len(segments) == 1:
        return detect_drift(segments[0])
    per = [detect_drift(np.asarray(x, dtype=float)) for x in segments]
    k = len(per)
    testable = [d for d in per if d["testable"]]
    if not testable:
        note = f"too few runs in each launch to tell ({', '.join(str(len(x)) for x in segments)} runs; a trend is " \
               f"tested within a launch, never across launches)"
        return {"mann_kendall": {"s": None, "z": None, "p_value": None, "note": note},
                "theil_sen_slope_ms_per_run": None, "slope_percent_per_100_runs": None, "significant": False,
                "testable": False, "direction": "none", "alpha": DRIFT_ALPHA, "note": note, "per_launch": per}
    best = min(testable, key=lambda d: d["mann_kendall"]["p_value"])
    p_adj = min(1.0, best["mann_kendall"]["p_value"] * k)
    significant = p_adj < DRIFT_ALPHA
    slopes = [d["slope_percent_per_100_runs"] for d in testable if d["slope_percent_per_100_runs"] is not None]
    pct = float(np.median(slopes)) if slopes else None
    ms_slopes = [d["theil_sen_slope_ms_per_run"] for d in testable if d["theil_sen_slope_ms_per_run"] is not None]
    return {
        "mann_kendall": {**best["mann_kendall"], "p_value": p_adj,
                         "note": f"the launch with the strongest trend, its p-value × {k} launches (Bonferroni)"},
        "theil_sen_slope_ms_per_run": float(np.median(ms_slopes)) if ms_slopes else None,
        "slope_percent_per_100_runs": pct,
        "significant": bool(significant),
        "testable": True,
        "direction": _direction(best["mann_kendall"]["s"]) if significant else "none",
        "alpha": DRIFT_ALPHA,
        "note": f"tested within each of {k} launches ({len(testable)} with enough runs), never across launches",
        "per_launch": per,
    }


def robust_latency(values_ms: np.ndarray, *, name: str = "", run_indices=None, seed: int = 0,
                   resamples: int = 2000, source: str = "method_execute", warmup_known: int | None = None,
                   launch_sizes: list[int] | None = None) -> dict:
    """The full latency report of one series: the Arm kit's ``*_robust_stats.json`` keys plus ours.
    ``warmup_known``: the warm-up was already left out (several launches, each without its own): none is
    looked for in the series. ``launch_sizes``: the runs of each launch, in order, when the series is several
    launches put together — drift is then tested per launch (:func:`drift_per_launch`)."""
    from .stats import bimodality, bootstrap_median_ci, outliers, summarize

    v = np.asarray(values_ms, dtype=float)
    v = v[np.isfinite(v)]
    d = summarize(v)
    out_l = outliers(v)
    keep = np.ones(v.size, dtype=bool)
    keep[out_l["indices"]] = False
    inb = summarize(v[keep]) if keep.any() else summarize(v)
    warm = detect_warmup(v) if warmup_known is None else {
        "count": 0, "testable": False, "method": "left out per launch before", "evidence": "",
        "note": f"{warmup_known} warm-up run(s) left out per launch before these runs were put together"}
    steady = v[warm["count"]:]
    st_out = outliers(steady)
    report = {
        **{k: d.get(k) for k in ("count", "mean_ms", "median_ms", "std_dev_ms", "cv_percent", "min_ms", "max_ms",
                                 "percentiles", "trimmed_mean_5_ms", "trimmed_mean_10_ms", "mad_ms", "sigma_mad_ms",
                                 "iqr_ms")},
        "outliers": {k: out_l[k] for k in ("count", "percentage", "values", "bounds", "indices", "method")},
        "robust_stats": {k: inb.get(k) for k in ("count", "mean_ms", "median_ms", "std_dev_ms", "cv_percent")},
        "latencies_ms": v.tolist(),
        "run_indices": list(run_indices) if run_indices is not None else list(range(v.size)),
        "name": name,
        "source": source,
        "ci": {"median": bootstrap_median_ci(v, resamples=resamples, seed=seed)},
        "warmup": {**warm, "without_warmup": summarize(steady) if warm["count"] else None},
        # the runs a report uses everywhere: the steady runs after the detected warm-up (all runs without one)
        "steady": {**summarize(steady), "first_run": warm["count"], "runs_total": int(v.size),
                   "ci_median": bootstrap_median_ci(steady, resamples=resamples, seed=seed),
                   "outliers": st_out["count"]},
        "drift": (drift_per_launch(np.split(steady, np.cumsum(launch_sizes)[:-1]))
                  if launch_sizes and sum(launch_sizes) == steady.size else detect_drift(steady)),
        "multimodality": bimodality(steady),
    }
    report["robust_stats"]["note"] = "the same statistics without the flagged outliers (the headline keeps them)"
    return report
