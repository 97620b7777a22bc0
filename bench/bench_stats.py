"""Long simulation of `edgeprof compare` on real noise: false-positive rates, interval coverage, power.

    python bench/bench_stats.py [--sims 3000]

Noise shape: the 200 real per-run latencies of tests/data mobilenet_v3_small_xnnq8.N200 (relative to
their median), rescaled to the stated CV and resampled (tests/helpers/simulate.py). Fixed seeds: the output
is reproducible. The fast versions of these checks run in the test suite (tests/analysis/test_compare.py).
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

from simulate import draw, noise_shape, run  # noqa: E402

from edgeprof import load_etdump  # noqa: E402
from edgeprof.analysis.stats import bootstrap_medians  # noqa: E402


def naive_pooled_coverage(shape, sims, n, cv, launches, sigma, seed) -> float:
    """Coverage of a plain percentile bootstrap over pooled runs (ignores launches): what not to do."""
    rng = np.random.default_rng(seed)
    hit = 0
    for i in range(sims):
        arms = [np.concatenate([draw(shape, n, cv, rng) * np.exp(rng.normal(0, sigma)) for _ in range(launches)])
                for _ in range(2)]
        r2 = np.random.default_rng(i)
        d = np.log(bootstrap_medians(arms[0], 1000, r2)) - np.log(bootstrap_medians(arms[1], 1000, r2))
        lo, hi = np.quantile(d, [0.025, 0.975])
        hit += lo <= 0 <= hi
    return hit / sims


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=3000)
    args = ap.parse_args()
    S = args.sims
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "n200.etdp"
        p.write_bytes(gzip.decompress((ROOT / "tests/data/etdump/mobilenet_v3_small_xnnq8.N200.etdp.gz").read_bytes()))
        shape = noise_shape(load_etdump(p, warn=False).latency_ms())
    z = dict(launch_cv=0)  # one launch per arm, no allowance: the interval about these two launches
    rows = [
        ("A/A, 1 launch/arm, 100 runs, CV 5 %, δ = 0, no allowance", dict(sims=S, threshold=0.0, seed=1, **z),
         "false faster/slower ≤ 5 %"),
        ("A/A, same, δ = 2 %", dict(sims=S, threshold=0.02, seed=2, **z), "false faster/slower ≤ 5 %"),
        ("true 1.05×, 100 runs, CV 5 %, no allowance", dict(sims=S, true_speedup=1.05, seed=3, **z),
         "coverage ≥ 93 %, power ≥ 80 %"),
        ("true 1.05×, 30 runs, CV 5 %, no allowance", dict(sims=S, n=30, true_speedup=1.05, seed=4, **z), "(smaller n)"),
        ("true 1.05×, 100 runs, CV 10 %, no allowance", dict(sims=S, cv=0.10, true_speedup=1.05, seed=5, **z), "(noisier)"),
        ("A/A, 3-run warm-up and +3 %/100-run drift, no allowance", dict(sims=S, threshold=0.0, warmup=3, drift=3.0,
                                                                         seed=6, **z), "false ≤ 5 %, coverage ≥ 93 %"),
        ("A/A, 3 launches/arm × 50 runs, launch σ 0.2, CV 7 %", dict(sims=S // 3, n=50, cv=0.07, launches=3,
                                                                   launch_sigma=0.2, threshold=0.0, seed=7),
         "coverage ≥ 93 %"),
        ("A/A, 1 launch/arm, launch σ 0.05, default allowance 10 %", dict(sims=S // 3, n=50, cv=0.07, launches=1,
                                                                         launch_sigma=0.05, seed=8),
         "false ≤ 10 %"),
        ("true 1.5×, 1 launch/arm, launch σ 0.05, default allowance", dict(sims=S // 3, n=50, cv=0.07, launches=1,
                                                                          launch_sigma=0.05, true_speedup=1.5, seed=9),
         "found"),
        ("A/A, 1 launch/arm, launch σ 0.2, default allowance", dict(sims=S // 3, n=50, cv=0.07, launches=1,
                                                                   launch_sigma=0.2, seed=10),
         "beyond the allowance"),
        ("A/A, 1 launch/arm, launch σ 0.2, no allowance", dict(sims=S // 3, n=50, cv=0.07, launches=1,
                                                              launch_sigma=0.2, threshold=0.0, seed=11, **z),
         "what one launch cannot see"),
    ]
    print(f"{'scenario':62s} {'faster':>7s} {'slower':>7s} {'equiv':>6s} {'incon':>6s} {'coverage':>8s}  target")
    for label, kw, target in rows:
        r = run(shape, **kw)
        print(f"{label:62s} {r['faster']:7.3f} {r['slower']:7.3f} {r['equivalent']:6.3f} {r['inconclusive']:6.3f} "
              f"{r['coverage']:8.3f}  {target}")
    naive = naive_pooled_coverage(shape, S // 3, 50, 0.07, 3, 0.2, 12)
    print(f"{'plain percentile bootstrap over pooled runs, same 3-launch case':62s} {'':7s} {'':7s} {'':6s} {'':6s} "
          f"{naive:8.3f}  (for contrast: far too narrow)")


if __name__ == "__main__":
    main()
