"""The XNNPACK log reader's limits at their boundaries: line length (1 MiB), the gzip expansion rule (200× past
64 MB: edgeprof.io.sniff's), UTF-16 detection, line numbers across blocks, and the binary-data offset."""

from __future__ import annotations

import gzip

import pytest

from edgeprof.errors import InputError
from edgeprof.io import xnnlog as xl

KERNEL = b"Debug (XNNPACK): Using gemm microkernel 'xnn_f32_gemm_minmax_ukernel_4x8__avx2_broadcast'.\n"


def test_a_line_of_exactly_1_mib_is_read_and_one_byte_more_is_refused(tmp_path):
    p = tmp_path / "l.log"
    p.write_bytes(b"x" * (1 << 20) + b"\n" + KERNEL)
    assert len(xl.read_xnnlog(p).registrations) == 1
    p.write_bytes(b"x" * ((1 << 20) + 1) + b"\n" + KERNEL)
    with pytest.raises(InputError, match="line 1 is longer than 1 MiB"):
        xl.read_xnnlog(p)
    p.write_bytes(KERNEL * 3 + b"y" * ((1 << 20) + 1))          # an unterminated last line
    with pytest.raises(InputError, match="line 4 is longer than 1 MiB"):
        xl.read_xnnlog(p)


def test_line_numbers_count_across_blocks(tmp_path):
    filler = b"unrelated line\n" * 100_000                  # 1.5 MB: spans two read blocks
    p = tmp_path / "n.log"
    p.write_bytes(filler + KERNEL + filler + b"Error in XNNPACK: failed to create operator\n")
    log = xl.read_xnnlog(p)
    assert log.registrations[0].line == 100_001 and log.lines == 200_002


def test_gzip_expansion_rule(tmp_path):
    line = b" " * 65535 + b"\n"    # 64 KiB lines (~1000× in gzip): the sizes matter here, not the number of lines
    p = tmp_path / "g.log.gz"
    p.write_bytes(gzip.compress(KERNEL + line * (70 << 4), compresslevel=9))   # 70 MiB: > 200× and > 64 MiB
    with pytest.raises(InputError, match="possible gzip bomb"):
        xl.read_xnnlog(p)
    small = tmp_path / "s.log.gz"
    small.write_bytes(gzip.compress(KERNEL + line * (60 << 4), compresslevel=9))  # 60 MiB, > 200×: below the 64 MiB floor
    assert len(xl.read_xnnlog(small).registrations) == 1


def test_utf16_logs_and_binary_offsets(tmp_path):
    for enc, bom in (("utf-16-le", b""), ("utf-16-be", b""), ("utf-16", None)):
        p = tmp_path / f"{enc}.log"
        data = KERNEL.decode().encode(enc) if bom is None else bom + KERNEL.decode().encode(enc)
        p.write_bytes(data * 2)
        assert len(xl.read_xnnlog(p).registrations) == 2, enc
    assert xl._utf16(b"a\x00" * 3) is None               # too short to tell
    assert xl._utf16(b"a\x00" * 8) == "utf-16-le" and xl._utf16(b"\x00a" * 8) == "utf-16-be"
    b = tmp_path / "b.log"
    b.write_bytes(KERNEL + b"\x00\x01")
    with pytest.raises(InputError) as e:
        xl.read_xnnlog(b)
    assert e.value.offset == len(KERNEL) and "binary data" in str(e.value)
