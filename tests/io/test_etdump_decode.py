"""The ETDump envelope and lookup tables against their sources: the ScalarType enum of ExecuTorch's schema
(tests/data/schema/scalar_type.fbs, copied verbatim), and what a non-ETDump file is recognised as, byte by byte."""

from __future__ import annotations

import re
import struct

import pytest

from testdata import DATA
from edgeprof.errors import CorruptETDumpError, NotAnETDumpError
from edgeprof.io.etdump_decode import SCALAR_TYPES, open_buffer, sniff

# enum member → the dtype name edgeprof writes (the naming is ours; the codes come from the schema)
DTYPE_NAME = {"BYTE": "uint8", "CHAR": "int8", "SHORT": "int16", "INT": "int32", "LONG": "int64", "HALF": "float16",
              "FLOAT": "float32", "DOUBLE": "float64", "BOOL": "bool", "QINT8": "qint8", "QUINT8": "quint8",
              "QINT32": "qint32", "BFLOAT16": "bfloat16", "QUINT4X2": "quint4x2", "QUINT2X4": "quint2x4",
              "BITS16": "bits16", "FLOAT8E5M2": "float8_e5m2", "FLOAT8E4M3FN": "float8_e4m3fn",
              "FLOAT8E5M2FNUZ": "float8_e5m2fnuz", "FLOAT8E4M3FNUZ": "float8_e4m3fnuz", "UINT16": "uint16",
              "UINT32": "uint32", "UINT64": "uint64"}


def test_scalar_type_codes_are_the_schemas():
    text = (DATA / "schema" / "scalar_type.fbs").read_text()
    body = text[text.index("enum ScalarType"):]
    body = body[: body.index("}")]
    codes = {int(v): DTYPE_NAME[k] for k, v in re.findall(r"^\s*([A-Z0-9]+)\s*=\s*(\d+),", body, re.MULTILINE)}
    assert codes == SCALAR_TYPES


@pytest.mark.parametrize("data,what", [
    (b"\x00" * 4 + b"ET12" + b"\x00" * 8, "an ExecuTorch program (.pte, identifier 'ET12')"),
    (b"\x00" * 4 + b"ETxy" + b"\x00" * 8, "not an ETDump"),
    (b"\x00\x00\x00\x00ED00" + bytes(8), None),         # plain buffer: identifier at byte 4
    (bytes(8) + b"ED00", None),                         # size-prefixed: at byte 8
    (b"\x89PNG\r\n\x1a\n" + bytes(8), "a PNG image"),
    (b"  {\"a\": 1}" + bytes(4), "a JSON or text file"),
    (b"[1, 2]", "a JSON or text file"),
    (b"hello\tworld\r\n~ text", "a text file"),
    (b"hello\x7fworld text", "not an ETDump"),            # DEL is not text
    (b"hello\x1fworld text", "not an ETDump"),            # nor a control character other than tab/CR/LF
    (b" " * 70 + b"abc", "not an ETDump"),               # only the first 64 bytes are looked at (all blank here)
    (b"abc" + b" " * 61 + b"\x00", "a text file"),       # the 65th byte is not looked at
    (b"\x00" * 16, "not an ETDump"),
])
def test_sniff_names_what_a_file_is(data, what):
    assert sniff(data) == what


def test_envelope_lengths_at_their_boundaries():
    with pytest.raises(NotAnETDumpError, match="empty file"):
        open_buffer(b"", "f")
    with pytest.raises(NotAnETDumpError, match="only 11 bytes"):
        open_buffer(bytes(7) + b"ED00"[:4], "f")
    # size-prefixed: the prefix may say exactly the bytes that follow, not one more
    body = bytes(4) + b"ED00" + bytes(8)
    fb, base = open_buffer(struct.pack("<I", len(body)) + body, "f")
    assert base == 4 and fb.size == len(body) and fb.base == 4
    fb, base = open_buffer(struct.pack("<I", len(body) - 4) + body, "f")  # trailing bytes beyond the prefix
    assert fb.size == len(body) - 4
    with pytest.raises(CorruptETDumpError, match=f"says {len(body) + 1} bytes follow but only {len(body)}") as e:
        open_buffer(struct.pack("<I", len(body) + 1) + body, "f")
    assert e.value.offset == 0
    fb, base = open_buffer(b"\x10\x00\x00\x00ED00" + bytes(8), "f")  # plain buffer
    assert base == 0 and fb.size == 16


def test_files_over_4_gib_are_refused_unread(tmp_path):
    from edgeprof.errors import InputError
    from edgeprof.io.etdump_decode import read_bytes
    p = tmp_path / "huge.etdp"
    with open(p, "wb") as f:          # sparse: no disk space is used
        f.truncate(4 * 1024**3 + 1)
    with pytest.raises(InputError) as e:
        read_bytes(p)
    assert str(p) in str(e.value) and f"{4 * 1024**3 + 1} bytes is larger than any ETDump (4096 MB limit)" in str(e.value)
