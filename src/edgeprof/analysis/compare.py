"""Baseline vs candidate end-to-end latency: one honest answer with its uncertainty (pure).

Convention everywhere: **speedup = baseline / candidate** (> 1: the candidate is faster).

Method (details in the README, "Statistics"):

* Warm-up runs are detected per launch and left out (reported); drift is tested per launch.
* The unit of replication is the launch (:mod:`.launches`): each launch gives its log median latency and the
  sampling variance of it. With ≥ 4 launches in all, a REML launch-effect model with a Knapp–Hartung t
  interval (``multi-launch``); with 1 vs 1 (or 1 vs 2) launches, a normal interval that adds an allowance
  for the launch-to-launch variation one launch cannot show (``single-launch``; ``launch_cv`` = 0 gives the
  within-launch bootstrap interval about these two launches only).
* Also: Hodges–Lehmann ratio (on log latency) with its distribution-free interval, Mann–Whitney U and
  Brunner–Munzel p-values, Cliff's delta, the minimum detectable effect, and — when the verdict is
  inconclusive — the design that would resolve the change (:func:`.launches.design`).
* Verdict with δ = threshold, on the log scale: ``faster`` when the whole interval is above 1 + δ,
  ``slower`` when it is below 1/(1 + δ), ``equivalent`` when it lies inside [1/(1 + δ), 1 + δ],
  else ``inconclusive``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import ndtri, stdtrit

from ..conventions import fmt_ratio
from ..conventions import verdict as verdict_of
from .latency import detect_drift, detect_warmup
from .launches import LAUNCH_CV_DEFAULT, contrast, design, log_median_stats
from .rank_tests import brunner_munzel, cliffs_delta, hodges_lehmann, mann_whitney
from .stats import (
    BOOTSTRAP_MAX_N,
    bimodality,
    bootstrap_medians,
    order_statistic_median_ci,
    summarize,
    trimmed_mean,
)

POWER = 0.80


@dataclass
class Arm:
    """One side of a comparison: one latency series (ms, in run order) per process launch."""

    name: str
    launches: list[np.ndarray]
    sources: list[str] = field(default_factory=list)


def _log_median_draws(v: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Bootstrap draws of log(median) of one launch's runs."""
    if v.size > BOOTSTRAP_MAX_N:  # large samples: the bootstrap's normal limit, from order statistics (one sort)
        lo, hi = order_statistic_median_ci(v, 0.95)
        se = (np.log(hi) - np.log(lo)) / (2 * 1.959963984540054)
        return rng.normal(np.log(np.median(v)), se, resamples)
    return np.log(bootstrap_medians(v, resamples, rng))


def _prepare(arm: Arm, warmup) -> tuple[list[np.ndarray], list[dict], list[str]]:
    steady, per_launch, notes = [], [], []
    for i, v in enumerate(arm.launches):
        v = np.asarray(v, dtype=float)
        v = v[np.isfinite(v)]
        k = detect_warmup(v)["count"] if warmup == "auto" else min(int(warmup), max(v.size - 1, 0))  # keep one
        s = v[k:]
        drift = detect_drift(s)
        src = arm.sources[i] if i < len(arm.sources) else f"launch {i}"
        per_launch.append({"source": src, "runs": int(v.size), "warmup_dropped": k,
                           "median_ms": float(np.median(s)) if s.size else None, "drift": drift})
        if drift["significant"] and drift["slope_percent_per_100_runs"] is not None:
            notes.append(f"{arm.name}: drift in {src} ({drift['slope_percent_per_100_runs']:+.1f} % per 100 runs, "
                         f"Mann–Kendall p = {drift['mann_kendall']['p_value']:.3g}) could bias the comparison")
        steady.append(s)
    dropped = sum(p["warmup_dropped"] for p in per_launch)
    if dropped:
        notes.append(f"{arm.name}: {dropped} warm-up run(s) left out "
                     f"({', '.join(str(p['warmup_dropped']) for p in per_launch)} per launch)")
    return steady, per_launch, notes


def compare_latency(baseline: Arm, candidate: Arm, *, threshold: float = 0.02, level: float = 0.95,
                    seed: int = 0, resamples: int = 2000, warmup="auto", launch_cv: float = LAUNCH_CV_DEFAULT,
                    launch_cv_source: str = "default") -> dict:
    """Compare two arms; returns the full result (the Arm kit's comparison keys plus ours)."""
    warnings: list[str] = []
    b_runs, b_launch, b_notes = _prepare(baseline, warmup)
    c_runs, c_launch, c_notes = _prepare(candidate, warmup)
    warnings += b_notes + c_notes
    b_all = np.concatenate(b_runs) if b_runs else np.empty(0)
    c_all = np.concatenate(c_runs) if c_runs else np.empty(0)
    kb, kc = len(b_runs), len(c_runs)
    result = {
        "convention": "speedup = baseline / candidate (> 1: candidate faster)",
        "threshold": threshold,
        "level": level,
        "seed": seed,
        "resamples": resamples,
        "baseline": {"name": baseline.name, "launches": b_launch, **summarize(b_all)},
        "candidate": {"name": candidate.name, "launches": c_launch, **summarize(c_all)},
    }
    if b_all.size < 2 or c_all.size < 2 or np.any(b_all <= 0) or np.any(c_all <= 0):
        warnings.append("each arm needs at least 2 runs with positive latency for an interval")
        result.update(_kit_keys(baseline.name, candidate.name, b_all, c_all))
        result.update(ci=None, verdict="inconclusive", significant=False, warnings=warnings)
        result["summary_line"] = _line(result)
        return result

    yb, vb = log_median_stats(b_runs)
    yc, vc = log_median_stats(c_runs)
    draws = None
    if kb == 1 and kc == 1 and launch_cv == 0:
        rng = np.random.default_rng(seed)
        draws = _log_median_draws(b_runs[0], resamples, rng) - _log_median_draws(c_runs[0], resamples, rng)
    ct = contrast(yb, vb, yc, vc, level=level, launch_cv=launch_cv, within_draws=draws)
    theta, se, df = ct["estimate"], ct["se"], ct["df"]
    lo_r, hi_r = float(np.exp(ct["low"])), float(np.exp(ct["high"]))
    speedup = float(np.exp(theta))
    regime = ct["regime"]
    if regime == "multi-launch":
        scope = (f"{kb} and {kc} launches: the interval includes launch-to-launch variation "
                 f"(estimated SD {100 * ct['tau']:.1f} %)")
        if kb == 1 or kc == 1:
            one = baseline.name if kb == 1 else candidate.name
            warnings.append(f"{one} has a single launch: the launch-to-launch variation is estimated from the other arm")
    elif regime == "single-launch":
        scope = (f"{kb} and {kc} launch(es): launch-to-launch variation cannot be measured; the interval adds an "
                 f"allowance of {100 * launch_cv:g} % per arm ({launch_cv_source}; --launch-cv sets it, 0 removes it)"
                 " — record more launches to measure it instead")
        warnings.append(scope)
    else:
        scope = ("one launch per arm, no allowance: the interval covers run-to-run noise within these two launches "
                 "only; launch-to-launch variation (often larger) is not measured — repeat launches to see it")
        warnings.append(scope)
    verdict = verdict_of(lo_r, hi_r, threshold)
    q_pow = float(stdtrit(df, POWER)) if df else float(ndtri(POWER))
    mde = float(np.expm1((ct["critical"] + q_pow) * se))
    plan = None
    if verdict == "inconclusive":
        if mde > threshold:
            warnings.append(f"underpowered: with this noise and these run counts the minimum detectable effect is "
                            f"{mde * 100:.1f} % (δ = {threshold * 100:g} %); add runs{' and launches' if kb + kc > 2 else ''}")
        within = float(np.sqrt(np.mean([np.var(np.log(x), ddof=1) for x in b_runs + c_runs if x.size > 1])))
        effect = max(abs(float(np.expm1(theta))), 2 * threshold, 0.01)
        plan = design(within, ct["tau"], effect, level=level, threshold=threshold)
        plan.pop("options")
        rec = plan["recommended"]
        plan["statement"] = (f"to resolve a {100 * effect:.1f} % change at this noise: "
                             + (f"{rec['launches_per_arm']} launches × {rec['runs_per_launch']} runs per arm"
                                if rec else "more than 50 launches × 1,000 runs per arm")
                             + f" ({plan['note']})")

    hl = hodges_lehmann(np.log(b_all), np.log(c_all), level=level, seed=seed)
    mw = mann_whitney(b_all, c_all)
    bm = brunner_munzel(b_all, c_all)
    tests = {"mann_whitney": mw, "brunner_munzel": bm, "cliffs_delta": cliffs_delta(b_all, c_all, mw["u"]),
             "cliffs_delta_meaning": "P(baseline run > candidate run) − P(baseline run < candidate run); > 0: candidate faster",
             "unit": "runs (pooled over launches; runs of one launch are not independent)"}
    if kb >= 3 and kc >= 3:
        lm_b = np.array([np.median(x) for x in b_runs])
        lm_c = np.array([np.median(x) for x in c_runs])
        tests["mann_whitney_launch_medians"] = mann_whitney(lm_b, lm_c)
    for name, runs in ((baseline.name, b_all), (candidate.name, c_all)):
        bi = bimodality(runs)
        if bi["hint"]:
            why = (f"{bi['modes']} density modes" if bi["modes"] > 1 else
                   f"bimodality coefficient {bi['bimodality_coefficient']:.2f} > 5/9")
            warnings.append(f"{name}: latency looks multimodal ({why}): a ratio of medians can jump between modes; "
                            "compare the distributions too")
    result.update(_kit_keys(baseline.name, candidate.name, b_all, c_all))
    result["speedup"].update(estimate=speedup, ci_low=lo_r, ci_high=hi_r)
    result.update({
        "ci": {"low": lo_r, "high": hi_r, "level": level, "method": ct["method"], "scope": scope,
               "degrees_of_freedom": df, "standard_error_log": se},
        "regime": regime,
        "launch_allowance": {"launch_cv": launch_cv, "applied": regime == "single-launch", "source": launch_cv_source},
        "launch_sd_estimate": ct["tau"] if regime == "multi-launch" else None,
        "estimator": ("precision-weighted mean of log launch medians" if regime == "multi-launch"
                      else "ratio of the two launches' medians"),
        "p_value": ct["p_value"],
        "plan": plan,
        "significant": bool(lo_r > 1 or hi_r < 1),
        "hodges_lehmann": {"speedup": float(np.exp(hl["estimate"])),
                           "low": float(np.exp(hl["low"])) if hl["low"] is not None else None,
                           "high": float(np.exp(hl["high"])) if hl["high"] is not None else None,
                           "level": level, "subsampled": hl["subsampled"],
                           "method": "median of pairwise log-latency differences; distribution-free interval"},
        "tests": tests,
        "minimum_detectable_effect": mde,
        "verdict": verdict,
        "warnings": warnings,
    })
    result["summary_line"] = _line(result)
    return result


def _kit_keys(bname: str, cname: str, b: np.ndarray, c: np.ndarray) -> dict:
    """The Arm kit's ``*_robust_comparison.json`` keys (config1 = baseline, config2 = candidate)."""
    def cfg(name, v):
        s = summarize(v) if v.size else {}
        return {"name": name, "median_ms": s.get("median_ms"), "trimmed_mean_ms": trimmed_mean(v, 0.05) if v.size else None,
                "cv_percent": s.get("cv_percent"), "count": int(v.size)}

    c1, c2 = cfg(bname, b), cfg(cname, c)
    med = c1["median_ms"] / c2["median_ms"] if c1["median_ms"] and c2["median_ms"] else None
    tm = c1["trimmed_mean_ms"] / c2["trimmed_mean_ms"] if c1["trimmed_mean_ms"] and c2["trimmed_mean_ms"] else None
    if med is None:
        desc = "not enough data"
    elif med > 1:
        desc = f"{cname} is {med:.2f}x faster than {bname}"
    elif med < 1:
        desc = f"{cname} is {1 / med:.2f}x slower than {bname}"
    else:
        desc = f"{cname} and {bname} have the same median"
    cv1, cv2 = c1["cv_percent"], c2["cv_percent"]
    more = None if cv1 is None or cv2 is None else (bname if cv1 > cv2 else cname if cv2 > cv1 else "equal")
    return {
        "config1": c1,
        "config2": c2,
        "speedup": {"median_based": med, "trimmed_mean_based": tm, "description": desc},
        "variability": {"config1_cv": cv1, "config2_cv": cv2, "more_variable": more,
                        "cv_ratio": (cv1 / cv2) if cv1 is not None and cv2 else None},
    }


def _line(r: dict) -> str:
    b, c = r["baseline"]["name"], r["candidate"]["name"]
    if r.get("ci") is None:
        return f"{c} vs {b}: not enough data — verdict: inconclusive"
    s, ci = r["speedup"]["estimate"], r["ci"]
    if r["verdict"] in ("faster", "slower"):
        change = f"{fmt_ratio(s)} faster" if s >= 1 else f"{fmt_ratio(1 / s)} slower"
    else:  # an estimate only: the interval does not support calling it faster or slower
        change = f"point estimate {fmt_ratio(s)} " + ("faster" if s >= 1 else "slower") + ", not established"
    bm = r["tests"]["brunner_munzel"]["p_value"]
    p = bm if bm is not None else r["tests"]["mann_whitney"]["p_value"]
    pname = "Brunner–Munzel" if bm is not None else "Mann–Whitney"
    nb, nc = r["baseline"]["count"], r["candidate"]["count"]
    kb, kc = len(r["baseline"]["launches"]), len(r["candidate"]["launches"])
    reg = r.get("regime")
    about = (" (about these two launches)" if reg == "single-launch, no allowance" else
             f" ({reg}: allowance of {100 * r['launch_allowance']['launch_cv']:g} % launch-to-launch SD per arm)"
             if reg == "single-launch" else f" ({reg})" if reg else "")
    return (f"{c} vs {b}: {change} [speedup {s:.3f}, {int(ci['level'] * 100)}% CI {ci['low']:.3f}–{ci['high']:.3f}], "
            f"{pname} p = {p:.2g}, Cliff's δ = {r['tests']['cliffs_delta']:+.2f}; {nb} vs {nc} runs in {kb} vs {kc} "
            f"launch(es); threshold {r['threshold'] * 100:g} % — verdict: {r['verdict']}{about}")
