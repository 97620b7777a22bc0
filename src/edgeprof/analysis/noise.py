"""Launch-to-launch noise: what it is, where a comparison learns it, and how much to trust it (pure).

Runs of one process share that process's luck, so two single launches of the *same* program differ by more
than their runs suggest — on a shared 2-core machine or a phone, by 10–25 % (the log launch medians' SD).
A comparison with one launch per arm cannot see that variation, so it must take it from evidence, in order:

1. ``arms`` — the comparison's own launches (≥ 4 in all: the multi-launch regime estimates it; with 1 vs 2,
   the two-launch arm's spread is a lower bound on it);
2. ``noise profile`` — ``noise.json`` that ``edgeprof run`` (and ``plan``) write beside a run folder: the
   launch SD measured on that machine's launches (:func:`estimate` over the configurations);
3. ``history store`` — launches of the same model on the same device stored under one commit
   (``--launch-cv auto --store S``);
4. ``default`` — :data:`.launches.LAUNCH_SD_DEFAULT`, calibrated on the noisiest real recordings of tests/data/noise
   (README "Statistics").

A measured SD from few launches is itself uncertain: the evidence is used at its upper 80 % confidence bound
(:func:`upper_bound`), so a pilot of three launches does not promise more than it showed. Every output names
the source, the launches behind it and the value used.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from ..conventions import LEVEL, METRICS
from .launches import LAUNCH_SD_DEFAULT

# launch SD of each metric relative to the median's, when only the median's was measured (the corpus's ratios)
METRIC_FACTOR = {"median": 1.0, "mean": 1.4, "p90": 1.3, "p99": 1.9}
# the tail check's launch SD when nothing measured it: the share of slow runs (arcsine-√ scale) moved by up to
# 0.14 between launches of one program in the corpus (bursty load); rounded up
SLOW_SHARE_SD = 0.15
TAIL = "slow_share"
CONFIDENCE = 0.80  # measured evidence is used at its upper 80 % bound (comparisons and plans alike)
SOURCES = ("arms", "noise profile", "history store", "given", "default")


@dataclass(frozen=True)
class LaunchNoise:
    """The launch-to-launch SD a comparison uses, and the evidence behind it."""

    sd: float  # used (log scale ≈ relative), per arm
    source: str  # one of SOURCES
    detail: str  # what it rests on, for people
    estimate: float | None = None  # the measured value before the upper bound (None: not measured)
    df: int | None = None  # degrees of freedom of the estimate
    launches: int | None = None  # launches behind it
    by_metric: dict | None = None  # SDs used for the other metrics, when they were measured too

    def to_json(self) -> dict:
        return asdict(self)

    def for_metric(self, metric: str) -> LaunchNoise:
        """The SD for another metric than the median: measured when the evidence measured it, else scaled by
        :data:`METRIC_FACTOR` (and then no longer a measurement)."""
        if metric == "median":
            return self
        m = (self.by_metric or {}).get(metric)
        if m is not None:
            return LaunchNoise(float(m["sd"]), self.source, f"{self.detail}; {metric} measured", m["estimate"],
                               m["df"], self.launches)
        if metric == TAIL:
            return LaunchNoise(SLOW_SHARE_SD if self.sd > 0 else 0.0, "default",
                               f"the default {SLOW_SHARE_SD:g} for the share of slow runs")
        f = METRIC_FACTOR.get(metric, 1.0)
        return LaunchNoise(self.sd * f, self.source, f"{self.detail}; ×{f:g} for the {metric}")

    @property
    def measurement(self) -> tuple[float, int] | None:
        """(SD, df) when this is a measurement of this machine (a noise profile or a history store)."""
        if self.source in ("noise profile", "history store") and self.estimate is not None and self.df:
            return float(self.estimate), int(self.df)
        return None


def upper_bound(sd: float, df: int, confidence: float = CONFIDENCE) -> float:
    """Upper ``confidence`` bound of an SD estimated on ``df`` degrees of freedom (χ²: the ``1 − confidence``
    quantile of χ²(df), the point whose upper tail holds ``confidence``)."""
    from .special import chdtri

    if df <= 0:
        return math.inf
    return sd * math.sqrt(df / float(chdtri(df, confidence)))


def estimate(groups: list[tuple[np.ndarray, np.ndarray]]) -> tuple[float, int, int] | None:
    """(launch SD, degrees of freedom, launches) pooled over groups of launches of one configuration each
    (``(y, v)``: log launch values and their sampling variances): the pooled SD of the launch values around
    their group's mean — which holds the run-to-run part too, so it is never zero for launches that differ at
    all (REML's τ can be). None with no group of ≥ 2 launches."""
    usable = [y for y, _ in groups if y.size >= 2]
    if not usable:
        return None
    n = sum(y.size for y in usable)
    df = n - len(usable)
    ss = float(sum(((y - y.mean()) ** 2).sum() for y in usable))
    return math.sqrt(ss / df), df, n


def measured(sd: float, df: int, launches: int, source: str, where: str, by_metric: dict | None = None,
             confidence: float = CONFIDENCE) -> LaunchNoise:
    """Evidence from measured launches, at its upper ``confidence`` bound (never below the estimate).
    ``by_metric``: {metric: (sd, df)} measured alongside."""
    used = max(upper_bound(sd, df, confidence), sd) if df > 0 else LAUNCH_SD_DEFAULT
    others = {m: {"sd": max(upper_bound(v, d, confidence), v), "estimate": v, "df": d}
              for m, (v, d) in (by_metric or {}).items() if d and d > 0}
    return LaunchNoise(used, source, f"{where}: {100 * sd:.1f} % measured on {launches} launches "
                                     f"({df} df), {100 * used:.1f} % at its upper {100 * confidence:g} % bound",
                       sd, df, launches, others or None)


def lag1_autocorrelation(x: np.ndarray) -> float:
    """Lag-1 autocorrelation of a launch's log run times (0 for fewer than 3 runs or constant runs)."""
    x = np.log(np.asarray(x, dtype=float))
    if x.size < 3 or np.ptp(x) == 0:
        return 0.0
    d = x - x.mean()
    return float((d[1:] * d[:-1]).sum() / (d * d).sum())


def profile(configs: dict[str, list[np.ndarray]]) -> dict:
    """A noise profile of measured launches: per configuration its launches' steady runs (ms). Per metric and
    per configuration the launch SD (with its df and launches), the same pooled over the configurations, the
    run-to-run SD within launches, and the runs' lag-1 autocorrelation."""
    from .launches import metric_stats

    keys = (*METRICS, TAIL)

    def sds(groups):
        out = {}
        for m in keys:
            e = estimate([metric_stats(runs, m) for runs in groups if len(runs) >= 2])
            out[m] = None if e is None else {"estimate": e[0], "df": e[1], "launches": e[2]}
        return out

    all_runs = [x for runs in configs.values() for x in runs if x.size > 2]
    within = float(np.sqrt(np.mean([np.var(np.log(x), ddof=1) for x in all_runs]))) if all_runs else None
    rho = float(np.median([lag1_autocorrelation(x) for x in all_runs])) if all_runs else None
    return {"launch_sd": sds(list(configs.values())), "within_sd": within, "lag1_autocorrelation": rho,
            "configurations": [{"name": k, "launches": len(v), "runs": [int(x.size) for x in v],
                                "launch_sd": sds([v]) if len(v) >= 2 else None} for k, v in configs.items()]}


def _entry(d) -> tuple[float, int] | None:
    if isinstance(d, dict) and isinstance(d.get("estimate"), (int, float)) and isinstance(d.get("df"), int) \
            and d["df"] > 0 and math.isfinite(d["estimate"]) and d["estimate"] >= 0:
        return float(d["estimate"]), int(d["df"])
    return None


def from_profile(doc: dict, where: str) -> LaunchNoise | None:
    """The evidence of a noise profile document: per metric, the noisiest of its configurations (the largest
    upper bound — programs on one machine differ by up to 10× in launch noise, so a pooled value would promise
    the noisy ones too little), else the pooled value. None when it measured no launch SD."""
    if not isinstance(doc, dict):
        return None
    cands = [c.get("launch_sd") for c in doc.get("configurations") or [] if isinstance(c, dict)]
    cands = [c for c in cands if isinstance(c, dict)] or [doc.get("launch_sd")]
    best = {}
    for m in (*METRICS, TAIL):
        found = [e for e in (_entry(c.get(m)) for c in cands if isinstance(c, dict)) if e is not None]
        if found:
            best[m] = max(found, key=lambda e: upper_bound(e[0], e[1]))
    if "median" not in best:
        return None
    launches = sum(int(c.get("launches") or 0) for c in doc.get("configurations") or [] if isinstance(c, dict))
    sd, df = best.pop("median")
    return measured(sd, df, launches or df + 1, "noise profile", where + " (its noisiest configuration)", best)


def default() -> LaunchNoise:
    return LaunchNoise(LAUNCH_SD_DEFAULT, "default",
                       f"nothing measured it: the default {100 * LAUNCH_SD_DEFAULT:g} % (the noisiest real "
                       "recordings edgeprof was calibrated on)")


def given(sd: float) -> LaunchNoise:
    return LaunchNoise(float(sd), "given", f"--launch-cv {sd:g}")


def choose(*candidates: LaunchNoise | None) -> LaunchNoise:
    """The first evidence present, in the order given (noise profile, store, …), else the default."""
    return next((c for c in candidates if c is not None), None) or default()


def launches_needed(tau: float, within_var: float, effect: float, threshold: float = 0.0, level: float = LEVEL,
                    power: float = 0.80, cap: int = 50) -> int | None:
    """Launches per arm that resolve ``effect`` at this launch SD (t interval on 2k − 2 df), None beyond ``cap``."""
    from .special import stdtrit

    target = math.log1p(abs(effect)) - math.log1p(threshold)
    if target <= 0:
        return None
    for k in range(2, cap + 1):
        df = 2 * k - 2
        se = math.sqrt(2 * (tau ** 2 + within_var) / k)
        if (float(stdtrit(df, 1 - (1 - level) / 2)) + float(stdtrit(df, power))) * se <= target:
            return k
    return None


# How much more a small accounting line or operator moves from launch to launch than the end-to-end time:
# its allowance is √(sd² + (LINE_SMALL / √µs per run)²) (fitted on the real-noise corpus, README "Statistics").
LINE_SMALL = 1.3


def line_allowance(noise: LaunchNoise, per_run_ms: float) -> float:
    """The launch SD allowance of a line or operator that takes ``per_run_ms`` per run (0 stays 0: no allowance)."""
    if noise.sd == 0:
        return 0.0
    us = max(per_run_ms * 1000.0, 1e-3)
    return math.sqrt(noise.sd ** 2 + LINE_SMALL ** 2 / us)


def pilot_noise(sd: float, df: int, launches: int, evidence: LaunchNoise, configs: int) -> LaunchNoise:
    """The launch SD a plan uses from a pilot's own launches (``sd`` on ``df``), by compare's rule (see
    :func:`.launches.contrast`): pooled with the machine's measured launch spread when ``evidence`` is a
    measurement (noise.json, the store), else — with at most :data:`.launches.FLOOR_DF` df — with ``evidence``'s
    SD counted as FLOOR_DF df; then at its upper :data:`CONFIDENCE` bound on the pooled df. Three launches alone
    do not bound it: on the real-noise corpus, three launches of one program showed less than 1/8 of its launch
    SD in 5 % of pilots (they ran in one quiet spell), and the plans made from their spread alone delivered the
    promised power for 45–66 % of pilots (bench/bench_plan.py, README "Statistics")."""
    from .launches import FLOOR_DF

    where = f"these {launches} launches of {configs} configuration{'' if configs == 1 else 's'}"
    own = f"{100 * sd:.1f} % measured on {where} ({df} df)"
    m = evidence.measurement
    if m is None and evidence.sd > 0:
        m, why = (evidence.sd, FLOOR_DF), f"{100 * evidence.sd:.3g} % ({evidence.source}) counted as {FLOOR_DF} df"
    elif m is not None:
        why = f"the {100 * m[0]:.3g} % measured on this machine ({evidence.source}, {m[1]} df)"
    else:
        return measured(sd, df, launches, "arms", where)
    pooled_df = df + m[1]
    pooled = math.sqrt((df * sd ** 2 + m[1] * m[0] ** 2) / pooled_df)
    used = max(upper_bound(pooled, pooled_df), pooled)
    return LaunchNoise(used, "arms", f"{own}, pooled with {why}: {100 * pooled:.1f} %, {100 * used:.1f} % at its "
                                     f"upper {100 * CONFIDENCE:g} % bound", sd, df, launches)


def plan_design(configs: dict[str, list[np.ndarray]], effect: float, *, fallback: LaunchNoise, level: float = LEVEL,
                power: float = 0.80, threshold: float = 0.0,
                floor_sd: float = LAUNCH_SD_DEFAULT) -> tuple[dict, LaunchNoise, dict]:
    """The design ``plan`` recommends from a pilot (per configuration its launches' steady runs): the run noise
    within launches counted at its effective size (lag-1 autocorrelation ρ: a run counts (1 − ρ)/(1 + ρ)), the
    launch SD measured on the pilot at its upper bound — or ``fallback`` (the evidence a single launch needs)
    when no configuration has two launches. Returns (design, the launch noise used, the pilot's profile)."""
    from .launches import design, log_median_stats

    prof = profile(configs)
    within, rho = prof["within_sd"] or 0.0, max(0.0, min(prof["lag1_autocorrelation"] or 0.0, 0.95))
    within_eff = within * math.sqrt((1 + rho) / (1 - rho))
    est = estimate([log_median_stats(runs) for runs in configs.values() if len(runs) >= 2])
    noise = pilot_noise(*est, fallback, sum(len(r) >= 2 for r in configs.values())) if est is not None else fallback
    d = design(within_eff, noise.sd, effect, level=level, power=power, threshold=threshold, floor_sd=floor_sd)
    d["within_sd_effective"] = within_eff
    return d, noise, prof
