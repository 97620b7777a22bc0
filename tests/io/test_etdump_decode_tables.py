"""The raw decoded tables of ETDumps written with the reference FlatBuffers runtime: every field of every event kind,
schema defaults for fields a writer leaves out, events with no or several payloads, decoding in blocks, and the
debug values (ints, floats vs doubles, bools, output flags, tensors and tensor lists)."""

from __future__ import annotations

import numpy as np
import pytest
from etdump_builder import AE, DE, PE, Run, TensorMeta, build

from edgeprof.errors import NotAnETDumpError
from edgeprof.io import etdump_decode as dec
from edgeprof.io.etdump_decode import decode, open_buffer, sniff

RUNS = [
    Run("Execute", [PE("a", 10, 20, 0, chain_index=0, dd_int=-1), PE("b", 20, 30, 3, chain_index=2, dd_int=7,
                                                                       dd_str="node_7", metadata=b"\x01\x02"),
                    AE(1, 4096), None, (PE("c", 30, 40, 1), AE(2, 8)), (AE(3, 16), DE("x", int_value=5)),
                    PE(None, 40, 45, -1, chain_index=-1)],
        allocators=["pool", "scratch"], bundled_input_index=3),
    Run("Execute", [PE("a", 110, 125, 0), DE("y", float_value=1.5, instruction_id=4, chain_index=1, dd_int=9,
                                             dd_str="n9"),
                    DE("z", double_value=2.25, float_value=9.0), DE("w", bool_value=True, output=True),
                    DE("t", tensor=TensorMeta(6, [2, 3], [3, 1], 64)),
                    DE("l", tensor_list=[TensorMeta(4, [5], [1], 0), TensorMeta(99, [], [], 8)]),
                    DE("b0", bool_value=False)]),
]


def _decode(**kw):
    return decode(build(RUNS, **kw), "t.etdp")


def test_profile_event_fields_and_defaults():
    d = _decode()
    names = [d["pe_names"][c] if c >= 0 else None for c in d["pe_name_codes"]]
    assert names == ["a", "b", "c", None, "a"]
    assert d["pe_seq"].tolist() == [0, 1, 4, 6, 7] and d["pe_run"].tolist() == [0, 0, 0, 0, 1]
    assert d["pe_chain"].tolist() == [0, 2, 0, -1, 0]
    assert d["pe_instruction"].tolist() == [0, 3, 1, -1, 0]
    assert d["pe_dd_int"].tolist() == [-1, 7, -1, -1, -1]                 # -1: the schema's default, not written
    assert [d["pe_dd_strs"][c] if c >= 0 else None for c in d["pe_dd_str_codes"]] == [None, "node_7", None, None, None]
    assert d["pe_start"].tolist() == [10, 20, 30, 40, 110] and d["pe_end"].tolist() == [20, 30, 40, 45, 125]
    meta, off = d["pe_meta"]
    assert bytes(meta[off[1]:off[2]]) == b"\x01\x02" and off[1] == off[0] and off[2] - off[1] == 2
    assert (d["n_runs"], d["n_empty_events"], d["n_ambiguous_events"], d["version"]) == (2, 1, 2, 0)
    assert d["run_names"] == ["Execute", "Execute"] and d["run_bundled_input_index"].tolist() == [3, -1]
    assert d["allocator_names"] == ["pool", "scratch"] and d["allocator_run"].tolist() == [0, 0]


def test_allocation_events_and_several_payloads():
    d = _decode()
    # an Event with several payloads counts as its first (profile, then allocation, then debug); event numbers
    # run over the whole file
    assert d["ae_seq"].tolist() == [2, 5] and d["ae_run"].tolist() == [0, 0]
    assert d["ae_allocator"].tolist() == [1, 3] and d["ae_size"].tolist() == [4096, 16]
    assert d["de_seq"].tolist() == [8, 9, 10, 11, 12, 13] and d["de_run"].tolist() == [1] * 6


def test_debug_values():
    d = _decode()
    v = d["de_value"]
    assert d["de_name"] == ["y", "z", "w", "t", "l", "b0"]
    assert d["de_instruction"].tolist() == [4, -1, -1, -1, -1, -1] and d["de_chain"].tolist() == [1, 0, 0, 0, 0, 0]
    assert d["de_dd_int"].tolist() == [9, -1, -1, -1, -1, -1] and d["de_dd_str"] == ["n9", None, None, None, None, None]
    assert v["value_type"].tolist() == [3, 3, 2, 5, 6, 2]                # as written: z says float, holds both
    assert np.isnan(v["int_value"]).all()
    assert v["float_value"][:2].tolist() == [1.5, 2.25]                  # a double wins over a float
    assert np.isnan(v["float_value"][2:]).all()
    assert v["bool_value"].tolist() == [-1, -1, 1, -1, -1, 0]
    assert v["is_output"].tolist() == [False, False, True, False, False, False]
    assert v["tensors"][3] == [{"scalar_type": "float32", "sizes": [2, 3], "strides": [3, 1], "offset": 64}]
    assert v["tensors"][4] == [{"scalar_type": "int64", "sizes": [5], "strides": [1], "offset": 0},
                               {"scalar_type": "unknown(99)", "sizes": [], "strides": [], "offset": 8}]
    assert v["tensors"][0] == []
    first = decode(build(RUNS[:1]), "t.etdp")["de_value"]
    assert first["int_value"].tolist() == []                            # the AE-first event is an allocation
    ints = decode(build([Run("Execute", [DE("i", int_value=-(2 ** 40)), DE("o", output=False, int_value=0)])]), "i")
    assert ints["de_value"]["int_value"].tolist() == [-(2 ** 40), 0.0]
    assert ints["de_value"]["is_output"].tolist() == [False, False]


def test_decoding_in_blocks_gives_the_same_tables(monkeypatch):
    whole = _decode()
    monkeypatch.setattr(dec, "EVENT_CHUNK", 2)
    parts = _decode()
    for k in ("pe_name_codes", "pe_dd_str_codes"):          # codes may be numbered in another order: compare strings
        table = "pe_names" if k == "pe_name_codes" else "pe_dd_strs"
        assert [whole[table][c] if c >= 0 else None for c in whole[k]] == \
            [parts[table][c] if c >= 0 else None for c in parts[k]]
    for k, v in whole.items():
        if k in ("pe_name_codes", "pe_dd_str_codes", "pe_names", "pe_dd_strs"):
            continue
        if isinstance(v, np.ndarray):
            assert np.array_equal(v, parts[k]), k
        elif k not in ("pe_meta", "de_value"):
            assert v == parts[k], k
    assert np.array_equal(whole["pe_meta"][0], parts["pe_meta"][0])


def test_tensor_lists_are_dropped_for_very_many_debug_events(monkeypatch):
    monkeypatch.setattr(dec, "MAX_TENSOR_ROWS", 6)
    assert _decode()["de_value"]["tensors"] is None
    monkeypatch.setattr(dec, "MAX_TENSOR_ROWS", 7)
    assert _decode()["de_value"]["tensors"][3][0]["sizes"] == [2, 3]
    assert dec.MAX_TENSOR_ROWS == 7 and dec.EVENT_CHUNK == 1 << 15


def test_plain_and_size_prefixed_buffers_decode_alike():
    a, b = _decode(), _decode(size_prefixed=False)
    assert a["pe_start"].tolist() == b["pe_start"].tolist() and a["de_name"] == b["de_name"]


def test_envelope_at_twelve_bytes_and_a_large_size_prefix():
    fb, base = open_buffer(bytes(4) + b"abcdED00", "t")            # 12 bytes: long enough to look at
    assert base == 4 and fb.size == 0
    with pytest.raises(NotAnETDumpError, match="only 11 bytes"):
        open_buffer(bytes(3) + b"abcdED00", "t")
    data = build(RUNS)
    assert int.from_bytes(data[:4], "little") == len(data) - 4 > 256
    fb, base = open_buffer(data, "t")
    assert fb.size == len(data) - 4


def test_sniff_pte_identifiers():
    assert sniff(bytes(4) + b"ET12") == "an ExecuTorch program (.pte, identifier 'ET12')"   # 8 bytes are enough
    assert sniff(bytes(4) + b"ETx1" + bytes(8)) == "not an ETDump"
    assert sniff(bytes(4) + b"ET1x" + bytes(8)) == "not an ETDump"
    assert sniff(bytes(4) + b"ET1") == "not an ETDump"


def test_defaults_read_from_fields_a_writer_leaves_out():
    run = Run("Execute", [PE("z", 0, 0, 0), AE(0, 0), DE("Execute", tensor=TensorMeta(0, [1], [1], 0), output=False),
                          DE("o", output=True, bool_value=False, dd_str="Execute")], allocators=["Execute"])
    d = decode(build([run]), "d")
    assert d["pe_start"].tolist() == [0] and d["pe_end"].tolist() == [0]
    assert d["ae_allocator"].tolist() == [0] and d["ae_size"].tolist() == [0]
    assert d["allocator_names"] == ["Execute"] and d["de_name"] == ["Execute", "o"]   # strings equal to the run's name
    assert d["de_dd_str"] == [None, "Execute"]
    v = d["de_value"]
    assert v["tensors"][0] == [{"scalar_type": "uint8", "sizes": [1], "strides": [1], "offset": 0}]
    assert v["is_output"].tolist() == [False, True]                 # an output table saying false is not an output
    assert v["bool_value"].tolist() == [-1, 0]


def test_invalid_utf8_is_counted_in_every_string_table():
    run = Run("Execute", [PE(b"bad\xff", 0, 5, 0, dd_str=b"\xfe"), PE("ok", 5, 9, 1)])
    d = decode(build([run]), "u")
    assert d["invalid_utf8"] == 2
    d = decode(build([Run(b"R\xff", [PE(b"\xff", 0, 5, 0)])]), "u")
    assert d["invalid_utf8"] == 2


def test_envelope_messages_and_plain_buffer_offsets():
    with pytest.raises(NotAnETDumpError) as e:
        open_buffer(bytes(16), "f")
    assert str(e.value).endswith("f: not an ETDump (no 'ED00' identifier at byte 8)")
    with pytest.raises(NotAnETDumpError) as e:
        open_buffer(b"\x89PNG" + bytes(12), "f")
    assert "f: a PNG image, not an ETDump (no 'ED00' identifier at byte 8)" in str(e.value)
    # the same bad root offset in a plain and a size-prefixed buffer: offsets 4 bytes apart (the prefix)
    from edgeprof.errors import CorruptETDumpError

    plain = (0xFFFF).to_bytes(4, "little") + b"ED00" + bytes(8)
    prefixed = len(plain).to_bytes(4, "little") + plain
    offs = []
    for data in (plain, prefixed):
        with pytest.raises(CorruptETDumpError) as e:
            decode(data, "f")
        offs.append(e.value.offset)
    assert offs[1] - offs[0] == 4 and offs[0] is not None


def test_single_tensors_without_tensor_lists():
    d = decode(build([Run("Execute", [DE("t", tensor=TensorMeta(6, [4], [1], 16)), DE("u", int_value=3)])]), "t")
    assert d["de_value"]["tensors"] == [[{"scalar_type": "float32", "sizes": [4], "strides": [1], "offset": 16}], []]
