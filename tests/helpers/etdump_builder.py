"""Build ETDump files for tests with the reference FlatBuffers runtime (pip ``flatbuffers``).

This is independent of edgeprof's reader, so a round trip checks the reader against the format
(``etdump_schema_flatcc.fbs``) rather than against itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import flatbuffers


@dataclass
class PE:  # ProfileEvent
    name: str | None = None
    start: int = 0
    end: int = 0
    instruction_id: int = -1
    chain_index: int = 0
    dd_int: int = -1
    dd_str: str | None = None
    metadata: bytes | None = None


@dataclass
class AE:  # AllocationEvent
    allocator_id: int = 0
    size: int = 0


@dataclass
class TensorMeta:
    scalar_type: int = 6
    sizes: list = field(default_factory=list)
    strides: list = field(default_factory=list)
    offset: int = -1


@dataclass
class DE:  # DebugEvent
    name: str | None = None
    instruction_id: int = -1
    chain_index: int = 0
    tensor: TensorMeta | None = None
    int_value: int | None = None
    output: bool | None = None            # None: no output table; False/True: a Bool table with that value
    float_value: float | None = None
    double_value: float | None = None
    bool_value: bool | None = None
    tensor_list: list | None = None       # of TensorMeta
    dd_int: int = -1
    dd_str: str | None = None
    value_type: int | None = None         # written as is when given (else from the payload)


@dataclass
class Run:
    name: str = "Execute"
    events: list = field(default_factory=list)
    allocators: list = field(default_factory=list)
    bundled_input_index: int = -1


def _string(b, s):
    return b.CreateString(s) if s is not None else None  # bytes are written as they are (e.g. invalid UTF-8)


def _vector_of_tables(b, offsets):
    b.StartVector(4, len(offsets), 4)
    for o in reversed(offsets):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def _vector_of_longs(b, values):
    b.StartVector(8, len(values), 8)
    for v in reversed(values):
        b.PrependInt64(v)
    return b.EndVector()


def _profile_event(b, e: PE):
    name = _string(b, e.name)
    dstr = _string(b, e.dd_str)
    meta = b.CreateByteVector(e.metadata) if e.metadata is not None else None
    b.StartObject(8)
    if name is not None:
        b.PrependUOffsetTRelativeSlot(0, name, 0)
    b.PrependInt32Slot(1, e.chain_index, 0)
    b.PrependInt32Slot(2, e.instruction_id, -1)
    b.PrependInt32Slot(3, e.dd_int, -1)
    if dstr is not None:
        b.PrependUOffsetTRelativeSlot(4, dstr, 0)
    if meta is not None:
        b.PrependUOffsetTRelativeSlot(5, meta, 0)
    b.PrependUint64Slot(6, e.start, 0)
    b.PrependUint64Slot(7, e.end, 0)
    return b.EndObject()


def _alloc_event(b, e: AE):
    b.StartObject(2)
    b.PrependInt32Slot(0, e.allocator_id, 0)
    b.PrependUint64Slot(1, e.size, 0)
    return b.EndObject()


def _tensor(b, t: TensorMeta):
    sizes = _vector_of_longs(b, t.sizes)
    strides = _vector_of_longs(b, t.strides)
    b.StartObject(4)
    b.PrependInt8Slot(0, t.scalar_type, 0)
    b.PrependUOffsetTRelativeSlot(1, sizes, 0)
    b.PrependUOffsetTRelativeSlot(2, strides, 0)
    b.PrependInt64Slot(3, t.offset, 0)
    return b.EndObject()


def _scalar_table(b, kind: str, value):
    b.StartObject(1)
    {"int": b.PrependInt64Slot, "float": b.PrependFloat32Slot, "double": b.PrependFloat64Slot,
     "bool": b.PrependBoolSlot}[kind](0, value, 0)
    return b.EndObject()


def _debug_event(b, e: DE):
    name = _string(b, e.name)
    dd_str = _string(b, e.dd_str)
    tensor = _tensor(b, e.tensor) if e.tensor is not None else None
    tlist = None
    if e.tensor_list is not None:
        tv = _vector_of_tables(b, [_tensor(b, t) for t in e.tensor_list])
        b.StartObject(1)
        b.PrependUOffsetTRelativeSlot(0, tv, 0)
        tlist = b.EndObject()
    subs = {k: _scalar_table(b, kind, v) for k, kind, v in (
        (3, "int", e.int_value), (4, "float", e.float_value), (5, "double", e.double_value),
        (6, "bool", e.bool_value)) if v is not None}
    out_tbl = _scalar_table(b, "bool", e.output) if e.output is not None else None
    vtype = e.value_type if e.value_type is not None else (
        5 if tensor is not None else 6 if tlist is not None else 1 if 3 in subs else 3 if 4 in subs
        else 4 if 5 in subs else 2 if 6 in subs else 0)
    b.StartObject(8)  # Value
    b.PrependInt8Slot(0, vtype, 0)
    if tensor is not None:
        b.PrependUOffsetTRelativeSlot(1, tensor, 0)
    if tlist is not None:
        b.PrependUOffsetTRelativeSlot(2, tlist, 0)
    for k, t in subs.items():
        b.PrependUOffsetTRelativeSlot(k, t, 0)
    if out_tbl is not None:
        b.PrependUOffsetTRelativeSlot(7, out_tbl, 0)
    value = b.EndObject()
    b.StartObject(6)
    b.PrependUint64Slot(0, e.chain_index, 0)
    b.PrependInt32Slot(1, e.instruction_id, -1)
    b.PrependUOffsetTRelativeSlot(2, value, 0)
    b.PrependInt32Slot(3, e.dd_int, -1)
    if dd_str is not None:
        b.PrependUOffsetTRelativeSlot(4, dd_str, 0)
    if name is not None:
        b.PrependUOffsetTRelativeSlot(5, name, 0)
    return b.EndObject()


def build(runs: list[Run], *, size_prefixed: bool = True, version: int = 0) -> bytes:
    b = flatbuffers.Builder(1024)
    run_offsets = []
    for r in runs:
        evs = []
        for e in r.events:
            # an Event holds one payload; None gives an empty Event, a tuple an Event with several payloads
            payloads = []
            for x in (e if isinstance(e, tuple) else () if e is None else (e,)):
                if isinstance(x, PE):
                    payloads.append((_profile_event(b, x), 0))
                elif isinstance(x, AE):
                    payloads.append((_alloc_event(b, x), 1))
                else:
                    payloads.append((_debug_event(b, x), 2))
            b.StartObject(3)
            for payload, slot in payloads:
                b.PrependUOffsetTRelativeSlot(slot, payload, 0)
            evs.append(b.EndObject())
        allocs = []
        for a in r.allocators:
            s = b.CreateString(a)
            b.StartObject(1)
            b.PrependUOffsetTRelativeSlot(0, s, 0)
            allocs.append(b.EndObject())
        ev_vec = _vector_of_tables(b, evs)
        al_vec = _vector_of_tables(b, allocs) if allocs else None
        name = b.CreateString(r.name)
        b.StartObject(4)
        b.PrependUOffsetTRelativeSlot(0, name, 0)
        b.PrependInt32Slot(1, r.bundled_input_index, -1)
        if al_vec is not None:
            b.PrependUOffsetTRelativeSlot(2, al_vec, 0)
        b.PrependUOffsetTRelativeSlot(3, ev_vec, 0)
        run_offsets.append(b.EndObject())
    runs_vec = _vector_of_tables(b, run_offsets)
    b.StartObject(2)
    b.PrependUint32Slot(0, version, 0)
    b.PrependUOffsetTRelativeSlot(1, runs_vec, 0)
    root = b.EndObject()
    if size_prefixed:
        b.FinishSizePrefixed(root, file_identifier=b"ED00")
    else:
        b.Finish(root, file_identifier=b"ED00")
    return bytes(b.Output())


def portable_run(t0: int, ops=(("convolution.out", 1000, 5000), ("relu.out", 200, 300)), name="Execute") -> Run:
    """A run shaped like ExecuTorch's portable path: native_call_* then OPERATOR_CALL per instruction."""
    events = []
    t = t0 + 100
    for i, (op, overhead, kernel) in enumerate(ops):
        events.append(PE(f"native_call_{op}", t + overhead // 2, t + overhead // 2 + kernel, i))
        events.append(PE("OPERATOR_CALL", t, t + overhead + kernel, i))
        t += overhead + kernel + 50
    events.append(PE("Method::execute", t0, t + 100, -1, chain_index=-1))
    return Run(name, events)


def xnnpack_runs(ops, runs: int = 4, unit_ns: int = 1000) -> list[Run]:
    """Runs shaped like the XNNPACK delegate's: each op (name, duration in units of ``unit_ns``, µs by default) as
    a delegate event inside one DELEGATE_CALL."""
    out, t = [], 0
    for _ in range(runs):
        ev, s = [], t + 100
        for name, us in ops:
            ev.append(PE(None, s, s + us * unit_ns, 0, dd_str=name))
            s += us * unit_ns
        ev.append(PE("DELEGATE_CALL", t + 50, s + 50, 0))
        ev.append(PE("Method::execute", t, s + 100, -1, chain_index=-1))
        out.append(Run("Execute", ev))
        t += 10_000_000
    return out


def runs_with_invalid(n: int = 9, invalid=(2, 7)) -> list[Run]:
    """A load/init block, then ``n`` portable runs 1 ms apart of which those at ``invalid`` have a
    ``Method::execute`` that ends before it starts (beyond a 32-bit wrap: no valid end-to-end time)."""
    runs = [Run("Default", [PE("Program::load_method", 0, 50), PE("Method::init", 10, 40)])]
    for i in range(n):
        r = portable_run(1_000_000 * (i + 1))
        if i in invalid:
            r.events[-1] = PE("Method::execute", 2**40, 2**40 - 1, -1, chain_index=-1)
        runs.append(r)
    return runs
