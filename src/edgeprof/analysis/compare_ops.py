"""Baseline vs candidate by category and by operator, and the bottleneck-shift statement (pure).

speedup = baseline / candidate, as everywhere. Per accounting line (category or overhead) and per operator,
each launch gives its mean time per run; the contrast of the two arms is the launch-level one of the end-to-end
comparison (:func:`.launches.contrast`: REML launch effects and a Knapp–Hartung t interval with several
launches, the launch allowance with one). p-values are adjusted with Benjamini–Hochberg across the categories
and, separately, across the top operators; a line is called faster or slower only when its q-value is below
0.05 *and* its interval clears the threshold — otherwise "no significant change". Shares of end-to-end come
with launch-level intervals too, and the bottleneck-shift rule uses them.
Operators are matched by their type (the name without XNNPACK's ``#N``); types found in one profile
only are paired as *renamed* when the same operator and microkernel appears with other dtypes
(``Fully Connected (NC, F32) GEMM`` → ``Fully Connected (NC, PF32) GEMM``) — several of one family pair in
the order of their names, whatever order the profiles list them in — else reported as added or removed.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

import numpy as np

from ..comparison import CategoryLine, OperatorLine, Speedup, Test, line_fields
from ..conventions import LEVEL, THRESHOLD, LineStatus, line_status, ms
from ..model import Profile
from ..taxonomy import CATEGORIES, DEFAULT, Taxonomy
from .breakdown import LINES, OVERHEADS, EventLines, per_run_lines, per_run_operators, share_base
from .launches import bh, contrast, line_stats
from . import noise as nz
from .noise import LaunchNoise, default, line_allowance
from .selection import RunSelection

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

# A bottleneck shift (the profiling workflow's rule): GEMM or convolution time shrinks (its speedup interval is
# beyond the threshold) and another category grows as a share of end-to-end to a material share: by at least
# SHIFT_PP percentage points, to at least MATERIAL_SHARE_PCT, with a share-change interval above zero.
SHIFT_PP = 5.0
MATERIAL_SHARE_PCT = 10.0
# With one launch per arm, a share's change carries an allowance for how much a share moves between launches: the
# logit of a share moves by about half the launch SD (a line and the end-to-end time it is a share of move
# together), i.e. p(1 − p)·SHARE_ALLOWANCE·SD percentage points per arm. Without it the change's interval covered
# the truth on 58 % of real A/A comparisons; with it 98 % (bench/bench_coverage.py).
SHARE_ALLOWANCE = 0.5
ACCELERATED = ("GEMM", "CONV")
_DTYPES = re.compile(r"\(([^()]*)\)")


def _per_launch(profiles: list[Profile], sel: RunSelection | None, taxonomy: Taxonomy):
    """Per launch: (runs × lines matrix, end-to-end per run, per-operator per-run times), the warm-up runs of the
    series' selection left out (none without one)."""
    out = []
    for prof, skip in zip(profiles, sel.warmup if sel is not None else [0] * len(profiles)):
        lines = EventLines(prof, taxonomy)
        m, e, _ = per_run_lines(prof, lines)
        out.append((m[skip:].astype(np.float64), e[skip:].astype(np.float64), per_run_operators(prof, lines, skip)))
    return out


def _family(type_name: str) -> tuple[str, str]:
    """(operator with its microkernel, dtype arguments) of an XNNPACK type; (name, "") otherwise."""
    m = _DTYPES.search(type_name)
    if not m:
        return type_name, ""
    args = [a.strip() for a in m.group(1).split(",")]
    layout = args[0] if args else ""
    return type_name[: m.start()].strip() + f" ({layout})" + type_name[m.end():], ",".join(args[1:])


def _share_stats(cols: list[np.ndarray], e2es: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per launch: a line's share of end-to-end (%) and its sampling variance (delta method for a ratio of means)."""
    y, v = [], []
    for x, e in zip(cols, e2es):
        n = x.size
        mx, me = float(x.mean()), float(e.mean())
        if n < 2 or me <= 0:
            y.append(100 * mx / me if me > 0 else 0.0)
            v.append(0.0)
            continue
        cov = np.cov(x, e)
        r = mx / me
        var = (cov[0, 0] - 2 * r * cov[0, 1] + r * r * cov[1, 1]) / (n * me * me)
        y.append(100 * r)
        v.append(max(float(var), 0.0) * 1e4)
    return np.array(y), np.array(v)


def _arm_share(y: np.ndarray, v: np.ndarray, level: float, allowance: float = 0.0) -> tuple[float, list[float]]:
    """An arm's share of end-to-end (%) and its interval, from the per-launch shares ``y`` and their sampling
    variances ``v``: the mean of the launches' shares, with a t interval over launches (k ≥ 2) or the delta-method
    one (k = 1) taken on the logit scale — so the interval lies in [0, 100] because a share does, not because it was
    clipped. A single launch cannot show how much a share moves between launches: ``allowance`` (the line's launch
    SD allowance, :func:`.noise.line_allowance`, on the log scale that the logit follows for small shares) is added
    to its variance then. A share of 0 or 100 in every launch has the interval [0, 0] or [100, 100]."""
    from .special import ndtri, stdtrit

    k = y.size
    m = float(y.mean())
    if m <= 0 or m >= 100:
        return m, [m, m]
    p = np.clip(y / 100, 1e-9, 1 - 1e-9)
    z = np.log(p / (1 - p))
    if k >= 2 and float(z.std(ddof=1)) > 0:
        centre = math.log(m / (100 - m))
        half = float(stdtrit(k - 1, 1 - (1 - level) / 2)) * float(z.std(ddof=1)) / math.sqrt(k)
    else:
        pm = m / 100
        centre = math.log(pm / (1 - pm))
        var = float(v.sum()) / k ** 2 / (100 * pm * (1 - pm)) ** 2 + (allowance ** 2 if k == 1 else 0.0)
        half = float(ndtri(1 - (1 - level) / 2)) * math.sqrt(var)
    lo, hi = centre - half, centre + half
    return m, [100 / (1 + math.exp(-lo)), 100 / (1 + math.exp(-hi))]


def share_change(b: float, b_ci, c: float, c_ci) -> tuple[float, float]:
    """The interval of ``c − b`` (percentage points) from each share's own interval, by the method of variance
    estimates recovery (MOVER; Newcombe's hybrid interval for a difference of proportions): lower
    ``d − √((c − c_low)² + (b_high − b)²)``, upper ``d + √((c_high − c)² + (b − b_low)²)``. Each share's interval
    lies in [0, 100], so the change's lies in [-100, 100]."""
    d = c - b
    return (d - math.hypot(c - c_ci[0], b_ci[1] - b), d + math.hypot(c_ci[1] - c, b - b_ci[0]))


def _line_contrast(b_cols, c_cols, *, level, noise: LaunchNoise) -> dict | None:
    """speedup = baseline / candidate of a per-run time, launch-level; None when a launch has none of it. The
    estimator is the 10 %-trimmed mean per launch, or the median when spikes outnumber the trim
    (:func:`.launches.line_stats`). With single launches the allowance grows for small lines
    (:func:`.noise.line_allowance`): a few microseconds per run move by far more from one launch to the next than
    the end-to-end time does."""
    if any(x.mean() <= 0 for x in b_cols + c_cols):
        return None
    name, sb, sc = line_stats(b_cols, c_cols)
    if sb is None or sc is None:
        return None
    (yb, vb), (yc, vc) = sb, sc
    per_run_ms = ms(float(np.mean([x.mean() for x in b_cols + c_cols])))
    m = noise.measurement  # the machine's measured launch noise, grown for a small line as its allowance is
    measured = (line_allowance(nz.LaunchNoise(m[0], noise.source, ""), per_run_ms), m[1]) if m else None
    ct = contrast(yb, vb, yc, vc, level=level, launch_cv=line_allowance(noise, per_run_ms), measured=measured)
    return {**ct, "estimator": name}


def _test_lines(rows: list[dict], threshold: float, alpha: float) -> None:
    """Benjamini–Hochberg q-values across the tested lines, and each one's status (:func:`line_status`)."""
    for r, q in zip(rows, bh([r["test"].p_value for r in rows])):
        sp = r["speedup"]
        r["test"] = Test(r["test"].p_value, q, q <= alpha, line_status(sp.ci_low, sp.ci_high, q, threshold, alpha))


def compare_categories(baseline: list[Profile], candidate: list[Profile], *, b_name: str, c_name: str,
                       b_runs: RunSelection | None = None, c_runs: RunSelection | None = None,
                       taxonomy: Taxonomy = DEFAULT,
                       level: float = LEVEL, seed: int = 0, resamples: int = 2000, threshold: float = THRESHOLD,
                       top: int = 20, noise: LaunchNoise | None = None, alpha: float = 0.05) -> dict:
    """The comparison by accounting line and operator of the arms' profiles (one per launch), each launch's runs
    as the arm's selection gives them (``b_runs``/``c_runs``, the selections the latency comparison used)."""
    return compare_lines(_per_launch(baseline, b_runs, taxonomy), _per_launch(candidate, c_runs, taxonomy),
                         b_name=b_name, c_name=c_name, level=level, threshold=threshold, top=top,
                         noise=noise if noise is not None else default(), alpha=alpha)


def compare_lines(lb: list, lc: list, *, b_name: str, c_name: str, level: float = LEVEL, threshold: float = THRESHOLD,
                  top: int = 20, noise: LaunchNoise, alpha: float = 0.05) -> dict:
    """The comparison by accounting line and operator of per-launch tables: for each launch (runs × lines
    matrix of ns, end-to-end ns per run, {operator: ns per run}) with its warm-up runs already left out."""
    if any(m.shape[0] < 2 for m, _, _ in lb + lc):
        return {"note": "each launch needs at least 2 runs for category comparisons", "categories": [],
                "operators": {}}
    eb_all = np.concatenate([e for _, e, _ in lb])
    ec_all = np.concatenate([e for _, e, _ in lc])
    eb_m, ec_m = float(eb_all.mean()), float(ec_all.mean())
    db = [share_base(m, e) for m, e, _ in lb]  # what each run's shares are of
    dc = [share_base(m, e) for m, e, _ in lc]
    rows: list[dict] = []
    tests: list[int] = []  # the rows tested
    for j, ln in enumerate(LINES):
        b_cols = [m[:, j] for m, _, _ in lb]
        c_cols = [m[:, j] for m, _, _ in lc]
        b_mean = float(np.concatenate(b_cols).mean())
        c_mean = float(np.concatenate(c_cols).mean())
        if b_mean == 0 and c_mean == 0:
            continue
        ct = _line_contrast(b_cols, c_cols, level=level, noise=noise)
        sb, svb = _share_stats([np.clip(x, 0, None) for x in b_cols], db)
        sc, svc = _share_stats([np.clip(x, 0, None) for x in c_cols], dc)
        ab, ac = line_allowance(noise, ms(b_mean)), line_allowance(noise, ms(c_mean))
        b_share, b_share_ci = _arm_share(sb, svb, level, ab)
        c_share, c_share_ci = _arm_share(sc, svc, level, ac)
        # candidate − baseline in percentage points: each arm's share interval with the share's launch allowance
        # (SHARE_ALLOWANCE of the launch SD on the logit scale), combined by MOVER — bounded by [-100, 100]
        # because each share is, not by clipping
        sh = share_change(b_share, _arm_share(sb, svb, level, SHARE_ALLOWANCE * noise.sd)[1],
                          c_share, _arm_share(sc, svc, level, SHARE_ALLOWANCE * noise.sd)[1])
        status = (LineStatus.ABSENT if c_mean == 0 else LineStatus.NEW if b_mean == 0
                  else LineStatus.UNTESTED if ct is None else None)  # None: tested below
        if status is None:
            tests.append(len(rows))
        rows.append({
            "line": ln, "kind": "overhead" if ln in OVERHEADS else "category",
            "baseline_ms": ms(b_mean), "candidate_ms": ms(c_mean),
            "change_percent": (c_mean / b_mean - 1) * 100 if b_mean > 0 else None,
            "speedup": Speedup.of(ct, b_mean, c_mean), "test": Test(ct["p_value"] if ct else None, None, False, status),
            "regime": ct["regime"] if ct else None,
            "baseline_share": b_share, "candidate_share": c_share,
            "baseline_share_ci": tuple(b_share_ci), "candidate_share_ci": tuple(c_share_ci),
            "share_change_ci": sh})
    _test_lines([rows[i] for i in tests], threshold, alpha)
    cats = [CategoryLine(**{k: v for k, v in r.items() if k not in ("speedup", "test")},
                         **line_fields(r["speedup"], r["test"])) for r in rows]
    tested = [c for c in cats if c.q_value is not None]
    cats.sort(key=lambda r: (r["kind"] != "category", -max(r["baseline_ms"], r["candidate_ms"])))
    e2e_speedup = float(eb_m / ec_m) if ec_m else None
    shift = bottleneck_shift(cats, e2e_speedup, b_name, c_name)
    regime = next((r["regime"] for r in tested if r["regime"]), None)
    return {
        "categories": cats,
        "slower_categories": [c["line"] for c in cats if c["status"] == "slower"],
        "bottleneck": shift,
        "operators": compare_operators([o for _, _, o in lb], [o for _, _, o in lc], level=level, top=top,
                                       threshold=threshold, noise=noise, alpha=alpha),
        "runs_used": {"baseline": int(eb_all.size), "candidate": int(ec_all.size)},
        "regime": regime,
        "false_discovery_rate": alpha,
        "statistic": "ms: mean time per run over the arm's runs; typical_ms: the speedup's estimator per arm (each "
                     "launch's 10 %-trimmed mean, or median for a spiky line, combined over launches; speedup = "
                     "their ratio); share: mean of the launches' shares of end-to-end "
                     "(% of the mean run; of the lines' sum where they overlap past it), with a logit-scale interval "
                     "over launches",
        "method": ("speedup and its interval from one estimator: each launch's 10 %-trimmed mean time per run (a few "
                   "slow runs move a small line's mean by more than a change does), or its median when more runs "
                   "than the trim are spikes (> 3× the launch's median; the row's estimator says which); mean_ratio "
                   "is the ratio of the mean times shown, launch-level interval per line (as for end-to-end: "
                   + (regime or "—") + "; with one launch per arm the allowance grows for lines of few µs); "
                   "Benjamini–Hochberg q-values across the lines; a line is faster or slower when q ≤ 0.05 and its "
                   "interval clears the threshold; a line absent from most runs of a launch is not tested"),
    }


def bottleneck_shift(cats: Sequence[CategoryLine | Mapping], e2e_speedup: float | None, b_name: str, c_name: str) -> dict:
    """The workflow's bottleneck-shift rule: GEMM or convolution time shrinks *and* another category grows as a
    share of end-to-end to a material share. The statement names the shrinking and the growing categories
    with their shares before and after, and calls a category the largest only when it is."""
    cc = [c for c in cats if c["kind"] == "category"]
    base = {"shift": False, "threshold_percentage_points": SHIFT_PP, "material_share_pct": MATERIAL_SHARE_PCT,
            "shrunk_categories": [], "grown_categories": []}
    if not cc:
        return {**base, "statement": ""}

    def share(c, side):
        return c[f"{side}_share"] or 0.0

    top_b = max(cc, key=lambda c: share(c, "baseline"))
    top_c = max(cc, key=lambda c: share(c, "candidate"))
    base.update(largest_baseline=top_b["line"], largest_candidate=top_c["line"])
    faster_time = [c for c in cc if c["line"] in ACCELERATED and c["status"] in ("faster", "absent in candidate")]
    # an accelerated category that got faster but now holds a materially larger share is where the time went,
    # not what it left: it counts as grown (CONV 95 % → 40 % while GEMM, faster too, 1 % → 53 %)
    shrunk = [c for c in faster_time if share(c, "candidate") - share(c, "baseline") < SHIFT_PP]
    grown = [c for c in cc if c["line"] not in [s["line"] for s in shrunk]
             and share(c, "candidate") - share(c, "baseline") >= SHIFT_PP and share(c, "candidate") >= MATERIAL_SHARE_PCT
             and (c.get("share_change_ci") or [0.0])[0] > 0]
    # grew to a material share by the point figures, but the share's interval does not exclude no growth: said as
    # measured and as uncertain, never left out of a sentence that says no category grew
    unsure = [c for c in cc if c["line"] not in [s["line"] for s in shrunk] and c not in grown
              and share(c, "candidate") - share(c, "baseline") >= SHIFT_PP
              and share(c, "candidate") >= MATERIAL_SHARE_PCT]
    base.update(shrunk_categories=[c["line"] for c in shrunk], grown_categories=[c["line"] for c in grown],
                unestablished_growth=[c["line"] for c in unsure])
    unsure_txt = ("; " + ", ".join(f"{c['line']} {share(c, 'baseline'):.0f} % → {share(c, 'candidate'):.0f} %"
                                   for c in unsure) + " of latency, not established at this noise") if unsure else ""

    def moved(c):
        return f"{c['line']} {share(c, 'baseline'):.0f} % → {share(c, 'candidate'):.0f} % of latency"

    # without GEMM/CONV shrinking there is no shift by the workflow's rule, but a category that grew to a material
    # share is said, never left out of a sentence that begins "no bottleneck shift"
    others = sorted((c for c in grown if c not in faster_time), key=lambda c: -share(c, "candidate"))
    grew_txt = ("; grew to a material share: " + ", ".join(moved(c) for c in others)) if others else ""
    if not shrunk and faster_time:
        return {**base, "statement": "no bottleneck shift: " + ", ".join(
            f"{c['line']} got faster ({c['change_percent']:+.0f} % time) yet holds more of the latency "
            f"({share(c, 'baseline'):.0f} % → {share(c, 'candidate'):.0f} %)" if c["change_percent"] is not None else
            f"{c['line']} got faster yet holds more of the latency" for c in faster_time)
            + f" — the rest shrank more{grew_txt}{unsure_txt}; the largest category is {top_c['line']} "
              f"({share(top_c, 'candidate'):.0f} % in {c_name})"}
    if not shrunk:
        accel = [c for c in cc if c["line"] in ACCELERATED]
        why = ("GEMM/CONV time did not shrink beyond the threshold (" + ", ".join(
            f"{c['line']} {c['status']}" for c in accel) + ")") if accel else "no GEMM or CONV time in either profile"
        return {**base, "statement": f"no bottleneck shift: {why}{grew_txt}{unsure_txt}; the largest category is "
                                     f"{top_c['line']} ({share(top_c, 'candidate'):.0f} % in {c_name})"}
    shrink_txt = "; ".join(f"{moved(c)} ({c['change_percent']:+.0f} % time)" if c["change_percent"] is not None
                           else moved(c) for c in sorted(shrunk, key=lambda c: -c["baseline_ms"]))
    if not grown:
        return {**base, "statement": f"no bottleneck shift: {shrink_txt}, and no other category grew to a material "
                                     f"share (≥ {MATERIAL_SHARE_PCT:g} % of latency, +{SHIFT_PP:g} points)"
                                     + (" that the runs establish" + unsure_txt if unsure else "")
                                     + f"; the largest category is {top_c['line']} "
                                       f"({share(top_c, 'candidate'):.0f} %)"}
    riser = max(grown, key=lambda c: share(c, "candidate") - share(c, "baseline"))
    rise_txt = ", ".join(moved(c) for c in sorted(grown, key=lambda c: -share(c, "candidate")))
    if riser is top_c:
        where = f"{riser['line']} is now the largest category"
    else:
        where = f"{top_c['line']} still holds the most time ({share(top_c, 'candidate'):.0f} %)"
    faster = e2e_speedup is not None and e2e_speedup > 1
    tail = f"not a failure of {c_name}" if faster else "and end-to-end did not get faster"
    return {**base, "shift": True,
            "statement": f"bottleneck shift toward {riser['line']}: {shrink_txt}; {rise_txt}; {where} — {tail}"}


def compare_operators(ops_b: list[dict[str, np.ndarray]], ops_c: list[dict[str, np.ndarray]], *, level: float = LEVEL,
                      top: int = 20, threshold: float = THRESHOLD, noise: LaunchNoise | None = None,
                      alpha: float = 0.05) -> dict:
    noise = noise if noise is not None else default()
    def runs_of(tabs):
        return [next(iter(t.values())).size if t else 0 for t in tabs]

    nb, nc = runs_of(ops_b), runs_of(ops_c)

    def cols(tabs, sizes, key):
        return [t.get(key, np.zeros(n)) for t, n in zip(tabs, sizes)]

    # sorted: which operators pair never depends on the order the profiles listed them in
    keys_b = sorted({k for t in ops_b for k in t})
    keys_c = sorted({k for t in ops_c for k in t})
    both = [k for k in keys_b if k in keys_c]
    only_b = [k for k in keys_b if k not in keys_c]
    only_c = [k for k in keys_c if k not in keys_b]
    renamed = []
    fam_c: dict[str, list[str]] = {}
    for k in only_c:
        fam_c.setdefault(_family(k)[0], []).append(k)
    for k in list(only_b):
        fam, dt = _family(k)
        if dt and fam_c.get(fam):
            new = fam_c[fam].pop(0)
            renamed.append((k, new))
            only_b.remove(k)
            only_c.remove(new)

    def mean_of(c):
        return float(np.concatenate(c).mean()) if c else 0.0

    rows = []
    for kb, kc in [(k, k) for k in both] + renamed:
        xb, xc = cols(ops_b, nb, kb), cols(ops_c, nc, kc)
        b_mean, c_mean = mean_of(xb), mean_of(xc)
        rows.append({"baseline_operator": kb, "candidate_operator": kc, "match": "same" if kb == kc else "renamed",
                     "baseline_ms": ms(b_mean), "candidate_ms": ms(c_mean), "_means": (b_mean, c_mean),
                     "_cols": (xb, xc)})
    rows.sort(key=lambda r: (-max(r["baseline_ms"], r["candidate_ms"]), r["baseline_operator"]))
    tested = []
    for i, r in enumerate(rows):
        xb, xc = r.pop("_cols")
        ct = _line_contrast(xb, xc, level=level, noise=noise) if i < top else None
        r["speedup"] = Speedup.of(ct, *r.pop("_means"))
        r["test"] = Test(ct["p_value"] if ct else None, None, False,
                         None if i >= top else LineStatus.UNTESTED if ct is None else None)
        if ct is not None:
            tested.append(r)
    _test_lines(tested, threshold, alpha)
    lines = [OperatorLine(**{k: v for k, v in r.items() if k not in ("speedup", "test")},
                          **line_fields(r["speedup"], r["test"])) for r in rows]
    shown = lines[:top]
    return {
        "matched": shown,
        "matched_total": len(rows),
        "renamed": [{"baseline": a, "candidate": b} for a, b in renamed],
        "removed": sorted(({"operator": k, "baseline_ms": ms(mean_of(cols(ops_b, nb, k)))} for k in only_b),
                          key=lambda r: (-r["baseline_ms"], r["operator"]))[:top],
        "added": sorted(({"operator": k, "candidate_ms": ms(mean_of(cols(ops_c, nc, k)))} for k in only_c),
                        key=lambda r: (-r["candidate_ms"], r["operator"]))[:top],
        "removed_total": len(only_b),
        "added_total": len(only_c),
        "method": (f"matched by operator type; the top {top} by time: speedup and launch-level interval from each "
                   "launch's 10 %-trimmed mean time per run, or median for a spiky operator (ms: mean time per "
                   "run; mean_ratio their ratio; typical_ms: the estimator's per-arm values), "
                   "Benjamini–Hochberg q-values across them"),
    }


__all__ = ["CATEGORIES", "bottleneck_shift", "compare_categories", "compare_operators"]
