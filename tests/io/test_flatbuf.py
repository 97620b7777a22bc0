"""The vectorized FlatBuffer primitives against buffers built by the reference FlatBuffers library.

The oracle is what was put into the builder (``pip flatbuffers``), never edgeprof's own output.
"""

from __future__ import annotations

import struct

import flatbuffers
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edgeprof.errors import CorruptETDumpError
from edgeprof.io.flatbuf import FlatBuffer, Interner, _few_unique

# Item { id: int64 (0); name: string (1); dims: [int32] (2); flag: uint8 = 7 (3); child: Item (4) }
# Root { items: [Item] (0) }

Item = dict  # {"id", "name": bytes | None, "dims": list | None, "flag": int | None, "child": Item | None}


def _build(items: list[Item], size_prefixed: bool = False) -> bytes:
    b = flatbuffers.Builder(1024)

    def item(it: Item) -> int:
        child = item(it["child"]) if it.get("child") else None
        name = b.CreateString(it["name"]) if it.get("name") is not None else None
        dims = None
        if it.get("dims") is not None:
            b.StartVector(4, len(it["dims"]), 4)
            for d in reversed(it["dims"]):
                b.PrependInt32(d)
            dims = b.EndVector()
        b.StartObject(5)
        b.PrependInt64Slot(0, it["id"], 0)
        if name is not None:
            b.PrependUOffsetTRelativeSlot(1, name, 0)
        if dims is not None:
            b.PrependUOffsetTRelativeSlot(2, dims, 0)
        if it.get("flag") is not None:
            b.PrependUint8Slot(3, it["flag"], 7)
        if child is not None:
            b.PrependUOffsetTRelativeSlot(4, child, 0)
        return b.EndObject()

    offs = [item(it) for it in items]
    b.StartVector(4, len(offs), 4)
    for o in reversed(offs):
        b.PrependUOffsetTRelative(o)
    vec = b.EndVector()
    b.StartObject(1)
    b.PrependUOffsetTRelativeSlot(0, vec, 0)
    root = b.EndObject()
    (b.FinishSizePrefixed if size_prefixed else b.Finish)(root)
    return bytes(b.Output())


def _read(data: bytes, base: int = 0):
    fb = FlatBuffer(memoryview(data)[base:], "buf.bin", base=base)
    root = fb.tables(np.array([fb.read_checked(np.array([0]), np.uint32, "root")[0]], dtype=np.int64), "Root")
    pos = fb.table_vector(int(root.ref(0, "items")[0]), "items")
    t = fb.tables(pos, "Item")
    codes, uniq, invalid = fb.strings(t.ref(1, "name"), "name")
    names = [uniq[c] if c >= 0 else None for c in codes]
    vals, off = fb.scalar_vectors(t.ref(2, "dims"), np.int32, "dims")
    dims_ref = t.ref(2, "dims")
    dims = [vals[off[i]: off[i + 1]].tolist() if dims_ref[i] >= 0 else None for i in range(len(t))]
    child_ref = t.ref(4, "child")
    kids = fb.tables(child_ref[child_ref >= 0], "Item")
    return {"id": t.scalar(0, np.int64, 0).tolist(), "name": names, "dims": dims,
            "flag": t.scalar(3, np.uint8, 7).tolist(), "child_ids": kids.scalar(0, np.int64, 0).tolist(),
            "invalid": invalid}


_text = st.one_of(st.none(), st.text(max_size=12), st.text(min_size=90, max_size=200),
                  st.sampled_from(["Method::execute", "OPERATOR_CALL", "native_call_add.out"]))
_item = st.fixed_dictionaries({
    "id": st.integers(-2**63, 2**63 - 1),
    "name": _text.map(lambda s: None if s is None else s.encode()),
    "dims": st.one_of(st.none(), st.lists(st.integers(-2**31, 2**31 - 1), max_size=6)),
    "flag": st.one_of(st.none(), st.integers(0, 255)),
    "child": st.one_of(st.none(), st.fixed_dictionaries({"id": st.integers(-5, 5)})),
})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_item, max_size=40), st.booleans())
def test_tables_scalars_vectors_and_strings_read_back_what_was_built(items, prefixed):
    data = _build(items, prefixed)
    got = _read(data, base=4 if prefixed else 0)
    assert got["id"] == [it["id"] for it in items]
    assert got["name"] == [None if it["name"] is None else it["name"].decode() for it in items]
    assert got["dims"] == [it["dims"] for it in items]
    assert got["flag"] == [7 if it["flag"] is None else it["flag"] for it in items]  # absent → schema default
    assert got["child_ids"] == [it["child"]["id"] for it in items if it["child"]]
    assert got["invalid"] == 0


def test_equal_strings_share_a_code_and_invalid_utf8_is_replaced_and_counted():
    names = [b"conv", b"gemm", b"conv", b"\xff\xfeXNN", b"x" * 150, b"x" * 150, b"conv"]
    data = _build([{"id": i, "name": n} for i, n in enumerate(names)])
    fb = FlatBuffer(memoryview(data), "buf.bin")
    root = fb.tables(np.array([struct.unpack_from("<I", data, 0)[0]], dtype=np.int64), "Root")
    t = fb.tables(fb.table_vector(int(root.ref(0, "items")[0]), "items"), "Item")
    shared = Interner()
    codes, uniq, invalid = fb.strings(t.ref(1, "name"), "name", shared)
    assert [uniq[c] for c in codes] == [n.decode("utf-8", "replace") for n in names]
    assert codes[0] == codes[2] == codes[6] and codes[4] == codes[5] and len(set(codes.tolist())) == 4
    assert invalid == 1
    again, uniq2, _ = fb.strings(t.ref(1, "name"), "name", shared)  # one code space across calls
    assert again.tolist() == codes.tolist() and len(uniq2) == 4


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
                                   np.float32, np.float64])
def test_read_matches_struct_at_aligned_and_unaligned_positions(dtype):
    rng = np.random.default_rng(7)
    data = rng.integers(0, 256, size=4096, dtype=np.uint8).tobytes()
    fb = FlatBuffer(data, "buf.bin")
    k = np.dtype(dtype).itemsize
    bits = {1: (np.uint8, "<B"), 2: (np.uint16, "<H"), 4: (np.uint32, "<I"), 8: (np.uint64, "<Q")}[k]
    for pos in (np.arange(0, 4096 - k, k), rng.integers(0, 4096 - k, size=500), np.arange(0, 4090, 4)[: 4096 // 4 - 2]):
        # compared as raw bits (a float NaN would not survive a round trip through Python floats)
        want = np.array([struct.unpack_from(bits[1], data, int(p))[0] for p in pos], dtype=bits[0])
        got = fb.read(pos.astype(np.int64), dtype)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got.view(bits[0]), want)


def test_out_of_bounds_references_name_the_file_and_byte():
    data = bytearray(_build([{"id": 1, "name": b"conv", "dims": [1, 2, 3]}], size_prefixed=True))
    fb = FlatBuffer(memoryview(bytes(data))[4:], "model.etdump", base=4)
    with pytest.raises(CorruptETDumpError) as e:
        fb.read_checked(np.array([len(data) - 10], dtype=np.int64), np.uint64, "header")
    # the offset is the file's (size prefix included), the message one line
    assert str(e.value) == (f"model.etdump: header (8 bytes) runs outside the {len(data)}-byte file: truncated or "
                            f"corrupt ETDump (at byte offset {len(data) - 6})")
    # a truncated buffer: the item vector now points past the end
    cut = bytes(data[: len(data) // 2])
    with pytest.raises(CorruptETDumpError) as e:
        _read(cut, base=4)
    assert "model" not in str(e.value) and "buf.bin" in str(e.value) and "truncated or corrupt" in str(e.value)


def test_vectors_claiming_more_than_the_buffer_are_refused():
    data = bytearray(_build([{"id": 1, "dims": [5]}, {"id": 2, "dims": [6]}]))
    # point both dims vectors' counts at a huge value: each would run off the end
    i = data.find(struct.pack("<Ii", 1, 5))
    assert i >= 0 and i % 4 == 0
    data[i: i + 4] = struct.pack("<I", 2**31)
    with pytest.raises(CorruptETDumpError, match="dims vector"):
        _read(bytes(data))


def test_vtables_with_impossible_sizes_are_refused():
    data = bytearray(_build([{"id": 3}]))
    fb = FlatBuffer(bytes(data), "buf.bin")
    root_pos = struct.unpack_from("<I", data, 0)[0]
    vt = root_pos - struct.unpack_from("<i", data, root_pos)[0]
    data[vt: vt + 2] = struct.pack("<H", 3)  # odd vtable size
    fb = FlatBuffer(bytes(data), "buf.bin")
    with pytest.raises(CorruptETDumpError, match="impossible sizes"):
        fb.tables(np.array([root_pos], dtype=np.int64), "Root")


@given(st.lists(st.integers(-3, 60), max_size=300))
def test_few_unique_agrees_with_numpy_unique(values):
    v = np.array(values, dtype=np.int64)
    u, inv = _few_unique(v, limit=8)
    assert sorted(u.tolist()) == sorted(set(values))
    np.testing.assert_array_equal(u[inv], v)
