"""Launch-level statistics by simulation and on real multi-launch data, in one run (fixed seeds).

    python bench/bench_launches.py [--sims 400]

Part 1 — simulation: coverage of the 95 % interval and its mean width (log scale) for 1, 2, 3, 5 and 10 launches
per arm, launch-to-launch SD 0 / 0.05 / 0.2, lognormal (CV 5 %) and bimodal run noise, 100 runs per launch,
plus unequal launch and run counts; edgeprof's interval beside the textbook t intervals on log launch medians
(pooled and Welch). One launch per arm: edgeprof's single-launch regime with the default allowance.

Part 2 — real data: the six fixture programs recorded with `edgeprof run` (12 interleaved launches × 60 runs,
tests/data/multilaunch): false faster/slower verdicts of same-model A/A splits (3 vs 3 launches; 1 vs 1 with
and without the allowance) and how often a known effect (the candidate's runs divided by 2.0 or 1.5) is found.
The fast versions run in the test suite (tests/analysis/test_launches.py).
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from scipy import stats  # noqa: E402

from edgeprof.analysis.compare import Arm, compare_latency  # noqa: E402
from edgeprof.analysis.launches import contrast, log_median_stats  # noqa: E402


def noise(rng, n, kind, cv=0.05):
    if kind == "lognormal":
        return np.exp(rng.normal(0, cv, n))
    return np.where(rng.random(n) < 0.3, 1.25, 1.0) * np.exp(rng.normal(0, cv / 2, n))


def cell(k, tau, kind, sims, seed, kc=None, n=100, nc=None, R=1.3):
    rng = np.random.default_rng(seed)
    kc, nc = kc or k, nc or n
    hit, w, hit_p, w_p, w_w = 0, [], 0, [], []
    for _ in range(sims):
        bl = [noise(rng, n, kind) * math.exp(rng.normal(0, tau)) for _ in range(k)]
        cl = [noise(rng, nc, kind) * math.exp(rng.normal(0, tau)) / R for _ in range(kc)]
        yb, vb = log_median_stats(bl)
        yc, vc = log_median_stats(cl)
        ct = contrast(yb, vb, yc, vc)
        hit += ct["low"] <= math.log(R) <= ct["high"]
        w.append(ct["high"] - ct["low"])
        if k > 1 and kc > 1:
            p = stats.ttest_ind(yb, yc, equal_var=True).confidence_interval(0.95)
            hit_p += p.low <= math.log(R) <= p.high
            w_p.append(p.high - p.low)
            q = stats.ttest_ind(yb, yc, equal_var=False).confidence_interval(0.95)
            w_w.append(q.high - q.low)
    out = {"coverage": hit / sims, "width": float(np.mean(w))}
    if w_p:
        out.update(pooled_coverage=hit_p / sims, pooled_width=float(np.mean(w_p)), welch_width=float(np.mean(w_w)))
    return out


def real_data():
    import polars as pl

    df = pl.read_csv(gzip.decompress((ROOT / "tests/data/multilaunch/fixture_programs_12x60.csv.gz").read_bytes()))
    return {p: [g.sort("run")["latency_ms"].to_numpy() for _, g in sub.sort("launch").group_by(
        "launch", maintain_order=True)] for (p,), sub in df.group_by("program", maintain_order=True)}


def verdicts(pairs, scale=1.0, **kw):
    return np.array([compare_latency(Arm("b", b), Arm("c", [x / scale for x in c]), resamples=200, **kw)["verdict"]
                     for b, c in pairs])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sims", type=int, default=400)
    ap.add_argument("--splits", type=int, default=300)
    args = ap.parse_args()
    print(f"Part 1: simulated coverage and mean width (log scale) of 95 % intervals, {args.sims} repetitions per cell")
    print(f"{'launches':>9} {'launch SD':>9} {'noise':>9} | {'edgeprof cov':>12} {'width':>7} | {'pooled t cov':>12} "
          f"{'width':>7} | {'Welch width':>11} | {'width/pooled':>12}")
    seed = 0
    for k in (1, 2, 3, 5, 10):
        for tau in (0.0, 0.05, 0.2):
            for kind in ("lognormal", "bimodal"):
                seed += 1
                r = cell(k, tau, kind, args.sims, seed)
                pooled = (f"{r['pooled_coverage']:12.3f} {r['pooled_width']:7.3f} | {r['welch_width']:11.3f} | "
                          f"{r['width'] / r['pooled_width']:12.2f}") if "pooled_width" in r else \
                    f"{'—':>12} {'—':>7} | {'—':>11} | {'—':>12}"
                print(f"{k:9d} {tau:9.2f} {kind:>9} | {r['coverage']:12.3f} {r['width']:7.3f} | {pooled}", flush=True)
    for label, kw in (("3 vs 5 launches, 20 vs 200 runs", dict(k=3, kc=5, n=20, nc=200)),
                      ("2 vs 6 launches, 200 vs 20 runs", dict(k=2, kc=6, n=200, nc=20))):
        for tau in (0.0, 0.05, 0.2):
            seed += 1
            r = cell(tau=tau, kind="lognormal", sims=args.sims, seed=seed, **kw)
            print(f"{label:>31} SD {tau:.2f} | edgeprof {r['coverage']:.3f} / {r['width']:.3f} | pooled t "
                  f"{r['pooled_coverage']:.3f} / {r['pooled_width']:.3f} | Welch width {r['welch_width']:.3f}", flush=True)

    print("\nPart 2: real multi-launch recordings of the fixture programs (12 launches × 60 runs each)")
    print(f"{'program':>16} | {'launch SD':>9} {'CV med (max)':>13} | {'3v3 A/A false':>13} {'3v3 2× found':>12} | {'1v1 A/A false':>13} "
          f"{'(no allowance)':>14} {'1v1 1.5× found':>14}")
    rng = np.random.default_rng(12)
    for prog, ls in real_data().items():
        splits = []
        for _ in range(args.splits):
            perm = rng.permutation(len(ls))
            splits.append(([ls[i] for i in perm[:3]], [ls[i] for i in perm[3:6]]))
        pairs = [([ls[i]], [ls[j]]) for i, j in itertools.combinations(range(len(ls)), 2)]
        aa3 = np.isin(verdicts(splits), ("faster", "slower")).mean()
        two = (verdicts(splits[:100], 2.0) == "faster").mean()
        aa1 = np.isin(verdicts(pairs), ("faster", "slower")).mean()
        aa1_0 = np.isin(verdicts(pairs, launch_cv=0.0), ("faster", "slower")).mean()
        f15 = (verdicts(pairs, 1.5) == "faster").mean()
        sd = float(np.std([np.log(np.median(x)) for x in ls], ddof=1))  # SD of log launch medians
        cvs = [float(np.std(x, ddof=1) / np.mean(x)) for x in ls]
        print(f"{prog:>16} | {sd:9.3f} {np.median(cvs):5.2f} ({max(cvs):4.2f}) | {aa3:13.3f} {two:12.3f} | {aa1:13.3f} {aa1_0:14.3f} {f15:14.3f}", flush=True)
    print("targets: 3v3 A/A ≤ 0.05, 2× found ≥ 0.90, 1v1 A/A ≤ 0.10 (verdicts at the default 2 % threshold)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
