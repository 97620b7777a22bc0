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
from functools import cache

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


@cache
def session(name: str) -> dict[str, list[Launch]]:
    import polars as pl

    from edgeprof.analysis.latency import detect_warmup

    df = pl.read_csv(NOISE / f"{name}.csv.gz", infer_schema_length=None)
    extra = [c for c in df.columns if c.startswith(("line:", "op:"))]
    out: dict[str, list[Launch]] = {}
    for (prog, _launch), d in sorted(df.group_by(["program", "launch"]), key=lambda t: (t[0][0], t[0][1])):
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


def pilot_outcomes(launches, effect: float, *, pilots: int, draws: int, seed: int = 0, pilot_size: int = 3):
    """``plan``'s promise checked pilot by pilot on real launches: each pilot of ``pilot_size`` launches (every
    one, or a seeded sample of ``pilots``) → the design ``plan`` recommends (:func:`edgeprof.analysis.noise.plan_design`
    at compare's threshold) → that design recorded ``draws`` times from the program's launches outside the pilot
    (with replacement, the first n steady runs of each), the effect applied to the candidate, judged as compare
    judges a multi-launch comparison with nothing measured (:func:`contrast_many`). Per pilot: (promised power,
    delivered power, launches per arm, runs per launch), all None when ``plan`` recommends no design."""
    from edgeprof.analysis import noise as nz
    from edgeprof.analysis.launches import LAUNCH_SD_DEFAULT, log_median_stats
    from edgeprof.conventions import THRESHOLD

    every = list(itertools.combinations(range(len(launches)), pilot_size))
    chosen = every if len(every) <= pilots else random.Random(seed).sample(every, pilots)
    rng = np.random.default_rng(seed)
    cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def per_launch(n):
        if n not in cache:
            st = [log_median_stats([x.steady[:n]]) for x in launches]
            cache[n] = np.array([s[0][0] for s in st]), np.array([s[1][0] for s in st])
        return cache[n]

    out = []
    for pil in chosen:
        d, _, _ = nz.plan_design({"pilot": [launches[i].steady for i in pil]}, effect, fallback=nz.default(),
                                 threshold=THRESHOLD)
        rec = d["recommended"]
        if rec is None:
            out.append((None, None, None, None))
            continue
        k, n = rec["launches_per_arm"], rec["runs_per_launch"]
        rest = np.array([i for i in range(len(launches)) if i not in pil])
        y, v = per_launch(n)
        ib, ic = rest[rng.integers(0, rest.size, (draws, k))], rest[rng.integers(0, rest.size, (draws, k))]
        _, lo, _ = contrast_many(y[ib], v[ib], y[ic] - math.log1p(effect), v[ic], launch_cv=LAUNCH_SD_DEFAULT)
        out.append((rec["power"], float(np.mean(lo > math.log1p(THRESHOLD))), k, n))
    return out


def reml_tau2_many(yb: np.ndarray, vb: np.ndarray, yc: np.ndarray, vc: np.ndarray) -> np.ndarray:
    """:func:`edgeprof.analysis.launches.reml_tau2` of two groups for D comparisons at once (rows of (D, k)
    arrays): the same grid, refinement and tie rule, row by row in lock-step (the test checks it against the
    scalar function on resampled draws)."""
    from edgeprof.analysis.launches import V_FLOOR

    vb, vc = np.maximum(vb, V_FLOOR), np.maximum(vc, V_FLOOR)
    cen = np.concatenate([yb - yb.mean(1, keepdims=True), yc - yc.mean(1, keepdims=True)], axis=1)
    spread = cen.var(axis=1)
    vmax = np.maximum(vb.max(1), vc.max(1))

    def nll(grid):  # grid (D, G) → (D, G)
        vals = np.zeros(grid.shape)
        for y, v in ((yb, vb), (yc, vc)):
            t = grid[:, :, None] + v[:, None, :]
            w = 1.0 / t
            mu = (w * y[:, None, :]).sum(2) / w.sum(2)
            vals += np.log(t).sum(2) + np.log(w.sum(2)) + (w * (y[:, None, :] - mu[:, :, None]) ** 2).sum(2)
        return 0.5 * vals

    hi = np.maximum(np.maximum(10 * spread, 10 * vmax), 1e-12)
    lo = np.maximum(vmax * 1e-9, 1e-18)
    grid = np.concatenate([np.zeros((yb.shape[0], 1)), np.geomspace(lo, hi, 48, axis=1)], axis=1)
    rows = np.arange(yb.shape[0])
    vals = nll(grid)
    i = vals.argmin(1)
    best, best_val = grid[rows, i], vals[rows, i]
    a, b = grid[rows, np.maximum(i - 1, 0)], grid[rows, np.minimum(i + 1, grid.shape[1] - 1)]
    for _ in range(7):
        grid = np.linspace(a, b, 33, axis=1)
        vals = nll(grid)
        i = vals.argmin(1)
        better = vals[rows, i] < best_val
        best = np.where(better, grid[rows, i], best)
        best_val = np.where(better, vals[rows, i], best_val)
        a, b = grid[rows, np.maximum(i - 1, 0)], grid[rows, np.minimum(i + 1, grid.shape[1] - 1)]
    return best


def contrast_many(yb, vb, yc, vc, *, level: float = 0.95, launch_cv: float, measured=None) -> tuple[np.ndarray, ...]:
    """(estimate, low, high) of :func:`edgeprof.analysis.launches.contrast` in its multi-launch regime (k ≥ 2 per
    arm, equal k) for D comparisons at once; ``measured``: (SD, df) pooled as compare pools a noise profile."""
    from edgeprof.analysis.launches import FLOOR_DF, V_FLOOR
    from edgeprof.analysis.special import stdtrit

    vb, vc = np.maximum(vb, V_FLOOR), np.maximum(vc, V_FLOOR)
    kb, kc = yb.shape[1], yc.shape[1]
    t2 = reml_tau2_many(yb, vb, yc, vc)[:, None]
    wb, wc = 1 / (t2 + vb), 1 / (t2 + vc)
    mb, mc = (wb * yb).sum(1) / wb.sum(1), (wc * yc).sum(1) / wc.sum(1)
    df = kb + kc - 2
    q = ((wb * (yb - mb[:, None]) ** 2).sum(1) + (wc * (yc - mc[:, None]) ** 2).sum(1)) / df
    var = (1 / wb.sum(1) + 1 / wc.sum(1)) * q
    ss = ((yb - yb.mean(1, keepdims=True)) ** 2).sum(1) + ((yc - yc.mean(1, keepdims=True)) ** 2).sum(1)
    var = np.maximum(var, ss / df * (1 / kb + 1 / kc))
    a = (1 - level) / 2
    se, crit = np.sqrt(np.maximum(var, 0)), float(stdtrit(df, 1 - a))
    half = crit * se
    if (measured is None or measured[1] <= 0) and df <= FLOOR_DF and launch_cv > 0:
        measured = (launch_cv, FLOOR_DF)
    if measured is not None and measured[1] > 0:
        m_sd, m_df = measured
        se_m = np.sqrt((ss + m_df * m_sd ** 2) / (df + m_df) * (1 / kb + 1 / kc))
        half = np.maximum(half, float(stdtrit(df + m_df, 1 - a)) * se_m)
    est = mb - mc
    return est, est - half, est + half
