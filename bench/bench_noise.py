"""How edgeprof's verdicts hold under real launch-to-launch noise: false verdicts, power, coverage, operator-level
false discoveries, multimodality warnings and plan's promise, resampled from the real-noise corpus.

    python bench/bench_noise.py [--limit 400] [--sessions a_bursts,b_busy]

Every program of every session of tests/data/noise (12 launches × 300 runs, recorded with ``edgeprof run`` on a
shared 2-core machine at different times, with and without background load). A/A comparisons split a
program's launches into two arms; a known effect divides the candidate's runs by a factor. Two kinds of
evidence for the launch noise a single launch cannot show: **none** (the default allowance) and the **noise
profile** ``edgeprof run`` writes beside the run folder (here: the session's, as it would have been written).
The README's statistics table is this script's output.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

import noise_corpus as nc  # noqa: E402


def textbook_t(launches, b, c, level=0.95, threshold=0.02) -> bool:
    """The textbook pooled t interval on log launch medians: does it call A/A faster or slower?"""
    from scipy.stats import t

    yb = np.log([np.median(launches[i].steady) for i in b])
    yc = np.log([np.median(launches[i].steady) for i in c])
    df = yb.size + yc.size - 2
    s2 = (((yb - yb.mean()) ** 2).sum() + ((yc - yc.mean()) ** 2).sum()) / df
    se = math.sqrt(s2 * (1 / yb.size + 1 / yc.size))
    est = yb.mean() - yc.mean()
    h = t.ppf(1 - (1 - level) / 2, df) * se
    lo, hi = math.exp(est - h), math.exp(est + h)
    return lo > 1 + threshold or hi < 1 / (1 + threshold)


def aa(launches, kb, kc, noise, limit, seed=0):
    false = cover = 0
    sp = nc.splits(len(launches), kb, kc, limit, seed)
    for b, c in sp:
        r = nc.judge(launches, b, c, noise)["median"]
        false += r["verdict"] in ("faster", "slower")
        cover += r["ci_low"] <= 1 <= r["ci_high"]
    return false, cover, len(sp)


def power(launches, kb, kc, factor, noise, limit, seed=0):
    sp = nc.splits(len(launches), kb, kc, limit, seed)
    found = cover = 0
    for b, c in sp:
        r = nc.judge(launches, b, c, noise, factor=factor)["median"]
        found += r["verdict"] == "faster"
        cover += r["ci_low"] <= factor <= r["ci_high"]
    return found, cover, len(sp)


def lines(launches, kb, kc, noise, limit, factor=1.0, seed=0):
    """Comparisons in which any accounting line or operator is called faster or slower (A/A: a false discovery)."""
    sp = nc.splits(len(launches), kb, kc, limit, seed)
    return sum(bool(nc.flagged_lines(launches, b, c, noise, factor)) for b, c in sp), len(sp)


def modal(launches, kb, kc, limit, inject: float | None = None, seed=0):
    """Comparisons with a multimodality warning (``inject``: every candidate launch gets a real second mode —
    a random 40 % of its runs that much slower)."""
    from edgeprof.analysis.compare import _modal_warning

    sp = nc.splits(len(launches), kb, kc, limit, seed)
    rng = np.random.default_rng(seed)
    hits = 0
    for b, c in sp:
        cr = []
        for i in c:
            x = launches[i].steady.copy()
            if inject:
                x[rng.random(x.size) < 0.40] *= inject
            cr.append(x)
        hits += bool(_modal_warning("b", [launches[i].steady for i in b]) or _modal_warning("c", cr))
    return hits, len(sp)


def tails(launches, kb, kc, noise, limit, seed=0):
    """(named when 10 % of the candidate's runs are 3× slower, named in A/A) — as compare names a tail regression."""
    from edgeprof.analysis.compare import _tail_statement, metric_contrasts

    sp = nc.splits(len(launches), kb, kc, limit, seed)
    named = aa_named = 0
    rng = np.random.default_rng(seed)
    for b, c in sp:
        br = [launches[i].steady for i in b]
        cr = [launches[i].steady for i in c]
        aa_named += bool(_tail_statement(metric_contrasts(br, cr, noise, level=0.95, threshold=0.02), "median"))
        hit = []
        for x in cr:
            x = x.copy()
            x[rng.choice(x.size, max(1, x.size // 10), replace=False)] *= 3.0
            hit.append(x)
        named += bool(_tail_statement(metric_contrasts(br, hit, noise, level=0.95, threshold=0.02), "median"))
    return named, aa_named, len(sp)


def main() -> int:
    from edgeprof.analysis import noise as nz

    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=400)
    ap.add_argument("--sessions", default=",".join(nc.SESSIONS))
    a = ap.parse_args()
    t0 = time.time()
    sessions = a.sessions.split(",")
    print("Verdicts (false = faster/slower on A/A; evidence: the default allowance, the session's noise.json, "
          "another session's, or none beyond the arms):\n")
    print("| session | program | launch SD | 1v1 A/A false (default / profile / other session) | 1v2 | "
          "2v2 (textbook t) | 3v3 (arms only) | coverage 3v3 | 3× found 1v1 | 2× found 3v3 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for s in sessions:
        data = nc.session(s)
        other = nc.session(next(x for x in sessions + list(nc.SESSIONS) if x != s))
        for prog in nc.PROGRAMS:
            ls = data.get(prog)
            if not ls:
                continue
            sd = float(np.std([math.log(np.median(x.steady)) for x in ls], ddof=1))
            prof, cross, d = nc.machine_noise(data), nc.machine_noise(other), nz.default()
            f11d, _, n11 = aa(ls, 1, 1, d, a.limit)
            f11p, _, _ = aa(ls, 1, 1, prof, a.limit)
            f11x, _, _ = aa(ls, 1, 1, cross, a.limit)
            f12, _, n12 = aa(ls, 1, 2, prof, a.limit)
            f22, _, n22 = aa(ls, 2, 2, prof, a.limit)
            t22 = sum(textbook_t(ls, b, c) for b, c in nc.splits(len(ls), 2, 2, a.limit))
            f33, c33, n33 = aa(ls, 3, 3, prof, a.limit)
            f33a, _, _ = aa(ls, 3, 3, d, a.limit)
            p11, _, _ = power(ls, 1, 1, 3.0, d, a.limit)
            p33, _, _ = power(ls, 3, 3, 2.0, prof, a.limit)
            print(f"| {s} | {prog} | {sd:.3f} | {100 * f11d / n11:.1f} / {100 * f11p / n11:.1f} / "
                  f"{100 * f11x / n11:.1f} % | {100 * f12 / n12:.1f} % | {100 * f22 / n22:.1f} % ({100 * t22 / n22:.1f} %) | "
                  f"{100 * f33 / n33:.1f} % ({100 * f33a / n33:.1f} %) | {100 * c33 / n33:.1f} % | {100 * p11 / n11:.0f} % | "
                  f"{100 * p33 / n33:.0f} % |")
    print("\nLines, modes, tails, plan (the session's noise.json as evidence):\n")
    print("| session | program | any line flagged, 1v1 A/A | 3v3 A/A | multimodal warning, 3v3 A/A | with a second "
          "mode (40 % × 2) | tail named (10 % × 3), 1v1 / 3v3 | tail named in A/A | plan: pilots whose design "
          "delivers its promised power − 5 pts, 3-launch pilot, 30 % | 1-launch pilot, 50 % |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    lim = max(60, a.limit // 5)
    for s in sessions:
        data = nc.session(s)
        for prog in nc.PROGRAMS:
            ls = data.get(prog)
            if not ls:
                continue
            prof = nc.machine_noise(data)
            l11, n11 = lines(ls, 1, 1, prof, lim)
            l33, n33 = lines(ls, 3, 3, prof, lim)
            m11, nm = modal(ls, 3, 3, lim)
            m11i, _ = modal(ls, 3, 3, lim, inject=2.0)
            t11, a11, nt = tails(ls, 1, 1, prof, lim)
            t33, a33, nt3 = tails(ls, 3, 3, prof, lim)
            o3 = [r for r in nc.pilot_outcomes(ls, 0.30, pilots=30, draws=300) if r[0] is not None]
            o1 = [r for r in nc.pilot_outcomes(ls, 0.50, pilots=12, draws=300, pilot_size=1) if r[0] is not None]
            pw3, k3 = sum(r[1] >= r[0] - 0.05 for r in o3) / max(len(o3), 1), [r[2] for r in o3]
            pw1, k1 = sum(r[1] >= r[0] - 0.05 for r in o1) / max(len(o1), 1), [r[2] for r in o1]
            print(f"| {s} | {prog} | {100 * l11 / n11:.1f} % | {100 * l33 / n33:.1f} % | {100 * m11 / nm:.1f} % | "
                  f"{100 * m11i / nm:.0f} % | {100 * t11 / nt:.0f} / {100 * t33 / nt3:.0f} % | "
                  f"{100 * (a11 + a33) / (nt + nt3):.1f} % | {100 * pw3:.0f} % (k {int(np.median(k3)) if k3 else '—'}) | "
                  f"{100 * pw1:.0f} % (k {int(np.median(k1)) if k1 else '—'}) |")
    print(f"\n({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
