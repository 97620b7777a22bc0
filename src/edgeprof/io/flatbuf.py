"""Vectorized, bounds-checked reading of FlatBuffers with numpy.

Each function takes an array of byte positions and reads the same field of many tables at once, so a
file with 200k events costs a few dozen numpy operations rather than 200k Python objects. Every
position, vtable, vector and string is checked against the buffer before it is read; the first bad one
raises :class:`~edgeprof.errors.CorruptETDumpError` naming the file and the byte offset.

FlatBuffers layout (little endian) used here:
  table at ``t``: ``int32 soffset`` at ``t``; its vtable sits at ``t - soffset`` and holds ``uint16``
  vtable size, ``uint16`` table size, then one ``uint16`` offset per field (0 = field absent).
  reference fields hold a ``uint32`` offset relative to the field's own position.
  vectors and strings start with a ``uint32`` element count / byte length.

Offsets that alias — two references reaching one table — are refused (:meth:`FlatBuffer.unshared`): every vector of
tables read here must list distinct tables, so a file cannot make one RunData or event count a million times for
the 4 bytes of each extra reference. (Writers share vtables and may share strings; those are read as shared.)
"""

from __future__ import annotations

import numpy as np

from ..errors import CorruptETDumpError

_I64 = np.int64
_ABSENT = -1
_SHORT = 96  # strings up to this many bytes are deduplicated vectorized; longer ones one by one
_CHUNK = 65536  # rows per vectorized string block

# Random odd multipliers for the row hash used to deduplicate strings (verified exactly afterwards).
_HASH_WEIGHTS = (np.random.default_rng(0x5EED).integers(1, 2**62, size=_SHORT // 4 + 2, dtype=np.uint64) * np.uint64(2)
                 + np.uint64(1))


class FlatBuffer:
    """A read-only byte buffer with vectorized, bounds-checked accessors."""

    __slots__ = ("base", "path", "size", "u8")

    def __init__(self, data, path, base: int = 0):
        self.u8 = np.frombuffer(data, dtype=np.uint8)
        self.size = int(self.u8.size)
        self.path = path
        self.base = base  # added to offsets in error messages (e.g. a size prefix)

    # -- errors -------------------------------------------------------------------------------------
    def fail(self, offset, message: str):
        raise CorruptETDumpError(self.path, message, offset=int(offset) + self.base)

    def check(self, pos: np.ndarray, nbytes, what: str, origin: np.ndarray | None = None) -> None:
        """Raise unless every ``[pos, pos + nbytes)`` lies inside the buffer.

        ``origin``: where each position was read from (the referencing field); the error then names
        that offset, which lies inside the file, and says where it points.
        """
        if pos.size == 0:
            return
        bad = (pos < 0) | (pos + nbytes > self.size)
        if bad.any():
            i = int(np.argmax(bad))
            n = int(nbytes[i]) if np.ndim(nbytes) else int(nbytes)
            if origin is not None:
                o = int(origin[i]) if np.ndim(origin) else int(origin)
                self.fail(o, f"{what} reference points to byte {int(pos[i]) + self.base} ({n} bytes), outside the "
                             f"{self.size + self.base}-byte file: truncated or corrupt ETDump")
            self.fail(pos[i], f"{what} ({n} bytes) runs outside the {self.size + self.base}-byte file: "
                              "truncated or corrupt ETDump")

    def unshared(self, pos: np.ndarray, what: str, origin: np.ndarray | None = None) -> None:
        """Raise unless the table positions ``pos`` (``-1``: absent, ignored) are all distinct; the error names the
        second reference (``origin``: where each was read from) and the shared table. Writers lay tables out in
        one direction, so the usual cost is one pass; positions in any other order are sorted."""
        if pos.size < 2:
            return
        keep = pos >= 0
        if not keep.all():
            pos = pos[keep]
            origin = origin[keep] if origin is not None else None
        if (pos[1:] > pos[:-1]).all() or (pos[1:] < pos[:-1]).all():
            return
        order = np.argsort(pos, kind="stable")
        same = np.flatnonzero(pos[order[1:]] == pos[order[:-1]])
        if same.size:
            j = int(order[same[0] + 1])
            self.fail(origin[j] if origin is not None else pos[j],
                      f"{what} lists the table at byte {int(pos[j]) + self.base} more than once (offsets that alias: "
                      "one table read as many): corrupt ETDump")

    # -- scalars ------------------------------------------------------------------------------------
    def read(self, pos: np.ndarray, dtype) -> np.ndarray:
        """Read one little-endian scalar of ``dtype`` at each position (positions must be checked).

        Uses ``k`` shifted views of the buffer (``k`` = item size), so an aligned position costs one
        gather and no index matrix is built; FlatBuffers aligns scalars, so usually one view serves all.
        """
        dt = np.dtype(dtype).newbyteorder("<")
        k = dt.itemsize
        native = dt.newbyteorder("=")
        if pos.size == 0:
            return np.empty(0, dtype=native)
        if k == 1:
            return self.u8[pos].view(native)
        rem = pos & (k - 1)  # k is 2, 4 or 8
        quo = pos >> (k.bit_length() - 1)
        shifts = np.flatnonzero(np.bincount(rem, minlength=k))
        if shifts.size == 1:
            s = int(shifts[0])
            return np.frombuffer(self.u8, dtype=dt, count=(self.size - s) // k, offset=s)[quo].astype(native, copy=False)
        if k == 8 and not (pos & 3).any():  # 4-aligned 64-bit values (e.g. string words): two 32-bit halves
            q = pos >> 2
            v32 = np.frombuffer(self.u8, dtype="<u4", count=self.size // 4)
            lo = v32[q].astype(np.uint64)
            hi = v32[np.minimum(q + 1, v32.size - 1)].astype(np.uint64)
            return (lo | (hi << np.uint64(32))).view(native)
        out = np.empty(pos.size, dtype=native)
        for s in shifts.tolist():
            view = np.frombuffer(self.u8, dtype=dt, count=(self.size - s) // k, offset=s)
            m = rem == s
            out[m] = view[quo[m]]
        return out

    def read_checked(self, pos: np.ndarray, dtype, what: str) -> np.ndarray:
        self.check(pos, np.dtype(dtype).itemsize, what)
        return self.read(pos, dtype)

    # -- tables -------------------------------------------------------------------------------------
    def tables(self, pos: np.ndarray, what: str) -> Tables:
        """Many tables of one type. Their vtables are read once per distinct vtable (writers share them)."""
        pos = np.asarray(pos, dtype=_I64)
        soff = self.read_checked(pos, np.int32, f"{what} table header").astype(_I64)
        vt = pos - soff
        uvt, vinv = _few_unique(vt)
        if uvt.size:
            bad_vt = (uvt < 0) | (uvt + 4 > self.size)
            if bad_vt.any():
                j = int(np.argmax(bad_vt))
                self.check(uvt[j: j + 1], 4, f"{what} vtable", origin=pos[int(np.argmax(vinv == j))])
        vtsize = self.read(uvt, np.uint16).astype(_I64)
        tsize = self.read(uvt + 2, np.uint16).astype(_I64)
        bad = (vtsize < 4) | (vtsize % 2 == 1) | (tsize < 4)
        if bad.any():
            i = int(np.argmax(bad))
            self.fail(uvt[i], f"{what} vtable has impossible sizes (vtable {vtsize[i]}, table {tsize[i]})")
        self.check(uvt, vtsize, f"{what} vtable")
        self.check(pos, tsize[vinv] if uvt.size > 1 else tsize, f"{what} table", origin=pos)
        return Tables(self, pos, uvt, vinv, vtsize, tsize, what)

    def deref(self, fpos: np.ndarray, what: str) -> np.ndarray:
        """Follow uoffset fields at ``fpos`` (``-1`` = absent) to their targets (``-1`` stays ``-1``)."""
        out = np.full(fpos.shape, _ABSENT, dtype=_I64)
        m = fpos >= 0
        if m.any():
            p = fpos[m]
            tgt = p + self.read(p, np.uint32).astype(_I64)
            self.check(tgt, 4, what, origin=p)
            out[m] = tgt
        return out

    def vector_lengths(self, ref: np.ndarray, elem_size: int, what: str) -> np.ndarray:
        """Element counts of the vectors at ``ref`` (0 where absent), checking the whole vector fits."""
        n = np.zeros(ref.shape, dtype=_I64)
        m = ref >= 0
        if m.any():
            r = ref[m]
            cnt = self.read(r, np.uint32).astype(_I64)
            self.check(r + 4, cnt * elem_size, f"{what} vector", origin=r)
            n[m] = cnt
        return n

    def _check_total(self, refs: np.ndarray, lens: np.ndarray, elem_size: int, what: str) -> None:
        """Vectors that each fit but together hold more elements than the buffer can are overlapping: corrupt."""
        total = int(lens.sum()) * elem_size
        if total > self.size:
            i = int(np.argmax(lens))
            self.fail(refs[i], f"{what} vectors claim {total} bytes in a {self.size}-byte buffer (overlapping): corrupt ETDump")

    def table_vector(self, ref: int, what: str) -> np.ndarray:
        """Positions of the tables held by one vector of tables at ``ref``."""
        if ref < 0:
            return np.empty(0, dtype=_I64)
        n = int(self.vector_lengths(np.array([ref], dtype=_I64), 4, what)[0])
        slots = ref + 4 + 4 * np.arange(n, dtype=_I64)
        tgt = slots + self.read(slots, np.uint32).astype(_I64)
        self.check(tgt, 4, f"{what} element", origin=slots)
        self.unshared(tgt, what, origin=slots)
        return tgt

    def table_vectors(self, refs: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray]:
        """Flatten several vectors of tables: returns (table positions, index of the owning vector)."""
        lens = self.vector_lengths(refs, 4, what)
        self._check_total(refs, lens, 4, what)
        owner = np.repeat(np.arange(refs.size, dtype=_I64), lens)
        first = (np.cumsum(lens) - lens).astype(_I64)
        starts = np.repeat(np.where(refs >= 0, refs + 4, 0) - 4 * first, lens)
        slots = starts + 4 * np.arange(owner.size, dtype=_I64)
        tgt = slots + self.read(slots, np.uint32).astype(_I64)
        self.check(tgt, 4, f"{what} element", origin=slots)
        self.unshared(tgt, what, origin=slots)
        return tgt, owner

    def scalar_vectors(self, refs: np.ndarray, dtype, what: str) -> tuple[np.ndarray, np.ndarray]:
        """Concatenate vectors of scalars: returns (values, offsets) where vector i is values[off[i]:off[i+1]]."""
        k = np.dtype(dtype).itemsize
        if not (refs >= 0).any():
            return np.empty(0, dtype=dtype), np.zeros(refs.size + 1, dtype=_I64)
        lens = self.vector_lengths(refs, k, what)
        self._check_total(refs, lens, k, what)
        offsets = np.zeros(lens.size + 1, dtype=_I64)
        np.cumsum(lens, out=offsets[1:])
        firsts = np.where(refs >= 0, refs + 4, 0)
        pos = np.repeat(firsts - k * offsets[:-1], lens) + k * np.arange(int(offsets[-1]), dtype=_I64)
        return self.read(pos, dtype), offsets

    # -- strings ------------------------------------------------------------------------------------
    def strings(self, ref: np.ndarray, what: str, interner: Interner | None = None) -> tuple[np.ndarray, list[str], int]:
        """Decode the strings at ``ref`` (``-1`` = absent) into (codes, uniques, n_invalid_utf8).

        ``codes[i]`` indexes ``uniques``; absent strings get code -1. Identical byte strings are found
        with a vectorized hash and then verified word by word, so a file with 200k events and 100
        distinct names decodes only 100 Python strings. New strings enter ``uniques`` in the order they first
        appear (as the compiled walk, :mod:`edgeprof.io.etdump_core`, enters them). Pass the same ``interner`` to
        several calls to share one code space. Distinct strings longer than 96 bytes that together claim more bytes
        than the buffer holds overlap: corrupt (a file cannot make each of many references decode a long string).
        """
        intern = interner if interner is not None else Interner()
        codes = np.full(ref.shape, -1, dtype=np.int32)
        m = ref >= 0
        if not m.any():
            return codes, intern.uniques, intern.invalid
        r = ref[m]
        lens = self.read(r, np.uint32).astype(_I64)
        start = r + 4
        self.check(start, lens, f"{what} string", origin=r)
        sub = np.full(r.shape, -1, dtype=np.int64)  # a local id per row; locals are then interned by first row
        first_rows: list[np.ndarray] = []
        blobs: list[bytes] = []
        short = lens <= _SHORT
        width = 4 * max(-(-int(lens[short].max()) // 4), 1) if short.any() else 4
        # rows whose last 4-byte word would run past the buffer end are decoded one by one below
        short &= start + width <= self.size
        if short.any():
            idx_all = np.flatnonzero(short)
            for c0 in range(0, idx_all.size, _CHUNK):  # bounded temporaries on very large files
                idx_short = idx_all[c0: c0 + _CHUNK]
                local, first, chunk_blobs = self._dedup_short(start[idx_short], lens[idx_short])
                sub[idx_short] = local + len(blobs)
                first_rows.append(idx_short[first])
                blobs += chunk_blobs
        rest = np.flatnonzero(~short)
        if rest.size:  # long strings: each distinct (position, length) once
            uniq, first, inv = np.unique(np.stack([start[rest], lens[rest]], axis=1), axis=0, return_index=True,
                                         return_inverse=True)
            long = uniq[:, 1] > _SHORT
            claimed = int(uniq[long, 1].sum())
            if claimed > self.size:
                self.fail(r[rest[first[int(np.argmax(np.where(long, uniq[:, 1], -1)))]]],
                          f"strings claim {claimed} bytes in a {self.size}-byte buffer (overlapping): corrupt ETDump")
            sub[rest] = inv.reshape(-1) + len(blobs)
            first_rows.append(rest[first])
            blobs += [self.u8[a: a + ln].tobytes() for a, ln in uniq.tolist()]
        order = np.argsort(np.concatenate(first_rows), kind="stable")
        local_code = np.empty(len(blobs), dtype=np.int64)
        for j in order.tolist():
            local_code[j] = intern(blobs[j])
        codes[m] = local_code[sub]
        return codes, intern.uniques, intern.invalid

    def _dedup_short(self, ss: np.ndarray, sl: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[bytes]]:
        """(local id of each short string (start ``ss``, length ``sl``), the first row of each local id, the
        bytes of each).

        The strings are gathered as rows of 32-bit words in one indexing operation (bytes past each
        string's end masked off), hashed, verified row by row against each hash group's first member,
        and only distinct strings are decoded.
        """
        nw = max(-(-int(sl.max()) // 4), 1)
        n = ss.size
        mat = np.empty((n, nw), dtype=np.uint32)
        h = sl.astype(np.uint64) * _HASH_WEIGHTS[-1]
        aligned = not (ss & 3).any()  # FlatBuffers builders align strings; anything else goes byte-wise
        v32 = np.frombuffer(self.u8, dtype="<u4", count=self.size // 4) if aligned else None
        q = ss >> 2
        for c in range(nw):
            col = v32[q + c] if aligned else self.read(ss + 4 * c, np.uint32)  # type: ignore[index]  # v32 when aligned
            keep = sl - 4 * c  # bytes of this word that belong to the string
            partial = (keep < 4)
            if partial.any():
                bits = (8 * np.clip(keep[partial], 0, 4)).astype(np.uint64)
                col[partial] &= ((np.uint64(1) << bits) - np.uint64(1)).astype(np.uint32)
            mat[:, c] = col
            h = (h ^ col.astype(np.uint64)) * _HASH_WEIGHTS[c]
        _, first, inv = np.unique(h, return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
        rep = first[inv]
        if not (np.array_equal(sl, sl[rep]) and np.array_equal(mat, mat[rep])):
            # a hash collision: fall back to exact row comparison
            key = np.concatenate([mat, sl.astype(np.uint32)[:, None]], axis=1)
            _, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
            inv = inv.reshape(-1)
        return inv, first, [mat[i].astype("<u4").tobytes()[: sl[i]] for i in first.tolist()]


class Interner:
    """Distinct decoded strings and their codes, shared across :meth:`FlatBuffer.strings` calls."""

    __slots__ = ("invalid", "seen", "table", "uniques")

    def __init__(self):
        self.table: dict[str, int] = {}
        self.uniques: list[str] = []
        self.invalid = 0  # distinct byte strings that were not valid UTF-8
        self.seen: dict[bytes, int] = {}

    def __call__(self, b: bytes) -> int:
        code = self.seen.get(b)
        if code is not None:
            return code
        self.seen[b] = code = self._decoded(b)
        return code

    def _decoded(self, b: bytes) -> int:
        try:
            s = b.decode("utf-8")
        except UnicodeDecodeError:
            s = b.decode("utf-8", errors="replace")
            self.invalid += 1
        code = self.table.get(s)
        if code is None:
            code = self.table[s] = len(self.uniques)
            self.uniques.append(s)
        return code


def _few_unique(v: np.ndarray, limit: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values, index of each element's value): fast when there are few distinct values."""
    inv = np.zeros(v.size, dtype=np.int64)
    if v.size == 0:
        return v[:0], inv
    if (v == v[0]).all():
        return v[:1], inv
    uniq: list = []
    rem = np.arange(v.size)
    while rem.size and len(uniq) < limit:
        m = v[rem] == v[rem[0]]
        inv[rem[m]] = len(uniq)
        uniq.append(v[rem[0]])
        rem = rem[~m]
    if rem.size:
        u, i = np.unique(v, return_inverse=True)
        return u, i.reshape(-1).astype(np.int64)
    return np.array(uniq, dtype=v.dtype), inv


class Tables:
    """Many tables of one type, read field by field (vtable data is per distinct vtable)."""

    __slots__ = ("fb", "pos", "tsize", "uvt", "vinv", "vtsize", "what")

    def __init__(self, fb: FlatBuffer, pos, uvt, vinv, vtsize, tsize, what):
        self.fb, self.pos, self.uvt, self.vinv, self.vtsize, self.tsize, self.what = fb, pos, uvt, vinv, vtsize, tsize, what

    def __len__(self) -> int:
        return int(self.pos.size)

    def field(self, k: int, size: int) -> np.ndarray:
        """Absolute position of field ``k`` (``size`` bytes) in each table, ``-1`` where absent."""
        slot = 4 + 2 * k
        has = self.vtsize >= slot + 2
        off = np.zeros(self.uvt.shape, dtype=_I64)
        if has.any():
            off[has] = self.fb.read(self.uvt[has] + slot, np.uint16).astype(_I64)
        bad = (off > 0) & (off + size > self.tsize)
        if bad.any():
            j = int(np.argmax(bad))
            i = int(np.argmax(self.vinv == j))
            self.fb.fail(self.pos[i] + off[j], f"{self.what} field {k} lies past the end of its table")
        if off.size == 1:
            return self.pos + int(off[0]) if off[0] > 0 else np.full(self.pos.shape, _ABSENT, dtype=_I64)
        o = off[self.vinv]
        return np.where(o > 0, self.pos + o, _ABSENT)

    def scalar(self, k: int, dtype, default) -> np.ndarray:
        dt = np.dtype(dtype)
        fpos = self.field(k, dt.itemsize)
        m = fpos >= 0
        if m.all():
            return self.fb.read(fpos, dt)
        out = np.full(self.pos.shape, default, dtype=dt)
        if m.any():
            out[m] = self.fb.read(fpos[m], dt)
        return out

    def ref(self, k: int, what: str) -> np.ndarray:
        """Target position of reference field ``k`` (table, vector or string), ``-1`` where absent."""
        return self.fb.deref(self.field(k, 4), f"{self.what}.{what}")
