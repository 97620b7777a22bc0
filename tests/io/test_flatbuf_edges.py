"""Edges of the vectorized FlatBuffer reader on hand-laid buffers (``struct.pack`` by hand, the layout of the
FlatBuffers spec): aliasing tables found in any order and named by their second reference, vectors that overlap,
strings at unaligned positions, hash collisions between strings of one length, and vtable field offsets of 1, checked
against the reference runtime (pip ``flatbuffers``)."""

from __future__ import annotations

import struct

import flatbuffers
import numpy as np
import pytest

from edgeprof.errors import CorruptETDumpError
from edgeprof.io.flatbuf import FlatBuffer


def A(xs):
    return np.asarray(xs, dtype=np.int64)


def fb(data: bytes, base: int = 0) -> FlatBuffer:
    return FlatBuffer(data, "t.etdp", base=base)


# ---- unshared: table positions that alias -------------------------------------------------------------------

@pytest.mark.parametrize("pos", [[], [5], [5, 6], [6, 5], [4, 8, 12, 16], [16, 12, 8, 4], [4, 12, 8, 16],
                                 [3, 9, 1, 7], [-1, -1], [-1, -1, 8, 4], [8, -1, 4, -1, 12]])
def test_distinct_positions_in_any_order_are_accepted(pos):
    fb(bytes(32)).unshared(A(pos), "x")


@pytest.mark.parametrize("pos,byte", [([5, 5], 5), ([0, 0], 0), ([1, 5, 5], 5), ([9, 5, 5], 5), ([5, 9, 5], 5),
                                      ([3, 9, 1, 9], 9), ([-1, 7, -1, 7], 7), ([4, 8, 12, 16, 12], 12)])
def test_a_position_listed_twice_is_refused(pos, byte):
    with pytest.raises(CorruptETDumpError, match=f"x lists the table at byte {byte} more than once") as e:
        fb(bytes(32)).unshared(A(pos), "x")
    assert e.value.offset == byte  # without origins: the shared table's own position


def test_the_error_names_where_the_second_reference_was_read():
    # sorted: 1, 3, 9 (index 1), 9 (index 3): the second 9 is the second reference
    with pytest.raises(CorruptETDumpError, match="lists the table at byte 109 more than once") as e:
        fb(bytes(32), base=100).unshared(A([3, 9, 1, 9]), "x", origin=A([10, 20, 30, 40]))
    assert e.value.offset == 140


def test_origins_of_absent_positions_are_dropped_with_them():
    with pytest.raises(CorruptETDumpError, match="lists the table at byte 8 more than once") as e:
        fb(bytes(32)).unshared(A([-1, 8, -1, 8]), "x", origin=A([100, 200, 300, 400]))
    assert e.value.offset == 400


# ---- vectors of tables that overlap --------------------------------------------------------------------------

def _vector_buffer(size: int) -> bytes:
    """A vector of 3 tables at byte 0 (slots 4, 8, 12, each pointing 8 bytes on: tables at 12, 16, 20)."""
    data = bytearray(size)
    struct.pack_into("<IIII", data, 0, 3, 8, 8, 8)
    return bytes(data)


def test_one_vector_read_twice_fitting_the_buffer_is_refused_as_aliasing():
    # 2 × 3 elements × 4 bytes = 24 bytes: exactly the buffer, so the total is not the problem; the tables alias
    with pytest.raises(CorruptETDumpError, match="v lists the table at byte 12 more than once") as e:
        fb(_vector_buffer(24)).table_vectors(A([0, 0]), "v")
    assert e.value.offset == 4  # the first slot of the second reading of the vector


def test_vectors_claiming_more_than_the_buffer_together_name_their_total_bytes():
    with pytest.raises(CorruptETDumpError, match="v vectors claim 24 bytes in a 20-byte buffer") as e:
        fb(_vector_buffer(20)).table_vectors(A([0, 0]), "v")
    assert e.value.offset == 0


# ---- strings ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("ref", [1, 5, 6, 7, 8, 9, 10])
def test_a_short_string_reads_the_same_at_any_alignment(ref):
    data = bytearray(24)
    struct.pack_into("<I3s", data, ref, 3, b"abc")
    codes, uniq, invalid = fb(bytes(data)).strings(A([ref]), "s")
    assert [uniq[c] for c in codes] == ["abc"] and invalid == 0


def test_strings_of_one_length_whose_hashes_collide_stay_distinct(monkeypatch):
    import edgeprof.io.flatbuf as m

    monkeypatch.setattr(m, "_HASH_WEIGHTS", np.zeros_like(m._HASH_WEIGHTS))  # every string hashes alike
    texts = ["ab", "zz", "ab", "qq", "zz"]
    out, refs = bytearray(), []
    for s in texts:
        refs.append(len(out))
        out += struct.pack("<I", len(s)) + s.encode() + bytes(2)
    codes, uniq, _ = fb(bytes(out) + bytes(4)).strings(A(refs), "name")
    assert [uniq[c] for c in codes] == texts and len(uniq) == 3


# ---- vtable field offsets --------------------------------------------------------------------------------------

def _tables_with_offsets(offsets, tsize=8):
    """One table per field-0 offset, each with its own vtable (6 bytes: sizes and one field) at the start; tables
    at 264, 280, … so that the soffset's second byte is 1 (264 = 0x108)."""
    n = len(offsets)
    data = bytearray(264 + 16 * n)
    pos = []
    for i, off in enumerate(offsets):
        vt = 8 * i
        struct.pack_into("<HHH", data, vt, 6, tsize, off)
        t = 264 + 16 * i
        struct.pack_into("<i", data, t, t - vt)
        struct.pack_into("<I", data, t + 4, 0xA1B2C3D4)
        pos.append(t)
    return bytes(data), pos


def _reference_u8(data, t):
    tab = flatbuffers.table.Table(bytearray(data), t)
    o = tab.Offset(4)
    return tab.Get(flatbuffers.number_types.Uint8Flags, t + o) if o else None


@pytest.mark.parametrize("offsets", [[1], [4], [1, 4], [4, 1], [1, 5, 0]])
def test_field_offsets_are_read_where_the_reference_runtime_reads_them(offsets):
    data, pos = _tables_with_offsets(offsets)
    t = fb(data).tables(A(pos), "T")
    got = t.scalar(0, np.uint8, 255).tolist()
    want = [_reference_u8(data, p) for p in pos]
    assert got == [255 if w is None else w for w in want]
    assert t.field(0, 1).tolist() == [p + o if o else -1 for p, o in zip(pos, offsets)]
    if 1 in offsets:
        assert got[offsets.index(1)] == 1  # the soffset's second byte


def test_a_field_at_offset_one_running_past_its_table_is_refused():
    data, pos = _tables_with_offsets([1], tsize=4)
    with pytest.raises(CorruptETDumpError, match="T field 0 lies past the end of its table") as e:
        fb(data).tables(A(pos), "T").field(0, 4)
    assert e.value.offset == pos[0] + 1


def test_a_field_past_the_table_of_the_second_vtable_names_that_table():
    data = bytearray(300)
    struct.pack_into("<HHH", data, 0, 6, 8, 4)    # vtable 0: field 0 at 4 of an 8-byte table
    struct.pack_into("<HHH", data, 8, 6, 8, 6)    # vtable 1: field 0 at 6: a 4-byte field would end at 10 > 8
    for t, vt in ((264, 0), (280, 8), (296 - 8, 8)):
        struct.pack_into("<i", data, t, t - vt)
    with pytest.raises(CorruptETDumpError, match="T field 0 lies past the end of its table") as e:
        fb(bytes(data)).tables(A([264, 280, 288]), "T").field(0, 4)
    assert e.value.offset == 280 + 6
