"""The tensors of an ETDump's debug recording: its DebugEvents' ``Tensor`` metadata (scalar type, sizes, strides,
offset — decoded by :mod:`edgeprof.io.etdump_decode`) read from the debug buffer the runtime wrote beside it.

The runtime writes each logged tensor's bytes contiguously, in memory order, at ``offset`` in the debug buffer; the
strides say how that memory maps to the logical shape (contiguous, or another dim order). Every tensor is
bounds-checked against the buffer: an extent past its end (a truncated buffer, the buffer of another recording) is a
one-line :class:`~edgeprof.errors.DebugBufferError` naming the buffer and the byte offset. numpy only.

The buffer is ``<stem>.bin`` beside ``<stem>.etdp``/``<stem>.etdump`` (``model.debug.etdp`` → ``model.debug.bin``;
``edgeprof run --debug-buffer`` keeps it under that name), gzip-compressed as ``<stem>.bin.gz`` if so kept, or
``<stem>.debug.bin`` (``m.etdp`` → ``m.debug.bin``); a buffer named explicitly may have any name — the bounds
check is then what tells a wrong one (a buffer too short for the recording's tensors).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from ..errors import DebugBufferError

MAX_DEBUG_BUFFER_BYTES = 4 * 1024**3
MAX_RANK = 16  # ExecuTorch's kTensorDimensionLimit: the runtime holds no tensor of more dimensions
BUFFER_SUFFIXES = (".bin", ".bin.gz")
_ETDUMP_TAILS = (".etdp.gz", ".etdump.gz", ".etdp", ".etdump")

# ExecuTorch scalar type names (etdump_decode.SCALAR_TYPES) → numpy dtype; quantized types read as their storage
NUMPY_DTYPES = {
    "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "float16": np.float16, "float32": np.float32, "float64": np.float64, "bool": np.bool_,
    "qint8": np.int8, "quint8": np.uint8, "qint32": np.int32, "bits16": np.uint16, "uint16": np.uint16,
    "uint32": np.uint32, "uint64": np.uint64, "bfloat16": np.uint16,
}


def stem_of(etdump) -> str:
    """``model.debug.etdp`` → ``model.debug`` (the name its debug buffer shares)."""
    name = Path(etdump).name
    for tail in _ETDUMP_TAILS:
        if name.endswith(tail):
            return name[: -len(tail)]
    return Path(name).stem


def buffer_stem(buffer) -> str:
    name = Path(buffer).name
    for tail in BUFFER_SUFFIXES[::-1]:
        if name.endswith(tail):
            return name[: -len(tail)]
    return Path(name).stem


def find_debug_buffer(etdump) -> Path | None:
    """``<stem>.bin`` (or ``<stem>.bin.gz``) beside the ETDump, else ``<stem>.debug.bin`` (the Python runtime's
    examples write ``m.etdp`` with ``m.debug.bin``), or None."""
    from ..files import is_file

    etdump = Path(etdump)
    stem = stem_of(etdump)
    stems = (stem,) if stem.endswith(".debug") else (stem, stem + ".debug")
    for s in stems:
        for suffix in BUFFER_SUFFIXES:
            p = etdump.with_name(s + suffix)
            if is_file(p):
                return p
    return None


def read_debug_buffer(path) -> bytes:
    """The debug buffer's bytes (a regular file of at most 4 GiB; gzip-compressed is accepted)."""
    from ..files import open_regular
    from .sniff import gunzip

    with open_regular(path, DebugBufferError) as f:
        size = os.fstat(f.fileno()).st_size
        if size > MAX_DEBUG_BUFFER_BYTES:
            raise DebugBufferError(path, f"{size} bytes is larger than any debug buffer (4 GiB limit)")
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gunzip(data, path, MAX_DEBUG_BUFFER_BYTES, "debug buffer", DebugBufferError)
    return data


def tensor_from(meta: dict, buf, path, event: str = "") -> np.ndarray:
    """One tensor (``{scalar_type, sizes, strides, offset}``) read from ``buf`` as a numpy array of its logical shape
    (a copy: the buffer can be released). bfloat16 is widened to float32 exactly."""
    where = f" ({event})" if event else ""
    st = meta["scalar_type"]
    off = int(meta["offset"])
    dtype = NUMPY_DTYPES.get(st)
    if dtype is None:
        raise DebugBufferError(path, f"tensor of unknown scalar type {st}{where}: cannot be read", offset=off)
    sizes = [int(s) for s in meta["sizes"]]
    if len(sizes) > MAX_RANK or len(meta.get("strides") or ()) > MAX_RANK:
        raise DebugBufferError(path, f"tensor of {max(len(sizes), len(meta.get('strides') or ()))} dimensions{where}: "
                                     f"more than the {MAX_RANK} an ExecuTorch tensor can have", offset=off)
    if any(s < 0 for s in sizes):
        raise DebugBufferError(path, f"tensor with a negative size {sizes}{where}", offset=off)
    n = math.prod(sizes)  # exact (Python ints): sizes from a damaged file overflow int64
    item = np.dtype(dtype).itemsize
    nbytes = n * item
    if n == 0:
        if math.prod(s for s in sizes if s) * item > MAX_DEBUG_BUFFER_BYTES:  # no element, but no array has that shape
            raise DebugBufferError(path, f"tensor {st}{sizes}{where}: a shape no debug buffer can hold", offset=off)
        return np.zeros(sizes, dtype=np.float32 if st == "bfloat16" else dtype)
    if off < 0:
        raise DebugBufferError(path, f"tensor of {nbytes} bytes has no data in the debug buffer (offset {off}){where}",
                               offset=off)
    if off + nbytes > len(buf):
        raise DebugBufferError(path, f"tensor {st}{sizes} of {nbytes} bytes at offset {off} ends at byte "
                                     f"{off + nbytes}, past the end of the {len(buf)}-byte debug buffer (truncated, "
                                     f"or the buffer of another recording){where}", offset=off)
    flat = np.frombuffer(buf, dtype=dtype, count=n, offset=off).copy()
    if st == "bool" and np.any(flat.view(np.uint8) > 1):
        raise DebugBufferError(path, f"bool tensor holds bytes other than 0 and 1{where}: not this recording's "
                                     "debug buffer?", offset=off)
    out = _logical(flat, sizes, [int(s) for s in meta.get("strides") or []])
    if st == "bfloat16":
        out = (out.astype(np.uint32) << 16).view(np.float32)
    return out


def _logical(flat: np.ndarray, sizes: list[int], strides: list[int]) -> np.ndarray:
    """Memory-ordered elements → the logical shape: contiguous strides reshape; a permuted dense layout (another dim
    order) is viewed through its strides; anything else (strides absent or not dense) is taken as contiguous."""
    if not sizes:
        return flat.reshape(())
    if len(strides) == len(sizes):
        order = sorted(range(len(sizes)), key=lambda d: (strides[d], -d))  # innermost first
        expect, dense = 1, True
        for d in order:
            if sizes[d] != 1 and strides[d] != expect:
                dense = False
                break
            expect *= sizes[d]
        if dense and order != list(range(len(sizes)))[::-1]:
            # a dimension of size 1 is never stepped along: its stride (any number in the file) is not used
            steps = [0 if n == 1 else s * flat.itemsize for n, s in zip(sizes, strides)]
            view = np.lib.stride_tricks.as_strided(flat, shape=sizes, strides=steps, writeable=False)
            return np.ascontiguousarray(view)
    return flat.reshape(sizes)


class DebugData(list):
    """The tensors of every debug event of a profile (``Profile.debug_data``), and ``path``, the buffer they came from."""

    path: str = ""


def debug_tensors(debug_events, buf, path) -> DebugData:
    """The tensors of every row of a profile's ``debug_events`` table (one list per row: none for a scalar value,
    one for a tensor, several for a tensor list)."""
    out = DebugData()
    out.path = str(path)
    rows = debug_events.select("run_index", "sequence", "instruction_id", "tensors").iter_rows()
    for run, seq, instr, metas in rows:
        event = f"debug event {seq} of run {run}, instruction {instr}"
        out.append([tensor_from(m, buf, path, event) for m in (metas or [])])
    return out


def recorded_size(etdump) -> int:
    """The bytes of its debug buffer a recording used (the runtime writes the buffer whole, the size it was given:
    ``edgeprof run`` keeps only these)."""
    from .etdump_read import read_etdump

    prof = read_etdump(etdump, allow_empty=True)
    end = 0
    for metas in prof.debug_events["tensors"].to_list():
        for m in metas or []:
            dtype = np.dtype(NUMPY_DTYPES.get(m["scalar_type"], np.uint8))
            if m["offset"] >= 0:
                end = max(end, int(m["offset"]) + math.prod(m["sizes"]) * dtype.itemsize)
    return end
