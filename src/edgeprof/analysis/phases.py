"""LLM-aware analysis of one profile (pure): runs grouped into phases (prefill, decode, …) — never pooled —
each with its own latency; for decode, per-token latency, tokens/s with an interval, time to first token, and
the latency's slope with position (KV length) separated from drift over time.

The ETDump does not name the method of a run (every run is an ``Execute`` block, and methods of one model can
have the same event names), so phases come from labels: ``--phases`` run ranges, a run-order file written
beside the ETDump (``<stem>.runs.json``: one ``{"method", "position", "generation"}`` per run), or — when
neither is given — the runs' event signatures (different graphs are different phases; one signature = one
phase ``all``).

Position slope: ordinary least squares of a decode step's latency on its position and its run index (time),
``ms ~ a + b·position + c·run_index``, with t intervals on the residual variance. With one generation position
and time move together and cannot be separated: the slope is then reported as not identifiable, never as a
number that is really drift. Categories whose per-run time grows with position are found the same way, each
interval at level 1 − 0.05/k for k categories (Bonferroni), so a list of growing categories is a family-wise
5 % claim.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UsageError

ALPHA = 0.05


def parse_phases(spec: str, n_runs: int) -> list[str]:
    """``0:1=prefill,1:65=decode,65:66=prefill,66:=decode`` → a label per run (run index ranges, end exclusive)."""
    labels = [""] * n_runs
    for part in spec.split(","):
        rng, _, name = part.partition("=")
        a, _, b = rng.partition(":")
        try:
            lo = int(a) if a.strip() else 0
            hi = int(b) if b.strip() else n_runs
        except ValueError:
            raise UsageError(f"--phases: '{part}' is not START:END=NAME") from None
        if not name or lo < 0 or hi > n_runs or lo >= hi:
            raise UsageError(f"--phases: '{part}' must name runs inside 0:{n_runs}")
        for i in range(lo, hi):
            if labels[i]:
                raise UsageError(f"--phases: run {i} is labelled twice")
            labels[i] = name.strip()
    missing = [i for i, x in enumerate(labels) if not x]
    if missing:
        raise UsageError(f"--phases: runs {missing[:5]} have no phase")
    return labels


def ols(y: np.ndarray, cols: list[np.ndarray], alpha: float = ALPHA) -> dict | None:
    """Coefficients, standard errors and (1 − alpha) t intervals of y on [1, cols…]; None when not identifiable."""
    from .special import stdtrit

    X = np.column_stack([np.ones(y.size), *cols])
    n, k = X.shape
    if n <= k + 1 or np.linalg.matrix_rank(X) < k:
        return None
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ beta
    s2 = float(resid @ resid) / (n - k)
    cov = s2 * np.linalg.inv(X.T @ X)
    se = np.sqrt(np.diag(cov))
    t = float(stdtrit(n - k, 1 - alpha / 2))
    return {"coef": beta.tolist(), "se": se.tolist(), "low": (beta - t * se).tolist(), "high": (beta + t * se).tolist(),
            "df": n - k}


def position_slope(ms: np.ndarray, position: np.ndarray, run_index: np.ndarray, alpha: float = ALPHA) -> dict:
    """ms per position step (and per run, the drift), each with its interval; why not, when not identifiable."""
    fit = ols(ms, [position.astype(float), run_index.astype(float)], alpha)
    if fit is None:
        return {"identifiable": False, "why": "position and run order move together (one generation): position "
                                              "cannot be separated from drift"}
    return {"identifiable": True, "ms_per_position": fit["coef"][1], "low": fit["low"][1], "high": fit["high"][1],
            "drift_ms_per_run": fit["coef"][2], "drift_low": fit["low"][2], "drift_high": fit["high"][2],
            "df": fit["df"], "significant": fit["low"][1] > 0 or fit["high"][1] < 0}


def tokens_per_second(ms: np.ndarray, seed: int = 0, resamples: int = 2000) -> dict:
    """1000 / median step time, with the 95 % interval of the median carried through (monotone): the percentile
    bootstrap, or the order-statistic interval beyond ``BOOTSTRAP_MAX_N`` steps (:func:`~.stats.bootstrap_median_ci`)."""
    from .stats import bootstrap_median_ci

    med = float(np.median(ms))
    ci = bootstrap_median_ci(ms, level=1 - ALPHA, resamples=resamples, seed=seed)
    lo, hi = (ci["low_ms"], ci["high_ms"]) if ci else (med, med)
    return {"tokens_per_s": 1000.0 / med, "low": 1000.0 / float(hi), "high": 1000.0 / float(lo),
            "median_step_ms": med}


def analyze_phases(latency_ms: np.ndarray, labels: list[str], *, positions=None, generations=None,
                   category_ms: dict[str, np.ndarray] | None = None, init_ms: float | None = None,
                   seed: int = 0) -> dict:
    """Per phase: latency summary (robust report of its runs); for a ``decode`` phase the decode analysis."""
    from .latency import robust_latency

    lat = np.asarray(latency_ms, dtype=float)
    runs = np.arange(lat.size)
    out: dict[str, Any] = {"phases": [], "pooled": False}
    names = list(dict.fromkeys(labels))
    for name in names:
        idx = runs[np.array([x == name for x in labels])]
        rep = robust_latency(lat[idx], name=name, seed=seed)
        rep.pop("latencies_ms", None)
        ph = {"name": name, "first_run": int(idx[0]), "count": int(idx.size), "median_ms": rep["median_ms"],
              "latency": rep}
        if category_ms:  # this phase's own breakdown: mean time per run of each category / overhead line, and
            # its share of the phase's mean run (of the lines' sum where they overlap past it: breakdown.share_base)
            from .breakdown import share_base

            names_c = [c for c, v in category_ms.items() if np.asarray(v)[idx].any()]
            m = np.column_stack([np.asarray(category_ms[c], dtype=float)[idx] for c in names_c]) if names_c else None
            base = float(share_base(m, lat[idx]).mean()) if m is not None else 0.0
            ph["breakdown"] = sorted(({"line": c, "ms_per_run": float(m[:, j].mean()),
                                       "share_pct": 100 * max(float(m[:, j].mean()), 0.0) / base if base > 0 else 0.0}
                                      for j, c in enumerate(names_c)), key=lambda r: -r["ms_per_run"]) if m is not None else []
        if name == "decode" and idx.size >= 3:
            steady = idx[1:] if idx.size > 3 else idx   # the first decode step of a recording is warm-up prone
            d = {"per_token_ms": {"p50": float(np.percentile(lat[steady], 50)), "p90": float(np.percentile(lat[steady], 90)),
                                  "p99": float(np.percentile(lat[steady], 99)), "max": float(lat[steady].max())},
                 **tokens_per_second(lat[steady], seed)}
            if positions is not None:
                pos = np.asarray(positions)[steady]
                d["position_slope"] = position_slope(lat[steady], pos, steady)
                if category_ms:
                    grow = []
                    a_cat = ALPHA / max(len(category_ms), 1)  # Bonferroni over the categories tested
                    for cat, v in category_ms.items():
                        s = position_slope(np.asarray(v)[steady], pos, steady, a_cat)
                        if s.get("identifiable") and s["low"] > 0:
                            grow.append({"category": cat, "ms_per_position": s["ms_per_position"], "low": s["low"],
                                         "high": s["high"]})
                    d["growing_with_position"] = sorted(grow, key=lambda g: -g["ms_per_position"])
            ph["decode"] = d
        out["phases"].append(ph)
    if "prefill" in names:
        first = next(i for i, x in enumerate(labels) if x == "prefill")
        pre = [i for i, x in enumerate(labels) if x == "prefill"]
        out["time_to_first_token"] = {
            "first_ms": float(lat[first]) + (init_ms or 0.0), "includes_load_and_init": init_ms is not None,
            "init_ms": init_ms, "steady_prefill_ms": float(np.median(lat[pre[1:]])) if len(pre) > 1 else None,
            "note": "the first prefill after loading, with the Default block's load and init time; later "
                    "generations' prefill (steady) is given apart"}
    return out


SPIKE = 2.0  # a run this many times the median of its neighbours (5 before, 5 after) starts a phase
SPIKE_NEIGHBOURS = 5
SPIKE_MAX_SHARE = 0.2
SPIKE_NEAR = 0.75  # runs between 0.75×SPIKE and SPIKE are "near": as many as there are spikes, and they are noise


def spike_ratios(lat) -> np.ndarray:
    """Each run's time over the median of the ``SPIKE_NEIGHBOURS`` runs after it and (the smaller of the two) over
    the median of those before it; the first run against the runs after it only; NaN for the last run. Whole
    windows at once (a median of an odd window is its middle value, the same as one run at a time), the few
    shorter windows at the ends one by one."""
    from numpy.lib.stride_tricks import sliding_window_view

    v = np.asarray(lat, dtype=float)
    n, k = v.size, SPIKE_NEIGHBOURS
    after = np.full(n, np.nan)
    before = np.full(n, np.nan)
    if n > k:
        after[: n - k] = np.median(sliding_window_view(v[1:], k), axis=1)
        before[k:] = np.median(sliding_window_view(v[:-1], k), axis=1)
    for i in range(max(n - k, 0), n - 1):
        after[i] = np.median(v[i + 1:])
    for i in range(1, min(k, n)):
        before[i] = np.median(v[:i])
    ratio = v / after
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(before), ratio, np.minimum(ratio, v / before))


def shape_labels(lat) -> tuple[list[str], list[int], str] | None:
    """Prefill and decode told apart by the run times alone, when the runs carry no other mark: a run at least
    ``SPIKE``× the median of the runs around it (``SPIKE_NEIGHBOURS`` before and after; the first run against
    the runs after it) is a prefill, the runs after it decode steps (their position counted from it). None unless
    the first run and at least one later run stand out so (a single long first run is what a warm-up looks like),
    or when too many do (more than ``SPIKE_MAX_SHARE`` of the runs: no prefill/decode shape), or when the spikes
    do not stand apart from the other runs: as many runs come near (``SPIKE_NEAR``×``SPIKE`` or more, below it) as
    reach it. A prefill is a step apart from decoding; the spikes of a long, noisy recording of one method are the
    tail of its noise (calibrated on the bundled decoders — no near run — and on 2,300- and 11,600-run XNNPACK
    recordings, whose 2–10 spikes come with 12–78 near runs).
    Returns (labels, positions, the evidence)."""
    import numpy as np

    ratio = spike_ratios(lat)
    n = ratio.size
    with np.errstate(invalid="ignore"):
        starts = np.flatnonzero(ratio >= SPIKE).tolist()
        near = int(np.count_nonzero((ratio >= SPIKE * SPIKE_NEAR) & (ratio < SPIKE)))
    # one long first run is what any warm-up looks like: a prefill shape needs it repeated (two generations)
    if len(starts) < 2 or len(starts) > SPIKE_MAX_SHARE * n or starts[0] != 0 or near >= len(starts):
        return None
    labels, positions = [], []
    pos = 0
    start_set = set(starts)
    for i in range(n):
        if i in start_set:
            labels.append("prefill")
            pos = 0
        else:
            pos += 1
            labels.append("decode")
        positions.append(pos)
    evidence = (f"inferred from the run times: run(s) {', '.join(map(str, starts[:6]))} take at least {SPIKE:g}× the "
                f"runs around them (a prefill: one long run, then shorter decode steps); name the phases with "
                "--phases or a run-order file to be sure")
    return labels, positions, evidence


def signature_labels(signatures: list) -> list[str]:
    """One phase per distinct run signature (the run's event names in order), named in order of appearance."""
    names: dict = {}
    for sig in signatures:
        names.setdefault(sig, f"phase{len(names) + 1}")
    return ["all"] * len(signatures) if len(names) == 1 else [names[s] for s in signatures]


HASH_MULTIPLIER = 0x9E3779B97F4A7C15  # odd: every power is odd, so no position's code is ever multiplied away


def run_signatures(run_index: np.ndarray, codes: np.ndarray, runs: list[int]) -> list[int]:
    """For each run of ``runs``, an id of its signature — the sequence of event-name ``codes`` of its events, in event
    order (``run_index`` per event) — equal ids exactly where the sequences are equal (a run without events has the
    empty one). Found without a tuple per run: runs are grouped by (length, a 64-bit polynomial hash of their codes),
    then each run is compared code by code with the first run of its group; a hash collision (never seen) falls
    back to comparing tuples."""
    run_index = np.asarray(run_index, dtype=np.int64)
    codes = np.asarray(codes, dtype=np.int64)
    keep = run_index >= 0
    run_index, codes = run_index[keep], codes[keep]
    order = np.argsort(run_index, kind="stable")  # events of a run together, in their order
    r, c = run_index[order], codes[order].astype(np.uint64)
    ids = np.asarray(runs, dtype=np.int64)
    if r.size == 0:
        return [0] * ids.size
    starts = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
    present = r[starts]
    length = np.diff(np.r_[starts, r.size])
    pos = np.arange(r.size) - np.repeat(starts, length)
    powers = np.cumprod(np.full(int(length.max()), HASH_MULTIPLIER, dtype=np.uint64), dtype=np.uint64)
    h = np.add.reduceat((c + np.uint64(1)) * powers[pos], starts)  # wraps modulo 2^64, as meant
    key: dict[tuple[int, int], int] = {}
    group = np.array([key.setdefault((int(n), int(x)), len(key)) for n, x in zip(length.tolist(), h.tolist())])
    first = np.unique(group, return_index=True)[1]  # each group's first run (groups are numbered 0, 1, …)
    rep = np.repeat(starts[first[group]], length) + pos
    if not np.array_equal(c, c[rep]):  # two different sequences share a hash: compare them as tuples
        seqs = {int(k): tuple(c[s:s + n].tolist()) for k, s, n in zip(present.tolist(), starts.tolist(), length.tolist())}
        names: dict = {}
        return [names.setdefault(seqs.get(i, ()), len(names)) for i in ids.tolist()]
    by_run = dict(zip(present.tolist(), group.tolist()))
    names = {}
    return [names.setdefault(by_run.get(i, -1), len(names)) for i in ids.tolist()]
