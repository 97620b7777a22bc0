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
    """One CSV row per (program, launch, run): the end-to-end latency, each accounting line (categories and
    overheads) and each operator type, in ms — the same per-run quantities ``compare`` contrasts."""
    import polars as pl

    sys.path.insert(0, str(ROOT / "src"))
    from edgeprof.analysis.breakdown import LINES, EventLines, per_run_lines, per_run_operators
    from edgeprof.io.workspace import Workspace

    meta = json.loads((run_dir / "session.json").read_text())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    facts = {}
    for r in manifest["results"]:
        if r["status"] == "ok":
            before = (r.get("fingerprint") or {}).get("before") or {}
            facts[(r["experiment"], r["launch"])] = (r["position"], (before.get("loadavg") or [None])[0])
    ws = Workspace(run_dir, discover_etrecord=False)
    frames = []
    for prog in PROGRAMS:
        for f in sorted((run_dir / prog).glob("*.etdump")):
            launch = int(f.stem.rsplit("_l", 1)[1])
            prof = ws.valid_profile(f, etrecord=False)
            lines = EventLines(prof)
            m, e2e, _ = per_run_lines(prof, lines)
            ops = per_run_operators(prof, lines)
            pos, load = facts.get((prog, launch), (None, None))
            cols = {"session": meta["session"], "load": meta["load"], "program": prog, "launch": launch,
                    "position": pos, "loadavg": load, "run": list(range(len(e2e))),
                    "latency_ms": (e2e / 1e6).tolist()}
            for j, name in enumerate(LINES):
                if m[:, j].any():
                    cols[f"line:{name}"] = (m[:, j] / 1e6).tolist()
            for name, v in ops.items():
                cols[f"op:{name}"] = (v / 1e6).tolist()
            frames.append(pl.DataFrame(cols))
    table = pl.concat(frames, how="diagonal_relaxed")
    OUT.mkdir(parents=True, exist_ok=True)
    target = OUT / f"{meta['session']}.csv.gz"
    with gzip.open(target, "wb", compresslevel=9) as fh:
        table.write_csv(fh, float_precision=6)
    (OUT / f"{meta['session']}.json").write_text(json.dumps({**meta, "machines": manifest.get("machines"),
                                                             "rows": table.height, "columns": table.width},
                                                            indent=1, default=str))
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
