"""Baseline vs candidate by category and by operator, and the bottleneck-shift statement (pure).

speedup = baseline / candidate, as everywhere. Per accounting line (category or overhead) the time per
run is compared as a ratio of means with a percentile-bootstrap interval over runs (each arm resampled
independently; the same resamples give the shares of end-to-end, so shares and ratios are coherent).
Operators are matched by their type (the name without XNNPACK's ``#N``); types found in one profile
only are paired as *renamed* when the same operator and microkernel appears with other dtypes
(``Fully Connected (NC, F32) GEMM`` → ``Fully Connected (NC, PF32) GEMM``), else reported as added or
removed. Per-operator Mann–Whitney p-values are adjusted with Benjamini–Hochberg.
"""

from __future__ import annotations

import re

import numpy as np

from ..conventions import ms, verdict
from ..model import Profile
from ..taxonomy import CATEGORIES, DEFAULT, Taxonomy
from .breakdown import LINES, OVERHEADS, EventLines, per_run_lines
from .rank_tests import mann_whitney

# A bottleneck shift (the profiling workflow's rule): GEMM or convolution time shrinks (its speedup interval is
# beyond the threshold) and another category grows as a share of end-to-end to a material share: by at least
# SHIFT_PP percentage points, to at least MATERIAL_SHARE_PCT, with a share-change interval above zero.
SHIFT_PP = 5.0
MATERIAL_SHARE_PCT = 10.0
ACCELERATED = ("GEMM", "CONV")
_DTYPES = re.compile(r"\(([^()]*)\)")


def _runs_matrix(profiles: list[Profile], skips: list[int], taxonomy: Taxonomy):
    mats, e2es, op_tabs = [], [], []
    for prof, skip in zip(profiles, skips):
        lines = EventLines(prof, taxonomy)
        m, e, runs = per_run_lines(prof, lines)
        mats.append(m[skip:])
        e2es.append(e[skip:])
        op_tabs.append(_op_runs(prof, lines, skip))
    return np.vstack(mats), np.concatenate(e2es), op_tabs


def _op_runs(prof: Profile, lines: EventLines, skip: int) -> dict[str, np.ndarray]:
    """Per operator type: time (ns) in each run after the skipped warm-up runs."""
    ev = prof.events
    run = ev["run_index"].to_numpy()
    leaf = lines.leaf & (run >= skip)
    n_runs = prof.n_runs - skip
    if n_runs <= 0:
        return {}
    type_code = {t: i for i, t in enumerate(dict.fromkeys(lines.types))}
    tid = np.array([type_code[t] for t in lines.types], dtype=np.int64)[lines.name_ids]
    dur = ev["duration_ns"].fill_null(0).to_numpy()
    m = np.zeros((len(type_code), n_runs))
    np.add.at(m, (tid[leaf], run[leaf] - skip), dur[leaf])
    names = list(type_code)
    present = np.flatnonzero(np.bincount(tid[leaf], minlength=len(names)))
    return {names[i]: m[i] for i in present}


def _bootstrap_means(mat: np.ndarray, e2e: np.ndarray, resamples: int, rng: np.random.Generator):
    """Means of every line (column) and of end-to-end over ``resamples`` bootstrap resamples of the runs (rows),
    in blocks of bounded memory: each block's resamples become run counts, and the means one matrix product."""
    n = mat.shape[0]
    cols = np.column_stack([mat.astype(np.float64), e2e.astype(np.float64)])
    out = np.empty((resamples, cols.shape[1]))
    step = max(1, 2_000_000 // n)
    for a in range(0, resamples, step):
        b = min(resamples, a + step)
        idx = rng.integers(0, n, size=(b - a, n))
        counts = np.bincount((idx + (np.arange(b - a) * n)[:, None]).ravel(), minlength=(b - a) * n)
        out[a:b] = counts.reshape(b - a, n) @ cols / n
    return out[:, :-1], out[:, -1]


def _bh(p: list[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values (q-values)."""
    p = np.asarray(p, dtype=float)
    n = p.size
    if n == 0:
        return []
    order = np.argsort(p)
    q = p[order] * n / np.arange(1, n + 1)
    q = np.minimum.accumulate(q[::-1])[::-1]
    out = np.empty(n)
    out[order] = np.minimum(q, 1.0)
    return out.tolist()


def _family(type_name: str) -> tuple[str, str]:
    """(operator with its microkernel, dtype arguments) of an XNNPACK type; (name, "") otherwise."""
    m = _DTYPES.search(type_name)
    if not m:
        return type_name, ""
    args = [a.strip() for a in m.group(1).split(",")]
    layout = args[0] if args else ""
    return type_name[: m.start()].strip() + f" ({layout})" + type_name[m.end():], ",".join(args[1:])


def compare_categories(baseline: list[Profile], candidate: list[Profile], *, b_name: str, c_name: str,
                       b_skip: list[int] | None = None, c_skip: list[int] | None = None, taxonomy: Taxonomy = DEFAULT,
                       level: float = 0.95, seed: int = 0, resamples: int = 2000, threshold: float = 0.02,
                       top: int = 20) -> dict:
    b_skip = b_skip or [0] * len(baseline)
    c_skip = c_skip or [0] * len(candidate)
    mb, eb, ops_b = _runs_matrix(baseline, b_skip, taxonomy)
    mc, ec, ops_c = _runs_matrix(candidate, c_skip, taxonomy)
    if mb.shape[0] < 2 or mc.shape[0] < 2:
        return {"note": "each arm needs at least 2 runs for category comparisons", "categories": [], "operators": {}}
    rng = np.random.default_rng(seed)
    boot_b, eb_r = _bootstrap_means(mb, eb, resamples, rng)
    boot_c, ec_r = _bootstrap_means(mc, ec, resamples, rng)
    a = (1 - level) / 2
    eb_m, ec_m = eb.mean(), ec.mean()
    cats = []
    for j, ln in enumerate(LINES):
        xb, xc = mb[:, j], mc[:, j]
        if not xb.any() and not xc.any():
            continue
        b_mean, c_mean = float(xb.mean()), float(xc.mean())
        rb, rc = boot_b[:, j], boot_c[:, j]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = rb / rc
            sb, sc = rb / eb_r * 100, rc / ec_r * 100
        finite = np.isfinite(ratio) & (ratio > 0)
        lo = hi = None
        if b_mean > 0 and c_mean > 0 and finite.mean() > 0.99:
            lo, hi = (float(x) for x in np.quantile(ratio[finite], [a, 1 - a]))
        speed = b_mean / c_mean if b_mean > 0 and c_mean > 0 else None
        if c_mean == 0:
            status = "absent in candidate"
        elif b_mean == 0:
            status = "new in candidate"
        elif lo is None:  # zero in some resamples of one arm: present in only a few of its runs
            status = "nearly absent in candidate" if b_mean > c_mean else "nearly absent in baseline"
        else:
            status = verdict(lo, hi, threshold)
            status = status if status in ("faster", "slower") else "no clear change"
        cats.append({
            "line": ln, "kind": "overhead" if ln in OVERHEADS else "category",
            "baseline_ms": ms(b_mean), "candidate_ms": ms(c_mean),
            "change_percent": (c_mean / b_mean - 1) * 100 if b_mean > 0 else None,
            "speedup": speed, "ci_low": lo, "ci_high": hi,
            "baseline_share": b_mean / eb_m * 100 if eb_m else None, "candidate_share": c_mean / ec_m * 100 if ec_m else None,
            "baseline_share_ci": [float(x) for x in np.nanquantile(sb, [a, 1 - a])],
            "candidate_share_ci": [float(x) for x in np.nanquantile(sc, [a, 1 - a])],
            "share_change_ci": [float(x) for x in np.nanquantile(sc - sb, [a, 1 - a])],
            "status": status,
        })
    cats.sort(key=lambda r: (r["kind"] != "category", -max(r["baseline_ms"], r["candidate_ms"])))
    e2e_speedup = float(eb_m / ec_m) if ec_m else None
    shift = bottleneck_shift(cats, e2e_speedup, b_name, c_name)
    return {
        "categories": cats,
        "slower_categories": [c["line"] for c in cats if c["status"] == "slower"],
        "bottleneck": shift,
        "operators": compare_operators(ops_b, ops_c, level=level, top=top),
        "runs_used": {"baseline": int(mb.shape[0]), "candidate": int(mc.shape[0])},
        "method": "ratio of mean time per run; percentile bootstrap over runs; shares from the same resamples",
    }


def bottleneck_shift(cats: list[dict], e2e_speedup: float | None, b_name: str, c_name: str) -> dict:
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
    shrunk = [c for c in cc if c["line"] in ACCELERATED and c["status"] in ("faster", "absent in candidate")]
    grown = [c for c in cc if c["line"] not in [s["line"] for s in shrunk]
             and share(c, "candidate") - share(c, "baseline") >= SHIFT_PP and share(c, "candidate") >= MATERIAL_SHARE_PCT
             and (c.get("share_change_ci") or [0.0])[0] > 0]
    base.update(shrunk_categories=[c["line"] for c in shrunk], grown_categories=[c["line"] for c in grown])

    def moved(c):
        return f"{c['line']} {share(c, 'baseline'):.0f} % → {share(c, 'candidate'):.0f} % of latency"

    if not shrunk:
        accel = [c for c in cc if c["line"] in ACCELERATED]
        why = ("GEMM/CONV time did not shrink beyond the threshold (" + ", ".join(
            f"{c['line']} {c['status']}" for c in accel) + ")") if accel else "no GEMM or CONV time in either profile"
        return {**base, "statement": f"no bottleneck shift: {why}; the largest category is {top_c['line']} "
                                     f"({share(top_c, 'candidate'):.0f} % in {c_name})"}
    shrink_txt = "; ".join(f"{moved(c)} ({c['change_percent']:+.0f} % time)" if c["change_percent"] is not None
                           else moved(c) for c in sorted(shrunk, key=lambda c: -c["baseline_ms"]))
    if not grown:
        return {**base, "statement": f"no bottleneck shift: {shrink_txt}, and no other category grew to a material "
                                     f"share (≥ {MATERIAL_SHARE_PCT:g} % of latency, +{SHIFT_PP:g} points); "
                                     f"the largest category is {top_c['line']} ({share(top_c, 'candidate'):.0f} %)"}
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


def compare_operators(ops_b: list[dict[str, np.ndarray]], ops_c: list[dict[str, np.ndarray]], *, level: float = 0.95,
                      top: int = 20) -> dict:
    def pool(tabs):
        keys = list(dict.fromkeys(k for t in tabs for k in t))
        return {k: np.concatenate([t.get(k, np.zeros(next(iter(t.values())).size if t else 0)) for t in tabs]) for k in keys}

    pb, pc = pool(ops_b), pool(ops_c)
    both = [k for k in pb if k in pc]
    only_b = [k for k in pb if k not in pc]
    only_c = [k for k in pc if k not in pb]
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
    rows = []
    pairs = [(k, k) for k in both] + renamed
    pvals = []
    for kb, kc in pairs:
        xb, xc = pb[kb], pc[kc]
        mw = mann_whitney(xb, xc) if xb.size >= 2 and xc.size >= 2 else {"p_value": 1.0}
        pvals.append(mw["p_value"])
        b_mean, c_mean = float(xb.mean()), float(xc.mean())
        rows.append({"baseline_operator": kb, "candidate_operator": kc, "match": "same" if kb == kc else "renamed",
                     "baseline_ms": ms(b_mean), "candidate_ms": ms(c_mean),
                     "speedup": b_mean / c_mean if b_mean > 0 and c_mean > 0 else None, "p_value": mw["p_value"]})
    for r, q in zip(rows, _bh(pvals)):
        r["q_value"] = q
        r["significant"] = q < 0.05
    rows.sort(key=lambda r: -abs(r["baseline_ms"] - r["candidate_ms"]))
    return {
        "matched": rows[:top],
        "matched_total": len(rows),
        "renamed": [{"baseline": a, "candidate": b} for a, b in renamed],
        "removed": sorted(({"operator": k, "baseline_ms": ms(float(pb[k].mean()))} for k in only_b),
                          key=lambda r: -r["baseline_ms"])[:top],
        "added": sorted(({"operator": k, "candidate_ms": ms(float(pc[k].mean()))} for k in only_c),
                        key=lambda r: -r["candidate_ms"])[:top],
        "removed_total": len(only_b),
        "added_total": len(only_c),
        "method": "matched by operator type; Mann–Whitney on per-run times; Benjamini–Hochberg q-values",
    }


__all__ = ["compare_categories", "bottleneck_shift", "compare_operators", "CATEGORIES"]
