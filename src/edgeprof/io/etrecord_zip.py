"""An ETRecord's container, read within bounds: its zip directory is checked before :mod:`zipfile` parses it
(:func:`check_directory`), and each member is read under the size limit and the one decompression rule
(:func:`read_member`). :mod:`edgeprof.io.etrecord` reads what the members say."""

from __future__ import annotations

import os
import zipfile
import zlib

from ..errors import ETRecordError
from . import sniff

MAX_MEMBERS = 10_000
MAX_RATIO = sniff.MAX_RATIO  # uncompressed / compressed above this (for members > 1 MB) is treated as a zip bomb
MAX_DIRECTORY_BYTES = 4 << 20  # a zip's central directory: MAX_MEMBERS entries with names of ~400 bytes each
_EOCD, _EOCD64, _LOCATOR64, _ENTRY = b"PK\x05\x06", b"PK\x06\x06", b"PK\x06\x07", b"PK\x01\x02"


def check_directory(f, path) -> None:
    """Refuse a zip whose central directory is too large to be an ETRecord's — more than :data:`MAX_MEMBERS` entries
    declared or present, or more than :data:`MAX_DIRECTORY_BYTES` — before :mod:`zipfile` parses it (it builds an
    object per entry, reading the whole directory whatever count the end record declares). The end record is found
    as :mod:`zipfile` finds it; what is not a zip is left to it to refuse."""
    import struct

    size = os.fstat(f.fileno()).st_size
    f.seek(max(size - (22 + 0xFFFF + 20 + 56), 0))
    tail = f.read()
    base = size - len(tail)
    at = len(tail) - 22 if tail[-22:-18] == _EOCD and tail[-2:] == b"\0\0" else tail.rfind(_EOCD)
    if at < 0 or len(tail) - at < 22:
        return
    count, cd_size = struct.unpack("<HI", tail[at + 10:at + 16])  # entries in all, the directory's size
    end = base + at  # the central directory ends where the end record (or the zip64 one) begins
    if at >= 20 + 56 and tail[at - 20:at - 16] == _LOCATOR64 and tail[at - 76:at - 72] == _EOCD64:
        count, cd_size = struct.unpack("<QQ", tail[at - 76 + 32:at - 76 + 48])
        end = base + at - 76
    if count > MAX_MEMBERS:
        raise ETRecordError(path, f"{count} zip members: refused (its zip directory declares them; an ETRecord has at "
                                  f"most {MAX_MEMBERS})")
    if cd_size > MAX_DIRECTORY_BYTES:
        raise ETRecordError(path, f"a zip directory of {cd_size} bytes: refused (an ETRecord's is at most "
                                  f"{MAX_DIRECTORY_BYTES >> 20} MB)")
    start = end - cd_size
    if start < 0:
        return
    f.seek(start)
    directory = f.read(cd_size)
    n, i = 0, 0
    while i + 46 <= len(directory) and directory[i:i + 4] == _ENTRY:  # count what is there, whatever is declared
        n += 1
        if n > MAX_MEMBERS:
            raise ETRecordError(path, f"more than {MAX_MEMBERS} zip members: refused (counted in its zip directory, "
                                      f"before it is read)")
        name, extra, comment = struct.unpack("<HHH", directory[i + 28:i + 34])
        i += 46 + name + extra + comment
    f.seek(0)


def read_member(z: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, path) -> bytes:
    """The bytes of one member, at most ``limit``: encrypted members, declared sizes over the limit or the one
    decompression bound (:func:`edgeprof.io.sniff.expansion_bound`), and what expands past the limit are refused."""
    if info.flag_bits & 0x1:
        raise ETRecordError(path, f"member {info.filename!r} is encrypted")
    if info.file_size > limit:
        raise ETRecordError(path, f"member {info.filename!r} declares {info.file_size} bytes (limit {limit}): refused")
    if info.file_size > 1024**2 and info.compress_size and info.file_size / info.compress_size > MAX_RATIO:
        raise ETRecordError(path, f"member {info.filename!r} expands {info.file_size // info.compress_size}x: "
                                  "refused as a possible zip bomb")
    # the same bound as every compressed input (the memory left too), on the size the member declares
    bound, why = sniff.expansion_bound(info.compress_size, limit, what=f"member {info.filename!r}")
    if info.file_size > bound:
        raise ETRecordError(path, f"member {info.filename!r} declares {info.file_size} bytes from {info.compress_size} "
                                  f"compressed: refused (limit: {why})")
    try:
        with z.open(info) as f:
            data = f.read(limit + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError, ValueError) as e:
        raise ETRecordError(path, f"member {info.filename!r} cannot be read ({type(e).__name__}: {e}): "
                                  "corrupt ETRecord") from None
    if len(data) > limit:
        raise ETRecordError(path, f"member {info.filename!r} expands beyond {limit} bytes: refused")
    return data
