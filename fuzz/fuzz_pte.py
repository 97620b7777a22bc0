"""Fuzz target for the ExecuTorch program reader (.pte) and everything `edgeprof program` computes from it.

    python fuzz/fuzz_pte.py [SECONDS]

Inputs: byte mutations of the six fixture programs — anywhere, and concentrated on the extended header, the
program flatbuffer's tables and the XNNPACK blob headers — plus truncations. The property: a summary (sizes,
memory plan, instructions, XNNPACK nodes, costs; rendered), or a typed edgeprof InputError — never another
exception.
"""

from __future__ import annotations

import random
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "fuzz"))

from fuzz_etdump import fuzz_loop, mutate  # noqa: E402

from edgeprof.analysis.pte_cost import instruction_costs  # noqa: E402
from edgeprof.analysis.pte_program import compare_programs, summarize  # noqa: E402
from edgeprof.errors import InputError  # noqa: E402
from edgeprof.io.pte import read_pte  # noqa: E402
from edgeprof.render import jsonfmt  # noqa: E402
from edgeprof.render.program_md import program_diff_markdown, program_markdown  # noqa: E402

SEEDS = [p.read_bytes() for p in sorted((ROOT / "tests" / "data" / "pte").glob("*.pte"))]


def check(data: bytes, tmp: Path) -> None:
    p = tmp / "f.pte"
    p.write_bytes(data)
    try:
        prog = read_pte(p)
        s = summarize(prog)
    except InputError:
        return
    instruction_costs(prog)
    jsonfmt.dumps(s)
    program_markdown(s)
    program_diff_markdown(compare_programs(s, s))


def focused(rng: random.Random, data: bytes) -> bytes:
    """Mutations where the structure is: the header, the program's first kilobytes, an XNNPACK header."""
    b = bytearray(data)
    psize = struct.unpack_from("<Q", b, 16)[0] if len(b) >= 24 else len(b)
    for _ in range(rng.randint(1, 4)):
        where = rng.random()
        if where < 0.3:
            i = rng.randrange(8, 40)
        elif where < 0.8:
            i = rng.randrange(0, max(1, min(psize, len(b))))
        else:
            j = b.find(b"XH00", rng.randrange(len(b)))
            i = (j + rng.randrange(0, 28)) if j >= 0 else rng.randrange(len(b))
        if i + 4 <= len(b):
            b[i:i + 4] = struct.pack("<I", rng.choice([0, 1, 2 ** 31, 0xFFFFFFFF, rng.getrandbits(32), len(b), psize]))
    return bytes(b)


def next_case(rng: random.Random, tmp: Path):
    seed = rng.choice(SEEDS)
    r = rng.random()
    data = focused(rng, seed) if r < 0.6 else mutate(rng, seed) if r < 0.9 else seed[: rng.randrange(len(seed))]
    return "pte", check, data, (tmp,)


if __name__ == "__main__":
    sys.exit(fuzz_loop(float(sys.argv[1]) if len(sys.argv) > 1 else 60, 9090, next_case))
