"""What a file is, from its first bytes — for errors that say what was given and what to do with it — and the
one decompression rule every compressed input goes through.

**Decompression** (gzip'd logs, ETDumps, timeline CSVs, ONNX Runtime and LiteRT profiles, debug buffers; the zip
members of an ETRecord declare their sizes, checked against the same bound before they are read): what comes out is
counted *while* it is decompressed, and decompression stops at the first
of three bounds — the reader's own size limit for the content; :data:`MAX_RATIO` times the compressed size once past
:data:`RATIO_FLOOR` (no real profile or log compresses that well; a bomb does, ~1,000×); and, for content held in
memory, a share (:data:`MEMORY_SHARE`) of the memory this process may still take (its address-space limit,
``RLIMIT_AS``, less what it maps; the system's available memory; a cgroup v2 limit). The refusal is one line with the
figures: compressed bytes, bytes reached, the ratio, and which bound stopped it. :func:`gunzip` decompresses whole
content, :class:`GzipStream` is the same rule for a reader that streams (XNNPACK logs), :func:`gunzip_head` the first
bytes only (deciding a format), and :func:`expansion_bound` is the bound a zip member is read under. Every gzip
member is read in turn (``gzip a b > ab.gz`` holds two), each counted against the same bounds.

**Only gzip is decompressed, and a parser gets only bytes already checked.** Polars decompresses zlib, zstd and
lz4 content on its own, unbounded, when a CSV's bytes start with their magic: :func:`plain` — what every reader
that hands outside bytes to such a parser calls — decompresses gzip under the rule and refuses any other
compression (zlib, zstd, bzip2, xz, lz4, :func:`compression`) in one line naming it, also inside gzip data.
"""

from __future__ import annotations

import io
import os
import zlib

from ..errors import InputError

MAX_RATIO = 200              # decompressed / compressed: real profiles and logs stay far below (measured: 1–30×)
RATIO_FLOOR = 64 << 20       # content up to this size is never refused for its ratio
MEMORY_SHARE = 3             # content held in memory may take a third of the memory left (it, a copy, what it becomes)
_STEP = 16 << 20             # decompressed per step: the bound is checked after each

_MAGIC = (
    (b"\x1f\x8b", "gzip", "a gzip-compressed file"),
    (b"PK\x03\x04", "zip", "a zip archive (an ETRecord, or a zipped Core ML package?)"),
    (b"\x89PNG", "png", "a PNG image"),
    (b"%PDF", "pdf", "a PDF document"),
    (b"\x7fELF", "elf", "an ELF binary"),
)
NEXT = {
    "etdump": "read it with `edgeprof analyze FILE` (or report, compare, trace)",
    "pte": "`edgeprof program FILE` describes it; `edgeprof run FILE` profiles it",
    "zip": "an ETRecord goes with --etrecord",
}


def kind(head: bytes) -> tuple[str, str]:
    """(kind, description) of a file from its first bytes (at least 64 of them when it has them)."""
    if head[8:12] == b"ED00" or head[4:8] == b"ED00":
        return "etdump", "an ETDump (an ExecuTorch profile)"
    if len(head) >= 8 and head[4:6] == b"ET" and head[6:8].isdigit():
        return "pte", f"an ExecuTorch program (.pte, identifier {head[4:8].decode()!r})"
    for magic, k, what in _MAGIC:
        if head.startswith(magic):
            return k, what
    text = head[:64].lstrip()
    if text[:1] in (b"{", b"["):
        return "json", "a JSON file"
    if text and all(32 <= c < 127 or c in (9, 10, 13) for c in text):
        return "text", "a text file"
    return "unknown", "not a format edgeprof knows"


def head_of(path, n: int = 64) -> bytes:
    from ..files import open_regular

    with open_regular(path) as f:
        return f.read(n)


def wrong_kind(path, expected: str, head: bytes | None = None) -> str:
    """``this is an ETDump (…), not <expected>: <what to do with it>``."""
    k, what = kind(head if head is not None else head_of(path))
    nxt = NEXT.get(k)
    return f"this is {what}, not {expected}" + (f": {nxt}" if nxt else "")


def memory_room() -> tuple[int, str] | None:
    """(bytes this process may still allocate, what sets that figure), the smallest of what is known: the address-space
    limit less the address space in use, the system's available memory, a cgroup v2 memory limit less its use; None
    when none is known."""
    known = []
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            used = _proc_int("/proc/self/statm", 0) * os.sysconf("SC_PAGE_SIZE") if os.path.exists("/proc/self/statm") \
                else 0
            known.append((max(soft - used, 0), f"the {soft >> 20} MB address-space limit (RLIMIT_AS)"))
    except (ImportError, OSError, ValueError):
        pass
    avail = _meminfo("MemAvailable")
    if avail is not None:
        known.append((avail, "the memory available on this machine"))
    cg = _cgroup_room()
    if cg is not None:
        known.append((cg, "this process's cgroup memory limit"))
    return min(known) if known else None


def _proc_int(path: str, field: int) -> int:
    with open(path, "rb") as f:
        return int(f.read(4096).split()[field])


def _meminfo(key: str) -> int | None:
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f.read(1 << 16).decode("ascii", "replace").splitlines():
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_room() -> int | None:
    try:
        with open("/proc/self/cgroup", "rb") as f:
            lines = f.read(1 << 16).decode("utf-8", "replace").splitlines()
        rel = next((ln[3:] for ln in lines if ln.startswith("0::")), None)
        if rel is None:
            return None
        base = os.path.join("/sys/fs/cgroup", rel.lstrip("/"))
        with open(os.path.join(base, "memory.max"), "rb") as f:
            limit = f.read(64).strip()
        if limit == b"max":
            return None
        with open(os.path.join(base, "memory.current"), "rb") as f:
            return max(int(limit) - int(f.read(64).strip()), 0)
    except (OSError, ValueError):
        return None


def expansion_bound(compressed: int, limit: int, held: bool = True, what: str = "file") -> tuple[int, str]:
    """(the most bytes ``compressed`` bytes may decompress to, what sets that bound): the reader's ``limit``; past
    :data:`RATIO_FLOOR`, :data:`MAX_RATIO` × ``compressed``; and when the content is ``held`` in memory, a
    :data:`MEMORY_SHARE`-th of :func:`memory_room`. (A zip member declares its sizes: this is its bound.)"""
    meter = Meter(None, compressed, limit, held=held, what=what)
    return min((meter.bound, meter.why), (max(RATIO_FLOOR, MAX_RATIO * compressed), _RATIO_WHY))


_RATIO_WHY = f"{MAX_RATIO}x the compressed bytes read, past {RATIO_FLOOR >> 20} MB"


def _size(n: int) -> str:
    return f"{n >> 30} GB" if n >= 1 << 30 and not n % (1 << 30) else f"{n >> 20} MB" if n >= 1 << 20 else f"{n} bytes"


class Meter:
    """The rule, counted while decompressing: :meth:`count` after each step with the bytes decompressed so far and
    the compressed bytes consumed to give them; the first bound passed raises ``error(path, …)`` with the figures.
    The ratio is that of the bytes consumed so far, so a bomb is stopped as soon as it is past
    :data:`RATIO_FLOOR`, wherever in the file it starts."""

    def __init__(self, path, compressed: int, limit: int, *, held: bool = True, what: str = "file",
                 error=InputError):
        self.path, self.compressed, self.error = path, compressed, error
        bounds = [(limit, f"the {_size(limit)} any {what} may hold")]
        if held:
            room = memory_room()
            if room is not None:
                bounds.append((room[0] // MEMORY_SHARE,
                               f"1/{MEMORY_SHARE} of {room[1]}, {_size(room[0])} when decompression began"))
        self.bound, self.why = min(bounds)

    def count(self, out: int, consumed: int) -> None:
        if out > self.bound:
            self.refuse(out, consumed, self.why)
        if out > RATIO_FLOOR and out > MAX_RATIO * max(consumed, 1):
            self.refuse(out, consumed, _RATIO_WHY)

    def refuse(self, out: int, consumed: int, why: str):
        raise self.error(self.path, f"compressed data expands {out / max(consumed, 1):.0f}x ({out} bytes from the "
                                    f"first {consumed} of its {self.compressed} bytes): stopped there and refused as a "
                                    f"possible gzip bomb (limit: {why}; decompress it yourself if it is genuine)")


def gunzip(data: bytes, path, limit: int, what: str, error=InputError) -> bytes:
    """The content of a gzip-compressed file held in memory — every gzip member in turn, zero padding after a
    member skipped (as ``gzip -d`` does) — decompressed under the rule (:class:`Meter`, counted over all the
    members; ``limit``: the most a ``what`` may hold). The compressed bytes are fed a step at a time, so nothing
    is copied whole. Damaged, truncated or trailing data is ``error(path, …)``."""
    meter = Meter(path, len(data), limit, what=what, error=error)
    view, n = memoryview(data), len(data)
    parts, total = [], 0
    # pos: bytes fed; tail: fed, not yet consumed; feed: the next step's size — small at a member's start and
    # doubling (what follows a member's end is copied once: small members cost little, large ones their own size)
    tail: bytes | memoryview
    d, pos, tail, feed = zlib.decompressobj(16 + zlib.MAX_WBITS), 0, b"", _FIRST_FEED
    try:
        while True:
            if not tail:
                if pos >= n:
                    break
                tail, pos = view[pos:pos + feed], min(pos + feed, n)
                feed = min(feed * 2, _STEP)
            chunk = d.decompress(tail, min(_STEP, meter.bound + 1 - total))
            tail = d.unconsumed_tail
            total += len(chunk)
            end = pos - len(tail) - len(d.unused_data)  # the compressed bytes consumed
            meter.count(total, end)
            if chunk:
                parts.append(chunk)
            if d.eof:  # the end of a member: another may follow
                nxt = _past_zeros(view, end)
                if nxt >= n:
                    break
                if bytes(view[nxt:nxt + 2]) != b"\x1f\x8b":
                    raise error(path, "bytes after the end of the gzip data", offset=nxt)
                d, pos, tail, feed = zlib.decompressobj(16 + zlib.MAX_WBITS), nxt, b"", _FIRST_FEED
    except zlib.error as e:
        raise error(path, f"damaged gzip data ({e})") from None
    if not d.eof:
        raise error(path, "the gzip data ends early (truncated)", offset=n)
    return parts[0] if len(parts) == 1 else b"".join(parts)


_FIRST_FEED = 1 << 10


def _past_zeros(view, at: int) -> int:
    """The offset of the first byte at or after ``at`` that is not zero (``len(view)`` when there is none)."""
    while at < len(view):
        step = bytes(view[at:at + (1 << 16)])
        rest = step.lstrip(b"\x00")
        if rest:
            return at + len(step) - len(rest)
        at += len(step)
    return at


_COMPRESSED = (  # the first bytes of compressed content, and its format (what Polars decompresses on its own among them)
    (b"\x1f\x8b", "gzip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"\x78\x01", "zlib"), (b"\x78\x5e", "zlib"), (b"\x78\x9c", "zlib"), (b"\x78\xda", "zlib"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x04\x22\x4d\x18", "lz4"), (b"\x02\x21\x4c\x18", "lz4"),
)


def compression(head: bytes) -> str | None:
    """The compression format content starting with ``head`` is in (``gzip``, ``zstd``, ``zlib``, ``bzip2``, ``xz``,
    ``lz4``: by its magic bytes — a zstd skippable frame too), None for content that is none of them."""
    for magic, fmt in _COMPRESSED:
        if head.startswith(magic):
            return fmt
    if len(head) >= 4 and head[0] & 0xF0 == 0x50 and head[1:4] == b"\x2a\x4d\x18":
        return "zstd"
    return None


def plain(data: bytes, path, limit: int, what: str, error=InputError) -> bytes:
    """A file's bytes as a parser may be given them: gzip content decompressed under the rule (:func:`gunzip`),
    uncompressed content as it is; any other compression — or compressed content inside the gzip data — refused in
    one line naming it, before a library that would decompress it unbounded (Polars: zlib, zstd, lz4) sees a byte."""
    fmt = compression(data[:8])
    if fmt is None:
        return data
    if fmt != "gzip":
        raise error(path, f"holds {fmt}-compressed data: edgeprof decompresses gzip only (decompress it first, or gzip it): "
                          "refused")
    out = gunzip(data, path, limit, what, error)
    inner = compression(out[:8])
    if inner is not None:
        raise error(path, f"the gzip data holds {inner}-compressed data (compressed twice): refused — decompress it "
                          "first")
    return out


def gunzip_head(head: bytes, n: int) -> bytes:
    """Up to ``n`` bytes of the content that the first bytes of a gzip file give (b"" when they are not gzip data)."""
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, n)
    except zlib.error:
        return b""


class GzipStream(io.RawIOBase):
    """A gzip file read as a stream (every gzip member in turn) under the same rule as :func:`gunzip`, except that
    the content is not held, so the memory left is no bound (``limit`` and the ratio are). ``raw``: the open file;
    ``compressed``: its size. Errors are ``error(path, …)``; ``seek(0)`` starts again from the first byte."""

    def __init__(self, raw, path, compressed: int, limit: int, what: str = "file", error=InputError):
        import gzip

        super().__init__()
        self._raw = raw
        self._meter = Meter(path, compressed, limit, held=False, what=what, error=error)
        self._gz = gzip.GzipFile(fileobj=raw, mode="rb")
        self.total = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        if (offset, whence) != (0, 0):
            raise io.UnsupportedOperation("only seek(0)")
        self._gz.seek(0)
        self.total = 0
        return 0

    def read(self, n: int = -1) -> bytes:
        if n == 0:
            return b""
        room = self._meter.bound + 1 - self.total
        out = self._gz.read(room if n is None or n < 0 else max(min(n, room), 1))
        self.total += len(out)
        self._meter.count(self.total, self._raw.tell())
        return out

    def readinto(self, b) -> int:
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)

    def close(self) -> None:
        try:
            self._gz.close()
        finally:
            super().close()
