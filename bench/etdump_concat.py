"""Make a large, real-shaped ETDump by repeating the execute runs of a recorded one.

    python bench/etdump_concat.py IN.etdp OUT.etdp COPIES

Every byte of every run is copied (no shared tables), so decoding cost scales as for a file recorded
with COPIES times as many ``execute()`` calls. FlatBuffers references are relative, so a byte range that
holds the RunData tables together with everything they point to stays valid wherever it is placed:
the output is a new root table and run vector followed by COPIES copies of that range (the load/init
``Default`` block is kept once).
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np


def concat(data: bytes, copies: int) -> bytes:
    from edgeprof.io.etdump_decode import open_buffer

    fb, base = open_buffer(data, "input")
    body = bytes(data[base: base + fb.size])
    root = struct.unpack_from("<I", body, 0)[0]
    top = fb.tables(np.array([root]), "ETDump")
    vec = int(top.ref(1, "run_data")[0])
    runs = fb.table_vector(vec, "run_data")
    names = [fb.strings(fb.tables(np.array([r]), "RunData").ref(0, "name"), "name")[1] for r in runs.tolist()]
    is_default = [n == ["Default"] for n in names]
    region_start = vec + 4 + 4 * runs.size
    if runs.min() < region_start:
        raise SystemExit("unexpected layout: run tables before the run vector")
    region = body[region_start:]
    pad = (-len(region)) % 8
    region += b"\0" * pad
    entries = [(0, r) for r in runs.tolist()] + [(c, r) for c in range(1, copies)
                                                 for r, d in zip(runs.tolist(), is_default) if not d]
    # header: root uoffset, identifier, root vtable (version, run_data), root table, run vector
    head = 4 + 4 + 8 + 12 + 4 + 4 * len(entries)
    shift = (region_start - head) % 8  # keep every copy at the original alignment modulo 8
    head_pad = shift
    first = head + head_pad
    out = bytearray()
    out += struct.pack("<I", 16)  # root table at 16
    out += b"ED00"
    out += struct.pack("<HHHH", 8, 12, 4, 8)  # vtable at 8: size 8, table 12, version @4, run_data @8
    out += struct.pack("<iII", 16 - 8, 0, 28 - 24)  # table at 16: soffset → vtable, version 0, run_data → 28
    out += struct.pack("<I", len(entries))
    for j, (c, r) in enumerate(entries):
        slot = 32 + 4 * j
        target = first + c * len(region) + (r - region_start)
        out += struct.pack("<I", target - slot)
    out += b"\0" * head_pad
    for _ in range(copies):
        out += region
    return struct.pack("<I", len(out)) + bytes(out)


def main() -> None:
    src, dst, copies = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    dst.write_bytes(concat(src.read_bytes(), copies))
    print(f"wrote {dst} ({dst.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
