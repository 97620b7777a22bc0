"""What a file is, from its first bytes — for errors that say what was given and what to do with it — and
gzip-compressed inputs opened whole (bounded: a compressed file may not expand beyond its reader's limit)."""

from __future__ import annotations

import zlib

from ..errors import InputError

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


def gunzip(data: bytes, path, limit: int, what: str) -> bytes:
    """The content of a gzip-compressed file, refused when it would expand beyond ``limit`` bytes."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(data, limit + 1)
    except zlib.error as e:
        raise InputError(path, f"damaged gzip data ({e})") from None
    if len(out) > limit or d.unconsumed_tail:
        raise InputError(path, f"expands beyond the {limit >> 20} MB any {what} may hold")
    if not d.eof:
        raise InputError(path, "the gzip data ends early (truncated)", offset=len(data))
    if d.unused_data:
        raise InputError(path, "bytes after the end of the gzip data", offset=len(data) - len(d.unused_data))
    return out
