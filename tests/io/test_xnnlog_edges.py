"""Edges of the XNNPACK log reader: text given in memory (parse_xnnlog) has no line-length limit, unlike a file."""

from __future__ import annotations

from edgeprof.io import xnnlog as xl

KERNEL = b"Debug (XNNPACK): Using gemm microkernel 'xnn_f32_gemm_minmax_ukernel_4x8__avx2_broadcast'.\n"


def test_text_in_memory_with_a_line_over_1_mib_is_read_not_refused():
    # a 2 MiB line of program output (it spans two read blocks), then a kernel line: parse_xnnlog never raises on
    # content, so the kernel is found, on line 2, and both lines are counted
    log = xl.parse_xnnlog(b"x" * (2 << 20) + b"\n" + KERNEL)
    assert [(r.name, r.line) for r in log.registrations] == [("xnn_f32_gemm_minmax_ukernel_4x8__avx2_broadcast", 2)]
    assert log.lines == 2
