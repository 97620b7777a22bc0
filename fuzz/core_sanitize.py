"""The compiled ETDump walk (and number formatting) under AddressSanitizer + UndefinedBehaviorSanitizer, and under valgrind.

    python fuzz/core_sanitize.py [--mutants N] [--seed S] [--valgrind]

Builds fuzz/core_harness.c (the walk of src/edgeprof/_core_walk.c with no Python around it) with
``-fsanitize=address,undefined -fno-sanitize-recover=all`` and runs it over the corpus: every ETDump fixture, the
hostile cases the reader's tests build (tests/helpers/hostile.py, hostile_round3.py: invalid times, aliased
offsets, many blocks), inputs saved in fuzz/crashes/, and mutants of each — the Python fuzzer's own mutations
(fuzz/fuzz_etdump.py) written as files, and ``--mutants`` more per input made inside the harness, each in its own
allocation so one byte read past its end is caught; then the text formatting of the core's writers
(src/edgeprof/_core_text.c) on ``--mutants`` × 500 random numbers. ``--valgrind``: the same corpus (fewer mutants) through an
unsanitized build under valgrind's memcheck. Any finding exits 1 with the sanitizer's report; a finding is a
release blocker.
"""

from __future__ import annotations

import argparse
import gzip
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "helpers"))
sys.path.insert(0, str(ROOT / "fuzz"))

SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-g", "-O1"]


def corpus(folder: Path, python_mutants: int, seed: int) -> list[Path]:
    """The inputs, written into ``folder``."""
    import hostile
    import hostile_round3
    from fuzz_etdump import mutate

    seeds = {p.name.removesuffix(".gz"): gzip.decompress(p.read_bytes())
             for p in sorted((ROOT / "tests" / "data" / "etdump").glob("*.etdp.gz"))}
    cases = dict(seeds)
    toy = seeds["toycnn_xnn.N20.etdp"]
    for name, data in hostile.etdump_variants(toy).items():
        cases[f"hostile_{name}"] = data
    for how in ("run_table", "events_vector", "event_table", "events_of_runs", "payload"):
        cases[f"aliased_{how}"] = hostile_round3.aliased(toy, how, times=200)
    cases["blocks"] = hostile_round3.with_blocks(toy, 50)
    crashes = ROOT / "fuzz" / "crashes"
    for p in sorted(crashes.glob("*")) if crashes.is_dir() else ():
        cases[f"crash_{p.name}"] = p.read_bytes()
    rng = random.Random(seed)
    small = [v for k, v in seeds.items() if len(v) < 400_000]
    for i in range(python_mutants):
        cases[f"mutant_{i}"] = mutate(rng, rng.choice(small))
    out = []
    for name, data in cases.items():
        p = folder / name
        p.write_bytes(data)
        out.append(p)
    return out


def build(folder: Path, flags: list[str]) -> Path:
    exe = folder / "core_harness"
    cc = shutil.which("gcc") or shutil.which("cc") or "cc"
    subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", *flags, "-o", str(exe),
                    str(ROOT / "fuzz" / "core_harness.c")], check=True)
    return exe


def run(cmd: list[str], what: str) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-8000:])
        print(f"{what}: FAILED (exit {r.returncode}) — a release blocker")
        sys.exit(1)
    print(f"{what}: {r.stdout.strip()}, no finding")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mutants", type=int, default=2000, help="mutants per input made inside the harness")
    ap.add_argument("--python-mutants", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--valgrind", action="store_true")
    ap.add_argument("--plant", action="store_true", help="build with a one-byte over-read on purpose (must be caught)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "in").mkdir()
        files = [str(p) for p in corpus(tmp / "in", a.python_mutants, a.seed)]
        planted = ["-DPLANTED_OVERREAD"] if a.plant else []
        if a.valgrind:
            exe = build(tmp, ["-g", "-O1", *planted])
            run(["valgrind", "--quiet", "--error-exitcode=1", "--leak-check=full", "--errors-for-leak-kinds=definite",
                 str(exe), "--mutate", str(max(1, a.mutants // 20)), str(a.seed), *files],
                f"valgrind memcheck, {len(files)} inputs × {max(1, a.mutants // 20)} mutants")
            return
        exe = build(tmp, SANITIZE + planted)
        run([str(exe), "--mutate", str(a.mutants), str(a.seed), *files],
            f"ASan+UBSan, {len(files)} inputs × {a.mutants} mutants")
        run([str(exe), "--numbers", str(a.mutants * 500), str(a.seed)],
            f"ASan+UBSan, text of {a.mutants * 500:,} numbers")


if __name__ == "__main__":
    main()
