"""Every bounds check of the FlatBuffer reader at its boundary: a structure that ends exactly at the last byte is
read, one byte more is refused with the right byte offset; position 0 is a valid position; sizes below the
FlatBuffers minimum are refused. Buffers are written by hand with struct (the oracle is the format itself)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from edgeprof.errors import CorruptETDumpError
from edgeprof.io.flatbuf import FlatBuffer, Interner, _few_unique

A = np.array


def fb(data: bytes, base: int = 0) -> FlatBuffer:
    return FlatBuffer(data, "f.etdp", base=base)


def test_check_accepts_a_range_ending_at_the_last_byte_and_refuses_one_more():
    b = fb(bytes(16), base=4)
    b.check(A([12]), 4, "x")                 # [12, 16): the last four bytes
    b.check(A([0]), 16, "x")                 # the whole buffer from position 0
    with pytest.raises(CorruptETDumpError) as e:
        b.check(A([13]), 4, "x")
    assert e.value.offset == 13 + 4 and "20-byte file" in str(e.value)  # offsets and size include the base
    with pytest.raises(CorruptETDumpError) as e:
        b.check(A([-1]), 1, "x")
    assert e.value.offset == -1 + 4
    with pytest.raises(CorruptETDumpError) as e:  # with an origin: the error names the referencing field
        b.check(A([8, 14]), A([4, 4]), "y", origin=A([2, 6]))
    assert e.value.offset == 6 + 4 and "points to byte 18" in str(e.value)


@pytest.mark.parametrize("dtype", ["<u2", "<i4", "<u4", "<i8", "<u8", "<f8"])
def test_read_at_the_end_and_at_mixed_alignments_matches_struct(dtype):
    rng = np.random.default_rng(1)
    data = rng.integers(0, 256, 64, dtype=np.uint8).tobytes()
    k = np.dtype(dtype).itemsize
    fmt = {"<u2": "<H", "<i4": "<i", "<u4": "<I", "<i8": "<q", "<u8": "<Q", "<f8": "<d"}[dtype]
    for pos in ([64 - k], [0, 4, 8, 64 - k], [0, 2, 4, 6, 10], [4, 12, 20], [1, 3, 5, 64 - k]):
        p = A(pos, dtype=np.int64)
        got = fb(data).read(p, dtype)
        want = [struct.unpack_from(fmt, data, i)[0] for i in pos]
        np.testing.assert_array_equal(got, np.array(want, dtype=got.dtype))


def _table_buffer(vtsize: int, tsize: int, pad: int = 0) -> tuple[bytes, int]:
    """A vtable at 0 (sizes, then field offsets 4, 8) and its table right after it."""
    vt = struct.pack("<HH", vtsize, tsize) + struct.pack("<HH", 4, 8)[: max(vtsize - 4, 0)]
    vt += bytes(-len(vt) % 4)
    t = len(vt)
    table = struct.pack("<i", t) + bytes(max(tsize - 4, 0))
    return vt + table + bytes(pad), t


def test_tables_at_their_size_limits():
    data, t = _table_buffer(8, 12)
    tabs = fb(data).tables(A([t]), "event")            # the table ends exactly at the last byte
    assert len(tabs) == 1 and int(tabs.tsize[0]) == 12
    assert fb(data).tables(A([t]), "event").field(0, 4)[0] == t + 4
    assert fb(data).tables(A([t]), "event").field(1, 4)[0] == t + 8   # the field ends exactly at the table's end
    with pytest.raises(CorruptETDumpError):
        fb(data[:-1]).tables(A([t]), "event")          # one byte short
    data4, t4 = _table_buffer(4, 4)                     # the smallest legal vtable and table
    assert fb(data4).tables(A([t4]), "event").field(0, 4)[0] == -1   # no slot: absent
    for vtsize, tsize in ((3, 8), (5, 8), (8, 3)):
        bad, tb = _table_buffer(vtsize, tsize, pad=8)
        with pytest.raises(CorruptETDumpError, match="impossible sizes"):
            fb(bad).tables(A([tb]), "event")


def test_a_vtable_starting_four_bytes_before_the_end_is_read_and_three_before_is_not():
    # table at 0 whose soffset puts its vtable at size-4 (allowed) or size-3 (refused before reading it)
    for vt_at, ok in ((12, True), (13, False)):
        data = bytearray(16)
        struct.pack_into("<i", data, 0, -vt_at)
        if ok:
            struct.pack_into("<HH", data, vt_at, 4, 4)
            assert fb(bytes(data)).tables(A([0]), "event").field(0, 4)[0] == -1
        else:
            with pytest.raises(CorruptETDumpError, match="vtable"):
                fb(bytes(data)).tables(A([0]), "event")


def test_a_field_one_byte_past_its_table_is_refused():
    data, t = _table_buffer(8, 11, pad=8)               # field 1 (4 bytes at +8) would end at 12 > 11
    tabs = fb(data).tables(A([t]), "event")
    assert tabs.field(0, 4)[0] == t + 4
    with pytest.raises(CorruptETDumpError, match="field 1 lies past the end") as e:
        tabs.field(1, 4)
    assert e.value.offset == t + 8


def test_deref_follows_position_zero_and_refuses_a_target_past_the_end():
    data = struct.pack("<I", 8) + bytes(8)               # at 0: a reference to 0 + 8 = 8 (4 bytes to the end)
    np.testing.assert_array_equal(fb(data).deref(A([0, -1]), "r"), [8, -1])
    with pytest.raises(CorruptETDumpError) as e:
        fb(struct.pack("<I", 9) + bytes(8)).deref(A([0]), "r")
    assert e.value.offset == 0


def test_vectors_that_fit_exactly_and_one_element_more():
    data = struct.pack("<I", 3) + struct.pack("<3I", 7, 8, 9)     # a 3-element uint32 vector at 0, filling the buffer
    assert fb(data).vector_lengths(A([0]), 4, "v").tolist() == [3]
    vals, off = fb(data).scalar_vectors(A([0, -1]), np.uint32, "v")
    assert vals.tolist() == [7, 8, 9] and off.tolist() == [0, 3, 3]
    with pytest.raises(CorruptETDumpError):
        fb(struct.pack("<I", 4) + struct.pack("<3I", 7, 8, 9)).vector_lengths(A([0]), 4, "v")
    # element size matters: 3 uint64 need 24 bytes
    with pytest.raises(CorruptETDumpError):
        fb(data).vector_lengths(A([0]), 8, "v")
    assert fb(data).vector_lengths(A([-1]), 4, "v").tolist() == [0]


def test_several_vectors_claiming_more_than_the_buffer_together():
    # two vectors each of which fits, pointing at the same bytes: 2 × 2 elements × 4 bytes = 16 = the buffer: allowed
    data = struct.pack("<I", 2) + struct.pack("<2I", 1, 2) + bytes(4)
    vals, off = fb(data).scalar_vectors(A([0, 0]), np.uint32, "v")
    assert vals.tolist() == [1, 2, 1, 2] and off.tolist() == [0, 2, 4]
    # three of them: 24 bytes claimed in a 16-byte buffer
    with pytest.raises(CorruptETDumpError, match="overlapping"):
        fb(data).scalar_vectors(A([0, 0, 0]), np.uint32, "v")


def test_vectors_of_tables_from_position_zero():
    # at 0: a vector of 2 table references; slots at 4 and 8 point 8 bytes ahead each (to 12 and 16)
    data = struct.pack("<I", 2) + struct.pack("<2I", 8, 8) + bytes(8)
    b = fb(data)
    assert b.table_vector(0, "t").tolist() == [12, 16]
    assert b.table_vector(-1, "t").tolist() == []
    tgt, owner = b.table_vectors(A([-1, 0, -1]), "t")
    assert tgt.tolist() == [12, 16] and owner.tolist() == [1, 1]
    with pytest.raises(CorruptETDumpError, match="lists the table at byte 12 more than once"):  # one vector twice
        b.table_vectors(A([0, -1, 0]), "t")
    with pytest.raises(CorruptETDumpError):            # the second target would need bytes 17..20
        fb(struct.pack("<I", 2) + struct.pack("<2I", 8, 9) + bytes(8)).table_vector(0, "t")


def test_strings_at_the_end_of_the_buffer_and_at_the_short_limit():
    def strbuf(texts, tail=0):
        out, refs = bytearray(), []
        for s in texts:
            refs.append(len(out))
            raw = s.encode()
            out += struct.pack("<I", len(raw)) + raw
            out += bytes(-len(out) % 4)
        return bytes(out) + bytes(tail), A(refs)
    texts = ["a", "abcd", "x" * 96, "y" * 97, "abcd", "", "z" * 95]
    data, refs = strbuf(texts)
    codes, uniq, bad = fb(data).strings(refs, "name")
    assert [uniq[c] for c in codes] == texts and bad == 0
    assert codes[1] == codes[4] and len(uniq) == 6
    # a string whose bytes end at the last byte of the buffer (no padding after it)
    data = struct.pack("<I", 3) + b"end"
    codes, uniq, _ = fb(data).strings(A([0, -1]), "name")
    assert uniq[codes[0]] == "end" and codes[1] == -1
    with pytest.raises(CorruptETDumpError):
        fb(struct.pack("<I", 4) + b"end").strings(A([0]), "name")
    # unaligned short strings go through the byte-wise path and still deduplicate
    data = b"\0\0" + struct.pack("<I", 2) + b"hi" + struct.pack("<I", 2) + b"hi" + bytes(4)
    codes, uniq, _ = fb(data).strings(A([2, 8]), "name")
    assert codes[0] == codes[1] and uniq[codes[0]] == "hi"


def test_interner_counts_invalid_utf8_once_per_string():
    it = Interner()
    # a byte string met again is not counted again (both walks meet shared strings a different number of times)
    assert it(b"ok") == 0 and it(b"\xff") == 1 and it(b"\xff") == 1 and it(b"ok") == 0
    assert it.invalid == 1 and it.uniques == ["ok", "\ufffd"]
    # two different invalid byte strings shown alike are two invalid strings, one code
    assert it(b"\xfe") == 1 and it.invalid == 2 and it.uniques == ["ok", "\ufffd"]


@pytest.mark.parametrize("n_distinct", [1, 2, 31, 32, 33, 40])
def test_few_unique_on_both_sides_of_its_limit(n_distinct):
    v = np.repeat(np.arange(n_distinct, dtype=np.int64)[::-1] * 3, 2)
    u, inv = _few_unique(v)
    np.testing.assert_array_equal(u[inv], v)
    assert sorted(u.tolist()) == sorted(set(v.tolist()))


def test_error_offsets_without_a_base_are_buffer_offsets():
    with pytest.raises(CorruptETDumpError) as e:
        FlatBuffer(bytes(8), "f.etdp").check(A([6]), 4, "x")
    assert e.value.offset == 6


def test_all_absent_scalar_vectors_are_empty():
    vals, off = fb(bytes(8)).scalar_vectors(A([-1, -1]), np.uint32, "v")
    assert vals.size == 0 and off.tolist() == [0, 0, 0]


def test_a_vector_of_tables_ending_at_the_last_byte():
    # one slot at 4 whose offset 0 points at itself: the vector (4 + 4 bytes) ends exactly at the end
    data = struct.pack("<II", 1, 0)
    assert fb(data).table_vector(0, "t").tolist() == [4]
    tgt, owner = fb(data).table_vectors(A([0]), "t")
    assert tgt.tolist() == [4] and owner.tolist() == [0]


def test_a_bad_vtable_of_the_second_table_names_that_table():
    # table A at 8 with its vtable at 0 (4, 4); table B at 12 whose vtable would start 1 byte before the end
    data = bytearray(16)
    struct.pack_into("<HH", data, 0, 4, 4)
    struct.pack_into("<i", data, 8, 8)            # 8 - 8 = 0
    struct.pack_into("<i", data, 12, -3)          # 12 + 3 = 15
    with pytest.raises(CorruptETDumpError, match="vtable") as e:
        fb(bytes(data)).tables(A([8, 12]), "event")
    assert e.value.offset == 12


def test_hash_collisions_fall_back_to_exact_comparison(monkeypatch):
    import edgeprof.io.flatbuf as m
    monkeypatch.setattr(m, "_HASH_WEIGHTS", np.zeros_like(m._HASH_WEIGHTS))   # every string hashes alike
    texts = ["ab", "abc", "ab", "zz", "", "abc"]
    out, refs = bytearray(), []
    for s in texts:
        refs.append(len(out))
        out += struct.pack("<I", len(s)) + s.encode()
        out += bytes(-len(out) % 4)
    codes, uniq, _ = fb(bytes(out) + bytes(4)).strings(A(refs), "name")
    assert [uniq[c] for c in codes] == texts and len(uniq) == 4
