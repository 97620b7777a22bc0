"""``edgeprof plan``: how many launches and runs would resolve a change of a given size, from what a run measured."""

from __future__ import annotations

from pathlib import Path

from ..conventions import LEVEL, THRESHOLD, parse_fraction
from ..files import command
from ..io.workspace import Workspace
from ._common import as_list, checked_threshold, common_root, configurations, workspace
from .results import PlanResult


def parse_effect(text) -> float:
    """``3%``, ``3 %`` or ``0.03`` → 0.03 (a bare number above 1 is refused: ``3`` is not 300 %)."""
    return parse_fraction(text, "--effect", upper=10.0, allow_zero=False)


def write_noise_profile(folder: Path, configs: dict, written_by: str) -> Path | None:
    """``noise.json`` in ``folder``: the launch-to-launch noise these configurations measured (None when none had
    two launches)."""
    from datetime import datetime, timezone

    from ..analysis.noise import profile
    from ..conventions import SCHEMA_VERSION
    from ..io.runfolder import NOISE
    from ..writer import write_text
    from ..render.jsonfmt import dumps

    doc = profile(configs)
    if doc["launch_sd"]["median"] is None:
        return None
    doc.update(schema_version=SCHEMA_VERSION, kind="noise_profile", tool="edgeprof", written_by=written_by,
               generated_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    target = Path(folder) / NOISE
    write_text(target, dumps(doc))
    return target


@command
def plan(inputs, *, effect, threshold: float = THRESHOLD, level: float = LEVEL, power: float = 0.80, run_dir=None,
         threads: int | None = None, launch_cv=None, store=None, warmup="auto", write: bool = False,
         ws: Workspace | None = None) -> PlanResult:
    """For each configuration in ``inputs`` (a run folder's experiments, or files: the launches of one
    experiment — ETDumps or timeline CSVs alike, grouped as ``compare -b DIR`` groups them) and for all of them
    together: the per-run noise within launches (with its lag-1 autocorrelation: correlated runs carry less
    information than their count), the launch-to-launch SD — measured (REML) and used at its upper 80 % bound,
    or from the evidence a single launch needs (``--store``, ``noise.json``, the default) — and the design that
    resolves ``effect``: the expected interval excludes ``threshold`` with probability ``power`` as long as the
    launch SD is no larger than the value used. ``write`` keeps the measured noise as ``noise.json``."""
    import numpy as np

    from ..analysis import noise as nz

    threshold = checked_threshold(threshold)
    from ..analysis.selection import select_runs
    from ..analysis.launches import LAUNCH_SD_DEFAULT, log_median_stats
    from .compare import launch_noise

    eff = effect if isinstance(effect, float) else parse_effect(effect)
    ws = workspace(ws, run_dir)
    files = [f for spec in as_list(inputs) for f in ws.resolve(spec, run_dir, threads)]
    groups = configurations(ws, files)
    configs, steady = [], {}
    for name, fs in groups.items():
        values = [ws.series(f).values_ms for f in fs]
        steady[name] = select_runs(values, warmup, [str(f) for f in fs]).steady(values)
    fallback = launch_noise(ws, files, launch_cv, store)
    # the allowance compare pools with two launches per arm and nothing measured: the default, or --launch-cv
    floor_sd = fallback.sd if fallback.source == "given" else LAUNCH_SD_DEFAULT
    overall, noise, prof = nz.plan_design(steady, eff, fallback=fallback, level=level, power=power,
                                          threshold=threshold, floor_sd=floor_sd)
    within, rho, within_eff = prof["within_sd"] or 0.0, prof["lag1_autocorrelation"], overall["within_sd_effective"]
    tau = noise.sd
    for name, launches in steady.items():
        one = nz.estimate([log_median_stats(launches)]) if len(launches) >= 2 else None
        configs.append({"name": name, "launches": len(launches), "runs": [int(x.size) for x in launches],
                        "within_sd": float(np.sqrt(np.mean([np.var(np.log(x), ddof=1) for x in launches if x.size > 1]
                                                           or [0.0]))),
                        "launch_sd_measured": one[0] if one else None, "launch_sd": tau,
                        "launch_sd_source": noise.detail, "recommended": overall["recommended"],
                        "note": overall["note"]})  # one noise for all: the design plan_design made
    rec = overall["recommended"]
    promise = (f"the power holds while the launch SD is at most {100 * tau:.3g} % ({noise.detail}; with "
               f"{100 * nz.CONFIDENCE:g} % confidence it is)" if noise.df else
               f"the power holds at a launch SD of {100 * tau:.3g} % ({noise.detail})")
    statement = (f"to resolve a {100 * eff:.3g} % change (power {100 * power:g} %, {100 * level:g} % interval"
                 + (f", beyond a {100 * threshold:g} % threshold" if threshold else "") + "): "
                 + (f"{rec['launches_per_arm']} launches × {rec['runs_per_launch']} runs per arm"
                    if rec else "more than 50 launches × 1,000 runs per arm")
                 + f" — {overall['note']}; {promise}")
    written = None
    if write and noise.source == "arms":
        folder = Path(run_dir) if run_dir is not None else common_root(files)
        written = write_noise_profile(folder, steady, "edgeprof plan")
    return PlanResult({"effect": eff, "threshold": threshold, "level": level, "power": power,
                       "within_sd": within, "lag1_autocorrelation": rho, "within_sd_effective": within_eff,
                       "launch_sd": tau, "launch_sd_source": noise.detail,
                       "launch_noise": noise.to_json(),
                       "recommended": rec, "statement": statement, "configurations": configs,
                       "options": overall["options"], "written": str(written) if written else None,
                       "method": ("expected t interval of the log ratio on 2k − 2 degrees of freedom; per-launch "
                                  "variance = launch SD² + (π/2)·(within SD²·(1 + ρ)/(1 − ρ))/runs (a median's, "
                                  "lag-1 autocorrelation ρ); a measured launch SD at its upper 80 % confidence "
                                  "bound; cost = runs + 200 per launch"),
                       "inputs": [str(f) for f in files]})
