"""No stage grows faster than the profile: each stage on a profile twice as large should cost about 2× (best of
three, real profiles made by repeating a recorded ETDump's runs). The stages found super-linear before are here:
the timeline's per-chunk row selection (was a mask over every row per chunk: O(N²)) and the trace's nesting
repair (a Python loop per slice), next to the reader and the other per-profile analyses; the anchor is that old
row selection, which the same measurement shows growing faster.

    python bench/bench_linear.py

A timing, so a benchmark and not a test (a loaded machine makes wall-time assertions flaky): it prints each
stage's time ratio (81,602 → 163,202 events) beside the limit 2.3 and the quadratic anchor's ratio."""

from __future__ import annotations

import gzip
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from etdump_concat import concat  # noqa: E402

from edgeprof.io.etdump_read import read_etdump  # noqa: E402

DATA = ROOT / "tests" / "data"

LIMIT = 2.3


def pair(d: Path):
    raw = gzip.decompress((DATA / "etdump" / "mobilenet_v3_small_xnnq8.N200.etdp.gz").read_bytes())
    out = []
    for k in (2, 4):  # 81,602 and 163,202 events
        p = Path(d) / f"x{k}.etdp"
        p.write_bytes(concat(raw, k))
        out.append(p)
    return out


def _best(fn, reps: int = 3) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _stages():
    from edgeprof.analysis.breakdown import breakdown
    from edgeprof.analysis.timeline import Timeline, ops_stats_table
    from edgeprof.render.trace import lines, trace_events

    def timeline_small_chunks(prof):
        for _ in Timeline(prof, "m", node_ids=None).chunks(max_rows=2_000):
            pass

    def trace(prof):
        _, slices, _, _ = trace_events(prof)
        for _ in lines(slices):
            pass

    return {"timeline in 2,000-row chunks": timeline_small_chunks, "trace": trace,
            "breakdown": lambda p: breakdown(p), "ops stats": lambda p: ops_stats_table(p, "m")}


def _ratio(fn, a, b) -> float:
    """time(b) / time(a), best of three each; measured again (up to twice) when over the limit, since a busy
    machine only ever makes one side slower."""
    r = float("inf")
    for _ in range(3):
        r = min(r, _best(lambda: fn(b)) / _best(lambda: fn(a)))
        if r <= LIMIT:
            break
    return r


def old_select(prof):
    """The row selection as it was (a mask over every row for each chunk, one run per chunk): quadratic."""
    import numpy as np

    from edgeprof.analysis.timeline import Timeline

    r = prof.events["run_index"].to_numpy()
    counts = Timeline(prof, "m")._counts
    for a in range(0, counts.size):
        np.flatnonzero((r >= a) & (r < a + 1))


def main() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        files = pair(Path(d))
        profs = [read_etdump(f) for f in files]
        print(f"time ratio, {profs[0].n_events:,} → {profs[1].n_events:,} events (limit {LIMIT}; linear ≈ 2.0)")
        print(f"{'reading':34s} {_ratio(read_etdump, *files):5.2f}")
        for name, fn in _stages().items():
            fn(profs[0])  # warm caches (taxonomy, imports)
            print(f"{name:34s} {_ratio(fn, *profs):5.2f}")
        print(f"{'anchor: the old row selection':34s} {_ratio(old_select, *profs):5.2f}  (quadratic: must exceed {LIMIT})")


if __name__ == "__main__":
    main()
