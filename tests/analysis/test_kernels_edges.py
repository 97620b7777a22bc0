"""Edges of the executed-kernel evidence from an ETDump (small ETDumps written with the reference FlatBuffers
runtime): a delegate op with invalid timestamps adds no time, and a run of 1 ns still gives shares of it."""

from __future__ import annotations

from etdump_builder import PE, Run, build

from edgeprof import load_etdump
from edgeprof.analysis.kernels import executed_from_profile


def _profile(tmp_path, ops, e2e_ns):
    """One run: Method::execute of e2e_ns around one DELEGATE_CALL holding the delegate ops (name, start, end)."""
    ev = [PE(None, s, e, 0, dd_str=name) for name, s, e in ops]
    ev += [PE("DELEGATE_CALL", 0, e2e_ns, 0), PE("Method::execute", 0, e2e_ns, -1, chain_index=-1)]
    p = tmp_path / "x.etdp"
    p.write_bytes(build([Run("Execute", ev)]))
    return load_etdump(p, warn=False)


def test_a_delegate_op_with_invalid_timestamps_adds_no_time(tmp_path):
    # the second op ends before it starts, beyond a 32-bit wrap: it ran, but its duration is unknown
    prof = _profile(tmp_path, [("Fully Connected (NC, PF32) GEMM #1", 100, 2100),
                               ("Fully Connected (NC, PF32) GEMM #2", 2**40, 2**40 - 1)], 10_000)
    e = executed_from_profile(prof)
    (op,) = e["operators"]
    assert (op["op"], op["calls_per_run"]) == ("Fully Connected (NC, PF32) GEMM", 2)
    assert op["ms_per_run"] == 0.002          # the valid 2000 ns only
    assert op["pct_of_e2e"] == 20.0


def test_a_run_of_one_nanosecond_still_gives_shares(tmp_path):
    prof = _profile(tmp_path, [("Fully Connected (NC, PF32) GEMM #1", 0, 1)], 1)
    (op,) = executed_from_profile(prof)["operators"]
    assert (op["ms_per_run"], op["pct_of_e2e"]) == (1e-06, 100.0)
