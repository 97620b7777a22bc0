"""Fuzz target for the XNNPACK log and kernels-CSV readers.

    python fuzz/fuzz_xnnlog.py [SECONDS]        # random mutations of the test logs and a kernels CSV

The property: any bytes give a KernelLog (logs never fail on content) or, for a kernels CSV, rows or a
typed edgeprof InputError — never another exception; and the kernel table and kernel view built from
whatever was read stay consistent. A crash writes the input to fuzz/crashes/ and exits 1.

gzip'd logs come whole, cut short, with trailing bytes, as several members, and (rarely: each costs ~0.2 s) as bombs
of one member or of many (tests/helpers/hostile_round3.py), which the decompression rule must stop with an
InputError.
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

from fuzz_etdump import fuzz_loop, mutate

from edgeprof.analysis.kernels import kernel_table, kernel_view, table_from_records
from edgeprof.errors import InputError
from edgeprof.io.xnnlog import parse_xnnlog, read_kernel_csv, read_xnnlog

LOGS = [p.read_bytes() for p in sorted((ROOT / "tests" / "data" / "xnnpack").glob("*.log"))]
CSV = (b"model_id,kernel_name,category,count,dtype,xnn_op,variant,ukernel_shape,arch_chain,has_sme,has_sme2\n"
       b"m,xnn_pf32_gemm_minmax_ukernel_32x32__neonsme2,gemm,1,pf32,gemm,minmax,32x32,neonsme2,1,1\n"
       b"m,xnn_f32_igemm_minmax_ukernel_6x8__asm_aarch64_neonfma_ld128,igemm,2,f32,igemm,minmax,6x8,asm,0,0\n")


def check_log(data: bytes, tmp: Path | None = None) -> None:
    log = parse_xnnlog(data)
    if tmp is not None:  # through the file reader too: gzip, UTF-16, line and size limits
        p = tmp / "fuzz.log"
        p.write_bytes(data)
        try:
            read_xnnlog(p)
        except InputError:
            pass
    rows = kernel_table(log, "fuzz")
    assert sum(r["count"] for r in rows) == len(log.registrations)
    kernel_view(rows, rows, base_name="a", cand_name="b")


def check_csv(data: bytes, tmp: Path) -> None:
    p = tmp / "fuzz_kernels.csv"
    p.write_bytes(data)
    try:
        rows = table_from_records(read_kernel_csv(p), "fuzz")
    except InputError:
        return
    kernel_view(rows, rows, base_name="a", cand_name="b")


def next_case(rng: random.Random, tmp: Path):
    if rng.random() < 0.8:
        base = rng.choice(LOGS)
        if rng.random() < 0.3:  # splice two logs at random points (interleaved streams)
            other = rng.choice(LOGS)
            base = base[: rng.randrange(len(base))] + other[rng.randrange(len(other)):]
        data = mutate(rng, base)
        r = rng.random()
        if r < 0.05:  # numbers past Python's digit limit where XNNPACK prints integers
            data += (b"Debug (XNNPACK): l1_data_cache_bytes=" + b"9" * rng.randint(1, 9000) + b"\n"
                     + b"Debug (XNNPACK): Setting assumed_datatype=qdint8 for node #" + b"7" * rng.randint(1, 9000)
                     + b" (Fully Connected)\n")
        elif r < 0.1:
            data = data.decode("utf-8", "replace").encode(rng.choice(["utf-16", "utf-16-le", "utf-16-be"]))
        elif r < 0.15:
            data = gzip.compress(data)
            k = rng.random()
            if k < 0.3:
                data = data[: rng.randrange(len(data))]
            elif k < 0.5:
                data += rng.choice([rng.randbytes(5), gzip.compress(rng.choice(LOGS))])
        elif r < 0.16:
            import hostile_round3 as h3

            unit = rng.choice([b"\n", b"x", b"\0"]) * (1 << rng.randint(10, 18))
            bomb = h3.gzip_bomb(unit, (80 << 20) // len(unit) + 1, head=rng.choice(LOGS)[:300])
            data = bomb if rng.random() < 0.7 else bomb[: len(bomb) // 2] + bomb
        elif r < 0.17:
            data += b"x" * rng.randint(1 << 19, 3 << 20)
        return "log", check_log, data, (tmp,)
    return "csv", check_csv, mutate(rng, CSV), (tmp,)


if __name__ == "__main__":
    sys.exit(fuzz_loop(float(sys.argv[1]) if len(sys.argv) > 1 else 60, 4321, next_case))
