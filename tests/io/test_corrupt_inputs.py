"""Bad input: a typed error naming the file (and byte offset where it applies), never a crash."""

from __future__ import annotations

import struct
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edgeprof.errors import CorruptETDumpError, InputError, NotAnETDumpError
from edgeprof.io.etdump_read import read_etdump

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 64


def write(tmp_path, data: bytes, name="bad.etdp"):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def refix_prefix(data: bytes) -> bytes:
    """Make the size prefix agree with the (mutated) length, so the damage is found deeper inside."""
    return struct.pack("<I", max(len(data) - 4, 0)) + data[4:]


@pytest.mark.parametrize("data,cls,text", [
    (b"", NotAnETDumpError, "empty file"),
    (b"ED00", NotAnETDumpError, "too short"),
    (PNG, NotAnETDumpError, "PNG"),
    (b"PK\x03\x04" + b"\0" * 40, NotAnETDumpError, "zip"),
    (b'{"not": "an etdump"}' + b" " * 20, NotAnETDumpError, "JSON"),
    (b"\x10\0\0\0\x0c\0\0\0XX00" + b"\0" * 40, NotAnETDumpError, "not an ETDump"),
    (b"\0\0\0\0ET12" + b"\0" * 40, NotAnETDumpError, "ExecuTorch program"),
])
def test_not_an_etdump(tmp_path, data, cls, text):
    p = write(tmp_path, data)
    with pytest.raises(cls, match=text) as e:
        read_etdump(p)
    assert str(p) in str(e.value)


def test_a_real_zip_and_a_real_etrecord_are_refused(tmp_path, etrecord):
    with pytest.raises(NotAnETDumpError, match="zip"):
        read_etdump(etrecord("toycnn_xnn"))
    z = tmp_path / "x.etdp"
    with zipfile.ZipFile(z, "w") as f:
        f.writestr("a.txt", "hello")
    with pytest.raises(NotAnETDumpError):
        read_etdump(z)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_etdump(tmp_path / "nope.etdp")
    with pytest.raises(InputError, match="is a folder, expected a file"):
        read_etdump(tmp_path)


def test_every_truncation_of_a_real_file_is_a_typed_error(tmp_path, etdump):
    data = etdump("toycnn_xnn.N20").read_bytes()
    whole = read_etdump(etdump("toycnn_xnn.N20")).n_events
    offsets = sorted(set(range(0, len(data), 37)) | {0, 4, 8, 11, 12, 13, 16, 20, 24, len(data) - 1})
    for cut in offsets:
        p = write(tmp_path, data[:cut])
        # shorter than size prefix + root offset + identifier: not an ETDump at all; longer: the size prefix says
        # more bytes than the file has — a truncated ETDump, found at byte 0 where the prefix is
        expected = NotAnETDumpError if cut < 12 else CorruptETDumpError
        with pytest.raises(expected) as e:
            read_etdump(p)
        assert type(e.value) is expected and str(p) in str(e.value), cut
        if cut >= 12:
            assert e.value.offset == 0 and "truncated" in str(e.value), cut
            # with the size prefix repaired, the bounds checks must find the damage inside (at a byte offset within
            # the file); only the last byte (alignment padding) can go unnoticed, and then nothing is lost
            p.write_bytes(refix_prefix(data[:cut]))
            if cut == len(data) - 1:
                assert read_etdump(p).n_events == whole
                continue
            with pytest.raises(CorruptETDumpError) as err:
                read_etdump(p)
            assert err.value.offset is not None and 0 <= err.value.offset <= cut + 4, cut
            assert "byte offset" in str(err.value)


def test_wrong_identifier(tmp_path, etdump):
    data = bytearray(etdump("toycnn_xnn.N20").read_bytes())
    data[8:12] = b"XX00"
    with pytest.raises(NotAnETDumpError, match="ED00"):
        read_etdump(write(tmp_path, bytes(data)))


def test_size_prefix_larger_than_the_file(tmp_path, etdump):
    data = bytearray(etdump("toycnn_xnn.N20").read_bytes())
    data[0:4] = struct.pack("<I", len(data) * 2)
    with pytest.raises(CorruptETDumpError, match="truncated") as e:
        read_etdump(write(tmp_path, bytes(data)))
    assert e.value.offset == 0


@pytest.mark.parametrize("part", range(4))
def test_flipped_bytes_in_every_region_never_crash(tmp_path, etdump, part):
    """Every 53rd byte from offset 12 (in four interleaved parts, so that they run in parallel)."""
    data = etdump("toycnn_portable.N20").read_bytes()
    outcomes = {"ok": 0, "error": 0}
    for pos in range(12 + 53 * part, len(data), 53 * 4):
        for val in (0x00, 0xFF, data[pos] ^ 0x80):
            mutated = bytearray(data)
            mutated[pos] = val
            try:
                read_etdump(write(tmp_path, bytes(mutated)))
                outcomes["ok"] += 1
            except InputError:
                outcomes["error"] += 1
    # both outcomes happen: payload bytes (times, names) can change freely, structure bytes cannot
    assert outcomes["ok"] > 0 and outcomes["error"] > 0


def test_overlapping_vectors_are_refused(tmp_path):
    from etdump_builder import PE, Run, build

    data = bytearray(build([Run("Execute", [PE("Method::execute", 0, 5, -1)])]))
    # find the event vector length (1) right before the event offsets and blow it up
    i = bytes(data).rfind(struct.pack("<I", 1))
    assert i > 0
    data[i:i + 4] = struct.pack("<I", 10**8)
    with pytest.raises(CorruptETDumpError):
        read_etdump(write(tmp_path, bytes(data)))


MUTATIONS = st.lists(
    st.tuples(st.sampled_from(["flip", "set32", "truncate", "insert", "delete"]),
              st.integers(min_value=0, max_value=2**31 - 1), st.integers(min_value=0, max_value=2**32 - 1)),
    min_size=1, max_size=6)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["toycnn_xnn.N20", "toycnn_portable.N3.debug", "toycnn_xnnq8.N20"]),
       mutations=MUTATIONS, repair_prefix=st.booleans())
def test_fuzz_mutated_real_etdumps(tmp_path, etdump, name, mutations, repair_prefix):
    data = bytearray(etdump(name).read_bytes())
    for kind, pos, value in mutations:
        if not data:
            break
        pos %= len(data)
        if kind == "flip":
            data[pos] ^= 1 << (value % 8)
        elif kind == "set32":
            data[pos:pos + 4] = struct.pack("<I", value)[: max(0, len(data) - pos)]
        elif kind == "truncate":
            del data[pos:]
        elif kind == "insert":
            data[pos:pos] = struct.pack("<I", value)
        else:
            del data[pos:pos + 1 + value % 16]
    if repair_prefix and len(data) >= 4:
        data = bytearray(refix_prefix(bytes(data)))
    p = write(tmp_path, bytes(data), "fuzz.etdp")
    try:
        prof = read_etdump(p)
    except InputError as e:
        assert str(p) in str(e)
        return
    # whatever decoded is internally consistent
    assert prof.events.height == int(prof.runs["n_events"].sum())
