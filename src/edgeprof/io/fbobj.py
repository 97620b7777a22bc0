"""Bounds-checked FlatBuffers tables read one object at a time (for small, deeply nested schemas such as an
ExecuTorch program or an XNNPACK graph; event streams use the vectorized :mod:`edgeprof.io.flatbuf`).

Every offset is checked before it is followed; the first bad one raises the reader's error class naming the
file and the absolute byte offset (``base`` is where this buffer starts inside the file).
"""

from __future__ import annotations

import struct


class FB:
    __slots__ = ("base", "buf", "error", "path", "size")

    def __init__(self, buf, path, error, base: int = 0):
        self.buf = buf          # bytes, memoryview or mmap slice
        self.size = len(buf)
        self.path = path
        self.base = base
        self.error = error

    def fail(self, pos: int, msg: str):
        raise self.error(self.path, msg, offset=self.base + max(pos, 0))

    def unpack(self, fmt: str, pos: int, what: str):
        n = struct.calcsize(fmt)
        if pos < 0 or pos + n > self.size:
            self.fail(pos, f"{what} at byte {self.base + pos} lies outside the {self.size}-byte buffer")
        return struct.unpack_from(fmt, self.buf, pos)

    def root(self, what: str) -> Table:
        (off,) = self.unpack("<I", 0, "root offset")
        return self.table(off, what)

    def table(self, pos: int, what: str) -> Table:
        (soff,) = self.unpack("<i", pos, what)
        vt = pos - soff
        vsize, tsize = self.unpack("<HH", vt, f"{what} vtable")
        if vsize < 4 or vsize % 2 or vt + vsize > self.size or pos + tsize > self.size:
            self.fail(pos, f"{what}: corrupt vtable")
        return Table(self, pos, vt, vsize, tsize, what)


class Table:
    __slots__ = ("fb", "pos", "tsize", "vsize", "vt", "what")

    def __init__(self, fb: FB, pos, vt, vsize, tsize, what):
        self.fb, self.pos, self.vt, self.vsize, self.tsize, self.what = fb, pos, vt, vsize, tsize, what

    def _field(self, k: int, size: int) -> int | None:
        slot = 4 + 2 * k
        if slot + 2 > self.vsize:
            return None
        (off,) = self.fb.unpack("<H", self.vt + slot, self.what)
        if off == 0:
            return None
        if off + size > self.tsize:
            self.fb.fail(self.pos + off, f"{self.what} field {k} lies past the end of its table")
        return self.pos + off

    def scalar(self, k: int, fmt: str, default=0):
        p = self._field(k, struct.calcsize(fmt))
        return default if p is None else self.fb.unpack("<" + fmt, p, f"{self.what} field {k}")[0]

    def ref(self, k: int, what: str) -> int | None:
        p = self._field(k, 4)
        if p is None:
            return None
        (off,) = self.fb.unpack("<I", p, f"{self.what}.{what}")
        target = p + off
        if target >= self.fb.size:
            self.fb.fail(p, f"{self.what}.{what} points to byte {self.fb.base + target}, past the end of the buffer")
        return target

    def table(self, k: int, what: str) -> Table | None:
        p = self.ref(k, what)
        return None if p is None else self.fb.table(p, f"{self.what}.{what}")

    def vector(self, k: int, elem: int, what: str) -> tuple[int, int]:
        """(start, count) of a vector field ((0, 0) when absent), its bytes checked."""
        p = self.ref(k, what)
        if p is None:
            return 0, 0
        (n,) = self.fb.unpack("<I", p, f"{self.what}.{what} length")
        if p + 4 + n * elem > self.fb.size:
            self.fb.fail(p, f"{self.what}.{what}: a vector of {n} × {elem} bytes runs past the end of the buffer")
        return p + 4, n

    def tables(self, k: int, what: str) -> list[Table]:
        start, n = self.vector(k, 4, what)
        out = []
        for i in range(n):
            q = start + 4 * i
            (off,) = self.fb.unpack("<I", q, what)
            out.append(self.fb.table(q + off, f"{self.what}.{what}[{i}]"))
        return out

    def scalars(self, k: int, fmt: str, what: str) -> list:
        size = struct.calcsize(fmt)
        start, n = self.vector(k, size, what)
        return list(struct.unpack_from(f"<{n}{fmt}", self.fb.buf, start)) if n else []

    def string(self, k: int, what: str) -> str | None:
        start, n = self.vector(k, 1, what)
        if self.ref(k, what) is None:
            return None
        return bytes(self.fb.buf[start:start + n]).decode("utf-8", "replace")

    def strings(self, k: int, what: str) -> list[str]:
        start, n = self.vector(k, 4, what)
        out = []
        for i in range(n):
            q = start + 4 * i
            (off,) = self.fb.unpack("<I", q, what)
            (ln,) = self.fb.unpack("<I", q + off, what)
            if q + off + 4 + ln > self.fb.size:
                self.fb.fail(q, f"{self.what}.{what}[{i}] runs past the end of the buffer")
            out.append(bytes(self.fb.buf[q + off + 4:q + off + 4 + ln]).decode("utf-8", "replace"))
        return out

    def union(self, k: int, what: str) -> tuple[int, Table | None]:
        """(type, table) of a union stored as fields k (type) and k + 1 (value)."""
        t = self.scalar(k, "B", 0)
        return t, (self.table(k + 1, what) if t else None)
