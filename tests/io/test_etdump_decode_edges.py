"""Edges of the ETDump envelope and of its RunData/Event tables: reading the file (size prefix, trailing bytes, gzip,
mmap), tables shared between RunData blocks or between ranges of them, and the sentinels of absent debug values.

Files are built with the reference FlatBuffers runtime (pip ``flatbuffers``); where the test needs a byte position
it is found with ``struct`` from the FlatBuffers layout (root uoffset, soffset to the vtable, uint16 field offsets),
independently of edgeprof's reader."""

from __future__ import annotations

import gzip
import mmap
import struct
import types

import flatbuffers
import numpy as np
import pytest
from etdump_builder import PE, Run, build

from edgeprof.errors import CorruptETDumpError, NotAnETDumpError
from edgeprof.io import etdump_decode
from edgeprof.io.etdump_decode import (
    RunDataIndex,
    _decode_values,
    decode,
    open_buffer,
    read_bytes,
)
from edgeprof.io.flatbuf import FlatBuffer

# ---- a hand-driven builder: tables shared on purpose, fields in a chosen order -------------------------------

def _vec(b, offsets):
    b.StartVector(4, len(offsets), 4)
    for o in reversed(offsets):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def _profile_event(b, start, end):
    b.StartObject(8)
    b.PrependUint64Slot(6, start, 0)
    b.PrependUint64Slot(7, end, 0)
    return b.EndObject()


def _alloc_event(b, allocator, size):
    b.StartObject(2)
    b.PrependInt32Slot(0, allocator, 0)
    b.PrependUint64Slot(1, size, 0)
    return b.EndObject()


def _event(b, slot, payload):
    b.StartObject(3)
    if payload is not None:
        b.PrependUOffsetTRelativeSlot(slot, payload, 0)
    return b.EndObject()


def _run(b, events_vec, name="Execute", events_last=False):
    """A RunData table; ``events_last``: the events field is prepended first, so it is the table's last 4 bytes."""
    s = b.CreateString(name)
    b.StartObject(4)
    if events_last:
        b.PrependUOffsetTRelativeSlot(3, events_vec, 0)
        b.PrependUOffsetTRelativeSlot(0, s, 0)
    else:
        b.PrependUOffsetTRelativeSlot(0, s, 0)
        b.PrependUOffsetTRelativeSlot(3, events_vec, 0)
    return b.EndObject()


def _finish(b, runs) -> bytes:
    rv = _vec(b, runs)
    b.StartObject(2)
    b.PrependUOffsetTRelativeSlot(1, rv, 0)
    root = b.EndObject()
    b.Finish(root, file_identifier=b"ED00")  # a plain buffer: offsets in errors are buffer offsets
    return bytes(b.Output())


# ---- an independent reader of the few positions the tests need --------------------------------------------

def _u32(buf, p):
    return struct.unpack_from("<I", buf, p)[0]


def _field(buf, table, k):
    """Absolute position of field ``k`` of the table at ``table`` (None if absent)."""
    vt = table - struct.unpack_from("<i", buf, table)[0]
    vtsize = struct.unpack_from("<H", buf, vt)[0]
    if 4 + 2 * k + 2 > vtsize:
        return None
    off = struct.unpack_from("<H", buf, vt + 4 + 2 * k)[0]
    return table + off if off else None


def _run_tables(buf):
    root = _u32(buf, 0)
    f = _field(buf, root, 1)
    vec = f + _u32(buf, f)
    n = _u32(buf, vec)
    return [vec + 4 + 4 * i + _u32(buf, vec + 4 + 4 * i) for i in range(n)]


def _write(tmp_path, data, name="x.etdp"):
    p = tmp_path / name
    p.write_bytes(data)
    return p


# ---- read_bytes: what is read from the file -----------------------------------------------------------------

def test_a_file_is_read_as_bytes_unless_a_mapping_is_asked_for(tmp_path):
    data = build([Run("Execute", [PE("Method::execute", 0, 10)])])
    p = _write(tmp_path, data)
    got = read_bytes(p)
    assert type(got) is bytes and got == data
    m = read_bytes(p, mapped=True)
    try:
        assert isinstance(m, mmap.mmap) and m[:] == data
    finally:
        m.close()


def test_a_mapping_needs_at_least_the_twelve_bytes_of_a_header(tmp_path):
    twelve = struct.pack("<I", 8) + bytes(4) + b"ED00"  # size prefix 8: ends exactly at byte 12
    m = read_bytes(_write(tmp_path, twelve, "a"), mapped=True)
    try:
        assert isinstance(m, mmap.mmap) and m[:] == twelve
    finally:
        m.close()
    eleven = bytes(11)
    got = read_bytes(_write(tmp_path, eleven, "b"), mapped=True)
    assert type(got) is bytes and got == eleven


def test_a_size_prefixed_file_ending_where_its_prefix_says_is_read_whole(tmp_path):
    data = build([Run("Execute", [PE("x", 1, 2)])])
    assert _u32(data, 0) == len(data) - 4
    assert read_bytes(_write(tmp_path, data)) == data


@pytest.mark.parametrize("extra", [b"\x00", b"\x00" * 8, b"more data"])
def test_bytes_after_the_size_prefixed_end_are_an_error_at_that_offset(tmp_path, extra):
    data = build([Run("Execute", [PE("x", 1, 2)])])
    assert data[4] != 0  # the root offset follows the prefix: a 5-byte prefix would read it
    with pytest.raises(CorruptETDumpError, match=rf"{len(extra)} byte\(s\) after the end of the ETDump .*"
                                                  rf"ends at byte {len(data)}\): trailing data") as e:
        read_bytes(_write(tmp_path, data + extra))
    assert e.value.offset == len(data)


def test_a_plain_buffer_is_not_checked_for_trailing_bytes(tmp_path):
    data = build([Run("Execute", [PE("x", 1, 2)])], size_prefixed=False)
    assert data[4:8] == b"ED00"
    assert read_bytes(_write(tmp_path, data + b"\x00" * 4)) == data + b"\x00" * 4


def test_a_file_of_exactly_4_gib_is_not_refused_for_its_size(tmp_path):
    p = tmp_path / "big.etdp"
    with open(p, "wb") as f:  # sparse: its header says 8 bytes, so the rest is trailing data found from the head
        f.write(struct.pack("<I", 8) + bytes(4) + b"ED00")
        f.truncate(4 * 1024**3)
    with pytest.raises(CorruptETDumpError, match="trailing data") as e:
        read_bytes(p)
    assert "larger than any ETDump" not in str(e.value) and e.value.offset == 12


def test_a_gzip_compressed_file_is_decompressed(tmp_path):
    data = build([Run("Execute", [PE("x", 1, 2)])])
    assert read_bytes(_write(tmp_path, gzip.compress(data, mtime=0))) == data


def _measured_as(monkeypatch, size):
    """The file measured at ``size`` bytes when opened (bytes written after that are not the file read)."""
    real = etdump_decode.os
    monkeypatch.setattr(etdump_decode, "os", types.SimpleNamespace(fstat=lambda fd: types.SimpleNamespace(
        st_size=size, st_mode=real.fstat(fd).st_mode)))


def test_bytes_appended_after_the_file_was_measured_are_not_read(tmp_path, monkeypatch):
    content = bytes(range(40))  # no identifier: read as it is
    p = _write(tmp_path, content)
    _measured_as(monkeypatch, 30)
    assert read_bytes(p) == content[:30]


def test_bytes_appended_to_a_gzip_file_after_it_was_measured_are_not_read(tmp_path, monkeypatch):
    data = build([Run("Execute", [PE("x", 1, 2)])])
    gz = gzip.compress(data, mtime=0)
    p = _write(tmp_path, gz + b"appended")
    _measured_as(monkeypatch, len(gz))
    assert read_bytes(p) == data


# ---- open_buffer ----------------------------------------------------------------------------------------------

def test_a_text_file_is_recognised_from_its_first_64_bytes_only():
    data = b"abc" + b" " * 61 + b"\x00"  # 64 bytes of text, then a NUL that is not looked at
    with pytest.raises(NotAnETDumpError, match="a text file, not an ETDump"):
        open_buffer(data, "f")


# ---- RunData tables: shared event vectors ---------------------------------------------------------------------

def test_two_rundata_sharing_one_event_vector_are_refused_at_the_second_reference():
    b = flatbuffers.Builder(256)
    ev = _vec(b, [_event(b, 0, _profile_event(b, 1, 2))])
    data = _finish(b, [_run(b, ev), _run(b, ev)])
    second = _run_tables(data)[1]
    with pytest.raises(CorruptETDumpError, match=r"ETDump\.run_data \(their event vectors\) lists the table") as e:
        RunDataIndex(data, "f")
    assert e.value.offset == _field(data, second, 3)


def test_two_rundata_sharing_one_empty_event_vector_are_read():
    b = flatbuffers.Builder(256)
    ev = _vec(b, [])
    data = _finish(b, [_run(b, ev, "Default"), _run(b, ev)])
    out = decode(data, "f")
    assert out["n_runs"] == 2 and out["run_names"] == ["Default", "Execute"] and out["pe_seq"].size == 0


def test_several_rundata_without_events_are_read():
    data = build([Run("Default", []), Run("Execute", []), Run("Execute", [PE("x", 1, 2)])])
    out = decode(data, "f")
    assert out["n_runs"] == 3 and out["pe_run"].tolist() == [2]


def test_a_rundata_whose_events_are_its_last_four_bytes_is_read():
    b = flatbuffers.Builder(256)
    ev = _vec(b, [_event(b, 0, _profile_event(b, 5, 9))])
    data = _finish(b, [_run(b, ev, events_last=True)])
    run = _run_tables(data)[0]
    vt = run - struct.unpack_from("<i", data, run)[0]
    tsize = struct.unpack_from("<H", data, vt + 2)[0]
    assert _field(data, run, 3) + 4 == run + tsize  # the field ends where the table does
    out = decode(data, "f")
    assert out["pe_start"].tolist() == [5] and out["pe_end"].tolist() == [9]


def test_an_events_vector_longer_than_the_file_is_reported_with_its_byte_size():
    data = bytearray(build([Run("Execute", [PE("x", 1, 2)])], size_prefixed=False))
    run = _run_tables(data)[0]
    f = _field(data, run, 3)
    vec = f + _u32(data, f)
    struct.pack_into("<I", data, vec, 1000)  # 1000 events of 4 bytes each claimed
    with pytest.raises(CorruptETDumpError, match=r"RunData.events vector .*\(4000 bytes\)") as e:
        RunDataIndex(bytes(data), "f")
    assert e.value.offset == vec


# ---- ranges of RunData decoded apart ---------------------------------------------------------------------------

def test_a_range_of_rundata_decodes_as_a_file_of_only_those_blocks():
    data = build([Run("Default", [PE("Method::init", 1, 2)]), Run("Execute", [PE("a", 3, 4), PE("b", 5, 6)]),
                  Run("Execute", [PE("c", 7, 8)])])
    idx = RunDataIndex(data, "f")
    out = idx.decode(1, 2)
    assert out["n_runs"] == 1 and out["run_names"] == ["Execute"]
    assert out["pe_run"].tolist() == [0, 0] and out["pe_start"].tolist() == [3, 5]
    out = idx.decode(2, 3)
    assert out["n_runs"] == 1 and out["pe_start"].tolist() == [7]


def _two_runs_sharing(share: str) -> bytes:
    """Two RunData with distinct event vectors of one Event each, sharing the Event table (``share="event"``) or
    only its payload (``"profile"``, ``"allocation"``)."""
    b = flatbuffers.Builder(256)
    if share == "event":
        e = _event(b, 0, _profile_event(b, 1, 2))
        e0 = e1 = e
    elif share == "profile":
        p = _profile_event(b, 1, 2)
        e0, e1 = _event(b, 0, p), _event(b, 0, p)
    else:
        a = _alloc_event(b, 0, 64)
        e0, e1 = _event(b, 1, a), _event(b, 1, a)
    v0 = _vec(b, [e0])
    v1 = _vec(b, [e1])
    return _finish(b, [_run(b, v0), _run(b, v1)])


@pytest.mark.parametrize("share,what", [("event", "RunData.events"), ("profile", "Event payloads"),
                                        ("allocation", "Event payloads")])
def test_a_table_shared_between_ranges_is_refused(share, what):
    data = _two_runs_sharing(share)
    idx = RunDataIndex(data, "f")
    for a in (0, 1):  # each range alone is a valid file
        idx.decode(a, a + 1)
    with pytest.raises(CorruptETDumpError, match=f"{what} lists the table at byte"):
        idx.check_unshared([(0, 1), (1, 2)])
    idx.check_unshared([(0, 1)])
    idx.check_unshared([])


def test_ranges_with_distinct_tables_pass_the_check():
    data = build([Run("Execute", [PE("a", 1, 2), PE("b", 3, 4)]), Run("Execute", [PE("c", 5, 6)])])
    RunDataIndex(data, "f").check_unshared([(0, 1), (1, 2)])


# ---- debug values: sentinels for what is absent -------------------------------------------------------------

def test_absent_debug_entries_get_the_sentinel_values():
    fb = FlatBuffer(bytes(16), "f")
    cols = _decode_values(fb, np.array([-1, -1], dtype=np.int64))
    assert cols["value_type"].tolist() == [-1, -1]
    assert cols["bool_value"].tolist() == [-1, -1]
    assert cols["is_output"].tolist() == [False, False]
    assert np.isnan(cols["int_value"]).all() and np.isnan(cols["float_value"]).all()
    assert cols["tensors"] == [[], []]


@pytest.mark.parametrize("n,kept", [(99_999, True), (100_000, False)])
def test_tensor_metadata_is_kept_as_lists_below_100000_debug_events(n, kept):
    cols = _decode_values(FlatBuffer(bytes(16), "f"), np.full(n, -1, dtype=np.int64))
    assert (cols["tensors"] is not None) == kept
    if kept:
        assert len(cols["tensors"]) == n
