"""History: regression detection on a generated history, ingest throughput, query time, ingest memory.

    python bench/bench_history.py [--seeds 10] [--reps 6] [--skip-dask] [--only detection|truth|ingest|query|rss]

1. **Detection** (the issue's acceptance figure). Generated histories (tests/helpers/history_sim.py): 300
   commits × 2 devices built from real fixture profiles — their runs resampled, launch-to-launch noise as
   measured in the real multi-launch recordings, steps of 4–15 % at known commits, a third of them in one
   category only. Precision (a confirmed change within ±2 / ±5 commits of a true step, same direction),
   recall overall and by step size, attribution accuracy (category-only steps whose category is ranked
   first). Side by side: ruptures' detectors as candidates for our gate (what we chose between), and the rules
   farm dashboards use on end-to-end numbers — a ratio threshold and a z-score against the previous 20
   commits (the anchors).
1b. **Known truth on real launch noise** (``--only truth``): one launch of the noise corpus per commit (real
   launch-to-launch noise, machine modes and bursts included), steps of 1.1×, 1.5×, 2.3× at a known commit with
   1, 3 and 10 commits after them, and flat histories: confirmed at the exact commit / within ±2, reported as
   pending or possible at its commit, commits until confirmed, false changes per 100 commits — beside the
   dashboard rules on the same histories.
2. **Ingest throughput**: the same distinct ETDumps (the 12 fixtures, each also with its runs repeated ×2 and
   ×3: 36 files) ingested in one process, on ``--workers 2`` (a local Dask cluster) and through a Dask scheduler
   with two workers on 127.0.0.1; ETDumps/s and events/s, beside ``edgeprof analyze`` on the same files.
3. **Query time** of ``history`` on a one-year store (365 days × 6 commits × 2 devices, 60 runs a launch),
   beside Polars reading the same launches from the Parquet export.
4. **Peak RSS** of ingest on the 204k-event profile beside ``edgeprof analyze`` on it (fresh processes).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "helpers"))
sys.path.insert(0, str(ROOT / "bench"))


def _store(path: Path, items) -> None:
    import history_sim as sim

    from edgeprof.store.backends import open_store
    from edgeprof.store.rows import frames

    with open_store(path, write=True) as st:
        st.write(frames(sim.store_rows(items)))


def _rule_changes(points: list[dict], rule: str) -> list[dict]:
    """Dashboard rules on the per-commit end-to-end value: flag commit i when it differs from the median of the
    previous 20 commits by more than 5 % (ratio) or by more than 3 robust SDs (z-score); consecutive flags
    count once; a flag is 'confirmed' like ours when the next two commits are flagged the same way."""
    y = np.log([p["estimate_ms"] for p in points])
    out, i, n = [], 20, len(y)
    while i < n - 2:
        ref = y[i - 20:i]
        med = float(np.median(ref))
        sd = 1.4826 * float(np.median(np.abs(ref - med))) or 1e-9
        def flag(j):
            d = y[j] - med
            return (abs(d) > math.log(1.05)) if rule == "ratio" else (abs(d) / sd > 3)
        if flag(i) and flag(i + 1) and flag(i + 2) and np.sign(y[i] - med) == np.sign(y[i + 2] - med):
            out.append({"index": i, "status": "confirmed", "direction": "regression" if y[i] > med else "improvement",
                        "attribution": {"categories": []}})
            i += 20
        else:
            i += 1
    return out


def detection(seeds: int) -> None:
    import history_sim as sim

    from edgeprof import api

    print(f"\n== detection: generated history, 300 commits x 2 devices, {seeds} seeds ==")
    configs = [("ours: binseg-l2 (chosen)", {}), ("ours with pelt-l2", {"detector": "pelt-l2"}),
               ("ours with pelt-rbf", {"detector": "pelt-rbf"}), ("ours, lower penalty (beta 1)", {"beta": 1.0}),
               ("ours, gate p<0.01", {"alpha": 0.01}), ("dashboard: ratio 5 % vs last 20", "ratio"),
               ("dashboard: z-score 3 vs last 20", "z")]
    for launches in (1, 3):
        rows: dict = {name: {} for name, _ in configs}
        t_ours = []
        with tempfile.TemporaryDirectory() as tmp:
            for seed in range(seeds):
                items, steps, _ = sim.generate(300, seed=seed, launches=launches)
                path = Path(tmp) / f"h{seed}.duckdb"
                _store(path, items)
                base = None
                for name, opts in configs:
                    if isinstance(opts, str):
                        series = [dict(s, changes=_rule_changes(s["points"], opts)) for s in base.series]
                    else:
                        t = time.perf_counter()
                        r = api.history(path, **opts)
                        if not opts:
                            t_ours.append(time.perf_counter() - t)
                            base = r
                        series = r.series
                    sim.tally(series, steps, rows[name])
        sizes = sorted(rows[configs[0][0]]["by_size"])
        print(f"\n{launches} launch(es) per commit; history() takes {statistics.median(t_ours):.2f} s per store "
              f"(600 points)")
        print(f"{'method':34s} {'changes':>7s} {'prec±2':>7s} {'prec±5':>7s} {'recall':>7s} " +
              " ".join(f"{'r@' + format(100 * s, '.0f') + '%':>6s}" for s in sizes) + "  attribution")
        for name, _ in configs:
            a = rows[name]
            by = " ".join(f"{a['by_size'][s][1] / a['by_size'][s][0]:6.2f}" for s in sizes)
            attr = f"{a['attr_ok'] / a['attr_n']:.2f} ({a['attr_n']})" if a["attr_n"] and not name.startswith("dashboard") \
                else "none (end-to-end only)" if name.startswith("dashboard") else "—"
            print(f"{name:34s} {a['detected']:7d} {a['tp2'] / max(a['detected'], 1):7.2f} {a['tp5'] / max(a['detected'], 1):7.2f} "
                  f"{a['found'] / a['steps']:7.2f} {by}  {attr}")


def truth(reps: int) -> None:
    """Known truth on real launch noise (tests/helpers/history_truth.py): steps of 1.1×, 1.5×, 2.3× with 1, 3
    and 10 commits after them, and flat histories; ours beside the dashboard rules on the same histories."""
    import history_truth as ht

    def rule(name):
        def run(y, v):
            pts = [{"estimate_ms": float(math.exp(x))} for x in y]
            return _rule_changes(pts, name)
        return run

    print(f"\n== known truth: real launches of the noise corpus (4 sessions × 6 programs × {reps} histories per "
          "cell), one launch per commit ==")
    print(f"{'method':28s} {'step':>5s} {'after':>5s} {'confirmed@commit':>16s} {'±2':>5s} {'pending/possible@commit':>23s} "
          f"{'commits to confirm':>18s} {'false/100 commits':>17s} {'wrong place':>11s}")
    for name, det in (("edgeprof history", None), ("dashboard: z-score 3 vs last 20", rule("z")),
                      ("dashboard: ratio 5 % vs last 20", rule("ratio"))):
        t = time.perf_counter()
        r = ht.suite(reps=reps, detector=det)
        for (f, after), a in r["steps"].items():
            n = a["histories"]
            until = f"{statistics.mean(a['until']):.1f} ({len(a['until'])}/{n})" if a["until"] else "—"
            print(f"{name:28s} {f:5.1f} {after:5d} {a['exact'] / n:16.2f} {a['near'] / n:5.2f} {a['reported'] / n:23.2f} "
                  f"{until:>18s} {100 * a['false'] / a['commits']:17.2f} {a['wrong_place']:11d}")
        fl = r["flat"]
        print(f"{name:28s} {'flat':>5s} {'—':>5s} {'':16s} {'':5s} {'':23s} {'':18s} "
              f"{100 * fl['false'] / fl['commits']:17.2f} {fl['possible']:11d}   ({time.perf_counter() - t:.0f} s)")


# --------------------------------------------------------------------------------------------------
# ingest throughput
# --------------------------------------------------------------------------------------------------

def _files(folder: Path) -> list[Path]:
    from etdump_concat import concat

    out = []
    for gz in sorted((ROOT / "tests" / "data" / "etdump").glob("*.etdp.gz")):
        data = gzip.decompress(gz.read_bytes())
        for k in (1, 2, 3):
            p = folder / f"{gz.name[:-len('.etdp.gz')]}_x{k}.etdp"
            p.write_bytes(data if k == 1 else concat(data, k))
            out.append(p)
    return out


def ingest_throughput(skip_dask: bool) -> None:
    from dask_cluster import local_scheduler

    from edgeprof import api
    from edgeprof.io.etdump_read import read_etdump

    print("\n== ingest throughput (same 36 distinct ETDumps each time; fresh store) ==")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        files = _files(tmp)
        events = sum(read_etdump(f).n_events for f in files)
        t = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            api.analyze(files, output_dir=tmp / "analyze", jobs=1)
        t_an = time.perf_counter() - t
        rows = [("edgeprof analyze (anchor)", t_an)]
        for name, kw in [("ingest, 1 process", {}), ("ingest, Parquet dataset, 1 process", {"parquet": True}),
                         ("ingest --workers 2", {"workers": 2}),
                         ("ingest --workers 2, Parquet dataset", {"workers": 2, "parquet": True}),
                         ("ingest --scheduler (2 workers)", {"scheduler": True}),
                         ("ingest --scheduler, Parquet dataset", {"scheduler": True, "parquet": True})]:
            if skip_dask and ("workers" in kw or "scheduler" in kw):
                continue
            store = f"{tmp / (name.replace(' ', '_') + '_ds')}/" if kw.get("parquet") else tmp / (name.replace(" ", "_") + ".duckdb")
            ctx = local_scheduler(tmp) if kw.get("scheduler") else contextlib.nullcontext(None)
            with ctx as addr:
                t = time.perf_counter()
                r = api.ingest(files, store=store, commit="c", workers=kw.get("workers"), scheduler=addr)
                dt = time.perf_counter() - t
            assert len(r.added) == len(files), r.data["errors"]
            rows.append((name, dt))
        print(f"{len(files)} files, {events:,} events")
        print(f"{'':40s} {'seconds':>8s} {'ETDumps/s':>10s} {'events/s':>12s} {'vs analyze':>10s}")
        for name, dt in rows:
            print(f"{name:40s} {dt:8.2f} {len(files) / dt:10.1f} {events / dt:12,.0f} {t_an / dt:9.2f}x")
        print("(a cluster's start-up is included; on 2 cores the workers compete with the client)")


# --------------------------------------------------------------------------------------------------
# query time and memory
# --------------------------------------------------------------------------------------------------

def one_year(path: Path) -> int:
    import history_sim as sim

    items, _, _ = sim.generate(365 * 6, seed=3, runs=60)
    _store(path, items)
    return len(items)


def query_time() -> None:
    import polars as pl

    from edgeprof import api

    print("\n== query: one-year history (365 days x 6 commits x 2 devices) ==")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "year.duckdb"
        n = one_year(db)
        ds = f"{Path(tmp) / 'year_ds'}/"
        api.export(db, ds)
        t = time.perf_counter()
        r = api.history(db)
        t_hist = time.perf_counter() - t
        t = time.perf_counter()
        api.history(db, device="board-a", metric="category:CONV")
        t_cat = time.perf_counter() - t
        t = time.perf_counter()
        api.history(ds)
        t_ds = time.perf_counter() - t
        t = time.perf_counter()
        lp = pl.scan_parquet(Path(ds) / "launches", hive_partitioning=True).select(
            "commit", "device", "median_ms", "time").sort("time").collect()
        t_pl = time.perf_counter() - t
        pts = sum(len(s["points"]) for s in r.series)
        print(f"{n} launches, {pts} points, {len(r.changes)} changes; size {db.stat().st_size / 1e6:.1f} MB (DuckDB)")
        print(f"history (DuckDB file), median_ms, both devices: {t_hist:.2f} s")
        print(f"history --metric category:CONV, one device:    {t_cat:.2f} s")
        print(f"history (Parquet dataset):                      {t_ds:.2f} s")
        print(f"anchor: Polars reading the launches' medians from the Parquet dataset: {t_pl:.3f} s "
              f"(history = {t_hist / t_pl:.0f}x that, for points, intervals, change points and attribution)")
        assert lp.height == n


def rss() -> None:
    from etdump_concat import concat

    print("\n== peak RSS on the 204k-event profile (fresh processes) ==")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        small = gzip.decompress((ROOT / "tests" / "data" / "etdump" / "mobilenet_v3_small_xnnq8.N200.etdp.gz").read_bytes())
        big = tmp / "big.etdp"
        big.write_bytes(concat(small, 5))

        from fresh import measure as run

        base = run("--help")
        an = run("analyze", str(big), "--no-progress", "--jobs", "1", "--output-dir", str(tmp / "a"))
        ing = run("ingest", str(big), "--store", str(tmp / "h.duckdb"), "--commit", "c")
        ds = run("ingest", str(big), "--store", f"{tmp / 'ds'}/", "--commit", "c")
        print(f"{'':32s} {'seconds':>8s} {'peak RSS MB':>12s}")
        for name, r in (("python + edgeprof --help", base), ("edgeprof analyze (anchor)", an),
                        ("edgeprof ingest (DuckDB)", ing), ("edgeprof ingest (Parquet)", ds)):
            print(f"{name:32s} {r['seconds']:8.2f} {r['rss_mb']:12.0f}")
        print(f"ingest / analyze: time {ing['seconds'] / an['seconds']:.2f}x, peak RSS {ing['rss_mb'] / an['rss_mb']:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--skip-dask", action="store_true")
    ap.add_argument("--only", choices=["detection", "truth", "ingest", "query", "rss"], default=None)
    ap.add_argument("--reps", type=int, default=6, help="histories per cell of the known-truth table")
    a = ap.parse_args()
    if a.only in (None, "detection"):
        detection(a.seeds)
    if a.only in (None, "truth"):
        truth(a.reps)
    if a.only in (None, "ingest"):
        ingest_throughput(a.skip_dask)
    if a.only in (None, "query"):
        query_time()
    if a.only in (None, "rss"):
        rss()


if __name__ == "__main__":
    main()
