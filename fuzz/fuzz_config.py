"""Fuzz target for collection configs (``edgeprof run --config``): edgeprof's TOML and the Arm kit's JSON.

    python fuzz/fuzz_config.py [SECONDS]

The property: any bytes give a collection plan or one typed InputError naming the file — never another
exception — and a plan that reads always schedules (every configuration once per round). A crash writes the
input to fuzz/crashes/ and exits 1.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "fuzz"))

from fuzz_etdump import fuzz_loop, mutate

from edgeprof.collect.config import from_document
from edgeprof.collect.plan import schedule
from edgeprof.errors import InputError
from edgeprof.io.documents import read_document

KIT = json.dumps({
    "model": "out_toy/artifacts/toy.pte", "output_root": "out_toy/runs/mac",
    "experiments": [{"name": "mac_sme2_on", "runner_path": "cmake-out/mac-arm64/executor_runner", "mode": "timing",
                     "runs": 10, "warmup": 1, "threads": [1, 2], "extra_args": [], "cpu_affinity": "0x80"},
                    {"name": "mac_sme2_off", "quiet_runner": "r", "mode": "xnntrace", "runs": 10, "warmup": 1}],
    "analysis": {"compare_pairs": [{"baseline": {"experiment": "mac_sme2_off", "threads": 1},
                                    "candidate": {"experiment": "mac_sme2_on", "threads": 1}}]}}, indent=1).encode()
TOML = (b'runs = 20\nwarmup = 2\nlaunches = 3\nthreads = [1, 2]\nseed = 7\ntimeout = 30.5\n'
        b'[[experiment]]\nname = "portable"\nmodel = "m_portable.pte"\n'
        b'[[experiment]]\nname = "xnn"\nmodel = "m_xnn.pte"\ndevice = "adb:R5CX"\nrunner = "bin/r"\n'
        b'extra_args = ["--x", "1"]\n[analysis]\ncompare_pairs = [{baseline = "portable", candidate = "xnn"}]\n')


def check(data: bytes, tmp: Path, suffix: str) -> None:
    p = tmp / f"fuzz{suffix}"
    p.write_bytes(data)
    try:
        cfg = from_document(read_document(p), p)
    except InputError as e:
        assert str(e).startswith(str(p)) and "\n" not in str(e), str(e)
        return
    plan = schedule(cfg, tmp / "run")
    keys = {f"{e.name}_t{t}" for e in cfg.experiments for t in e.threads}
    first = {ln.config_key for ln in plan if ln.round == 1}
    assert first == keys, (first, keys)


def next_case(rng: random.Random, tmp: Path):
    base, suffix = (KIT, ".json") if rng.random() < 0.5 else (TOML, ".toml")
    return "config", check, mutate(rng, base), (tmp, suffix)


if __name__ == "__main__":
    sys.exit(fuzz_loop(float(sys.argv[1]) if len(sys.argv) > 1 else 60, 777, next_case))
