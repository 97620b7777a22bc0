"""The XNNPACK log reader's rules, each at its boundary: the documented limits (checked against the README's own
words), scaled down where the real ones take gigabytes; UTF-16 detection thresholds; repeated-line caching;
logcat ``-v long`` headers; message and kernels-CSV limits."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from testdata import documentation

from edgeprof.errors import InputError
from edgeprof.io import sniff
from edgeprof.io import xnnlog as xl

README = documentation()  # the README and docs/, in reading order
KERNEL = b"Debug (XNNPACK): Using gemm microkernel 'xnn_f32_gemm_minmax_ukernel_4x8__avx2_broadcast'.\n"


def test_limits_are_the_documented_ones():
    logs = README[README.index("* **Logs**"):]
    logs = " ".join(logs[:logs.index("\n* **")].split())
    assert f"lines over {xl.MAX_LINE >> 20} MiB are refused" in logs and xl.MAX_LINE == 1 << 20
    rule = README[README.index("# Reliability"):]
    rule = " ".join(rule[:rule.index("\n# ", 5)].split())
    assert f"more than {sniff.MAX_RATIO}× past {sniff.RATIO_FLOOR >> 20} MB" in rule  # the one decompression rule
    assert sniff.RATIO_FLOOR == 64 << 20 and sniff.MAX_RATIO == 200
    assert f"a log over {xl.MAX_LOG_BYTES >> 30} GB is refused" in logs and xl.MAX_LOG_BYTES == 16 << 30
    assert f"UTF-16 logs (up to {xl.MAX_UTF16_BYTES >> 20} MB)" in logs and xl.MAX_UTF16_BYTES == 512 << 20
    assert f"binary data in the first {xl._BINARY_PROBE >> 10} KiB" in logs and xl._BINARY_PROBE == 8192
    assert f"at most {xl.MAX_MESSAGES} XNNPACK warnings/errors" in logs and xl.MAX_MESSAGES == 200
    assert f"kernels CSV over {xl.MAX_CSV_BYTES >> 20} MB" in logs and xl.MAX_CSV_BYTES == 256 << 20


@pytest.fixture
def small(monkeypatch):
    """The size rules scaled down: 64-byte blocks, a 256-byte gzip floor, a 1,024-byte log limit."""
    monkeypatch.setattr(xl, "_BLOCK", 64)
    monkeypatch.setattr(sniff, "RATIO_FLOOR", 256)
    monkeypatch.setattr(xl, "MAX_LOG_BYTES", 1024)
    return monkeypatch


def test_log_size_limit_at_its_boundary(tmp_path, small):
    p = tmp_path / "l.log"
    p.write_bytes(KERNEL + b"\n" * (1024 - len(KERNEL)))
    assert len(xl.read_xnnlog(p).registrations) == 1 and xl.read_xnnlog(p).lines == 1024 - len(KERNEL) + 1
    p.write_bytes(KERNEL + b"\n" * (1025 - len(KERNEL)))
    with pytest.raises(InputError, match="larger than 0 GB: not a log"):
        xl.read_xnnlog(p)
    assert len(xl.parse_xnnlog(p.read_bytes()).registrations) == 1       # text given in memory has no limits


def _gz(tmp_path, n: int) -> tuple[Path, int]:
    p = tmp_path / f"g{n}.log.gz"
    p.write_bytes(gzip.compress(KERNEL + b"\n" * (n - len(KERNEL)), compresslevel=9, mtime=0))
    return p, p.stat().st_size


def test_gzip_floor_at_its_boundary(tmp_path, small):
    small.setattr(sniff, "MAX_RATIO", 1)              # every member expands far more than 1×
    p, _ = _gz(tmp_path, 256)
    assert len(xl.read_xnnlog(p).registrations) == 1   # 256 decompressed bytes: at the floor, allowed
    p, c = _gz(tmp_path, 257)
    with pytest.raises(InputError, match=rf"\(257 bytes from the first {c} of its {c} bytes\)"):
        xl.read_xnnlog(p)


def test_gzip_ratio_at_its_boundary(tmp_path, small):
    p, c = _gz(tmp_path, 320)                          # five 64-byte blocks, past the 256-byte floor
    small.setattr(sniff, "MAX_RATIO", 320 / c)         # ratio × compressed = 320 exactly: not more, allowed
    assert (320 / c) * c == 320
    assert len(xl.read_xnnlog(p).registrations) == 1
    small.setattr(sniff, "MAX_RATIO", 319 / c)         # one byte over
    with pytest.raises(InputError, match="possible gzip bomb"):
        xl.read_xnnlog(p)
    p.write_bytes(KERNEL + b"\n" * 400)                # the same bytes uncompressed: no ratio applies
    assert len(xl.read_xnnlog(p).registrations) == 1


def test_utf16_size_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(xl, "MAX_UTF16_BYTES", 4096)
    text = KERNEL.decode().encode("utf-16-le")
    p = tmp_path / "u.log"
    p.write_bytes(text + "\n".encode("utf-16-le") * ((4096 - len(text)) // 2))
    assert p.stat().st_size == 4096 and len(xl.read_xnnlog(p).registrations) == 1
    p.write_bytes(p.read_bytes() + "\n".encode("utf-16-le"))
    with pytest.raises(InputError, match="UTF-16 log larger than 0 MB: convert it to UTF-8 first"):
        xl.read_xnnlog(p)


def _probe(n: int, odd_zeros: int, even_zeros: int) -> bytes:
    """2n bytes: the first ``odd_zeros`` odd bytes and the first ``even_zeros`` even bytes are NUL, the rest 'a'."""
    out = bytearray()
    for k in range(n):
        out += b"\x00" if k < even_zeros else b"a"
        out += b"\x00" if k < odd_zeros else b"a"
    return bytes(out)


def test_utf16_detection_thresholds():
    # at least 8 bytes of each parity
    assert xl._utf16(_probe(8, 8, 0)) == "utf-16-le" and xl._utf16(_probe(7, 7, 0)) is None
    assert xl._utf16(_probe(8, 0, 8)) == "utf-16-be" and xl._utf16(_probe(7, 0, 7)) is None
    # more than 90 % NUL on one side: with 10 bytes a side, 10 NULs pass and 9 (exactly 90 %) do not
    assert xl._utf16(_probe(10, 10, 0)) == "utf-16-le" and xl._utf16(_probe(10, 9, 0)) is None
    assert xl._utf16(_probe(10, 0, 10)) == "utf-16-be" and xl._utf16(_probe(10, 0, 9)) is None
    # fewer than 10 % NUL on the other: with 20 a side, 1 NUL passes and 2 (exactly 10 %) do not
    assert xl._utf16(_probe(20, 20, 1)) == "utf-16-le" and xl._utf16(_probe(20, 20, 2)) is None
    assert xl._utf16(_probe(20, 1, 20)) == "utf-16-be" and xl._utf16(_probe(20, 2, 20)) is None
    # only the first 256 bytes of each parity count: 231 of 256 NUL (> 90 %) passes whatever follows
    assert xl._utf16(_probe(400, 231, 0)) == "utf-16-le" and xl._utf16(_probe(400, 230, 0)) is None
    assert xl._utf16(_probe(400, 0, 231)) == "utf-16-be" and xl._utf16(_probe(400, 0, 230)) is None
    assert xl._utf16(_probe(400, 256, 25)) == "utf-16-le" and xl._utf16(_probe(400, 256, 26)) is None
    assert xl._utf16(_probe(400, 25, 256)) == "utf-16-be" and xl._utf16(_probe(400, 26, 256)) is None
    assert xl._utf16(b"\xff\xfe") == xl._utf16(b"\xfe\xffabc") == "utf-16"


def test_binary_probe_reaches_8_kib(tmp_path):
    p = tmp_path / "b.log"
    for at in (0, 8191):
        p.write_bytes(b"a" * at + b"\x00" + b"\n" + KERNEL)
        with pytest.raises(InputError) as e:
            xl.read_xnnlog(p)
        assert e.value.offset == at
    p.write_bytes(b"a" * 8192 + b"\x00\n" + KERNEL)              # past the probe: read as text
    assert len(xl.read_xnnlog(p).registrations) == 1
    c = tmp_path / "k.csv"
    c.write_bytes(b"kernel_name\n" + b"x" * (8191 - 12) + b"\x00\n")
    with pytest.raises(InputError) as e:
        xl.read_kernel_csv(c)
    assert e.value.offset == 8191


def test_messages_are_capped_at_200():
    log = xl.parse_xnnlog(b"".join(b"Error in XNNPACK: failed %d\n" % k for k in range(201)))
    assert len(log.messages) == 200 and log.messages[-1] == {"level": "error", "text": "failed 199", "line": 200}
    assert log.xnnpack_lines == 201


def test_line_numbers_and_the_unterminated_last_line():
    log = xl.parse_xnnlog(b"a\nb\n" + KERNEL + b"c\nUsing gemm microkernel 'xnn_f32_gemm")
    assert [r.line for r in log.registrations] == [3] and log.lines == 5 and log.truncated_last_line
    log = xl.parse_xnnlog(KERNEL + b"tail without newline")
    assert log.lines == 2 and not log.truncated_last_line
    assert xl.parse_xnnlog(b"").lines == 0 and xl.parse_xnnlog(b"\n").lines == 1


def test_long_line_error_names_the_line(tmp_path, small):
    small.setattr(xl, "MAX_LINE", 100)
    p = tmp_path / "x.log"
    p.write_bytes(b"ok\n" * 3 + b"y" * 100 + b"\n" + KERNEL)      # exactly 100: allowed
    assert len(xl.read_xnnlog(p).registrations) == 1
    p.write_bytes(b"ok\n" * 3 + b"y" * 101 + b"\n" + KERNEL)
    with pytest.raises(InputError, match="line 4 is longer than 0 MiB"):
        xl.read_xnnlog(p)
    p.write_bytes(KERNEL + b"XNNPACK " + b"y" * 93 + b"\n")       # 101 bytes on a line with key words
    with pytest.raises(InputError, match="line 2 is longer"):
        xl.read_xnnlog(p)
    p.write_bytes(b"ok\n" + b"z" * 101)                             # unterminated, in a block with no newline
    with pytest.raises(InputError, match="line 2 is longer"):
        xl.read_xnnlog(p)


# --- repeated lines, styles, logcat -v long -------------------------------------------------------------------------

RUN = "Debug (XNNPACK): running operator 0:0 (Fully Connected) (xnn_run_operator, subgraph.c:10)"


def test_repeated_lines_are_counted_every_time():
    log = xl.parse_xnnlog((RUN + "\n") * 3)
    assert log.operators_run == {"Fully Connected": 3} and log.xnnpack_lines == 3 and log.formats == {"stdio": 3}
    # a repeated line that also registers a kernel registers it each time
    both = "Debug (XNNPACK): Using gemm microkernel 'xnn_f32_gemm_minmax_ukernel_4x8__neon'. running operator 0:0 " \
        "(Fully Connected)"
    log = xl.parse_xnnlog((both + "\n") * 2)
    assert len(log.registrations) == 2 and log.operators_run == {"Fully Connected": 2}
    # bare operator lines (no XNNPACK prefix) are executed operators but not XNNPACK lines
    log = xl.parse_xnnlog(b"running operator 1:1 (Add) (xnn_run, s.c:1)\n" * 2)
    assert log.operators_run == {"Add": 2} and log.xnnpack_lines == 0 and log.formats == {}
    skip = "Debug (XNNPACK): skip running operator 2:2 (Copy Default)"
    log = xl.parse_xnnlog((skip + "\n") * 2)
    assert log.operators_skipped == {"Copy": 2} and log.operators_run == {}
    # a hardware line that also runs an operator keeps both
    hw = "Debug (XNNPACK): Resetting threadpool to 4; running operator 0:0 (Fully Connected)"
    log = xl.parse_xnnlog((hw + "\n") * 2)
    assert log.hardware["threads"] == 4 and log.operators_run == {"Fully Connected": 2}


def test_logcat_long_headers():
    head = b"[ 08-22 10:15:42.120  4321: 4321 W/XNNPACK ]\n"
    log = xl.parse_xnnlog(head + b"failed to create operator: unsupported\n")
    # the message line holds no XNNPACK key word, so it is not read: the header alone names nothing
    assert log.messages == []
    log = xl.parse_xnnlog(head + b"Using gemm microkernel 'xnn_f32_gemm_minmax_ukernel_4x8__neon'\n")
    assert log.formats == {"logcat": 1} and len(log.registrations) == 1
    # a header whose message line did not follow directly does not apply to a later line
    log = xl.parse_xnnlog(head + b"unrelated\n" + b"Using gemm microkernel 'xnn_f32_gemm_minmax_ukernel_4x8__neon'\n")
    assert log.formats == {"bare": 1}
    err = b"[ 08-22 10:15:42.120  4321: 4321 E/XNNPACK ]\n"
    log = xl.parse_xnnlog(err + b"failed to create XNNPACK operator (xnn_create, op.c:12)\n")
    assert log.messages == [{"level": "error", "text": "failed to create XNNPACK operator", "line": 2}]


@pytest.mark.parametrize("line,style,level,text", [
    ("Note (XNNPACK): hello", "stdio", "info", None),
    ("Warning in XNNPACK: slow path", "stdio", "warning", "slow path"),
    ("Fatal error in XNNPACK: boom", "stdio", "fatal", "boom"),
    ("08-22 10:15:42.121  4321  4321 W XNNPACK : careful", "logcat", "warning", "careful"),
    ("W/XNNPACK( 123): careful", "logcat", "warning", "careful"),
    ("E/XNNPACK: broken (f, a.c:1)", "logcat", "error", "broken"),
    ("XNNPACK said something", None, None, None),
])
def test_line_styles(line, style, level, text):
    log = xl.parse_xnnlog(line + "\n")
    assert log.formats == ({style: 1} if style else {})
    assert log.messages == ([{"level": level, "text": text, "line": 1}] if text else [])


def test_running_operator_forms():
    log = xl.parse_xnnlog("Debug (XNNPACK): running operator 3:7 (Convolution (NHWC, F32) Default)\n"
                          "Debug (XNNPACK): running operator 4:8 (Add) (xnn_run, r.c:9)\n"
                          "Debug (XNNPACK): running operator 5:9 (cut off")
    assert log.operators_run == {"Convolution (NHWC, F32)": 1, "Add": 1} and log.truncated_last_line


def test_assumed_datatype_tiles_and_inlining():
    log = xl.parse_xnnlog(
        "Debug (XNNPACK): Setting assumed_datatype=QDINT8 for node #15 (Fully Connected). (f, s.c:1)\n"
        "Debug (XNNPACK): Tile size for GEMM with num_groups=1, m=8, n=64 and mr=4, nr=16 set to [4, 32] (4 tiles)\n"
        "Debug (XNNPACK): Inlining LHS packing for Fully Connected #3 with m=1\n"
        "Debug (XNNPACK): Inlining LHS packing for Fully Connected #3.\n"
        "Debug (XNNPACK): Setting assumed_datatype=QDINT8 for node #1")
    assert log.assumed_datatypes == [{"node": 15, "datatype": "QDINT8", "op": "Fully Connected", "line": 1}]
    assert log.tiles == [{"num_groups": 1, "m": 8, "n": 64, "mr": 4, "nr": 16, "tile_m": 4, "tile_n": 32, "tiles": 4,
                          "line": 2}]
    assert log.inlined_lhs_packing == ["Fully Connected #3"] and log.truncated_last_line


def test_kernels_csv_count_has_at_most_18_digits(tmp_path):
    c = tmp_path / "k.csv"
    c.write_text("kernel_name,count\nxnn_a," + "9" * 18 + "\n")
    assert xl.read_kernel_csv(c)[0]["count"] == "9" * 18
    c.write_text("kernel_name,count\nxnn_a," + "1" + "0" * 18 + "\n")
    with pytest.raises(InputError, match=r"count '10{18}' is not a whole number below 10\^18"):
        xl.read_kernel_csv(c)


def test_a_long_line_without_key_words_is_refused_too(tmp_path):
    # 1 MiB + 1 byte of unrelated text, terminated inside the next block, with no key word anywhere
    p = tmp_path / "u.log"
    p.write_bytes(b"ok\n" + b"u" * ((1 << 20) + 1) + b"\nmore\n")
    with pytest.raises(InputError, match="line 2 is longer than 1 MiB"):
        xl.read_xnnlog(p)
    assert xl._BLOCK <= xl.MAX_LINE


def test_lines_split_across_small_blocks(small):
    # every line crosses or touches a block boundary somewhere: levels, texts and numbers must not change
    text = b"".join(b"Warning in XNNPACK: slow path %03d\n" % k for k in range(40))
    log = xl.parse_xnnlog(text)
    assert [(m["level"], m["text"], m["line"]) for m in log.messages] == \
        [("warning", f"slow path {k:03d}", k + 1) for k in range(40)]
    assert log.formats == {"stdio": 40}
    # a block that starts with the newline ending the previous one's last line
    assert xl.parse_xnnlog(b"abc\n\nxyz").lines == 3
    assert xl.parse_xnnlog(b"abc\n" * 16 + b"\nlast").lines == 18


def test_hardware_lines():
    log = xl.parse_xnnlog(
        "Note (XNNPACK): l1_data_cache_bytes=131072, l1_data_cache_line_size=128 (init_hardware_config, h.c:467)\n"
        "Note (XNNPACK): l2_data_cache_bytes=524288 (init_hardware_config, h.c:486)\n"
        "Note (XNNPACK): cpuinfo_get_uarchs_count: 2. (init_hardware_config, h.c:503)\n"
        "Note (XNNPACK): cpu_get_uarch(0): 0x700308 (init_hardware_config, h.c:505)\n"
        "Note (XNNPACK): cpu_get_uarch(1): 0xABC (init_hardware_config, h.c:505)\n"
        "Debug (XNNPACK): Resetting threadpool with num threads = 6\n"
        "Note (XNNPACK): RISC-V VLENB: 32\n"
        "Note (XNNPACK): FP16 inference mode enabled\n")
    assert log.hardware == {"l1_data_cache_bytes": 131072, "l2_data_cache_bytes": 524288, "uarch_count": 2,
                            "uarchs": {"0": "0x700308", "1": "0xabc"}, "threads": 6, "riscv_vlenb": 32,
                            "fp16_inference": True}
    assert xl.parse_xnnlog("Note (XNNPACK): nothing about hardware\n").hardware == {}
