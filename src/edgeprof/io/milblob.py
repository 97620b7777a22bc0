"""Core ML weight files (MILBlob v2, ``weights/weight.bin``): the 64-byte records that describe each blob.

Layout (Apple's MILBlob storage, as coremltools writes and reads it): a 64-byte file header starting with
``uint32 count, uint32 version`` (version 2); at each blob's offset a 64-byte record
``uint32 sentinel (0xDEADBEEF), uint32 dtype, uint64 size_in_bytes, uint64 data_offset``; the data itself at
``data_offset`` (64-byte aligned). Only records are read — a weight file of several GB costs a few reads.
"""

from __future__ import annotations

import os
import struct

from ..errors import InputError

SENTINEL = 0xDEADBEEF
HEADER_SIZE = 64
RECORD_SIZE = 64
# MILBlob's BlobDataType codes (not the protobuf DataType numbers)
BLOB_DTYPES = {1: "fp16", 2: "fp32", 3: "uint8", 4: "int8", 5: "bf16", 6: "int16", 7: "uint16", 8: "int4",
               9: "uint1", 10: "uint2", 11: "uint4", 12: "uint3", 13: "uint6", 14: "int32", 15: "uint32",
               16: "fp8e4m3fn", 17: "fp8e5m2"}


class WeightFileError(InputError):
    """A weight file is missing, truncated, or a blob reference does not point at a valid record."""


def read_records(path, offsets) -> dict[int, tuple[str, int, int]]:
    """{offset: (dtype, stored bytes, data offset)} for each blob record offset, every one validated."""
    from ..files import open_regular

    f = open_regular(path, WeightFileError)
    size = os.fstat(f.fileno()).st_size
    out: dict[int, tuple[str, int, int]] = {}
    with f:
        head = f.read(HEADER_SIZE)
        if len(head) < 8:
            raise WeightFileError(path, f"truncated weight file: {size} bytes, no MILBlob header", offset=0)
        _count, version = struct.unpack_from("<II", head)
        if version != 2:
            raise WeightFileError(path, f"not a MILBlob v2 weight file (version {version})", offset=4)
        for off in sorted({int(o) for o in offsets}):
            if off < HEADER_SIZE or off + RECORD_SIZE > size:
                raise WeightFileError(path, f"blob offset {off} is outside the weight file ({size} bytes)", offset=off)
            f.seek(off)
            sentinel, code, nbytes, data = struct.unpack("<IIQQ", f.read(24))
            if sentinel != SENTINEL:
                raise WeightFileError(path, f"no blob record at offset {off} (sentinel {sentinel:#x})", offset=off)
            if code not in BLOB_DTYPES:
                raise WeightFileError(path, f"blob at offset {off} has unknown data type code {code}", offset=off + 4)
            if data < HEADER_SIZE or data + nbytes > size:
                raise WeightFileError(path, f"blob at offset {off} claims {nbytes} bytes at {data}, past the end of "
                                            f"the {size}-byte file (truncated?)", offset=off + 8)
            out[off] = (BLOB_DTYPES[code], int(nbytes), int(data))
    return out
