"""Fuzz target for the debug-buffer reader: an ETDump's DebugEvent metadata and its debug buffer, both mutated.

    python fuzz/fuzz_debug_buffer.py [SECONDS]        # random mutations of tests/data/numerics (no extra deps)
    python fuzz/fuzz_debug_buffer.py -atheris [...]   # coverage-guided, with `pip install atheris`

The property: any pair of byte strings gives every debug event's tensors (each of the shape and dtype its event
describes, inside the buffer) or a typed edgeprof InputError — never another exception. A crash writes the input
to fuzz/crashes/ and exits 1.

Besides byte mutations, a third of the cases rewrite the recording's tensor metadata with the reference FlatBuffers
runtime (tests/helpers/etdump_rewrite.py): tensors of any rank (0 to 80 dimensions), sizes of 0, 1 and huge,
negative and huge strides — on dimensions of size 1 too — in row-major, permuted and arbitrary layouts, and any
scalar type; the buffer is sometimes gzip'd (read through the decompression rule).
"""

from __future__ import annotations

import gzip
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "fuzz"))
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

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


_BIG = [2**31 - 1, 2**32, 2**62, 2**63 - 1, -(2**63), -1]


def _dims(rng: random.Random, rank: int) -> tuple[list[int], list[int]]:
    sizes = [rng.choice([0, 1, 1, 2, 3, rng.randint(1, 40), rng.choice(_BIG)]) if rng.random() < 0.3 else
             rng.choice([1, 2, 3, 4]) for _ in range(rank)]
    style = rng.random()
    strides, step = [0] * rank, 1
    order = list(range(rank))[::-1] if style < 0.5 else rng.sample(range(rank), rank)
    for d in order:  # row-major or a permuted dense layout
        strides[d] = step if step < 2**63 else 2**63 - 1  # the format's int64
        step *= max(sizes[d], 1)
    for d in range(rank):  # then bend some: size-1 dimensions above all
        if rng.random() < (0.5 if sizes[d] == 1 else 0.1):
            strides[d] = rng.choice(_BIG + [0, 7])
    if rng.random() < 0.1:
        strides = strides[: rng.randrange(rank + 1)]
    return sizes, strides


def reshape_case(rng: random.Random, etdump: bytes) -> bytes:
    """The recording with some tensors' metadata rewritten: any rank, sizes, strides, offset and scalar type."""
    from dataclasses import replace

    from etdump_builder import DE
    from etdump_rewrite import read, write

    runs, v = read(etdump)
    out = []
    for r in runs:
        events = []
        for e in r.events:
            if isinstance(e, DE) and e.tensor is not None and rng.random() < 0.3:
                rank = rng.choice([0, 1, 2, 4, 15, 16, 17, 33, 63, 64, 65, rng.randint(0, 80)])
                sizes, strides = _dims(rng, rank)
                t = replace(e.tensor, sizes=sizes, strides=strides)
                if rng.random() < 0.2:
                    t = replace(t, offset=rng.choice([-1, 0, 2**40, t.offset + 1]))
                if rng.random() < 0.2:
                    t = replace(t, scalar_type=rng.randint(-3, 30))
                e = replace(e, tensor=t)
            events.append(e)
        out.append(replace(r, events=events))
    return write(out, v)


def case(rng: random.Random):
    etdump, buffer = rng.choice(SEEDS)
    r = rng.random()
    if r < 0.33:
        return reshape_case(rng, etdump), buffer
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

    def check_file(etdump: bytes, buffer: bytes, tmp) -> None:
        """The buffer gzip'd, read by the file reader (the decompression rule), then as above."""
        from edgeprof.io.debug_buffer import read_debug_buffer

        p = tmp / "fuzz.debug.bin.gz"
        p.write_bytes(gzip.compress(buffer, 1))
        try:
            data = read_debug_buffer(p)
        except InputError:
            return
        assert data == buffer
        check(etdump, data)

    def next_case(rng, tmp):
        etdump, buffer = case(rng)
        if rng.random() < 0.05:
            return "debug-gzip", check_file, etdump, (buffer, tmp)
        return "debug", lambda data, b: check(data, b), etdump, (buffer,)

    return fuzz_loop(float(sys.argv[1]) if len(sys.argv) > 1 else 60, 1234, next_case)


if __name__ == "__main__":
    sys.exit(main())
