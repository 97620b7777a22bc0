"""Coverage of every interval a comparison states — end-to-end, category and operator speedups, each arm's
share of end-to-end, and the change in share — on A/A comparisons resampled from the real-noise corpus
(tests/data/noise), per regime: 1 vs 1 with the default allowance, 1 vs 1 with ``--launch-cv 0`` (its intervals
are about these two launches: judged against the same launches' later runs), 2 vs 2 and 3 vs 3 with nothing
measured, and 3 vs 3 with the session's noise.json.

Truth for A/A: a speedup of 1; each arm's share is the program's share over all 12 launches; the change in share
is 0. For ``--launch-cv 0``: each interval is made from a launch's first ``--head`` steady runs and judged against
the value of its remaining runs (the same launches, later). Prints coverage of the stated 95 % per interval kind.

    python bench/bench_coverage.py [--limit 40]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

import numpy as np  # noqa: E402

import noise_corpus as nc  # noqa: E402

KINDS = ("end-to-end", "category speedup", "operator speedup", "share", "share change")


def _slice(t, a, b):
    m, e, ops = t
    return m[a:b], e[a:b], {k: v[a:b] for k, v in ops.items()}


def _share(t, j):
    m, e, _ = t
    d = np.maximum(e, np.clip(m, 0, None).sum(axis=1))
    return 100 * float(np.clip(m[:, j], 0, None).sum() / d.sum())


def _typical(x):
    from scipy.stats import trim_mean
    return float(trim_mean(x, 0.10))


def coverage(launches, kb, kc, noise, limit, head=None) -> dict:
    from edgeprof.analysis.breakdown import LINES
    from edgeprof.analysis.compare_ops import compare_lines

    hits = {k: [] for k in KINDS}
    tables = [nc.line_tables(x) for x in launches]
    pooled = tuple(np.concatenate(p) for p in zip(*[(t[0], t[1]) for t in tables]))
    truth_share = {ln: _share((pooled[0], pooled[1], {}), j) for j, ln in enumerate(LINES)}
    for b, c in nc.splits(len(launches), kb, kc, limit):
        if head is None:
            lb, lc = [tables[i] for i in b], [tables[i] for i in c]
            later_b = later_c = None
            ct = nc.judge(launches, b, c, noise)["median"]
            hits["end-to-end"].append(ct["ci_low"] <= 1 <= ct["ci_high"])
        else:
            lb, lc = [_slice(tables[i], 0, head) for i in b], [_slice(tables[i], 0, head) for i in c]
            later_b, later_c = [_slice(tables[i], head, None) for i in b], [_slice(tables[i], head, None) for i in c]
        r = compare_lines(lb, lc, b_name="b", c_name="c", noise=noise)
        for row in r["categories"]:
            j = LINES.index(row["line"])
            if row.get("ci_low") is None:
                continue
            if head is None:
                true_s, true_sb, true_sc = 1.0, truth_share[row["line"]], truth_share[row["line"]]
            else:
                tb, tc = _typical(later_b[0][0][:, j]), _typical(later_c[0][0][:, j])
                if tb <= 0 or tc <= 0:
                    continue
                true_s, true_sb, true_sc = tb / tc, _share(later_b[0], j), _share(later_c[0], j)
            hits["category speedup"].append(row["ci_low"] <= true_s <= row["ci_high"])
            hits["share"].append(row["baseline_share_ci"][0] <= true_sb <= row["baseline_share_ci"][1])
            hits["share"].append(row["candidate_share_ci"][0] <= true_sc <= row["candidate_share_ci"][1])
            lo, hi = row["share_change_ci"]
            hits["share change"].append(lo <= true_sc - true_sb <= hi)
        for row in r["operators"].get("matched", []):
            if row.get("ci_low") is None:
                continue
            if head is None:
                true_s = 1.0
            else:
                name = row["baseline_operator"]
                xb, xc = later_b[0][2].get(name), later_c[0][2].get(name)
                if xb is None or xc is None or _typical(xc) <= 0:
                    continue
                true_s = _typical(xb) / _typical(xc)
            hits["operator speedup"].append(row["ci_low"] <= true_s <= row["ci_high"])
    return hits


def main() -> int:
    from edgeprof.analysis import noise as nz

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=40, help="A/A splits per program and regime")
    ap.add_argument("--head", type=int, default=100, help="--launch-cv 0: runs the interval is made from")
    a = ap.parse_args()
    t0 = time.time()
    regimes = [("1 vs 1, default allowance", 1, 1, "default", None), ("1 vs 1, --launch-cv 0", 1, 1, "zero", a.head),
               ("2 vs 2, nothing measured", 2, 2, "default", None), ("3 vs 3, nothing measured", 3, 3, "default", None),
               ("3 vs 3, session's noise.json", 3, 3, "profile", None)]
    print("| regime | " + " | ".join(KINDS) + " |")
    print("|---|" + "---|" * len(KINDS))
    for name, kb, kc, ev, head in regimes:
        tot = {k: [] for k in KINDS}
        worst = {k: 1.0 for k in KINDS}
        for s in nc.SESSIONS:
            data = nc.session(s)
            noise = {"default": nz.default(), "zero": nz.given(0.0), "profile": nc.machine_noise(data)}[ev]
            for prog in nc.PROGRAMS:
                h = coverage(data[prog], kb, kc, noise, a.limit, head)
                for k in KINDS:
                    tot[k] += h[k]
                    if len(h[k]) >= 10:
                        worst[k] = min(worst[k], float(np.mean(h[k])))
        print(f"| {name} | " + " | ".join(
            (f"{100 * np.mean(tot[k]):.1f} % (worst program {100 * worst[k]:.0f} %, n {len(tot[k]):,})"
             if tot[k] else "—") for k in KINDS) + " |", flush=True)
    print(f"\n({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
