"""``edgeprof plan``: how many launches and runs would resolve a change of a given size, from what a run measured."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..io.workspace import Workspace
from ._common import as_list, workspace
from .results import PlanResult


def parse_effect(text) -> float:
    """``3%``, ``3 %`` or ``0.03`` → 0.03."""
    s = str(text).strip()
    try:
        v = float(s[:-1].strip()) / 100 if s.endswith("%") else float(s)
    except ValueError:
        raise UsageError(f"--effect: a relative change such as 3% or 0.03, got {text!r}") from None
    if not 0 < v < 10:
        raise UsageError(f"--effect: must be above 0 % and below 1000 %, got {text!r}")
    return v


def plan(inputs, *, effect, threshold: float = 0.0, level: float = 0.95, power: float = 0.80, run_dir=None,
         threads: int | None = None, launch_cv: float | None = None, warmup="auto",
         ws: Workspace | None = None) -> PlanResult:
    """For each configuration in ``inputs`` (a run folder's experiments, or files: several files of one
    experiment are its launches) and for all of them together: the per-run noise within launches, the
    launch-to-launch SD (REML; the allowance when a configuration has one launch) and the design that resolves
    ``effect`` — the expected interval excludes ``threshold`` with probability ``power``."""
    import numpy as np

    from ..analysis.latency import detect_warmup
    from ..analysis.launches import (
        LAUNCH_CV_DEFAULT,
        design,
        log_median_stats,
        reml_tau2,
    )

    eff = parse_effect(effect) if not isinstance(effect, float) else effect
    ws = workspace(ws, run_dir)
    files = [f for spec in as_list(inputs) for f in ws.resolve(spec, run_dir, threads)]
    groups: dict[str, list[Path]] = {}
    for f in files:
        groups.setdefault(ws.describe(f).experiment or f.stem, []).append(f)
    configs, all_groups, within_all = [], [], []
    for name, fs in groups.items():
        launches = []
        for f in fs:
            v = ws.series(f).values_ms
            w = detect_warmup(v)["count"] if warmup == "auto" else int(warmup)
            launches.append(v[w:])
        y, v = log_median_stats(launches)
        within = float(np.sqrt(np.mean([np.var(np.log(x), ddof=1) for x in launches if x.size > 1])))
        within_all.append(within)
        if len(launches) >= 2:
            all_groups.append((y, v))
            tau, source = float(np.sqrt(reml_tau2([(y, v)]))), "measured (REML)"
        else:
            tau = LAUNCH_CV_DEFAULT if launch_cv is None else launch_cv
            source = f"not measurable from one launch: the allowance {100 * tau:g} %"
        d = design(within, tau, eff, level=level, power=power, threshold=threshold)
        configs.append({"name": name, "launches": len(launches), "runs": [int(x.size) for x in launches],
                        "within_sd": within, "launch_sd": tau, "launch_sd_source": source,
                        "recommended": d["recommended"], "note": d["note"]})
    if all_groups:
        tau = float(np.sqrt(reml_tau2(all_groups)))
        source = f"measured (REML over {sum(g[0].size for g in all_groups)} launches of {len(all_groups)} configuration(s))"
    else:
        tau = LAUNCH_CV_DEFAULT if launch_cv is None else launch_cv
        source = f"not measurable (one launch each): the allowance {100 * tau:g} %"
    within = float(max(within_all)) if within_all else 0.0
    overall = design(within, tau, eff, level=level, power=power, threshold=threshold)
    rec = overall["recommended"]
    statement = (f"to resolve a {100 * eff:.3g} % change (power {100 * power:g} %, {100 * level:g} % interval"
                 + (f", beyond a {100 * threshold:g} % threshold" if threshold else "") + "): "
                 + (f"{rec['launches_per_arm']} launches × {rec['runs_per_launch']} runs per arm"
                    if rec else "more than 50 launches × 1,000 runs per arm")
                 + f" — {overall['note']}")
    return PlanResult({"effect": eff, "threshold": threshold, "level": level, "power": power,
                       "within_sd": within, "launch_sd": tau, "launch_sd_source": source,
                       "recommended": rec, "statement": statement, "configurations": configs,
                       "options": overall["options"],
                       "method": ("expected t interval of the log ratio on 2k − 2 degrees of freedom; per-launch "
                                  "variance = launch SD² + (π/2)·within SD²/runs (a median's); cost = runs + 200 "
                                  "per launch"),
                       "inputs": [str(f) for f in files]})
