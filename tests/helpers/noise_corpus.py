"""The real-noise corpus (tests/data/noise): recordings of the six fixture programs made with ``edgeprof run``
— 12 interleaved launches × 300 runs per program and session, sessions at different times with and without
background load (tools/record_noise_corpus.py) — and the resampling the statistics are judged by.

A comparison is resampled from one program of one session: its launches split into a baseline and a candidate
arm (A/A: nothing changed), or the candidate's runs divided by a factor (a known speedup). Every split of the
launches is used when there are at most ``limit`` of them, else a seeded sample. The per-launch statistics are
computed once per launch with edgeprof's own functions (warm-up detection, the metric's log value and its
variance), and each split is judged by the same contrast and verdict rule ``compare`` uses
(:func:`edgeprof.analysis.compare.metric_contrasts`).
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from testdata import DATA

NOISE = DATA / "noise"
SESSIONS = tuple(sorted(p.name[: -len(".csv.gz")] for p in NOISE.glob("*.csv.gz")))
PROGRAMS = ("toycnn_portable", "toycnn_xnn", "toycnn_xnnq8", "tel_portable", "tel_xnn", "tel_xnnq8")


@dataclass
class Launch:
    runs: np.ndarray  # end-to-end ms, every recorded run
    steady: np.ndarray  # after the detected warm-up
    skip: int
    position: int
    columns: dict = field(default_factory=dict)  # "line:X" / "op:Y" → ms per run
    cache: dict = field(default_factory=dict)


@lru_cache(maxsize=None)
def session(name: str) -> dict[str, list[Launch]]:
    import polars as pl

    from edgeprof.analysis.latency import detect_warmup

    df = pl.read_csv(NOISE / f"{name}.csv.gz", infer_schema_length=None)
    extra = [c for c in df.columns if c.startswith(("line:", "op:"))]
    out: dict[str, list[Launch]] = {}
    for (prog, launch), d in sorted(df.group_by(["program", "launch"]), key=lambda t: (t[0][0], t[0][1])):
        d = d.sort("run")
        runs = d["latency_ms"].to_numpy().astype(float)
        skip = detect_warmup(runs)["count"]
        cols = {c: d[c].fill_null(0.0).to_numpy().astype(float) for c in extra if d[c].null_count() < d.height}
        out.setdefault(prog, []).append(Launch(runs, runs[skip:], skip, int(d["position"][0] or 0), cols))
    return out


def splits(n: int, kb: int, kc: int, limit: int, seed: int = 0) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Disjoint (baseline, candidate) launch index sets; all of them when there are at most ``limit``."""
    every = [(b, c) for b in itertools.combinations(range(n), kb)
             for c in itertools.combinations([i for i in range(n) if i not in b], kc)]
    if kb == kc:  # (b, c) and (c, b) are the same A/A split mirrored: keep one
        every = [(b, c) for b, c in every if b < c]
    if len(every) <= limit:
        return every
    return random.Random(seed).sample(every, limit)


def machine_noise(programs: dict[str, list[Launch]]):
    """What ``edgeprof run`` wrote to noise.json for a session: the launch SD pooled over all its configurations
    (the evidence a comparison on this machine finds beside its run folder)."""
    from edgeprof.analysis import noise as nz

    doc = nz.profile({p: [x.steady for x in ls] for p, ls in programs.items()})
    return nz.from_profile(doc, "the session's noise.json")


def stats(launch: Launch) -> dict:
    """The launch's per-metric (log value, variance) — once per launch (edgeprof's :func:`metric_stats`)."""
    from edgeprof.analysis.launches import metric_stats
    from edgeprof.conventions import METRICS

    if "stats" not in launch.cache:
        launch.cache["stats"] = {m: tuple(a[0] for a in metric_stats([launch.steady], m)) for m in METRICS}
    return launch.cache["stats"]


def judge(launches: list[Launch], b: tuple, c: tuple, noise, *, factor: float = 1.0, threshold: float = 0.02,
          level: float = 0.95) -> dict:
    """One resampled comparison, per metric: verdict and interval (``factor``: the candidate's runs divided by it,
    which shifts every log metric by −log factor and leaves its variance as it is)."""
    from edgeprof.analysis.compare import contrasts_of
    from edgeprof.conventions import METRICS

    def arm(idx, shift=0.0):
        return {m: (np.array([stats(launches[i])[m][0] - shift for i in idx]),
                    np.array([stats(launches[i])[m][1] for i in idx])) for m in METRICS}
    return contrasts_of(arm(b), arm(c, math.log(factor)), noise, level=level, threshold=threshold)


def rate(values) -> float:
    values = list(values)
    return float(np.mean(values)) if values else float("nan")


def wilson_upper(k: int, n: int, z: float = 1.959963984540054) -> float:
    """Upper end of the Wilson interval of a rate k/n (a rate from a finite number of splits)."""
    if n == 0:
        return 1.0
    p = k / n
    return (p + z * z / (2 * n) + z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)


def line_tables(launch: Launch, factor: float = 1.0) -> tuple:
    """The launch as :func:`edgeprof.analysis.compare_ops.compare_lines` takes it: (runs × lines ns, end-to-end ns
    per run, {operator: ns per run}), steady runs only; ``factor`` divides every time."""
    from edgeprof.analysis.breakdown import LINES

    n = launch.runs.size
    m = np.zeros((n, len(LINES)))
    for j, name in enumerate(LINES):
        col = launch.columns.get(f"line:{name}")
        if col is not None:
            m[:, j] = col
    ops = {k[3:]: v[launch.skip:] * 1e6 / factor for k, v in launch.columns.items() if k.startswith("op:")}
    return m[launch.skip:] * 1e6 / factor, launch.steady * 1e6 / factor, ops


def flagged_lines(launches: list[Launch], b: tuple, c: tuple, noise, factor: float = 1.0) -> list[str]:
    """The accounting lines and operators a comparison of these arms calls faster or slower."""
    from edgeprof.analysis.compare_ops import compare_lines

    r = compare_lines([line_tables(launches[i]) for i in b], [line_tables(launches[i], factor) for i in c],
                      b_name="b", c_name="c", noise=noise)
    out = [x["line"] for x in r["categories"] if x.get("status") in ("faster", "slower")]
    out += [x["baseline_operator"] for x in r["operators"]["matched"] if x.get("status") in ("faster", "slower")]
    return out


def plan_power(launches: list[Launch], pilot: int, effect: float, *, pilots: int = 30, draws: int = 30,
               seed: int = 0) -> tuple[float, list[int]]:
    """``plan``'s promise checked on real launches: a random pilot of ``pilot`` launches → the design ``plan``
    recommends (:func:`edgeprof.analysis.noise.plan_design`) → that design drawn from the program's launches
    (resampled with replacement, the first n runs of each) with the effect applied, judged as ``compare`` judges a
    multi-launch comparison. Returns (the share of draws that found the effect, the designs' launches per arm)."""
    from edgeprof.analysis import noise as nz
    from edgeprof.analysis.launches import contrast, log_median_stats
    from edgeprof.conventions import verdict

    rng = np.random.default_rng(seed)
    found, ks = [], []
    for _ in range(pilots):
        pil = [launches[i] for i in rng.choice(len(launches), pilot, replace=False)]
        d, _, _ = nz.plan_design({"pilot": [x.steady for x in pil]}, effect, fallback=nz.default())
        rec = d["recommended"]
        if rec is None:  # no design within 50 launches × 1,000 runs: nothing promised
            continue
        k, n = rec["launches_per_arm"], rec["runs_per_launch"]
        ks.append(k)
        for _ in range(draws):
            yb, vb = log_median_stats([launches[i].steady[:n] for i in rng.choice(len(launches), k)])
            yc, vc = log_median_stats([launches[i].steady[:n] for i in rng.choice(len(launches), k)])
            ct = contrast(yb, vb, yc - math.log1p(effect), vc)
            found.append(verdict(math.exp(ct["low"]), math.exp(ct["high"]), 0.0) == "faster")
    return (float(np.mean(found)) if found else float("nan")), ks
