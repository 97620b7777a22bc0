"""ETDump decoding: a size-prefixed FlatBuffer (identifier ``ED00``) → numpy columns, with no interpretation.

Schema: ExecuTorch ``devtools/etdump/etdump_schema_flatcc.fbs``.
``ETDump{version, run_data:[RunData]}``; ``RunData{name, bundled_input_index, allocators:[Allocator{name}],
events:[Event]}``; ``Event`` wraps exactly one of ``ProfileEvent``, ``AllocationEvent`` or ``DebugEvent``.

Everything is decoded column-wise with numpy (see :mod:`edgeprof.io.flatbuf`); nothing here creates a
Python object per event. :mod:`edgeprof.io.etdump` turns the columns into a :class:`~edgeprof.model.Profile`.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..errors import CorruptETDumpError, NotAnETDumpError
from . import etdump_core
from .flatbuf import FlatBuffer

IDENTIFIER = b"ED00"
MAX_ETDUMP_BYTES = 4 * 1024**3  # FlatBuffers cannot address more

SCALAR_TYPES = {
    0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32", 7: "float64",
    11: "bool", 12: "qint8", 13: "quint8", 14: "qint32", 15: "bfloat16", 16: "quint4x2", 17: "quint2x4",
    22: "bits16", 23: "float8_e5m2", 24: "float8_e4m3fn", 25: "float8_e5m2fnuz", 26: "float8_e4m3fnuz",
    27: "uint16", 28: "uint32", 29: "uint64",
}
VALUE_TYPES = ("null", "int", "bool", "float", "double", "tensor", "tensor_list", "string")

def sniff(data: bytes) -> str | None:
    """Describe a non-ETDump file from its first bytes, or None if it looks like an ETDump."""
    from .sniff import kind

    k, what = kind(data)
    if k == "etdump":
        return None
    return {"json": "a JSON or text file", "unknown": "not an ETDump"}.get(k, what)


def read_bytes(path, mapped: bool = False):
    """The file's bytes: a regular file of at most 4 GiB (FIFOs, devices and folders are refused unread).

    A size-prefixed ETDump ends where its prefix says: bytes after that (padding, a second file appended) are
    an error found from the first 12 bytes, before the rest is read — a copy with trailing bytes is not a
    different measurement, and a zero-padded sparse file is not read into memory. ``mapped``: a read-only
    ``mmap`` of the file instead of a copy (a gzip-compressed file is still decompressed into memory)."""
    from ..files import open_regular

    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > MAX_ETDUMP_BYTES:
            raise NotAnETDumpError(path, f"{size} bytes is larger than any ETDump ({MAX_ETDUMP_BYTES >> 20} MB limit)")
        head = f.read(12)
        if head[:2] == b"\x1f\x8b":  # gzip-compressed: the ETDump inside, bounded by the same limit
            from .sniff import gunzip

            return gunzip(head + f.read(size - len(head)), path, MAX_ETDUMP_BYTES, "ETDump")
        if len(head) == 12 and head[8:12] == IDENTIFIER:
            end = 4 + int.from_bytes(head[0:4], "little")
            if size > end:
                raise CorruptETDumpError(path, f"{size - end} byte(s) after the end of the ETDump (its size prefix "
                                               f"says it ends at byte {end}): trailing data", offset=end)
        if mapped and size >= 12:
            import mmap

            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            data = head + f.read(size - len(head))
        except OSError as e:
            raise NotAnETDumpError(path, f"cannot read ({e.strerror or e})") from None
    return data


def open_buffer(data: bytes, path) -> tuple[FlatBuffer, int]:
    """Validate the envelope and return (buffer starting at the root offset, base offset in the file)."""
    n = len(data)
    if n == 0:
        raise NotAnETDumpError(path, "empty file, expected an ETDump")
    if n < 12:
        raise NotAnETDumpError(path, f"only {n} bytes, too short for an ETDump")
    what = sniff(bytes(data[:64]))  # a head is enough (and a mapped file is not bytes)
    if what is not None:
        what = "" if what == "not an ETDump" else f"{what}, "
        raise NotAnETDumpError(path, f"{what}not an ETDump (no 'ED00' identifier at byte 8)")
    if data[8:12] == IDENTIFIER:  # size-prefixed, as the ExecuTorch runtime writes it
        declared = int.from_bytes(data[0:4], "little")
        if declared > n - 4:
            raise CorruptETDumpError(path, f"size prefix says {declared} bytes follow but only {n - 4} do: truncated ETDump",
                                     offset=0)
        return FlatBuffer(memoryview(data)[4: 4 + declared], path, base=4), 4
    return FlatBuffer(memoryview(data), path, base=0), 0  # plain (not size-prefixed) buffer


EVENT_CHUNK = 1 << 15  # events decoded per block: bounds temporary memory on very large files
MAX_TENSOR_ROWS = 100_000  # with fewer debug events than this, their tensors' metadata is kept as Python lists


class RunDataIndex:
    """An ETDump's envelope and its RunData tables, decoded once; :meth:`decode` then decodes the events of any
    range of RunData blocks (a whole file is one range)."""

    def __init__(self, data, path):
        from .flatbuf import Interner

        self.path = path
        self.fb = fb = open_buffer(data, path)[0]
        root = fb.read_checked(np.array([0], dtype=np.int64), np.uint32, "root offset").astype(np.int64)
        top = fb.tables(root, "ETDump")
        self.version = int(top.scalar(0, np.uint32, 0)[0])
        run_pos = fb.table_vector(int(top.ref(1, "run_data")[0]), "ETDump.run_data")
        runs = fb.tables(run_pos, "RunData")
        self.other = Interner()
        codes, _, _ = fb.strings(runs.ref(0, "name"), "RunData.name", self.other)
        self.run_names = [self.other.uniques[c] if c >= 0 else "" for c in codes]
        self.bundled = runs.scalar(1, np.int32, -1)
        self.alloc_refs = runs.ref(2, "allocators")
        self.event_refs = runs.ref(3, "events")
        # events of each RunData, from the vectors' lengths alone (read once: the lengths lie all over the file, and a
        # mapped file's pages read for them stay resident until given back)
        self.counts = fb.vector_lengths(self.event_refs, 4, "RunData.events")
        # two RunData tables holding one vector of events would be one run read twice (run_pos is unshared already)
        fb.unshared(np.where(self.counts > 0, self.event_refs, -1), "ETDump.run_data (their event vectors)",
                    origin=runs.field(3, 4))
        # called between the compiled walk's passes over a mapped file: gives back the pages a pass touched
        self.give_back = lambda: None
        self.names = Interner()  # ProfileEvent names
        self.dstrs = Interner()  # ProfileEvent delegate debug id strings

    @property
    def n_runs(self) -> int:
        return self.bundled.size

    def event_counts(self) -> np.ndarray:
        """Events (of any kind) of each RunData block, from the vectors' lengths alone."""
        return self.counts

    def check_unshared(self, ranges) -> None:
        """For a file decoded in several ``ranges`` of RunData (each range's tables are checked as it is decoded):
        that no Event table, and no event's payload, is shared between ranges either. Positions are kept as 4-byte
        numbers (a FlatBuffer is under 4 GiB), so this costs 8 bytes per event for the time of the check."""
        fb = self.fb
        core = etdump_core.module()
        events, payloads = [], []
        counts = self.event_counts()
        for a, b in ranges if core is not None else ():  # range by range: 25 bytes an event of the range at a time
            ev_pos, _, kind, payload, _, _ = etdump_core.walk_events(core, fb, self.event_refs[a:b],
                                                                     int(counts[a:b].sum()))
            events.append(ev_pos.astype(np.uint32))
            payloads.append(payload[kind >= 0].astype(np.uint32))
            del ev_pos, kind, payload
            self.give_back()
        for a, b in ranges if core is None else ():
            pos, _ = fb.table_vectors(self.event_refs[a:b], "RunData.events")
            for c0 in range(0, pos.size, EVENT_CHUNK):
                chunk = pos[c0: c0 + EVENT_CHUNK]
                events.append(chunk.astype(np.uint32))
                ev = fb.tables(chunk, "Event")
                refs = [ev.ref(k, what) for k, what in enumerate(("profile_event", "allocation_event", "debug_event"))]
                first = np.where(refs[0] >= 0, refs[0], np.where(refs[1] >= 0, refs[1], refs[2]))
                payloads.append(first[first >= 0].astype(np.uint32))
        fb.unshared(np.concatenate(events) if events else np.empty(0, np.uint32), "RunData.events")
        fb.unshared(np.concatenate(payloads) if payloads else np.empty(0, np.uint32), "Event payloads")

    def decode(self, a: int = 0, b: int | None = None) -> dict:
        """The columns of RunData blocks ``a ≤ i < b`` as if the file held only them (indices from 0)."""
        b = self.n_runs if b is None else b
        fb = self.fb
        alloc_pos, alloc_owner = fb.table_vectors(self.alloc_refs[a:b], "RunData.allocators")
        allocators = fb.tables(alloc_pos, "Allocator")
        alloc_name_codes, _, _ = fb.strings(allocators.ref(0, "name"), "Allocator.name", self.other)
        core = etdump_core.module()
        if core is not None:
            out = _decode_events_c(core, fb, self.event_refs[a:b], int(self.event_counts()[a:b].sum()), self.names,
                                   self.dstrs, self.other, self.give_back)
        else:
            ev_pos, ev_run = fb.table_vectors(self.event_refs[a:b], "RunData.events")
            out = _decode_events(fb, ev_pos, ev_run, self.names, self.dstrs, self.other)
        out.update(version=self.version, run_names=self.run_names[a:b], run_bundled_input_index=self.bundled[a:b],
                   allocator_run=alloc_owner,
                   allocator_names=[self.other.uniques[c] if c >= 0 else "" for c in alloc_name_codes], n_runs=b - a)
        out["invalid_utf8"] = self.other.invalid + self.names.invalid + self.dstrs.invalid
        return out


def decode(data: bytes, path) -> dict:
    """Decode every table of an ETDump into numpy columns (no interpretation yet)."""
    return RunDataIndex(data, path).decode()


def _decode_events(fb: FlatBuffer, ev_pos: np.ndarray, ev_run: np.ndarray, names, dstrs, other) -> dict:
    """The events at ``ev_pos`` (owned by RunData ``ev_run``, counted from the first block decoded) as columns."""
    n_events = ev_pos.size
    cols: dict[str, list] = {k: [] for k in ("pe_seq", "name_ref", "dd_str_ref", "pe_chain", "pe_instruction",
                                             "pe_dd_int", "pe_start", "pe_end", "meta_refs")}
    ae_refs, ae_seq, de_refs, de_seq, pe_pos = [], [], [], [], []
    n_empty = n_ambiguous = 0
    for c0 in range(0, n_events, EVENT_CHUNK):
        seq = np.arange(c0, min(c0 + EVENT_CHUNK, n_events), dtype=np.int64)
        events = fb.tables(ev_pos[c0: c0 + EVENT_CHUNK], "Event")
        pe_ref = events.ref(0, "profile_event")
        ae_ref = events.ref(1, "allocation_event")
        de_ref = events.ref(2, "debug_event")
        del events
        pe_pos.append(pe_ref[pe_ref >= 0])
        present = (pe_ref >= 0).astype(np.int8) + (ae_ref >= 0) + (de_ref >= 0)
        n_empty += int(np.count_nonzero(present == 0))
        n_ambiguous += int(np.count_nonzero(present > 1))
        # an Event holding several payloads counts as its first one (profile, allocation, debug), like Inspector
        is_pe = pe_ref >= 0
        is_ae = (ae_ref >= 0) & ~is_pe
        is_de = (de_ref >= 0) & ~is_pe & ~is_ae
        if is_ae.any():
            ae_refs.append(ae_ref[is_ae])
            ae_seq.append(seq[is_ae])
        if is_de.any():
            de_refs.append(de_ref[is_de])
            de_seq.append(seq[is_de])
        pe = fb.tables(pe_ref[is_pe] if not is_pe.all() else pe_ref, "ProfileEvent")
        cols["pe_seq"].append(seq[is_pe])
        cols["name_ref"].append(pe.ref(0, "name"))
        cols["dd_str_ref"].append(pe.ref(4, "delegate_debug_id_str"))
        cols["meta_refs"].append(pe.ref(5, "delegate_debug_metadata"))
        cols["pe_chain"].append(pe.scalar(1, np.int32, 0))
        cols["pe_instruction"].append(pe.scalar(2, np.int32, -1))
        cols["pe_dd_int"].append(pe.scalar(3, np.int32, -1))
        cols["pe_start"].append(pe.scalar(6, np.uint64, 0))
        cols["pe_end"].append(pe.scalar(7, np.uint64, 0))
        del pe, pe_ref, ae_ref, de_ref
    del ev_pos
    empty = {"pe_seq": np.int64, "name_ref": np.int64, "dd_str_ref": np.int64, "pe_chain": np.int32,
             "pe_instruction": np.int32, "pe_dd_int": np.int32, "pe_start": np.uint64, "pe_end": np.uint64,
             "meta_refs": np.int64}
    out = {k: (np.concatenate(v) if v else np.empty(0, dtype=empty[k])) for k, v in cols.items()}
    out["pe_name_codes"] = fb.strings(out.pop("name_ref"), "ProfileEvent.name", names)[0]
    out["pe_dd_str_codes"] = fb.strings(out.pop("dd_str_ref"), "ProfileEvent.delegate_debug_id_str", dstrs)[0]
    cat = np.concatenate
    return _finish_events(fb, out, ev_run, n_empty, n_ambiguous, [cat(x) if x else np.empty(0, np.int64) for x in
                                                                   (pe_pos, ae_refs, ae_seq, de_refs, de_seq)],
                          names, dstrs, other)


def _decode_events_c(core, fb: FlatBuffer, vec_refs: np.ndarray, n_events: int, names, dstrs, other,
                     give_back=lambda: None) -> dict:
    """:func:`_decode_events` by the compiled walk (:mod:`edgeprof.io.etdump_core`): the same columns.
    ``give_back()`` after each pass (a mapped file's pages: the passes read one region each)."""
    ev_pos, ev_run, kind, payload, n_empty, n_ambiguous = etdump_core.walk_events(core, fb, vec_refs, n_events)
    give_back()
    fb.unshared(ev_pos, "RunData.events")
    del ev_pos
    pe_seq, ae_seq, de_seq = (np.flatnonzero(kind == k) for k in (0, 1, 2))  # an event's index in the block
    del kind
    pe_pos, ae_refs, de_refs = payload[pe_seq], payload[ae_seq], payload[de_seq]
    del payload
    out = etdump_core.profile_events(core, fb, pe_pos)
    give_back()
    out["pe_seq"] = pe_seq
    out["pe_name_codes"] = etdump_core.strings(core, fb, out.pop("name_ref"), names)
    out["pe_dd_str_codes"] = etdump_core.strings(core, fb, out.pop("dd_str_ref"), dstrs)
    give_back()
    return _finish_events(fb, out, ev_run, n_empty, n_ambiguous, [pe_pos, ae_refs, ae_seq, de_refs, de_seq],
                          names, dstrs, other)


def _finish_events(fb: FlatBuffer, out: dict, ev_run, n_empty, n_ambiguous, payloads, names, dstrs, other) -> dict:
    """The columns both walks share: payload tables read once each, delegate metadata, allocation and debug events."""
    pe_pos, ae_refs, ae_seq, de_refs, de_seq = payloads
    # one payload table reached from two events would be one event read twice
    for refs, what in ((pe_pos, "Event.profile_event"), (ae_refs, "Event.allocation_event"),
                       (de_refs, "Event.debug_event")):
        fb.unshared(refs, what)
    del pe_pos
    meta = fb.scalar_vectors(out.pop("meta_refs"), np.uint8, "ProfileEvent.delegate_debug_metadata")
    out.update(
        n_empty_events=n_empty,
        n_ambiguous_events=n_ambiguous,
        pe_run=ev_run[out["pe_seq"]],
        pe_names=names.uniques,
        pe_dd_strs=dstrs.uniques,
        pe_meta=meta,
    )

    # AllocationEvents
    ae = fb.tables(ae_refs, "AllocationEvent")
    out.update(ae_run=ev_run[ae_seq], ae_seq=ae_seq, ae_allocator=ae.scalar(0, np.int32, 0),
               ae_size=ae.scalar(1, np.uint64, 0))

    # DebugEvents (intermediate outputs): metadata only; tensor bytes live in the separate debug buffer
    de = fb.tables(de_refs, "DebugEvent")
    dname_codes, _, _ = fb.strings(de.ref(5, "name"), "DebugEvent.name", other)
    ddstr_codes, _, _ = fb.strings(de.ref(4, "delegate_debug_id_str"), "DebugEvent.delegate_debug_id_str", other)
    out.update(
        de_run=ev_run[de_seq],
        de_seq=de_seq,
        de_chain=de.scalar(0, np.uint64, 0),
        de_instruction=de.scalar(1, np.int32, -1),
        de_dd_int=de.scalar(3, np.int32, -1),
        de_dd_str=[other.uniques[c] if c >= 0 else None for c in ddstr_codes],
        de_name=[other.uniques[c] if c >= 0 else None for c in dname_codes],
        de_value=_decode_values(fb, de.ref(2, "debug_entry")),
    )
    return out


def _decode_values(fb: FlatBuffer, ref: np.ndarray) -> dict:
    """Decode ``Value`` tables (debug entries) into per-event columns."""
    n = ref.size
    has = ref >= 0
    cols: dict[str, Any] = {
        "value_type": np.full(n, -1, dtype=np.int16),
        "is_output": np.zeros(n, dtype=bool),
        "int_value": np.full(n, np.nan),
        "float_value": np.full(n, np.nan),
        "bool_value": np.zeros(n, dtype=np.int8) - 1,
        "tensors": [[] for _ in range(n)] if n < MAX_TENSOR_ROWS else None,
    }
    if not has.any():
        return cols
    idx = np.flatnonzero(has)
    fb.unshared(ref[has], "DebugEvent.debug_entry")
    v = fb.tables(ref[has], "Value")
    cols["value_type"][idx] = v.scalar(0, np.int8, 0)

    def sub_scalar(k, name, field_dtype, what):
        r = v.ref(k, what)
        m = r >= 0
        vals = np.full(r.size, np.nan)
        if m.any():
            t = fb.tables(r[m], name)
            vals[m] = t.scalar(0, field_dtype, 0).astype(np.float64)
        return vals, m

    iv, _ = sub_scalar(3, "Int", np.int64, "int_value")
    fv, _ = sub_scalar(4, "Float", np.float32, "float_value")
    dv, dm = sub_scalar(5, "Double", np.float64, "double_value")
    bv, bm = sub_scalar(6, "Bool", np.uint8, "bool_value")
    ov, om = sub_scalar(7, "Bool", np.uint8, "output")
    cols["int_value"][idx] = iv
    cols["float_value"][idx] = np.where(dm, dv, fv)
    cols["bool_value"][idx] = np.where(bm, bv, -1).astype(np.int8)
    cols["is_output"][idx] = om & (ov > 0)

    # tensors: single tensor (field 1) or tensor list (field 2 → TensorList{tensors})
    single = v.ref(1, "tensor")
    lst = v.ref(2, "tensor_list")
    tl = lst >= 0
    list_tensors = np.empty(0, dtype=np.int64)
    list_owner = np.empty(0, dtype=np.int64)
    if tl.any():
        tlt = fb.tables(lst[tl], "TensorList")
        list_tensors, own = fb.table_vectors(tlt.ref(0, "tensors"), "TensorList.tensors")
        list_owner = np.flatnonzero(tl)[own]
    t_pos = np.concatenate([single[single >= 0], list_tensors])
    t_owner = np.concatenate([np.flatnonzero(single >= 0), list_owner])
    if t_pos.size:
        fb.unshared(t_pos, "Value tensors")
        t = fb.tables(t_pos, "Tensor")
        stype = t.scalar(0, np.int8, 0)
        sizes, s_off = fb.scalar_vectors(t.ref(1, "sizes"), np.int64, "Tensor.sizes")
        strides, st_off = fb.scalar_vectors(t.ref(2, "strides"), np.int64, "Tensor.strides")
        offset = t.scalar(3, np.int64, 0)
        if cols["tensors"] is not None:
            sizes_l, strides_l = sizes.tolist(), strides.tolist()
            for j, owner in enumerate(t_owner.tolist()):
                cols["tensors"][idx[owner]].append({
                    "scalar_type": SCALAR_TYPES.get(int(stype[j]), f"unknown({int(stype[j])})"),
                    "sizes": sizes_l[s_off[j]: s_off[j + 1]],
                    "strides": strides_l[st_off[j]: st_off[j + 1]],
                    "offset": int(offset[j]),
                })
    return cols
