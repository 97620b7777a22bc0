"""A metric over commits, its change points, and what moved at each change (pure).

**Points.** Every commit of a series (one model, experiment, device and thread count) is one point: the
launches of that commit combined on the log scale, each weighted by ``1/(τ² + v)`` (``v`` its variance within
the launch, ``τ²`` the launch-to-launch variance of the series). ``τ²`` is measured, in this order: by REML over
the commits that have several launches; else from the spread of consecutive single-launch commits (the robust
scale of first differences, so rare steps do not inflate it, minus the within-launch part); else — fewer than
six points — the launch allowance of :mod:`.launches`. The interval of a point is normal with variance
``1/Σ 1/(τ² + v)``: launch-aware, so a commit measured once is not shown as precise.

**Change points.** Candidates come from binary segmentation with an L2 cost (``ruptures``, the cost from prefix
sums) on the points' log values, with the penalty ``β·σ̂²·log n`` (σ̂ the robust point-to-point noise). The
detection benchmark (``bench/bench_history.py``: precision and recall on generated histories built from real
profiles) found PELT and binary segmentation equal in precision and recall (within one change in 88) and a
kernel cost far weaker; binary segmentation takes 0.3 s on a year of commits where ruptures' PELT takes 3 s.
Each candidate is then **gated**: the log difference of the mean level in the windows after and before it (up
to ``WINDOW`` points each, bounded by the neighbouring candidates) needs a t test (pooled spread of the points,
floored by the points' own launch-aware variance) at p < ``ALPHA`` — strict, because the split was chosen where
the data differ most — *and* a size of at least the threshold; failing candidates are dropped weakest first and
the rest tested again with wider windows. A change is **confirmed** when at least two commits follow the
change's commit (its new level seen three times); a newer one is *pending* unless ``eager``.

**Attribution.** At a change, each category's and operator's mean time per run moves by Δ (ms, the same
windows); means add up, so Σ Δ over categories is the end-to-end mean's change, and each line's share of it
ranks the cause. Lines are listed largest |Δ| first, with their own interval.
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np
from .special import ndtr, stdtr, stdtrit

from .launches import LAUNCH_SD_DEFAULT, V_FLOOR, reml_tau2
from ..conventions import LEVEL

WINDOW = 20
CONFIRM_AFTER = 2  # commits after the change's commit before it is confirmed
PENALTY_BETA = 2.0
# the gate's p-value: a candidate's split was chosen where the data differ most, so its plain t test is
# optimistic; the benchmark calibrates this level against false changes on the generated history
ALPHA = 0.001
MIN_SIZE = 3
MIN_POINTS_FOR_SPREAD = 6
TRIM = 0.1  # share of the largest commit-to-commit differences left out of the series' own spread
Z = 1.959963984540054
# ruptures' methods the benchmark compares; DETECTOR is the one history uses
DETECTORS = ("binseg-l2", "pelt-l2", "pelt-rbf")
DETECTOR = "binseg-l2"
# a step at the newest commits that the gate cannot establish yet is *possible* when it passes this lenient
# level, among the last POSSIBLE_TAIL commits, and confirmable within POSSIBLE_LIMIT more commits
POSSIBLE_P = 0.003
POSSIBLE_TAIL = 5
POSSIBLE_LIMIT = 50
# the kind of a change (change_kind): deviation from a proportional change of every line
PROPORTIONAL_MAX = 0.25
CONCENTRATED_MIN = 0.5
UNTELLABLE_SHARE = 0.75  # one line moving alone gives D = 2(1 − share): at 0.75, CONCENTRATED_MIN
MATERIAL_SHARE = 0.05


def commit_points(keys: list, y: np.ndarray, v: np.ndarray, *, launch_cv: float | None = None,
                  prior=None) -> dict:
    """Points (one per distinct key, in first-appearance order) with launch-aware intervals.

    ``τ`` (the launch-to-launch SD) is, in this order: ``launch_cv`` when given; REML over the series' commits
    measured with several launches; ``prior`` (a :class:`~.noise.LaunchNoise` measured elsewhere — the history
    store's repeated launches on the device); the spread of consecutive single-launch commits
    (:func:`trimmed_spread`, at its upper 80 % bound); else the default launch SD.

    Returns ``{"keys", "estimate" (log), "var", "launches", "tau", "tau_source"}``."""
    from . import noise as nz

    y = np.asarray(y, dtype=float)
    v = np.maximum(np.nan_to_num(np.asarray(v, dtype=float), nan=0.0), V_FLOOR)
    order = list(dict.fromkeys(keys))
    idx = {k: i for i, k in enumerate(order)}
    g = np.array([idx[k] for k in keys], dtype=np.int64)
    groups = [(y[g == i], v[g == i]) for i in range(len(order))]
    multi = [(a, b) for a, b in groups if a.size > 1]
    if launch_cv is not None:
        tau2, source = launch_cv ** 2, f"given ({100 * launch_cv:g} % launch SD)"
    elif multi:
        tau2, source = reml_tau2(multi), f"REML over {len(multi)} commits with several launches"
    elif prior is not None:
        tau2, source = prior.sd ** 2, f"{100 * prior.sd:.1f} % launch SD from {prior.detail}"
    elif len(order) >= MIN_POINTS_FOR_SPREAD:
        sd, df = trimmed_spread(np.array([a[0] for a, _ in groups]))
        sd = max(nz.upper_bound(sd, df), sd)
        tau2 = max(sd * sd - float(np.median(v)), 0.0)
        source = (f"spread of {len(order)} consecutive single-launch commits ({100 * sd:.1f} % at its upper "
                  f"{100 * nz.CONFIDENCE:.0f} % bound)")
    else:
        tau2 = LAUNCH_SD_DEFAULT ** 2
        source = f"default ({100 * LAUNCH_SD_DEFAULT:g} % launch SD; too few commits to measure it)"
    est = np.empty(len(order))
    var = np.empty(len(order))
    for i, (a, b) in enumerate(groups):
        w = 1.0 / (tau2 + b)
        est[i] = float((w * a).sum() / w.sum())
        var[i] = 1.0 / float(w.sum())
    return {"keys": order, "estimate": est, "var": var, "launches": [int(a.size) for a, _ in groups],
            "tau": math.sqrt(tau2), "tau_source": source}


def trimmed_spread(y: np.ndarray) -> tuple[float, int]:
    """(SD of a point, degrees of freedom) from consecutive differences, the largest ``TRIM`` of them left out
    (steps are rare) and the rest scaled as a normal trimmed there. Unlike a median-based scale it sees launch
    noise that flips between two levels (a machine's modes), which a step detector must not mistake for steps."""
    from .special import ndtri

    d = np.abs(np.diff(np.asarray(y, dtype=float)))
    if d.size == 0:
        return 0.0, 0
    k = math.floor(TRIM * d.size)
    keep = np.sort(d)[: d.size - k]
    factor = 1.0
    if k:
        a = float(ndtri(1 - 0.5 * k / d.size))
        factor = 1.0 - 2 * a * math.exp(-a * a / 2) / math.sqrt(2 * math.pi) / (1 - k / d.size)
    return math.sqrt(float(np.mean(keep ** 2)) / factor / 2.0), int(keep.size)


def robust_sigma(y: np.ndarray) -> float:
    """Point-to-point noise: the MAD of first differences over √2 (steps are rare, so they barely move it)."""
    if y.size < 3:
        return float(np.std(y)) if y.size > 1 else 0.0
    d = np.diff(y)
    return 1.482602218505602 * float(np.median(np.abs(d - np.median(d)))) / math.sqrt(2)


def _prefix_l2():
    """ruptures' L2 cost (squared deviation from the segment mean) from prefix sums: O(1) per segment instead
    of O(length), which keeps the search fast on a year of commits. Same values as ``CostL2``."""
    from ruptures.base import BaseCost

    class PrefixL2(BaseCost):
        model = "l2-prefix"
        min_size = 1

        def fit(self, signal):
            x = self.signal = np.asarray(signal, dtype=float).reshape(len(signal), -1)
            self.s1 = np.concatenate([np.zeros((1, x.shape[1])), np.cumsum(x, axis=0)])
            self.s2 = np.concatenate([np.zeros((1, x.shape[1])), np.cumsum(x * x, axis=0)])
            return self

        def error(self, start, end):
            n = end - start
            s1 = self.s1[end] - self.s1[start]
            return float((self.s2[end] - self.s2[start] - s1 * s1 / n).sum())

    return PrefixL2()


def candidates(y: np.ndarray, *, detector: str = DETECTOR, beta: float = PENALTY_BETA) -> list[int]:
    """Indices where a new segment starts (0 < c < n), from ``ruptures``."""
    import ruptures as rpt

    n = y.size
    if n < 2 * MIN_SIZE:
        return []
    sigma = max(robust_sigma(y), 1e-9)
    pen = beta * sigma * sigma * math.log(n)
    signal = y.reshape(-1, 1)
    if detector == "pelt-l2":
        algo = rpt.Pelt(custom_cost=_prefix_l2(), min_size=MIN_SIZE, jump=1).fit(signal)
        bkps = algo.predict(pen=pen)
    elif detector == "binseg-l2":
        algo = rpt.Binseg(custom_cost=_prefix_l2(), min_size=MIN_SIZE, jump=1).fit(signal)
        bkps = algo.predict(pen=pen)
    elif detector == "pelt-rbf":
        algo = rpt.Pelt(model="rbf", min_size=MIN_SIZE, jump=1, params={"gamma": 1.0 / (2 * 9 * sigma * sigma)}).fit(signal)
        bkps = algo.predict(pen=beta * math.log(n))
    else:
        raise ValueError(f"unknown detector {detector!r}")
    return [int(b) for b in bkps if 0 < b < n]


def _windows(c: int, cps: list[int], n: int, window: int) -> tuple[slice, slice]:
    prev = max([p for p in cps if p < c], default=0)
    nxt = min([p for p in cps if p > c], default=n)
    return slice(max(prev, c - window), c), slice(c, min(nxt, c + window))


def _refine(y: np.ndarray, var: np.ndarray, cps: list[int], window: int) -> list[int]:
    """Each candidate moved to the split within ±(MIN_SIZE − 1) commits (and between its neighbours) where the
    level changes most clearly (largest |t|): no segment shorter than MIN_SIZE is ever cut, so a change two
    commits from the end is found one commit early without this."""
    n = y.size
    out: list[int] = []
    for k, c in enumerate(cps):
        # within ±(MIN_SIZE − 1) of the candidate and never closer than MIN_SIZE to its neighbours: two changes
        # around a single odd commit would be a blip, not a change
        lo = max(out[-1] + MIN_SIZE if out else 1, c - MIN_SIZE + 1)
        hi = min(cps[k + 1] - MIN_SIZE if k + 1 < len(cps) else n - 1, c + MIN_SIZE - 1)
        if lo > hi:
            lo = hi = min(max(c, lo), n - 1)
        best, best_t = c, -1.0
        others = [p for p in cps if p != c]
        for c2 in range(lo, hi + 1):
            t = level_change(y, var, *_windows(c2, others, n, window))
            score = abs(t["estimate"]) / max(t["se"], 1e-12)
            if score > best_t:
                best, best_t = c2, score
        out.append(best)
    return out


def level_change(y: np.ndarray, var: np.ndarray, before: slice, after: slice, level: float = LEVEL) -> dict:
    """Mean level after − before (log), with a t interval from the points' pooled spread (floored by their own
    variance)."""
    a, b = y[after], y[before]
    na, nb = a.size, b.size
    d = float(a.mean() - b.mean())
    df = na + nb - 2
    if df >= 1:
        s2 = float(((a - a.mean()) ** 2).sum() + ((b - b.mean()) ** 2).sum()) / df
        crit = float(stdtrit(df, 0.5 + level / 2))
    else:
        s2, crit = 0.0, Z
    s2 = max(s2, float(np.concatenate([var[after], var[before]]).mean()))
    se = math.sqrt(s2 * (1 / na + 1 / nb))
    p = float(2 * stdtr(df, -abs(d) / se)) if df >= 1 and se > 0 else (float(2 * ndtr(-abs(d) / se)) if se > 0 else 0.0)
    return {"estimate": d, "se": se, "low": d - crit * se, "high": d + crit * se, "df": df, "p_value": p,
            "before": (before.start, before.stop), "after": (after.start, after.stop)}


def detect(y: np.ndarray, var: np.ndarray, *, threshold: float, eager: bool = False, detector: str = DETECTOR,
           beta: float = PENALTY_BETA, window: int = WINDOW, level: float = LEVEL, alpha: float = ALPHA) -> list[dict]:
    """Gated, confirmed (or pending) changes of a point series (log values ``y`` with variances ``var``)."""
    y = np.asarray(y, dtype=float)
    var = np.asarray(var, dtype=float)
    n = y.size
    cps = _refine(y, var, candidates(y, detector=detector, beta=beta), window)
    if eager and n >= 3:  # the newest commit(s) against the level before them, even where no segment can be cut
        for c in (n - 1, n - 2):
            if c > max(cps, default=0):
                test = level_change(y, var, *_windows(c, cps, n, window), level=level)
                if test["p_value"] < alpha and abs(test["estimate"]) >= math.log1p(threshold):
                    cps = sorted([*cps, c])
                    break
    d = math.log1p(threshold)

    def passes(t: dict) -> bool:
        return t["p_value"] < alpha and abs(t["estimate"]) >= d

    # prune: drop the weakest candidate that fails the gate and test the rest again (windows widen as
    # neighbours go), until every remaining candidate passes
    while True:
        tests = {c: level_change(y, var, *_windows(c, cps, n, window), level=level) for c in cps}
        failing = [c for c in cps if not passes(tests[c])]
        if not failing:
            break
        weakest = min(failing, key=lambda c: abs(tests[c]["estimate"]) / max(tests[c]["se"], 1e-12))
        cps = [c for c in cps if c != weakest]
    out = []
    for c in cps:
        t = tests[c]
        after_commits = n - 1 - c
        status = "confirmed" if after_commits >= CONFIRM_AFTER else ("eager" if eager else "pending")
        out.append({"index": c, **t, "status": status, "commits_after": after_commits,
                    "direction": "regression" if t["estimate"] > 0 else "improvement"})
    tail = possible_change(y, var, cps, threshold=threshold, window=window, level=level, alpha=alpha)
    if tail is not None:
        out.append(tail)
    return out


def commits_to_confirm(estimate: float, s2: float, before: int, after: int, *, alpha: float = ALPHA,
                       limit: int = POSSIBLE_LIMIT) -> int | None:
    """How many more commits at the new level would make a step of ``estimate`` (log) pass the gate (t test at
    ``alpha`` with point variance ``s2`` against ``before`` points) and be confirmed; None beyond ``limit``."""
    for more in range(limit + 1):
        na = after + more
        if na - 1 < CONFIRM_AFTER or na < 2:
            continue
        df = na + before - 2
        se = math.sqrt(s2 * (1 / na + 1 / before))
        if df >= 1 and se > 0 and 2 * float(stdtr(df, -abs(estimate) / se)) < alpha:
            return more
    return None


def possible_change(y: np.ndarray, var: np.ndarray, cps: list[int], *, threshold: float, window: int = WINDOW,
                    level: float = LEVEL, alpha: float = ALPHA, lenient: float = POSSIBLE_P) -> dict | None:
    """A step at the newest commits that the gate cannot establish yet: the split since the last change found
    where the level moves most clearly, when it lies among the last ``POSSIBLE_TAIL`` commits, moves beyond the
    threshold at p < ``lenient`` and every commit from it on sits beyond the level before — reported as
    *possible* with the commits that would confirm it (at the same level and noise), or not at all when more
    than ``POSSIBLE_LIMIT`` would be needed."""
    n = y.size
    last = max(cps, default=0)
    best = None
    # the clearest split since the last change found; a possible change only when it lies among the newest
    # commits (an older one that the gate rejected is no step the next commits can confirm)
    for c in range(last + MIN_SIZE, n):
        if c - max(last, c - window) < MIN_SIZE:
            continue
        t = level_change(y, var, slice(max(last, c - window), c), slice(c, n), level=level)
        if best is None or abs(t["estimate"]) / max(t["se"], 1e-12) > abs(best[1]["estimate"]) / max(best[1]["se"], 1e-12):
            best = (c, t)
    if best is None or best[0] < n - POSSIBLE_TAIL:
        return None
    c, t = best
    if t["p_value"] >= lenient or abs(t["estimate"]) < math.log1p(threshold):
        return None
    # every commit from the split on sits beyond the level before it: one stray commit is no new level
    after, ref = y[slice(*t["after"])], float(np.median(y[slice(*t["before"])]))
    if not (np.all(after > ref) if t["estimate"] > 0 else np.all(after < ref)):
        return None
    nb, na = t["before"][1] - t["before"][0], t["after"][1] - t["after"][0]
    s2 = t["se"] ** 2 / (1 / na + 1 / nb)
    more = commits_to_confirm(t["estimate"], s2, nb, na, alpha=alpha)
    if more is None:
        return None
    status = "confirmed" if more == 0 else "possible"  # passes the gate already: binary segmentation missed it
    return {"index": c, **t, "status": status, "commits_after": n - 1 - c, "commits_needed": more,
            "direction": "regression" if t["estimate"] > 0 else "improvement"}


def _lines_change(values: np.ndarray, before: slice, after: slice, level: float = LEVEL) -> list[dict]:
    """Per column of ``values`` (points × lines, ms): Δ mean after − before with a pooled t interval."""
    a, b = values[after], values[before]
    na, nb = a.shape[0], b.shape[0]
    delta = a.mean(axis=0) - b.mean(axis=0)
    df = na + nb - 2
    if df >= 1:
        s2 = (((a - a.mean(axis=0)) ** 2).sum(axis=0) + ((b - b.mean(axis=0)) ** 2).sum(axis=0)) / df
        crit = float(stdtrit(df, 0.5 + level / 2))
    else:
        s2, crit = np.zeros(values.shape[1]), float("inf")
    se = np.sqrt(s2 * (1 / na + 1 / nb))
    return [{"delta_ms": float(delta[j]), "low_ms": float(delta[j] - crit * se[j]), "high_ms": float(delta[j] + crit * se[j]),
             "before_ms": float(b[:, j].mean()), "after_ms": float(a[:, j].mean())} for j in range(values.shape[1])]


def attribute(change: dict, e2e_mean_ms: np.ndarray, cats: tuple[list[str], np.ndarray],
              ops: tuple[list[str], np.ndarray], *, top: int = 5) -> dict:
    """Which categories and operators moved at ``change`` (windows as in the change), ranked by |Δ ms|, each
    with its share of the end-to-end mean's change; lines absent on one side are marked ``appeared`` /
    ``disappeared``; and the change's kind (:func:`change_kind`)."""
    before, after = slice(*change["before"]), slice(*change["after"])
    e2e = _lines_change(e2e_mean_ms.reshape(-1, 1), before, after)[0]
    total = e2e["delta_ms"]
    out = {"e2e_mean_delta_ms": total, "e2e_mean_before_ms": e2e["before_ms"], "e2e_mean_after_ms": e2e["after_ms"]}
    every = {}
    for key, (names, mat) in (("categories", cats), ("operators", ops)):
        rows = []
        if names:
            present_before = cast("np.ndarray", (mat[before] > 0).any(axis=0))  # one per column of the 2-D mat
            present_after = cast("np.ndarray", (mat[after] > 0).any(axis=0))
            for j, (name, r) in enumerate(zip(names, _lines_change(mat, before, after))):
                r.update(name=name, share_of_change_pct=100.0 * r["delta_ms"] / total if total else None,
                         significant=bool(r["low_ms"] > 0 or r["high_ms"] < 0),
                         presence=("appeared" if present_after[j] and not present_before[j] else
                                   "disappeared" if present_before[j] and not present_after[j] else
                                   "both" if present_before[j] else "neither"))
                rows.append(r)
        rows.sort(key=lambda r: -abs(r["delta_ms"]))
        every[key] = rows
        out[key] = rows[:top]
        for presence in ("appeared", "disappeared"):
            out[f"{key}_{presence}"] = [r["name"] for r in rows if r["presence"] == presence]
    unit = "operator" if _material(every["operators"], e2e["before_ms"]) >= 2 else "category"
    out.update(change_kind(every["operators" if unit == "operator" else "categories"], e2e["before_ms"],
                           e2e["after_ms"], unit))
    return out


def _material(rows: list[dict], e2e_before: float) -> int:
    return sum(1 for r in rows if e2e_before > 0 and r["before_ms"] >= MATERIAL_SHARE * e2e_before)


def change_kind(rows: list[dict], e2e_before: float, e2e_after: float, unit: str = "category") -> dict:
    """Proportional or concentrated: the deviation index D = Σ|Δ_line − before_line·(r − 1)| / Σ|Δ_line| (``r``
    the end-to-end ratio) is 0 when every line moved by the same factor and 2(1 − s) when one line of share ``s``
    moved alone. D ≤ ``PROPORTIONAL_MAX``: **proportional** — likely the environment (clocks, thermal state,
    another device); D ≥ ``CONCENTRATED_MIN``: **concentrated** in the lines named — likely the code; between:
    mixed. When one line holds more than ``UNTELLABLE_SHARE`` of the time the two cannot be told apart."""
    if not rows or e2e_before <= 0 or not math.isfinite(e2e_after):
        return {"kind": None, "kind_evidence": f"no {unit} times stored: the kind of change cannot be told"}
    r = e2e_after / e2e_before
    moved = sum(abs(x["delta_ms"]) for x in rows)
    if moved <= 0:
        return {"kind": None, "kind_evidence": f"no {unit} moved"}
    dev = sum(abs(x["delta_ms"] - x["before_ms"] * (r - 1)) for x in rows) / moved
    top = max(rows, key=lambda x: x["before_ms"])
    share = top["before_ms"] / e2e_before
    factors = ", ".join(f"{x['name']} ×{x['after_ms'] / x['before_ms']:.2f}" for x in
                        sorted(rows, key=lambda x: -x["before_ms"])[:4] if x["before_ms"] > 0)
    if share > UNTELLABLE_SHARE:
        return {"kind": None, "kind_deviation": dev,
                "kind_evidence": f"{top['name']} holds {100 * share:.0f} % of the time: a change in it alone and a "
                                 "change of everything look the same"}
    if dev <= PROPORTIONAL_MAX:
        return {"kind": "proportional", "kind_deviation": dev,
                "kind_evidence": f"every {unit} moved by about the same factor ({factors}; end to end ×{r:.2f}; "
                                 f"deviation {dev:.2f} ≤ {PROPORTIONAL_MAX:g}) — likely the environment (clocks, "
                                 "thermal state, another device), not the code"}
    lead = sorted(rows, key=lambda x: -abs(x["delta_ms"]))[:3]
    held = sum(abs(x["delta_ms"]) for x in lead) / moved
    names = ", ".join(f"{x['name']} {x['delta_ms']:+.3g} ms" for x in lead)
    if dev >= CONCENTRATED_MIN:
        return {"kind": "concentrated", "kind_deviation": dev,
                "kind_evidence": f"concentrated in {names} ({100 * held:.0f} % of the movement; deviation from a "
                                 f"proportional change {dev:.2f} ≥ {CONCENTRATED_MIN:g}) — likely the code"}
    return {"kind": "mixed", "kind_deviation": dev,
            "kind_evidence": f"partly proportional, led by {names} (deviation {dev:.2f} between "
                             f"{PROPORTIONAL_MAX:g} and {CONCENTRATED_MIN:g})"}
