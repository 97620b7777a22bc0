"""Kernel tables, summaries, the kernel view and executed evidence, each figure worked out by hand from small
inputs written here (registrations, kernels-CSV records, ETDumps built with the reference FlatBuffers runtime)."""

from __future__ import annotations

import pytest
from etdump_builder import build, xnnpack_runs

from edgeprof.analysis.kernels import (
    executed_from_profile,
    gemm_verdict,
    kernel_row,
    kernel_table,
    kernel_view,
    summarize_kernels,
    table_from_records,
)
from edgeprof import load_etdump
from edgeprof.model import KernelLog, KernelRegistration

SME2_GEMM = "xnn_pf32_gemm_minmax_ukernel_32x32__neonsme2"
SME2_IGEMM = "xnn_pf32_igemm_minmax_ukernel_32x32__neonsme2"
SME_GEMM = "xnn_pf32_gemm_minmax_ukernel_32x32__neonsme"
NEON_GEMM = "xnn_f32_gemm_minmax_ukernel_6x8__asm_aarch64_neonfma_ld128"
NEON_IGEMM = "xnn_f32_igemm_minmax_ukernel_6x8__asm_aarch64_neonfma_ld128"
AVX_GEMM = "xnn_f32_gemm_minmax_ukernel_6x16__asm_amd64_fma3_broadcast"
VADD = "xnn_f32_vadd_ukernel__neon_u8"
CLAMP = "xnn_f32_vclamp_ukernel__neon_u16"


def reg(name, kind, line, function=""):
    return KernelRegistration(kind=kind, name=name, function=function, source="", line=line)


def test_kernel_table_groups_counts_and_orders():
    log = KernelLog(source="x", registrations=[
        reg(VADD, "binary", 1), reg(NEON_GEMM, "gemm", 2, "init_f32_gemm"), reg(NEON_GEMM, "gemm", 3, ""),
        reg(NEON_GEMM, "gemm", 4, "init_f32_gemm"), reg(NEON_GEMM, "igemm", 5, "init_other"), reg(CLAMP, "unary", 6),
        reg(CLAMP, "unary", 7, "init_unary")])
    rows = kernel_table(log, "m")
    # most registrations first; equal counts keep log order (VADD before the igemm row, which came later)
    assert [(r["kernel_name"], r["category"], r["count"], r["config"], r["first_line"]) for r in rows] == [
        (NEON_GEMM, "gemm", 3, "init_f32_gemm", 2), (CLAMP, "unary", 2, "init_unary", 6),
        (VADD, "binary", 1, "", 1), (NEON_GEMM, "igemm", 1, "init_other", 5)]
    assert all(r["model_id"] == "m" and r["evidence"] == "registered" for r in rows)


def test_table_from_records_defaults():
    rows = table_from_records([
        {"kernel_name": NEON_GEMM, "count": "", "category": "", "first_line": "12"},
        {"kernel_name": NEON_GEMM, "count": "2", "category": "IGEMM"},           # the logged kind is kept
        {"kernel_name": SME2_GEMM, "count": "7", "category": "GEMM", "model_id": "other", "config": "c",
         "first_line": "1" * 19},
        {"kernel_name": VADD, "first_line": "x1"},
        {"kernel_name": CLAMP, "count": None, "first_line": "9" * 18}], "m")
    assert [(r["count"], r["category"], r["model_id"], r["config"], r["first_line"]) for r in rows] == [
        (1, "gemm", "m", "", 12), (2, "igemm", "m", "", None), (7, "gemm", "other", "c", None), (1, "binary", "m", "", None),
        (1, "unary", "m", "", int("9" * 18))]


def _rows(*spec):
    return [kernel_row(name, kind, n, "m") for name, kind, n in spec]


def test_summary_counts_and_orders():
    rows = _rows((VADD, "binary", 2), (AVX_GEMM, "gemm", 1), (SME2_GEMM, "gemm", 3), (NEON_GEMM, "gemm", 1),
                 (NEON_GEMM, "igemm", 1), (SME_GEMM, "gemm", 1), (SME2_IGEMM, "igemm", 1), ("xnn_f32_foo_ukernel__zzz", "x", 1))
    s = summarize_kernels(rows)
    assert s["kernels"] == 7 and s["registrations"] == 11
    # distinct kernels per family, in the report's family order whatever the input order
    assert list(s["by_family"].items()) == [("SME2", 2), ("SME", 1), ("NEON", 2), ("AVX2-FMA", 1), ("unknown", 1)]
    assert list(s["by_kind"]) == ["gemm", "igemm", "binary", "x"]
    assert s["by_kind"]["gemm"] == {"AVX2-FMA": 1, "SME2": 1, "NEON": 1, "SME": 1}
    assert s["by_kind"]["igemm"] == {"NEON": 1, "SME2": 1}
    assert list(s["gemm_families"].items()) == [("SME2", ["neonsme2"]), ("SME", ["neonsme"]), ("NEON", ["neonfma"]),
                                                ("AVX2-FMA", ["fma3"])]
    assert s["sme2_gemm_kernels"] == [SME2_GEMM, SME2_IGEMM] and s["sme_gemm_kernels"] == [SME_GEMM]
    assert s["other_gemm_kernels"] == [AVX_GEMM, NEON_GEMM, NEON_GEMM]
    assert s["sme2_kernels"] == [SME2_GEMM, SME2_IGEMM]
    assert s["kleidiai_kernels"] == [SME2_GEMM, SME_GEMM, SME2_IGEMM]
    assert s["unknown_isa"] == ["xnn_f32_foo_ukernel__zzz"]
    assert summarize_kernels(list(reversed(rows)))["by_family"] == s["by_family"]


@pytest.mark.parametrize("base,cand,status,words", [
    ([], [], "no_gemm", "no GEMM kernels registered in either log"),
    ([(VADD, "binary", 1)], [(SME2_GEMM, "gemm", 1)], "sme2_in_candidate", "off uses no GEMM kernels"),
    ([(NEON_GEMM, "gemm", 1)], [(SME2_GEMM, "gemm", 1)], "sme2_in_candidate", "off uses NEON neonfma"),
    ([(SME2_GEMM, "gemm", 1)], [(SME2_GEMM, "gemm", 1)], "sme2_in_both", "off is not an SME2-off build"),
    ([(SME_GEMM, "gemm", 1)], [(SME2_GEMM, "gemm", 1)], "sme_baseline", "registers SME (non-SME2) kernels (1)"),
    ([(NEON_GEMM, "gemm", 1)], [(SME_GEMM, "gemm", 1)], "sme_only_candidate", "on registers SME kernels but no SME2"),
    ([(SME2_GEMM, "gemm", 1)], [(NEON_GEMM, "gemm", 1), (AVX_GEMM, "gemm", 1)], "no_sme2",
     "it uses NEON neonfma, AVX2-FMA fma3"),
    ([(NEON_GEMM, "gemm", 1)], [(VADD, "binary", 1)], "no_sme2", "it uses none"),
])
def test_gemm_verdicts(base, cand, status, words):
    st, sentence = gemm_verdict(_rows(*base), _rows(*cand), "off", "on")
    assert st == status and words in sentence


def test_kernel_view_counts_filter_and_sides():
    base = _rows((NEON_GEMM, "gemm", 2), (VADD, "binary", 3), (CLAMP, "unary", 1))
    cand = _rows((SME2_GEMM, "gemm", 4), (NEON_GEMM, "gemm", 1), (VADD, "binary", 5))
    v = kernel_view(base, cand, base_name="off", cand_name="on")
    assert [(e["kernel_name"], e["baseline"], e["candidate"]) for e in v["kernels"]] == [
        (SME2_GEMM, 0, 4), (NEON_GEMM, 2, 1), (VADD, 3, 5), (CLAMP, 1, 0)]
    assert v["only_in_baseline"] == [CLAMP] and v["only_in_candidate"] == [SME2_GEMM]
    assert v["by_family"] == [{"family": "SME2", "baseline": 0, "candidate": 1},
                              {"family": "NEON", "baseline": 3, "candidate": 2}]
    assert [k["kind"] for k in v["by_kind"]] == ["gemm", "binary", "unary"]
    assert v["by_kind"][0] == {"kind": "gemm", "baseline": {"NEON": 1}, "candidate": {"SME2": 1, "NEON": 1}}
    assert v["status"] == "sme2_in_candidate"
    # a filter (any case) keeps matching kernels only; the verdict still looks at all of them
    f = kernel_view(base, cand, base_name="off", cand_name="on", filter_op="VADD")
    assert [e["kernel_name"] for e in f["kernels"]] == [VADD] and f["status"] == "sme2_in_candidate"
    assert f["by_family"] == [{"family": "NEON", "baseline": 1, "candidate": 1}]
    assert [k["kind"] for k in f["by_kind"]] == ["binary"] and f["only_in_candidate"] == []
    assert kernel_view(base, cand, base_name="off", cand_name="on", filter_op="")["kernels"] == v["kernels"]
    one_each = kernel_view(_rows((AVX_GEMM, "gemm", 1)), _rows((VADD, "binary", 1)), base_name="a", cand_name="b")
    assert one_each["by_family"] == [{"family": "NEON", "baseline": 0, "candidate": 1},
                                     {"family": "AVX2-FMA", "baseline": 1, "candidate": 0}]
    assert one_each["by_kind"] == [{"kind": "gemm", "baseline": {"AVX2-FMA": 1}, "candidate": {}},
                                   {"kind": "binary", "baseline": {}, "candidate": {"NEON": 1}}]


# --- executed evidence ---------------------------------------------------------------------------------------------

def _profile(tmp_path, ops, runs=4, unit_ns=1000):
    p = tmp_path / f"x{runs}_{unit_ns}.etdp"
    p.write_bytes(build(xnnpack_runs(ops, runs, unit_ns)))
    return load_etdump(p, warn=False)


def test_executed_shares_of_e2e_and_order(tmp_path):
    ops = [("Fully Connected (NC, F32) GEMM #1", 100), ("Fully Connected (NC, PF16) GEMM #1", 200),
           ("Convolution (NHWC, F32) IGEMM #1", 300), ("Fully Connected (NC, PQS8, QC8W) GEMM #1", 400),
           ("Fully Connected (NC, PF16) GEMM #2", 50)]
    e = executed_from_profile(_profile(tmp_path, ops, runs=1))
    e2e_ns = 1_050_000 + 200                     # the ops plus the 100 ns either side inside Method::execute
    assert e["runs"] == 1
    assert [(o["op"], o["calls_per_run"], o["ms_per_run"]) for o in e["operators"]] == [
        ("Fully Connected (NC, PQS8, QC8W) GEMM", 1, 0.4), ("Fully Connected (NC, PF16) GEMM", 2, 0.25)]
    assert e["operators"][0]["pct_of_e2e"] == pytest.approx(100 * 400_000 / e2e_ns)
    assert [o["op"] for o in e["other_gemm_conv_operators"]] == ["Convolution (NHWC, F32) IGEMM",
                                                                 "Fully Connected (NC, F32) GEMM"]
    assert e["sme_ms_per_run"] == pytest.approx(0.65) and e["qp8_ms_per_run"] == 0.0
    assert e["gemm_conv_ms_per_run"] == pytest.approx(1.05)
    assert e["kleidiai_share_of_gemm_conv"] == pytest.approx(650 / 1050)
    assert e["statement"] == ("SME/SME2 path executed: PF16/PQS8 operators take 0.650 ms per run (62 % of GEMM/CONV "
                              "time); SME vs SME2 needs the kernel log")


def test_executed_keeps_the_ten_slowest_other_gemms(tmp_path):
    ops = [(f"Fully Connected (NC, F32) GEMM #{k}", 10 + k) for k in range(12)]
    e = executed_from_profile(_profile(tmp_path, ops, runs=2))
    assert len(e["other_gemm_conv_operators"]) == 1              # one op name: the " #k" instances are one operator
    ops = [(f"Convolution (NHWC, F32) IGEMM {chr(65 + k)} #1", 10 + k) for k in range(12)]
    e = executed_from_profile(_profile(tmp_path, ops, runs=2))
    assert [o["ms_per_run"] for o in e["other_gemm_conv_operators"]] == [(10 + k) / 1000 for k in range(11, 1, -1)]


def test_executed_qp8_only_and_non_gemm_markers(tmp_path):
    e = executed_from_profile(_profile(tmp_path, [("Fully Connected (NC, QP8, F32, QC4W) GEMM #1", 100),
                                                  ("Fully Connected (NC, F32) GEMM #1", 300)], runs=3))
    assert not e["sme_executed"] and e["kleidiai_executed"] and e["qp8_ms_per_run"] == pytest.approx(0.1)
    assert e["statement"] == ("KleidiAI path executed: QP8 operators take 0.100 ms per run; whether on NEON or SME "
                              "needs the kernel log; no PF32/PF16/PQS8 operator ran")
    assert e["kleidiai_share_of_gemm_conv"] == pytest.approx(0.25)
    # no GEMM/CONV time at all: no share
    e = executed_from_profile(_profile(tmp_path, [("Add (ND) #1", 100)], runs=2))
    assert e["kleidiai_share_of_gemm_conv"] is None and e["gemm_conv_ms_per_run"] == 0.0
    assert e["statement"].startswith("no PF32/PF16/PQS8/QP8 operator ran")


def test_executed_share_of_e2e_over_several_runs(tmp_path):
    e = executed_from_profile(_profile(tmp_path, [("Fully Connected (NC, PF32) GEMM #1", 300),
                                                  ("Add (ND) #1", 100)], runs=3))
    assert e["operators"][0]["pct_of_e2e"] == pytest.approx(100 * 300_000 / 400_200)
    assert e["operators"][0]["calls_per_run"] == 1 and e["runs"] == 3


def test_executed_nanosecond_paths_still_count(tmp_path):
    # durations are whole nanoseconds: one nanosecond of a marked operator is evidence that it ran
    e = executed_from_profile(_profile(tmp_path, [("Fully Connected (NC, PF32) GEMM #1", 1)], runs=1, unit_ns=1))
    assert e["sme_executed"] and e["kleidiai_executed"] and e["kleidiai_share_of_gemm_conv"] == 1.0
    assert e["statement"].startswith("SME/SME2 path executed: PF32")
    e = executed_from_profile(_profile(tmp_path, [("Fully Connected (NC, QP8, F32, QC4W) GEMM #1", 1)], runs=1, unit_ns=1))
    assert not e["sme_executed"] and e["kleidiai_executed"] and e["statement"].startswith("KleidiAI path executed")
