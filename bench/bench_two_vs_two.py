"""Two launches per arm with nothing measured (the default allowance): A/A false verdicts, coverage of the end-to-end
interval, any category/operator line flagged on A/A, and the power to find a true 2× — with the 2-df floor on
launch spread (``edgeprof.analysis.launches.FLOOR_DF``) beside the same splits without it (the arms' spread alone),
resampled from the real-noise corpus (tests/data/noise).

    python bench/bench_two_vs_two.py [--limit 60]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "helpers"))
sys.path.insert(0, str(ROOT / "bench"))

import noise_corpus as nc  # noqa: E402
from bench_noise import aa, lines, power  # noqa: E402


def measure(limit: int) -> dict:
    from edgeprof.analysis import noise as nz

    d = nz.default()
    t = {"false": 0, "cover": 0, "n": 0, "found": 0, "pn": 0, "lines": 0, "ln": 0, "worst": 0.0, "worst_lines": 0.0}
    for s in nc.SESSIONS:
        data = nc.session(s)
        for prog in nc.PROGRAMS:
            ls = data.get(prog)
            if not ls:
                continue
            f, c, n = aa(ls, 2, 2, d, limit)
            p, _, m = power(ls, 2, 2, 2.0, d, limit)
            fl, nl = lines(ls, 2, 2, d, max(limit // 2, 1))
            t.update(false=t["false"] + f, cover=t["cover"] + c, n=t["n"] + n, found=t["found"] + p,
                     pn=t["pn"] + m, lines=t["lines"] + fl, ln=t["ln"] + nl,
                     worst=max(t["worst"], f / n), worst_lines=max(t["worst_lines"], fl / nl))
    return t


def main() -> int:
    from edgeprof.analysis import launches as L

    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=60)
    a = ap.parse_args()
    t0 = time.time()
    floor = L.FLOOR_DF
    rows = []
    for label, df in (("2-df floor (edgeprof)", floor), ("arms' spread alone", 0)):
        L.FLOOR_DF = df
        rows.append((label, measure(a.limit)))
    L.FLOOR_DF = floor
    print("| 2 vs 2, nothing measured | A/A false (worst program) | coverage | any line flagged, A/A (worst) | 2× found |")
    print("|---|---|---|---|---|")
    for label, t in rows:
        print(f"| {label} | {100 * t['false'] / t['n']:.1f} % ({100 * t['worst']:.1f} %) | "
              f"{100 * t['cover'] / t['n']:.1f} % | {100 * t['lines'] / t['ln']:.1f} % ({100 * t['worst_lines']:.1f} %) | "
              f"{100 * t['found'] / t['pn']:.1f} % |")
    print(f"\n{rows[0][1]['n']} A/A splits, {rows[0][1]['ln']} line comparisons per row; {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
