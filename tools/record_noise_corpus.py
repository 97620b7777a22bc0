"""Record the real-noise corpus the statistics are calibrated and tested on (tests/data/noise/).

    python tools/record_noise_corpus.py SESSION [--launches 12] [--runs 300] [--load none|busy|bursts]
    python tools/record_noise_corpus.py --extract SESSION_DIR...      # → tests/data/noise/<session>.csv.gz

A session is one ``edgeprof run`` of the six fixture programs (toycnn and the transformer layer; portable,
XNNPACK fp32, XNNPACK int8), every launch its own process, launches interleaved in a seeded order — exactly
what a user records. ``--load`` adds background load for the whole session: ``busy`` two CPU-bound processes
(one per core of this machine, as a shared CI host or a phone under a game), ``bursts`` the same switched on
and off at random every 1–8 s (a machine whose other work comes and goes). Sessions recorded at different times
of day differ by themselves.

``--extract`` keeps, per session, one row per (program, launch, run): the end-to-end latency and the time of
each operator category and of the three largest operators (ms), with the launch's position in the schedule and
the machine's load before it — enough to resample every comparison the tests need, in a few hundred KB.
The ETDumps themselves are not kept.
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing as mp
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ["toycnn_portable", "toycnn_xnn", "toycnn_xnnq8", "tel_portable", "tel_xnn", "tel_xnnq8"]
OUT = ROOT / "tests" / "data" / "noise"


def _spin(stop) -> None:
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF


def _bursts(stop, seed: int) -> None:
    rng = random.Random(seed)
    while not stop.is_set():
        on = mp.Event()
        procs = [mp.Process(target=_spin, args=(on,)) for _ in range(rng.choice((1, 2)))]
        for p in procs:
            p.start()
        time.sleep(rng.uniform(1, 8))
        on.set()
        for p in procs:
            p.join()
        time.sleep(rng.uniform(1, 8))


def record(session: str, launches: int, runs: int, load: str, seed: int, frozen: Path) -> Path:
    out = ROOT / "build" / "noise" / session
    ptes = [ROOT / "tests" / "data" / "pte" / f"{p}.pte" for p in PROGRAMS]
    stop = mp.Event()
    helpers = []
    if load == "busy":
        helpers = [mp.Process(target=_spin, args=(stop,)) for _ in range(os.cpu_count() or 2)]
    elif load == "bursts":
        helpers = [mp.Process(target=_bursts, args=(stop, seed))]
    for h in helpers:
        h.start()
    try:
        env = dict(os.environ, PYTHONPATH=str(frozen))  # a frozen copy: edits to src/ cannot reach a running session
        cmd = [sys.executable, "-m", "edgeprof", "run", *map(str, ptes), "--runs", str(runs), "--warmup", "5",
               "--launches", str(launches), "--seed", str(seed), "--out", str(out), "--force", "--no-progress"]
        subprocess.run(cmd, env=env, check=False)
    finally:
        stop.set()
        for h in helpers:
            h.join()
    (out / "session.json").write_text(json.dumps({"session": session, "load": load, "launches": launches, "runs": runs,
                                                  "seed": seed, "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}))
    return out


def extract(run_dir: Path) -> Path:
    """One CSV row per (program, launch, run): e2e latency, category times, the top operators' times."""
    import polars as pl

    sys.path.insert(0, str(ROOT / "src"))
    from edgeprof.analysis.breakdown import per_run_categories
    from edgeprof.io.workspace import Workspace

    meta = json.loads((run_dir / "session.json").read_text())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    order = {(r["experiment"], r["launch"]): (r["position"], (r["fingerprint"]["before"] or {}).get("loadavg", [None])[0])
             for r in manifest["results"] if r["status"] == "ok"}
    ws = Workspace(run_dir)
    frames = []
    for prog in PROGRAMS:
        tops = None
        for f in sorted((run_dir / prog).glob("*.etdump")):
            launch = int(f.stem.rsplit("_l", 1)[1])
            prof = ws.valid_profile(f, etrecord=False)
            lat = prof.latency_ms()
            cats, ops = per_run_categories(prof)
            if tops is None:
                tops = list(ops.mean().sort(descending=True).row(0, named=False) and
                            [c for c in ops.columns])[:3] if ops.width else []
            pos, load = order.get((prog, launch), (None, None))
            df = pl.DataFrame({"session": meta["session"], "load": meta["load"], "program": prog, "launch": launch,
                               "position": pos, "loadavg": load, "run": list(range(len(lat))), "latency_ms": lat})
            df = pl.concat([df, cats.rename({c: f"cat:{c}" for c in cats.columns}),
                            ops.select([c for c in tops if c in ops.columns]).rename({c: f"op:{c}" for c in tops
                                                                                      if c in ops.columns})],
                           how="horizontal")
            frames.append(df)
    table = pl.concat(frames, how="diagonal_relaxed")
    OUT.mkdir(parents=True, exist_ok=True)
    target = OUT / f"{meta['session']}.csv.gz"
    with gzip.open(target, "wb", compresslevel=9) as fh:
        table.write_csv(fh, float_precision=6)
    (OUT / f"{meta['session']}.json").write_text(json.dumps({**meta, "machine": manifest.get("machines"),
                                                             "rows": table.height}, indent=1, default=str))
    return target


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("session", nargs="*")
    ap.add_argument("--launches", type=int, default=12)
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--load", choices=("none", "busy", "bursts"), default="none")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--extract", action="store_true")
    a = ap.parse_args()
    if a.extract:
        for d in a.session:
            print(extract(Path(d)))
        return 0
    frozen = ROOT / "build" / "noise" / "frozen_src"
    shutil.rmtree(frozen, ignore_errors=True)
    shutil.copytree(ROOT / "src", frozen)
    for s in a.session:
        print(record(s, a.launches, a.runs, a.load, a.seed, frozen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
