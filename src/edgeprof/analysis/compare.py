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
from typing import TYPE_CHECKING, Any, overload

import numpy as np
from .special import ndtri, stdtrit

from ..conventions import LEVEL, METRICS, THRESHOLD, Verdict, fmt_ms, fmt_ratio
from ..conventions import verdict as verdict_of
from .latency import detect_drift
from .launches import contrast, design, log_median_stats, metric_stats
from .noise import TAIL, LaunchNoise
from ..comparison import MetricContrast, SlowRuns
from .selection import RunSelection, select_runs
from .rank_tests import brunner_munzel, cliffs_delta, hodges_lehmann, mann_whitney
from .stats import (
    BOOTSTRAP_MAX_N,
    bootstrap_medians,
    order_statistic_median_ci,
    summarize,
    trimmed_mean,
)

if TYPE_CHECKING:
    from typing import Literal

TAIL_MATERIAL = 0.05  # a tail regression needs at least this share of the candidate's runs to be slow
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


def finite(v) -> np.ndarray:
    """One launch's latencies with the runs that have no finite time left out (the runs a comparison uses)."""
    v = np.asarray(v, dtype=float)
    return v[np.isfinite(v)]


def arm_selection(arm: Arm, warmup="auto") -> RunSelection:
    """The runs of ``arm`` a comparison uses: each launch's finite runs after its warm-up (``auto|N``)."""
    return select_runs([finite(v) for v in arm.launches], warmup, arm.sources or None)


def _prepare(arm: Arm, sel: RunSelection) -> tuple[list[np.ndarray], list[dict], list[str]]:
    notes = []
    steady = sel.steady([finite(v) for v in arm.launches])
    per_launch = []
    for x, s in zip(sel.launches, steady):
        drift = detect_drift(s)
        per_launch.append({"source": x.source, "runs": x.total, "warmup_dropped": x.warmup,
                           "median_ms": float(np.median(s)) if s.size else None, "drift": drift})
        if drift["significant"] and drift["slope_percent_per_100_runs"] is not None:
            notes.append(f"{arm.name}: drift in {x.source} ({drift['slope_percent_per_100_runs']:+.1f} % per 100 runs, "
                         f"Mann–Kendall p = {drift['mann_kendall']['p_value']:.3g}) could bias the comparison")
    if sel.warmup_total:
        notes.append(f"{arm.name}: {sel.warmup_total} warm-up run(s) left out "
                     f"({', '.join(str(k) for k in sel.warmup)} per launch)")
    return steady, per_launch, notes


def _modal_warning(name: str, runs: list[np.ndarray]) -> str | None:
    """A second mode the median can jump to, as a property of the configuration: it recurs in at least two and
    at least half of an arm's launches (each launch's own runs, so launch-to-launch differences are not taken
    for modes). One launch that switched between two levels part-way is a state change of that launch, not
    evidence about the configuration — on real A/A recordings a single launch shows one in ~1 of 6."""
    from .stats import modes

    found = [modes(x) for x in runs if x.size >= 30]
    split = [m for m in found if m["multimodal"]]
    if len(split) < 2 or len(split) * 2 < len(found):
        return None
    m = max(split, key=lambda m: min(m["masses"]))
    return (f"{name}: latency is multimodal within {len(split)} of {len(found)} launch(es) (modes at "
            + ", ".join(f"{fmt_ms(c)} ms ({100 * w:.0f} %)" for c, w in zip(m["centres_ms"], m["masses"]))
            + "): a ratio of medians can jump between modes; compare the distributions too")


@overload
def metric_contrasts(b_runs: list[np.ndarray], c_runs: list[np.ndarray], noise: LaunchNoise, *, level: float,
                     threshold: float, with_contrasts: Literal[False] = ...) -> dict: ...
@overload
def metric_contrasts(b_runs: list[np.ndarray], c_runs: list[np.ndarray], noise: LaunchNoise, *, level: float,
                     threshold: float, with_contrasts: Literal[True]) -> tuple[dict, dict]: ...
def metric_contrasts(b_runs: list[np.ndarray], c_runs: list[np.ndarray], noise: LaunchNoise, *, level: float,
                     threshold: float, with_contrasts: bool = False) -> dict | tuple[dict, dict]:
    """Per metric (median, mean, p90, p99): the launch-level contrast of the arms' steady runs, its speedup
    interval and verdict — the same rule for every metric, each with its own launch SD allowance; and the share
    of slow runs (``slow_share``: runs ≥ 2× their launch's median), the tail check."""
    keys = (*METRICS, TAIL)
    both = _contrasts({m: metric_stats(b_runs, m) for m in keys}, {m: metric_stats(c_runs, m) for m in keys},
                      noise, level=level, threshold=threshold)
    return both if with_contrasts else both[0]


def contrasts_of(b_stats: dict, c_stats: dict, noise: LaunchNoise, *, level: float, threshold: float) -> dict:
    """:func:`metric_contrasts` from each arm's per-launch statistics ({metric: (log values, variances)})."""
    return _contrasts(b_stats, c_stats, noise, level=level, threshold=threshold)[0]


def _metric_record(ct: dict, threshold: float) -> MetricContrast:
    lo, hi = float(np.exp(ct["low"])), float(np.exp(ct["high"]))
    return MetricContrast(speedup=float(np.exp(ct["estimate"])), ci_low=lo, ci_high=hi, p_value=ct["p_value"],
                          verdict=verdict_of(lo, hi, threshold),
                          baseline_typical_ms=float(np.exp(ct["centres"][0])),
                          candidate_typical_ms=float(np.exp(ct["centres"][1])))


def _contrasts(b_stats: dict, c_stats: dict, noise: LaunchNoise, *, level: float,
               threshold: float) -> tuple[dict, dict]:
    """The records of :func:`contrasts_of` and the launch-level contrasts they come from, by metric."""
    out: dict[str, MetricContrast | SlowRuns]
    out, cts = {}, {}
    for m in METRICS:
        (yb, vb), (yc, vc) = b_stats[m], c_stats[m]
        nm = noise.for_metric(m)
        cts[m] = contrast(yb, vb, yc, vc, level=level, launch_cv=nm.sd, measured=nm.measurement)
        out[m] = _metric_record(cts[m], threshold)
    if TAIL in b_stats:
        (yb, vb), (yc, vc) = b_stats[TAIL], c_stats[TAIL]
        nm = noise.for_metric(TAIL)
        ct = contrast(yb, vb, yc, vc, level=level, launch_cv=nm.sd, measured=nm.measurement, sampling_floor=True)
        # back from the arcsine scale; rounded, so that 5 slow runs in 100 are the 5 % they are (not 4.99…9 %)
        share = [round(float(np.mean(np.sin(y) ** 2)), 12) for y in (yb, yc)]
        more = ct["high"] < 0 and share[1] >= TAIL_MATERIAL
        out[TAIL] = SlowRuns(baseline_share=share[0], candidate_share=share[1], p_value=ct["p_value"],
                             verdict="slower" if more else "no significant change")
        cts[TAIL] = ct
    return out, cts


def _tail_statement(tails: dict, metric: str) -> str | None:
    """A tail regression: the headline metric is not slower, but the mean, p90 or p99 is, or the share of slow runs
    (≥ 2× their launch's median) grew. The sentence follows its figures: slow runs relative to a faster median
    beside a p90/p99 that is itself faster are a wider tail, not runs that got slower."""
    head = tails[metric]
    if head["verdict"] == "slower":
        return None
    worse = [m for m in ("mean", "p90", "p99") if m != metric and tails[m]["verdict"] == "slower"]
    slow = tails.get(TAIL) or {}
    if not worse and slow.get("verdict") != "slower":
        return None

    def change(m):
        t = tails[m]
        s = t["speedup"]
        return f"{m} {fmt_ratio(s)} faster" if s >= 1 else f"{m} {fmt_ratio(1 / s)} slower"

    def cited(m):
        return f"{change(m)} [{tails[m]['ci_low']:.3g}–{tails[m]['ci_high']:.3g}]"
    parts = [cited(m) for m in worse]
    if slow.get("verdict") == "slower":
        parts.append(f"{100 * slow['candidate_share']:.1f} % of runs took ≥ 2× their launch's median "
                     f"(baseline {100 * slow['baseline_share']:.1f} %)")
    head_part = f"{change(metric)} ({head['verdict']})"
    if worse:
        return f"tail regression: {head_part}, but " + ", ".join(parts) + " — some runs got much slower"
    quicker = [m for m in ("p90", "p99") if m != metric and tails[m]["verdict"] == "faster"]
    if quicker:
        return (f"wider tail: {head_part}, and " + parts[0] + ", though " + ", ".join(cited(m) for m in quicker) +
                " — the slow runs are slow against the candidate's own median, not against the baseline")
    return f"tail regression: {head_part}, but " + ", ".join(parts) + " — more runs are slow against their median"


def compare_latency(baseline: Arm, candidate: Arm, *, threshold: float = THRESHOLD, level: float = LEVEL,
                    seed: int = 0, resamples: int = 2000, warmup="auto", noise: LaunchNoise | None = None,
                    metric: str = "median", launch_cv: float | None = None,
                    selections: tuple[RunSelection, RunSelection] | None = None, comparability: dict | None = None,
                    allow_different: bool = False) -> dict:
    """Compare two arms; returns the full result (the Arm kit's comparison keys plus ours). ``selections``: the
    runs of each arm to use (:func:`arm_selection`), made from ``warmup`` when not given. ``noise``: the
    launch-to-launch SD a single launch cannot show and its evidence (:mod:`.noise`; None: the default, or
    ``launch_cv`` when given as a number); ``metric``: what the verdict is about (median, mean, p90, p99).
    ``comparability`` (:func:`.comparability.comparability` of the arms' recorded facts): arms that are not
    comparable get the verdict ``not_comparable`` (the statistical one kept as ``verdict_if_comparable``) unless
    ``allow_different``, which keeps the verdict and says so in a warning."""
    from .noise import default, given

    if noise is None:
        noise = given(launch_cv) if launch_cv is not None else default()
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}")
    warnings: list[str] = []
    b_sel, c_sel = selections or (arm_selection(baseline, warmup), arm_selection(candidate, warmup))
    b_runs, b_launch, b_notes = _prepare(baseline, b_sel)
    c_runs, c_launch, c_notes = _prepare(candidate, c_sel)
    warnings += b_notes + c_notes
    b_all = np.concatenate(b_runs) if b_runs else np.empty(0)
    c_all = np.concatenate(c_runs) if c_runs else np.empty(0)
    kb, kc = len(b_runs), len(c_runs)
    result: dict[str, Any] = {
        "convention": "speedup = baseline / candidate (> 1: candidate faster)",
        "threshold": threshold,
        "level": level,
        "seed": seed,
        "resamples": resamples,
        "metric": metric,
        "baseline": {"name": baseline.name, "launches": b_launch, **summarize(b_all)},
        "candidate": {"name": candidate.name, "launches": c_launch, **summarize(c_all)},
    }
    if (b_all.size < 2 or c_all.size < 2 or np.any(b_all <= 0) or np.any(c_all <= 0)
            or any(x.size == 0 for x in b_runs + c_runs)):
        warnings.append("each arm needs at least 2 runs with positive latency for an interval")
        result.update(_kit_keys(baseline.name, candidate.name, b_all, c_all))
        result.update(ci=None, verdict="inconclusive", significant=False, warnings=warnings)
        _judge_comparability(result, comparability, allow_different)
        result["summary_line"] = _line(result)
        return result

    tails, cts = metric_contrasts(b_runs, c_runs, noise, level=level, threshold=threshold, with_contrasts=True)
    if kb == 1 and kc == 1 and noise.sd == 0 and metric == "median":  # no allowance: these two launches only
        rng = np.random.default_rng(seed)
        draws = _log_median_draws(b_runs[0], resamples, rng) - _log_median_draws(c_runs[0], resamples, rng)
        yb, vb = log_median_stats(b_runs)
        yc, vc = log_median_stats(c_runs)
        cts["median"] = contrast(yb, vb, yc, vc, level=level, launch_cv=0.0, within_draws=draws)
        tails["median"] = _metric_record(cts["median"], threshold)
    ct = cts[metric]
    theta, se, df = ct["estimate"], ct["se"], ct["df"]
    lo_r, hi_r = float(np.exp(ct["low"])), float(np.exp(ct["high"]))
    speedup = float(np.exp(theta))
    regime = ct["regime"]
    used = ct.get("tau", noise.sd)
    if regime == "multi-launch":
        scope = (f"{kb} and {kc} launches: the interval includes launch-to-launch variation "
                 f"(estimated SD {100 * ct['tau']:.1f} %)")
        if kb == 1 or kc == 1:
            one = baseline.name if kb == 1 else candidate.name
            warnings.append(f"{one} has a single launch: the launch-to-launch variation is estimated from the other arm")
    elif regime == "single-launch":
        where = ("the two launches of one arm differed by that much" if ct.get("allowance_from_arms")
                 else noise.detail)
        scope = (f"{kb} and {kc} launch(es): launch-to-launch variation cannot be measured; the interval allows "
                 f"{100 * used:.3g} % per arm ({where}) — record more launches to measure it instead")
        warnings.append(scope)
    else:
        scope = ("one launch per arm, no allowance: the interval covers run-to-run noise within these two launches "
                 "only; launch-to-launch variation (often larger) is not measured — repeat launches to see it")
        warnings.append(scope)
    verdict = tails[metric].verdict
    q_pow = float(stdtrit(df, POWER)) if df else float(ndtri(POWER))
    mde = float(np.expm1((ct["critical"] + q_pow) * se))
    within = float(np.sqrt(np.mean([np.var(np.log(x), ddof=1) for x in b_runs + c_runs if x.size > 1] or [0.0])))
    plan = advice = None
    if verdict == "inconclusive":
        effect = max(abs(float(np.expm1(theta))), 2 * threshold, 0.01)
        tau = ct["tau"] if regime == "multi-launch" else used
        plan = design(within, tau, effect, level=level, threshold=threshold)
        plan.pop("options")
        rec = plan["recommended"]
        plan["statement"] = (f"to resolve a {100 * effect:.1f} % change at this noise: "
                             + (f"{rec['launches_per_arm']} launches × {rec['runs_per_launch']} runs per arm"
                                if rec else "more than 50 launches × 1,000 runs per arm")
                             + f" ({plan['note']})")
        need = rec["launches_per_arm"] if rec else None
        launch_bound = tau ** 2 > (np.pi / 2) * within ** 2 / max(min(x.size for x in b_runs + c_runs), 1)
        if regime == "single-launch" and launch_bound:
            advice = (f"inconclusive — one launch per arm cannot separate this from launch-to-launch variation "
                      f"(SD {100 * used:.3g} %: {noise.detail if not ct.get('allowance_from_arms') else 'from the arms'})"
                      + (f"; record ≥ {need} launches per arm" if need else
                         "; more than 50 launches per arm would be needed for a change this small"))
        elif mde > threshold:
            advice = (f"underpowered: the minimum detectable effect is {mde * 100:.1f} % (δ = {threshold * 100:g} %); "
                      + ((f"add launches: {need} per arm" if need else "more than 50 launches per arm would be needed")
                         if launch_bound else
                         f"add runs ({rec['runs_per_launch'] if rec else 'more than 1,000'} per launch)")
                      + " — launch-to-launch variation dominates" * bool(launch_bound))
        if advice:
            warnings.append(advice)
    tail = _tail_statement(tails, metric)
    if tail:
        warnings.append(tail)
    slow = tails.pop(TAIL, None)

    hl = hodges_lehmann(np.log(b_all), np.log(c_all), level=level, seed=seed)
    mw = mann_whitney(b_all, c_all)
    bm = brunner_munzel(b_all, c_all)
    tests = {"mann_whitney": mw, "brunner_munzel": bm, "cliffs_delta": cliffs_delta(b_all, c_all, mw["u"]),
             "cliffs_delta_meaning": "P(baseline run > candidate run) − P(baseline run < candidate run); > 0: candidate faster",
             "unit": "runs (pooled over launches; runs of one launch are not independent)",
             "scope": "within these launches only: run-level tests say whether these runs differ, not whether the "
                      "configurations do (the launch-level p_value does)"}
    if kb >= 3 and kc >= 3:
        lm_b = np.array([np.median(x) for x in b_runs])
        lm_c = np.array([np.median(x) for x in c_runs])
        tests["mann_whitney_launch_medians"] = mann_whitney(lm_b, lm_c)
    for name, runs in ((baseline.name, b_runs), (candidate.name, c_runs)):
        w = _modal_warning(name, runs)
        if w:
            warnings.append(w)
    result.update(_kit_keys(baseline.name, candidate.name, b_all, c_all))
    result["speedup"].update(estimate=speedup, ci_low=lo_r, ci_high=hi_r,
                             description=description(baseline.name, candidate.name, speedup))
    result.update({
        "ci": {"low": lo_r, "high": hi_r, "level": level, "method": ct["method"], "scope": scope,
               "degrees_of_freedom": df, "standard_error_log": se},
        "regime": regime,
        "launch_allowance": {"launch_cv": used if regime == "single-launch" else noise.sd,
                             "applied": regime == "single-launch", "source": noise.source,
                             "from_arms": bool(ct.get("allowance_from_arms"))},
        "launch_noise": noise.to_json(),
        "launch_sd_estimate": ct["tau"] if regime == "multi-launch" else None,
        "estimator": (f"precision-weighted mean of log launch {metric}s" if regime == "multi-launch"
                      else f"ratio of the two launches' {metric}s"),
        "p_value": ct["p_value"],
        "p_value_scope": f"launch-level ({regime})",
        "plan": plan,
        "advice": advice,
        "significant": bool(lo_r > 1 or hi_r < 1),
        "metrics": tails,
        "slow_runs": slow,
        "tail_regression": tail,
        "hodges_lehmann": {"speedup": float(np.exp(hl["estimate"])),
                           "low": float(np.exp(hl["low"])) if hl["low"] is not None else None,
                           "high": float(np.exp(hl["high"])) if hl["high"] is not None else None,
                           "level": level, "subsampled": hl["subsampled"],
                           "method": "median of pairwise log-latency differences; distribution-free interval "
                                     "(within these launches only)"},
        "tests": tests,
        "minimum_detectable_effect": mde,
        "verdict": verdict,
        "warnings": warnings,
    })
    _judge_comparability(result, comparability, allow_different)
    result["summary_line"] = _line(result)
    return result


def _judge_comparability(result: dict, comp: dict | None, allow_different: bool) -> None:
    """The verdict of arms whose recorded facts differ where they must not (one place; the sentence follows it)."""
    from .comparability import sentence

    if comp is None:
        return
    result["comparability"] = comp
    if not comp["comparable"]:
        if allow_different:
            result["warnings"].append(f"{sentence(comp, advice=False)} (compared anyway: --allow-different)")
        else:
            result["verdict_if_comparable"] = result["verdict"]
            result["verdict"] = Verdict.NOT_COMPARABLE
    elif comp["other_differences"]:
        result["warnings"].append(comp["statement"])


def _kit_keys(bname: str, cname: str, b: np.ndarray, c: np.ndarray) -> dict:
    """The Arm kit's ``*_robust_comparison.json`` keys (config1 = baseline, config2 = candidate)."""
    def cfg(name, v):
        s = summarize(v) if v.size else {}
        return {"name": name, "median_ms": s.get("median_ms"), "trimmed_mean_ms": trimmed_mean(v, 0.05) if v.size else None,
                "cv_percent": s.get("cv_percent"), "count": int(v.size)}

    c1, c2 = cfg(bname, b), cfg(cname, c)
    med = c1["median_ms"] / c2["median_ms"] if c1["median_ms"] and c2["median_ms"] else None
    tm = c1["trimmed_mean_ms"] / c2["trimmed_mean_ms"] if c1["trimmed_mean_ms"] and c2["trimmed_mean_ms"] else None
    desc = description(bname, cname, med)
    cv1, cv2 = c1["cv_percent"], c2["cv_percent"]
    more = None if cv1 is None or cv2 is None else (bname if cv1 > cv2 else cname if cv2 > cv1 else "equal")
    return {
        "config1": c1,
        "config2": c2,
        "speedup": {"median_based": med, "trimmed_mean_based": tm, "description": desc},
        "variability": {"config1_cv": cv1, "config2_cv": cv2, "more_variable": more,
                        "cv_ratio": (cv1 / cv2) if cv1 is not None and cv2 else None},
    }


def description(bname: str, cname: str, ratio: float | None) -> str:
    """The Arm kit's one-sentence ``speedup.description`` of a speedup (the comparison's estimate, once there is one:
    the sentence and the figure beside it are one figure)."""
    if ratio is None:
        return "not enough data"
    if ratio > 1:
        return f"{cname} is {ratio:.2f}x faster than {bname}"
    if ratio < 1:
        return f"{cname} is {1 / ratio:.2f}x slower than {bname}"
    return f"{cname} and {bname} are equally fast"


def _line(r: dict) -> str:
    b, c = r["baseline"]["name"], r["candidate"]["name"]
    if r.get("ci") is None:
        return f"{_not_comparable(r)}{c} vs {b}: not enough data — verdict: {r['verdict']}"
    s, ci = r["speedup"]["estimate"], r["ci"]
    if r["verdict"] in ("faster", "slower"):
        change = f"{fmt_ratio(s)} faster" if s >= 1 else f"{fmt_ratio(1 / s)} slower"
    else:  # an estimate only: the interval does not support calling it faster or slower
        change = f"point estimate {fmt_ratio(s)} " + ("faster" if s >= 1 else "slower") + ", not established"
    p = r["p_value"]
    nc, nb = r["candidate"]["count"], r["baseline"]["count"]  # in the order the names are said: candidate first
    kc, kb = len(r["candidate"]["launches"]), len(r["baseline"]["launches"])
    reg = r.get("regime")
    about = (" (about these two launches)" if reg == "single-launch, no allowance" else
             f" ({reg}: allowance of {100 * r['launch_allowance']['launch_cv']:.3g} % launch-to-launch SD per arm)"
             if reg == "single-launch" else f" ({reg})" if reg else "")
    metric = r.get("metric", "median")
    what = "" if metric == "median" else f" ({metric})"
    return (f"{_not_comparable(r)}{c} vs {b}{what}: {change} [speedup {s:.3f}, {int(ci['level'] * 100)}% CI "
            f"{ci['low']:.3f}–{ci['high']:.3f}], launch-level p = {p:.2g}; {nc} vs {nb} runs in {kc} vs {kb} "
            f"launch(es); threshold {r['threshold'] * 100:g} % — verdict: {r['verdict']}{about}")


def _not_comparable(r: dict) -> str:
    return f"{r['comparability']['statement']}; " if r["verdict"] == "not_comparable" else ""
