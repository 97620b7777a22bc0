"""An ETRecord's zip container at its boundaries: a member read under its size limit and the expansion bound, and
the zip directory checked before :mod:`zipfile` parses it (declared and counted members, directory bytes)."""

from __future__ import annotations

import io
import struct
import zipfile

import pytest

from edgeprof.errors import ETRecordError
from edgeprof.io import etrecord as er
from edgeprof.io import etrecord_zip

MB = 1024**2


class _Zip:
    """Stands in for a ZipFile: a member opens as these bytes."""

    def __init__(self, data: bytes):
        self.data = data

    def open(self, info):
        return io.BytesIO(self.data)


def _info(size: int, compressed: int, flags: int = 0) -> zipfile.ZipInfo:
    i = zipfile.ZipInfo("debug_handle_map")
    i.file_size, i.compress_size, i.flag_bits = size, compressed, flags
    return i


def test_member_size_limit_of_the_maps_and_the_graph():
    assert er.MAX_MAP_BYTES == 64 * MB and er.MAX_GRAPH_BYTES == 512 * MB and er.MAX_MEMBERS == 10_000
    with pytest.raises(ETRecordError, match=f"declares {64 * MB + 1} bytes \\(limit {64 * MB}\\)"):
        etrecord_zip.read_member(_Zip(b""), _info(64 * MB + 1, 64 * MB), er.MAX_MAP_BYTES, "r")
    assert etrecord_zip.read_member(_Zip(b"{}"), _info(2, 2), 2, "r") == b"{}"      # exactly the limit
    with pytest.raises(ETRecordError, match="declares 3 bytes"):
        etrecord_zip.read_member(_Zip(b"{} "), _info(3, 3), 2, "r")
    with pytest.raises(ETRecordError, match="expands beyond 2 bytes"):    # a header that understates the size
        etrecord_zip.read_member(_Zip(b"{}  "), _info(2, 2), 2, "r")
    with pytest.raises(ETRecordError, match="encrypted"):
        etrecord_zip.read_member(_Zip(b"{}"), _info(2, 2, flags=1), 2, "r")


def test_expansion_ratio_boundary():
    body = b"x" * (200 * 5243)                         # 1,048,600 bytes: just over 1 MiB
    assert etrecord_zip.read_member(_Zip(body), _info(len(body), 5243), 2 * MB, "r") == body   # exactly 200×
    with pytest.raises(ETRecordError, match="expands 200x: refused as a possible zip bomb"):
        etrecord_zip.read_member(_Zip(body), _info(len(body), 5242), 2 * MB, "r")              # just over 200×
    small = b"x" * MB                                  # 1 MiB exactly: not checked for expansion
    assert etrecord_zip.read_member(_Zip(small), _info(MB, 1), 2 * MB, "r") == small


# ---- the zip directory, bounded before zipfile parses it (etrecord_zip.check_directory) ---------------------------

def _zip_bytes(entries: int, declared: int | None = None, name_len: int = 1, zip64: bool = False) -> bytes:
    """A zip of ``entries`` empty stored members named by ``name_len`` characters, built here byte by byte (local
    headers, central directory, end record; with ``zip64`` a zip64 end record and locator before it), its end
    record declaring ``declared`` entries (default: all)."""
    locals_, centrals, off = [], [], 0
    for i in range(entries):
        name = (b"%0*d" % (name_len, i))[-name_len:]
        locals_.append(b"PK\x03\x04" + struct.pack("<HHHHHIIIHH", 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0) + name)
        centrals.append(b"PK\x01\x02" + struct.pack("<HHHHHHIIIHHHHHII", 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0,
                                                    0, 0, 0, 0, off) + name)
        off += len(locals_[-1])
    local, central = b"".join(locals_), b"".join(centrals)
    n = entries if declared is None else declared
    tail = b""
    if zip64:
        at = len(local) + len(central)
        tail = b"PK\x06\x06" + struct.pack("<QHHIIQQQQ", 44, 45, 45, 0, 0, n, n, len(central), len(local))
        tail += b"PK\x06\x07" + struct.pack("<IQI", 0, at, 1)
        return local + central + tail + b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                                                                    0xFFFFFFFF, 0)
    return local + central + b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, n, n, len(central), len(local), 0)


def _check(tmp_path, data: bytes):
    p = tmp_path / "z.etrecord"
    p.write_bytes(data)
    with open(p, "rb") as f:
        etrecord_zip.check_directory(f, p)
        assert f.tell() == 0  # left at the start for zipfile
    with zipfile.ZipFile(p) as z:  # what passes is a zip zipfile reads, entry for entry
        return len(z.infolist())


@pytest.mark.parametrize("zip64", [False, True])
def test_declared_member_count_boundary(tmp_path, zip64):
    assert etrecord_zip.MAX_MEMBERS == 10_000
    assert _check(tmp_path, _zip_bytes(3, declared=10_000, zip64=zip64)) == 3      # exactly the limit: left to zipfile
    with pytest.raises(ETRecordError, match="10001 zip members: refused"):
        _check(tmp_path, _zip_bytes(3, declared=10_001, zip64=zip64))


@pytest.mark.parametrize("zip64", [False, True])
def test_counted_member_count_boundary(tmp_path, zip64):
    p = tmp_path / "c.etrecord"
    p.write_bytes(_zip_bytes(10_000, declared=1, zip64=zip64))
    with open(p, "rb") as f:
        etrecord_zip.check_directory(f, p)             # 10,000 present, 1 declared: passes the count
    with pytest.raises(ETRecordError, match="more than 10000 zip members: refused \\(counted"):
        _check(tmp_path, _zip_bytes(10_001, declared=1, zip64=zip64))


def test_directory_size_boundary(tmp_path):
    limit = etrecord_zip.MAX_DIRECTORY_BYTES
    assert limit == 4 * MB
    per = 46 + 600                                   # one central entry with a 600-byte name
    n = limit // per
    name_len = 600 + (limit - n * per) // n          # spread the rest over the names: the directory is the limit ...
    rest = limit - n * (46 + name_len)
    data = _zip_bytes(n - 1, name_len=name_len)      # ... give or take the last entry, sized to land on it exactly
    e = data.rfind(b"PK\x05\x06")
    cd = struct.unpack("<I", data[e + 12:e + 16])[0]
    assert cd == (n - 1) * (46 + name_len)
    last = 46 + name_len + rest                      # one more entry, of exactly what is left
    big = _zip_bytes(n - 1, name_len=name_len)[:e]
    name = b"y" * (last - 46)
    local_off = struct.unpack("<I", data[e + 16:e + 20])[0]
    entry = b"PK\x01\x02" + struct.pack("<HHHHHHIIIHHHHHII", 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0, 0, 0, 0, 0,
                                        0) + name
    exact = big + entry + b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, n, n, cd + len(entry), local_off, 0)
    assert cd + len(entry) == limit
    p = tmp_path / "exact.etrecord"
    p.write_bytes(exact)
    with open(p, "rb") as f:
        etrecord_zip.check_directory(f, p)           # exactly the limit: passes
    over = big + entry + b"z" + b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, n, n, cd + len(entry) + 1, local_off, 0)
    p.write_bytes(over)
    with open(p, "rb") as f, pytest.raises(ETRecordError, match=f"a zip directory of {limit + 1} bytes: refused"):
        etrecord_zip.check_directory(f, p)


def test_what_is_not_a_zip_is_left_to_zipfile(tmp_path):
    for data in (b"", b"not a zip at all", b"PK\x05\x06" + b"\0" * 10,  # no end record, or one cut short
                 b"x" * 30 + b"PK\x05\x06" + b"\0" * 10):
        p = tmp_path / "n.etrecord"
        p.write_bytes(data)
        with open(p, "rb") as f:
            etrecord_zip.check_directory(f, p)
        with pytest.raises(zipfile.BadZipFile):
            zipfile.ZipFile(p)


def _refused_or_passed(p, refusal: str | None) -> None:
    """The directory check of ``p`` refuses with ``refusal`` or, when None, passes and leaves the file at its start."""
    with open(p, "rb") as f:
        if refusal:
            with pytest.raises(ETRecordError, match=refusal):
                etrecord_zip.check_directory(f, p)
        else:
            etrecord_zip.check_directory(f, p)
            assert f.tell() == 0


@pytest.mark.parametrize("zip64", [False, True])
def test_the_end_record_is_found_behind_the_longest_comment(tmp_path, zip64):
    """A comment of 65,535 bytes (the most a zip has) after the end record: the record and, for zip64, the records
    before it are still found — the count they declare is checked."""
    for declared, refused in ((10_000, False), (10_001, True)):
        data = _zip_bytes(2, declared=declared, zip64=zip64)
        data = data[:-2] + struct.pack("<H", 0xFFFF) + b"c" * 0xFFFF
        p = tmp_path / "c.etrecord"
        p.write_bytes(data)
        _refused_or_passed(p, "10001 zip members: refused" if refused else None)


def test_a_directory_declared_before_the_file_starts_is_left_to_zipfile(tmp_path):
    data = _zip_bytes(2)
    e = data.rfind(b"PK\x05\x06")
    p = tmp_path / "d.etrecord"
    p.write_bytes(data[:e + 12] + struct.pack("<I", e + 1) + data[e + 16:])  # a directory larger than what precedes it
    with open(p, "rb") as f:
        etrecord_zip.check_directory(f, p)
    with pytest.raises(zipfile.BadZipFile):
        zipfile.ZipFile(p)


def _directory_only(entries: list[bytes], declared: int) -> bytes:
    """A central directory of these raw entries from byte 0 (no member data before it) and an end record."""
    cd = b"".join(entries)
    return cd + b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, declared, declared, len(cd), 0, 0)


def _entry(name: bytes = b"", extra: bytes = b"", comment: bytes = b"") -> bytes:
    return (b"PK\x01\x02" + struct.pack("<HHHHHHIIIHHHHHII", 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name), len(extra),
                                        len(comment), 0, 0, 0, 0) + name + extra + comment)


@pytest.mark.parametrize("n,refused", [(10_000, False), (10_001, True)])
@pytest.mark.parametrize("kind", ["empty names", "extra and comment fields"])
def test_every_entry_is_counted_whatever_its_fields(tmp_path, n, refused, kind):
    """Entries of 46 bytes exactly (no name) and entries whose length is in their extra and comment fields are each
    counted once — the directory starting at byte 0."""
    one = _entry() if kind == "empty names" else _entry(b"n", b"\x01\x00\x02\x00ab", b"cc")
    p = tmp_path / "e.etrecord"
    p.write_bytes(_directory_only([one] * n, declared=1))
    _refused_or_passed(p, "more than 10000 zip members" if refused else None)


def test_an_end_record_alone_declaring_too_many_is_refused(tmp_path):
    p = tmp_path / "e.etrecord"
    p.write_bytes(b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, 10_001, 10_001, 0, 0, 0))  # the record at byte 0
    with open(p, "rb") as f, pytest.raises(ETRecordError, match="10001 zip members: refused"):
        etrecord_zip.check_directory(f, p)


def test_an_end_record_whose_fields_spell_its_signature_is_read_where_it_starts(tmp_path):
    """The end record's entry counts are b"PK" and b"\\x05\\x06": its signature appears again inside it. Read from
    the last 22 bytes (as :mod:`zipfile` reads a zip without a comment), it declares 1,541 entries and a 5 MB
    directory — refused for the directory; the later, false signature would end the search with nothing read."""
    record = b"PK\x05\x06" + struct.pack("<HH", 0, 0) + b"PK\x05\x06" + struct.pack("<IIH", 5 * MB, 0, 0)
    assert struct.unpack("<HH", record[8:12]) == (0x4B50, 1541)
    p = tmp_path / "s.etrecord"
    p.write_bytes(b"\0" * 8 + record)  # bytes before it: a record is not read from where a slice would clamp
    with open(p, "rb") as f, pytest.raises(ETRecordError, match=f"a zip directory of {5 * MB} bytes: refused"):
        etrecord_zip.check_directory(f, p)


def test_a_comment_ending_in_two_zero_bytes_is_not_taken_for_the_end_record(tmp_path):
    """A comment of 22 bytes whose last two are zero and whose would-be count field says 10,001: the real record
    before it declares 2 entries, and that is what is checked."""
    comment = b"c" * 10 + struct.pack("<H", 10_001) + b"c" * 8 + b"\0\0"
    data = _zip_bytes(2)
    data = data[:-2] + struct.pack("<H", len(comment)) + comment
    assert _check(tmp_path, data) == 2
