"""Read a real ETDump with the reference FlatBuffers runtime (pip ``flatbuffers``) into the builder's records,
change it, and write it back with :mod:`etdump_builder`.

Independent of edgeprof's reader (it follows ``etdump_schema_flatcc.fbs`` directly), so tests can derive
profiles from real recordings — an SME2-off arm with slower GEMMs, timestamps bent into oddities — without
trusting the code under test to build its own inputs.
"""

from __future__ import annotations

from dataclasses import replace

from flatbuffers import encode
from flatbuffers import number_types as N
from flatbuffers.table import Table

from etdump_builder import AE, DE, PE, Run, TensorMeta, build


def _off(t: Table, slot: int) -> int:
    return t.Offset(4 + 2 * slot)


def _get(t: Table, slot: int, flags, default):
    o = _off(t, slot)
    return t.Get(flags, o + t.Pos) if o else default


def _str(t: Table, slot: int) -> str | None:
    o = _off(t, slot)
    return t.String(o + t.Pos).decode("utf-8") if o else None


def _sub(t: Table, slot: int) -> Table | None:
    o = _off(t, slot)
    return Table(t.Bytes, t.Indirect(o + t.Pos)) if o else None


def _tables(t: Table, slot: int) -> list[Table]:
    o = _off(t, slot)
    if not o:
        return []
    start, n = t.Vector(o), t.VectorLen(o)
    return [Table(t.Bytes, t.Indirect(start + 4 * i)) for i in range(n)]


def _scalars(t: Table, slot: int, flags, width: int) -> list:
    o = _off(t, slot)
    if not o:
        return []
    start, n = t.Vector(o), t.VectorLen(o)
    return [t.Get(flags, start + width * i) for i in range(n)]


def read(data: bytes) -> tuple[list[Run], int]:
    """(runs, version) of a size-prefixed or plain ETDump."""
    buf = bytearray(data)
    start = 4 if data[8:12] == b"ED00" else 0
    root = Table(buf, encode.Get(N.UOffsetTFlags.packer_type, buf, start) + start)
    version = _get(root, 0, N.Uint32Flags, 0)
    runs = []
    for rd in _tables(root, 1):
        events = []
        for ev in _tables(rd, 3):
            pe, ae, de = _sub(ev, 0), _sub(ev, 1), _sub(ev, 2)
            if pe is not None:
                meta = _scalars(pe, 5, N.Uint8Flags, 1)
                events.append(PE(name=_str(pe, 0), chain_index=_get(pe, 1, N.Int32Flags, 0),
                                 instruction_id=_get(pe, 2, N.Int32Flags, -1), dd_int=_get(pe, 3, N.Int32Flags, -1),
                                 dd_str=_str(pe, 4), metadata=bytes(meta) if _off(pe, 5) else None,
                                 start=_get(pe, 6, N.Uint64Flags, 0), end=_get(pe, 7, N.Uint64Flags, 0)))
            elif ae is not None:
                events.append(AE(allocator_id=_get(ae, 0, N.Int32Flags, 0), size=_get(ae, 1, N.Uint64Flags, 0)))
            elif de is not None:
                value = _sub(de, 2)
                tensor = _sub(value, 1) if value is not None else None
                int_tbl = _sub(value, 3) if value is not None else None
                out_tbl = _sub(value, 7) if value is not None else None
                events.append(DE(
                    name=_str(de, 5), instruction_id=_get(de, 1, N.Int32Flags, -1),
                    chain_index=_get(de, 0, N.Uint64Flags, 0),
                    tensor=TensorMeta(scalar_type=_get(tensor, 0, N.Int8Flags, 0),
                                      sizes=_scalars(tensor, 1, N.Int64Flags, 8),
                                      strides=_scalars(tensor, 2, N.Int64Flags, 8),
                                      offset=_get(tensor, 3, N.Int64Flags, 0)) if tensor is not None else None,
                    int_value=_get(int_tbl, 0, N.Int64Flags, 0) if int_tbl is not None else None,
                    output=bool(_get(out_tbl, 0, N.BoolFlags, False)) if out_tbl is not None else False))
        runs.append(Run(name=_str(rd, 0) or "", events=events, bundled_input_index=_get(rd, 1, N.Int32Flags, -1),
                        allocators=[_str(a, 0) or "" for a in _tables(rd, 2)]))
    return runs, version


def write(runs: list[Run], version: int = 0) -> bytes:
    return build(runs, version=version)


def label(e: PE) -> str:
    """The name a profile event is known by: ``name``, or the delegate debug string when the name is empty."""
    return e.name or e.dd_str or ""


def stretch(runs: list[Run], match, factor: float) -> list[Run]:
    """Make every profile event for which ``match(event)`` holds ``factor`` times longer, moving what follows it
    in its run later and stretching what encloses it, as a slower kernel would (durations stay whole ns)."""
    out = []
    for run in runs:
        events = [replace(e) for e in run.events]
        profile = [e for e in events if isinstance(e, PE)]
        for target in sorted((e for e in profile if match(e)), key=lambda e: e.start, reverse=True):
            s0, e0 = target.start, target.end
            extra = round((e0 - s0) * (factor - 1))
            if extra == 0:
                continue
            for e in profile:
                if e is target:
                    e.end += extra
                elif e.start >= e0:
                    e.start += extra
                    e.end += extra
                elif e.start <= s0 and e.end >= e0:
                    e.end += extra
        out.append(replace(run, events=events))
    return out


def rename(runs: list[Run], mapping) -> list[Run]:
    """Rename delegate ops: ``mapping(dd_str) -> new dd_str`` (or the same string)."""
    out = []
    for run in runs:
        events = [replace(e, dd_str=mapping(e.dd_str)) if isinstance(e, PE) and e.dd_str else e for e in run.events]
        out.append(replace(run, events=events))
    return out
