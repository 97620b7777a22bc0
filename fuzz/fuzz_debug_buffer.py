"""Fuzz target for the debug-buffer reader: an ETDump's DebugEvent metadata and its debug buffer, both mutated.

    python fuzz/fuzz_debug_buffer.py [SECONDS]        # random mutations of tests/data/numerics (no extra deps)
    python fuzz/fuzz_debug_buffer.py -atheris [...]   # coverage-guided, with `pip install atheris`

The property: any pair of byte strings gives every debug event's tensors (each of the shape and dtype its event
describes, inside the buffer) or a typed edgeprof InputError — never another exception. A crash writes the input
to fuzz/crashes/ and exits 1.
"""

from __future__ import annotations

import gzip
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "fuzz"))

from fuzz_etdump import fuzz_loop, mutate  # noqa: E402

from edgeprof.errors import InputError  # noqa: E402
from edgeprof.io.debug_buffer import debug_tensors  # noqa: E402
from edgeprof.io.etdump import build_profile  # noqa: E402
from edgeprof.io.etdump_decode import decode  # noqa: E402

NUM = ROOT / "tests" / "data" / "numerics"
SEEDS = [(gzip.decompress((NUM / f"{p}.debug.etdp.gz").read_bytes()), gzip.decompress((NUM / f"{p}.debug.bin.gz").read_bytes()))
         for p in ("toycnn_xnn", "toycnn_xnnq8")]


def check(etdump: bytes, buffer: bytes) -> None:
    try:
        prof = build_profile(decode(etdump, "fuzz.etdp"), "fuzz.etdp", len(etdump))
        data = debug_tensors(prof.debug_events, buffer, "fuzz.bin")
    except InputError:
        return
    for metas, arrays in zip(prof.debug_events["tensors"].to_list(), data):
        assert len(metas or []) == len(arrays)
        for m, a in zip(metas or [], arrays):
            assert list(a.shape) == m["sizes"], (m, a.shape)


def case(rng: random.Random):
    etdump, buffer = rng.choice(SEEDS)
    r = rng.random()
    if r < 0.4:
        etdump = mutate(rng, etdump)
    elif r < 0.7:
        buffer = buffer[: rng.randrange(len(buffer) + 1)]
    else:
        buffer = mutate(rng, buffer)
    return etdump, buffer


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "-atheris":
        import atheris

        def one(data: bytes) -> None:
            cut = data[0] * 64 if data else 0
            check(data[1:1 + cut], data[1 + cut:])

        atheris.Setup([sys.argv[0]] + sys.argv[2:], one)
        atheris.Fuzz()
        return 0

    def next_case(rng, tmp):
        etdump, buffer = case(rng)
        return "debug", lambda data, b: check(data, b), etdump, (buffer,)

    return fuzz_loop(float(sys.argv[1]) if len(sys.argv) > 1 else 60, 1234, next_case)


if __name__ == "__main__":
    sys.exit(main())
