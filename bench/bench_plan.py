"""``plan``'s promise, pilot by pilot, on the real-noise corpus (tests/data/noise): for 3-launch pilots drawn from
each program's 12 launches, the design ``plan`` recommends (:func:`edgeprof.analysis.noise.plan_design`, compare's
2 % threshold) is recorded ``draws`` times from the launches *outside* the pilot (resampled with replacement, the
first n steady runs of each) with the effect applied to the candidate, and judged as ``compare`` judges a
multi-launch comparison of those files. Prints, per effect: the share of pilots whose design delivers at least
its promised power minus 5 points, the share of pilots ``plan`` declines, and the worst pilot.

    python bench/bench_plan.py [--pilots 40] [--draws 1000] [--effects 0.1,0.3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

import noise_corpus as nc  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pilots", type=int, default=40, help="pilots per program (of its 220 3-launch sets)")
    ap.add_argument("--draws", type=int, default=1000, help="recordings of each pilot's design")
    ap.add_argument("--effects", default="0.1,0.3,0.5")
    ap.add_argument("--sizes", default="3,4,6", help="launches per pilot")
    a = ap.parse_args()
    t0 = time.time()
    print("| pilot launches | effect | pilots | declined | delivered ≥ promised − 5 pts | worst pilot: promised → delivered (design) "
          "| median design |")
    print("|---|---|---|---|---|---|---|")
    for size, eff in ((int(z), float(e)) for z in a.sizes.split(",") for e in a.effects.split(",")):
        rows = []
        for s in nc.SESSIONS:
            data = nc.session(s)
            for prog in nc.PROGRAMS:
                if data.get(prog):
                    rows += [(s, prog, *r) for r in nc.pilot_outcomes(data[prog], eff, pilots=a.pilots, draws=a.draws,
                                                                      pilot_size=size)]
        planned = [r for r in rows if r[2] is not None]
        ok = [r for r in planned if r[3] >= r[2] - 0.05]
        worst = min(planned, key=lambda r: r[3] - r[2]) if planned else None
        ks = sorted(r[4] for r in planned)
        ns = sorted(r[5] for r in planned)
        print(f"| {size} | {100 * eff:g} % | {len(rows)} | {100 * (len(rows) - len(planned)) / len(rows):.1f} % | "
              f"{100 * len(ok) / max(len(planned), 1):.1f} % | "
              + (f"{100 * worst[2]:.0f} % → {100 * worst[3]:.0f} % ({worst[4]} × {worst[5]}, {worst[1]}, {worst[0]})"
                 if worst else "—")
              + (f" | {ks[len(ks) // 2]} × {ns[len(ns) // 2]} |" if ks else " | — |"))
    print(f"\n({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
