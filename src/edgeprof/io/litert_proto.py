"""LiteRT's ``BenchmarkProfilingData`` protobuf (``benchmark_model --op_profiling_output_mode=proto``), decoded
by hand from its schema (``tflite/profiling/proto/profiling_info.proto``; no protobuf runtime needed) into the
tables :mod:`edgeprof.io.litert_profile` reads::

    BenchmarkProfilingData { 1 model_name: string; 2 init_profile, 3 runtime_profile: ModelProfilingData }
    ModelProfilingData     { 1 subgraph_profiles: [SubGraphProfilingData]; 2 delegate_profiles: [DelegateProfilingData] }
    SubGraphProfilingData  { 1 subgraph_name: string; 2 subgraph_index: int32; 3 per_op_profiles: [OpProfileData] }
    DelegateProfilingData  { 1 delegate_name: string; 2 per_op_profiles: [OpProfileData] }
    OpProfileData          { 1 node_type: string; 2 inference_microseconds, 3 mem_kb: OpProfilingStat;
                             4 times_called: int64 (per run); 5 name: string; 6 run_order: int64 }
    OpProfilingStat        { 1 first, 2 last, 3 avg: int64; 4 stddev, 5 variance: float; 6 min, 7 max, 8 sum,
                             9 count: int64 }

A node's mean time per call is ``sum / count`` (``avg`` is rounded to whole microseconds); the runs profiled are
``count / times_called``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InputError

if TYPE_CHECKING:
    from collections.abc import Iterator

class _Bad(Exception):
    def __init__(self, offset: int, what: str):
        self.offset, self.what = offset, what


def _varint(b: bytes, i: int, end: int) -> tuple[int, int]:
    """(value, next offset): at most 10 bytes, the tenth holding only the 64th bit — a longer varint is no
    protobuf integer (it would read as a 70-bit number)."""
    v = shift = 0
    while True:
        if i >= end:
            raise _Bad(i, "a varint runs past its message")
        c = b[i]
        if shift == 63 and c > 1:
            raise _Bad(i, "a varint longer than 64 bits")
        v |= (c & 0x7F) << shift
        i += 1
        shift += 7
        if not c & 0x80:
            return v, i


def _fields(b: bytes, i: int, end: int) -> Iterator[tuple[int, int, Any, int]]:
    """(field number, wire type, value or (start, end) of a length-delimited field, offset) of a message."""
    v: int | tuple[int, int]  # which one the wire type says
    while i < end:
        at = i
        key, i = _varint(b, i, end)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise _Bad(at, "field number 0")
        if wt == 0:
            v, i = _varint(b, i, end)
        elif wt == 1:
            if i + 8 > end:
                raise _Bad(i, "a 64-bit field runs past its message")
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif wt == 5:
            if i + 4 > end:
                raise _Bad(i, "a 32-bit field runs past its message")
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        elif wt == 2:
            n, i = _varint(b, i, end)
            if i + n > end:
                raise _Bad(i, f"a field of {n} bytes runs past its message")
            v, i = (i, i + n), i + n
        else:
            raise _Bad(at, f"wire type {wt} (groups are not in this schema)")
        yield num, wt, v, at


def _text(b: bytes, span) -> str:
    return b[span[0]:span[1]].decode("utf-8", "replace")


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _stat(b: bytes, span) -> dict:
    out = {}
    names = {1: "first", 2: "last", 3: "avg", 6: "min", 7: "max", 8: "sum", 9: "count"}
    for num, wt, v, at in _fields(b, *span):
        if num in names and wt == 0:
            out[names[num]] = _signed(v)
            if out[names[num]] < 0:  # microseconds and counts
                raise _Bad(at, f"OpProfilingStat.{names[num]} is negative ({out[names[num]]})")
    return out


def _op(b: bytes, span) -> dict:
    op: dict[str, Any] = {"type": "", "name": "", "times": 0, "order": 0, "us": {}}
    for num, wt, v, at in _fields(b, *span):
        if num == 1 and wt == 2:
            op["type"] = _text(b, v)
        elif num == 2 and wt == 2:
            op["us"] = _stat(b, v)
        elif num == 4 and wt == 0:
            op["times"] = _signed(v)
            if op["times"] < 0:
                raise _Bad(at, f"OpProfileData.times_called is negative ({op['times']})")
        elif num == 5 and wt == 2:
            op["name"] = _text(b, v)
        elif num == 6 and wt == 0:
            op["order"] = _signed(v)
    return op


def _model(b: bytes, span) -> tuple[list, list, int]:
    """(primary graph ops, delegate ops, other subgraphs) of a ModelProfilingData."""
    primary, delegate, others = [], [], 0
    for num, wt, v, _ in _fields(b, *span):
        if wt != 2:
            continue
        if num == 1:
            index, ops = 0, []
            for n2, w2, v2, _ in _fields(b, *v):
                if n2 == 2 and w2 == 0:
                    index = _signed(v2)
                elif n2 == 3 and w2 == 2:
                    ops.append(_op(b, v2))
            if index == 0:
                primary += ops
            else:
                others += 1
        elif num == 2:
            delegate += [_op(b, v2) for n2, w2, v2, _ in _fields(b, *v) if n2 == 2 and w2 == 2]
    return primary, delegate, others


def _rows(ops: list) -> list[dict]:
    out = []
    for op in sorted(ops, key=lambda o: o["order"]):
        s, c = op["us"].get("sum"), op["us"].get("count")
        avg_us = s / c if s is not None and c else float(op["us"].get("avg", 0))
        out.append({"type": op["type"], "name": op["name"], "avg": repr(avg_us / 1000), "times": str(op["times"]),
                    "line": None, "runs": c // op["times"] if c and op["times"] > 0 else None})
    return out


def proto_head(head: bytes) -> bool:
    """Whether a file's first bytes open a BenchmarkProfilingData message: a model name of printable text, or an
    init/runtime profile whose first field is a subgraph or delegate profile."""
    if head[:1] not in (b"\x0a", b"\x12", b"\x1a") or len(head) < 3:
        return False
    try:
        n, i = _varint(head, 1, len(head))
    except _Bad:
        return False
    if head[:1] == b"\x0a":  # a model name, then the init or runtime profile (never so in a text file)
        name = head[i:i + n]
        return 0 < n < 1024 and len(name) == n and all(32 <= c < 127 for c in name) \
            and head[i + n:i + n + 1] in (b"\x12", b"\x1a")
    return n > 2 and head[i:i + 1] in (b"\x0a", b"\x12")


def looks_like_proto(data: bytes) -> bool:
    """A BenchmarkProfilingData message: it parses and holds a runtime profile."""
    if data[:1] not in (b"\x0a", b"\x12", b"\x1a"):
        return False
    try:
        return any(num == 3 and wt == 2 for num, wt, _, _ in _fields(data, 0, len(data)))
    except _Bad:
        return False


def tables_of_proto(data: bytes, path) -> dict:
    """The tables :func:`edgeprof.io.litert_profile.parse_tables` gives for a log, from the protobuf."""
    out: dict[str, Any] = {"init": [], "runs": [], "delegate": [], "subgraphs": 0, "timings": {}, "inference_us": None}
    try:
        for num, wt, v, _ in _fields(data, 0, len(data)):
            if num in (2, 3) and wt == 2:
                primary, delegate, others = _model(data, v)
                if num == 2:
                    out["init"] = _rows(primary)
                else:
                    out["runs"], out["delegate"], out["subgraphs"] = _rows(primary), _rows(delegate), others
    except _Bad as e:
        raise InputError(path, f"damaged BenchmarkProfilingData protobuf: {e.what}", offset=e.offset) from None
    runs = {r["runs"] for r in out["runs"] if r["runs"]}
    if len(runs) == 1:
        out["timings"] = {"count": float(runs.pop())}
    return out
