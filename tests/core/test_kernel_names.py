"""XNNPACK kernel-name grammar: every name XNNPACK can log, and a table of hard cases."""

from __future__ import annotations

from collections import Counter

import pytest
from testdata import DATA

from edgeprof.kernel_names import (
    FAMILIES,
    GEMM_KINDS,
    isa_family,
    kleidiai_kernel,
    kleidiai_wrappers,
    parse,
)

NAMES = (DATA / "xnnpack" / "logged_kernel_names_92a7ad5.txt").read_text().split()


def test_the_name_list_is_the_whole_list():
    assert len(NAMES) == len(set(NAMES)) == 2177


def test_every_logged_name_parses_with_a_known_isa():
    fams = Counter()
    for n in NAMES:
        k = parse(n)
        assert k.isa_family in FAMILIES, n
        assert k.isa and k.isa in k.target.split("_"), n          # the ISA is a whole token of the target
        assert k.op and k.dtype, n
        assert not (k.has_sme and k.has_sme2), n                  # never counted twice
        assert f"_{k.op}" in n.split("__")[0], n
        fams[k.isa_family] += 1
    assert set(fams) == set(FAMILIES)                             # all eleven families occur at this commit
    # SME kernels are exactly the __neonsme / __neonsme2 ones (by whole token, not substring)
    assert fams["SME2"] == sum(1 for n in NAMES if "neonsme2" in n.split("__")[1].split("_")) == 13
    assert fams["SME"] == sum(1 for n in NAMES if "neonsme" in n.split("__")[1].split("_")) == 10


CASES = {
    # name: (dtype, op, variant, tile, isa, family, asm, arch, uarch, mr, nr, kr, kind)
    "xnn_qd8_f32_qc8w_igemm_minmax_ukernel_4x8c8__avx2":
        ("qd8_f32_qc8w", "igemm", "minmax", "4x8c8", "avx2", "AVX2-FMA", False, "", "", 4, 8, 8, "dqigemm"),
    "xnn_qp8_f32_qc4w_gemm_minmax_ukernel_16x64c4__neonsme2":
        ("qp8_f32_qc4w", "gemm", "minmax", "16x64c4", "neonsme2", "SME2", False, "", "", 16, 64, 4, "qp8gemm"),
    "xnn_qp8_f32_qc4w_gemm_minmax_ukernel_16x64c4__neonsme":
        ("qp8_f32_qc4w", "gemm", "minmax", "16x64c4", "neonsme", "SME", False, "", "", 16, 64, 4, "qp8gemm"),
    "xnn_qp8_f32_qb4w_gemm_minmax_ukernel_8x4c16s2__neoni8mm_mstep2":
        ("qp8_f32_qb4w", "gemm", "minmax", "8x4c16s2", "neoni8mm", "NEON", False, "", "", 8, 4, 16, "qp8gemm_bl"),
    "xnn_f32_gemm_minmax_ukernel_6x8__asm_aarch64_neonfma_cortex_a75_prfm":
        ("f32", "gemm", "minmax", "6x8", "neonfma", "NEON", True, "aarch64", "cortex_a75", 6, 8, None, "gemm"),
    "xnn_f32_gemm_minmax_ukernel_6x16__asm_amd64_fma3_broadcast":
        ("f32", "gemm", "minmax", "6x16", "fma3", "AVX2-FMA", True, "amd64", "", 6, 16, None, "gemm"),
    "xnn_qs8_qc8w_gemm_minmax_fp32_ukernel_4x16c4__neondot":
        ("qs8_qc8w", "gemm", "minmax_fp32", "4x16c4", "neondot", "NEON", False, "", "", 4, 16, 4, "gemm"),
    "xnn_pqs8_qc8w_igemm_minmax_fp32_ukernel_32x32c4__neonsme2":
        ("pqs8_qc8w", "igemm", "minmax_fp32", "32x32c4", "neonsme2", "SME2", False, "", "", 32, 32, 4, "igemm"),
    "xnn_pf16_f16_igemm_minmax_fp16_ukernel_32x32c2__neonsme":
        ("pf16_f16", "igemm", "minmax_fp16", "32x32c2", "neonsme", "SME", False, "", "", 32, 32, 2, "igemm"),
    "xnn_x32_transposec_ukernel__4x4_aarch64_neon_tbl128":
        ("x32", "transposec", "", "4x4", "neon", "NEON", False, "aarch64", "", 4, 4, None, "transpose"),
    "xnn_x8_transposec_ukernel__32x32_reuse_switch_avx2":
        ("x8", "transposec", "", "32x32", "avx2", "AVX2-FMA", False, "", "", 32, 32, None, "transpose"),
    "xnn_xx_transposev_ukernel__1x1_scalar_memcpy":
        ("xx", "transposev", "", "1x1", "scalar", "scalar", False, "", "", 1, 1, None, "transpose"),
    "xnn_f32_vadd_ukernel__avx_u16": ("f32", "vadd", "", "", "avx", "AVX", False, "", "", None, None, None, "binary"),
    "xnn_f32_vsigmoid_ukernel__avx2_rr1_p5_div_u16":
        ("f32", "vsigmoid", "", "", "avx2", "AVX2-FMA", False, "", "", None, None, None, "unary"),
    "xnn_f16_f32_vcvt_ukernel__f16c_u16": ("f16_f32", "vcvt", "", "", "f16c", "AVX", False, "", "", None, None, None, "unary"),
    "xnn_f32_vrcopysignc_ukernel__sse2_u16":
        ("f32", "vrcopysignc", "", "", "sse2", "SSE", False, "", "", None, None, None, "binary"),
    "xnn_f32_dwconv_minmax_ukernel_25p8c__neonfma_acc2":
        ("f32", "dwconv", "minmax", "25p8c", "neonfma", "NEON", False, "", "", None, None, None, "dwconv"),
    "xnn_f32_dwconv2d_chw_ukernel_3x3p1__neon_2x4":
        ("f32", "dwconv2d", "chw", "3x3p1", "neon", "NEON", False, "", "", None, None, None, "dwconv2d_chw"),
    "xnn_f32_rdsum_ukernel_7p7x__avx_u32":
        ("f32", "rdsum", "", "7p7x", "avx", "AVX", False, "", "", None, None, None, "reduce_discontiguous"),
    "xnn_f16_f32acc_gemm_minmax_ukernel_1x8__neonfp16arith_ld64":
        ("f16_f32acc", "gemm", "minmax", "1x8", "neonfp16arith", "NEON", False, "", "", 1, 8, None, "gemm"),
    "xnn_f32_gemm_minmax_ukernel_7x32__avx512f_broadcast":
        ("f32", "gemm", "minmax", "7x32", "avx512f", "AVX-512", False, "", "", 7, 32, None, "gemm"),
    "xnn_qd8_f32_qc8w_gemm_minmax_ukernel_10x16c8__avx512vnni_prfm":
        ("qd8_f32_qc8w", "gemm", "minmax", "10x16c8", "avx512vnni", "AVX-512", False, "", "", 10, 16, 8, "dqgemm"),
    "xnn_f32_gemm_minmax_ukernel_4x2__wasm": ("f32", "gemm", "minmax", "4x2", "wasm", "WebAssembly", False, "", "", 4, 2,
                                              None, "gemm"),
    "xnn_f32_gemm_minmax_ukernel_7x4v__rvv": ("f32", "gemm", "minmax", "7x4v", "rvv", "RISC-V", False, "", "", 7, 4,
                                              None, "gemm"),
    "xnn_f32_vadd_ukernel__hvx_u32": ("f32", "vadd", "", "", "hvx", "Hexagon", False, "", "", None, None, None, "binary"),
    "xnn_f32_gemm_minmax_ukernel_4x4__scalar": ("f32", "gemm", "minmax", "4x4", "scalar", "scalar", False, "", "", 4, 4,
                                                None, "gemm"),
    "xnn_qs8_qc8w_gemm_minmax_rndnu_ukernel_4x8__asm_aarch32_neonmlal_ld64_2":
        ("qs8_qc8w", "gemm", "minmax_rndnu", "4x8", "neonmlal", "NEON", True, "aarch32", "", 4, 8, None, "gemm"),
    "xnn_x32_pack_lh_ukernel__igemm_neonsme2":
        ("x32", "pack", "lh", "", "neonsme2", "SME2", False, "", "", None, None, None, "pack_lh"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_table_of_hard_names(name):
    k = parse(name)
    got = (k.dtype, k.op, k.variant, k.tile, k.isa, k.isa_family, k.asm, k.arch, k.uarch, k.tile_mr, k.tile_nr,
           k.tile_kr, k.kind)
    assert got == CASES[name]
    assert k.has_sme == (k.isa_family == "SME") and k.has_sme2 == (k.isa_family == "SME2")


def test_isa_tokens_are_matched_whole_not_as_substrings():
    assert isa_family("avx") == "AVX" and isa_family("avx2") == "AVX2-FMA" and isa_family("avx512skx") == "AVX-512"
    assert isa_family("neonsme2") == "SME2" and isa_family("neonsme") == "SME" and isa_family("sme") == "SME"
    assert isa_family("sme2") == "SME2" and isa_family("neon") == "NEON" and isa_family("sse41") == "SSE"
    # tokens newer than the table still get a family from their spelling; nonsense stays unknown
    assert isa_family("neonsme2p1") == "SME2" and isa_family("avx10") == "AVX-512" and isa_family("rvvbf16") == "RISC-V"
    assert isa_family("broadcast") == "unknown" and isa_family("u16") == "unknown"
    # "sme" as a substring of an implementation token does not make a kernel SME
    assert parse("xnn_f32_vadd_ukernel__neon_smeary_u8").isa_family == "NEON"


def test_garbage_never_raises():
    for s in ("", "xnn_", "__", "xnn___", "xnn_f32__", "ukernel", "xnn_f32_gemm_ukernel", "x" * 500, "xnn_ukernel__neon"):
        k = parse(s)
        assert k.isa_family in FAMILIES + ("unknown",)
    assert parse("xnn_f32_gemm_ukernel").isa_family == "unknown"


def test_kleidiai_wrappers():
    m = kleidiai_wrappers()
    assert len(m) == 57 and all(v.startswith("kai_") for v in m.values())
    assert kleidiai_kernel(parse("xnn_pf32_gemm_minmax_ukernel_32x32__neonsme2")) == \
        "kai_matmul_clamp_f32_f32p2vlx1_f32p2vlx1biasf32_sme2_mopa"
    # every SME/SME2 kernel XNNPACK can log is a KleidiAI wrapper; no x86 kernel is
    for n in NAMES:
        k = parse(n)
        if k.isa_family in ("SME", "SME2"):
            assert kleidiai_kernel(k), n
        if k.isa_family in ("AVX-512", "AVX2-FMA", "AVX", "SSE"):
            assert kleidiai_kernel(k) is None, n
    # a packed-LHS kernel missing from the map is still known to be KleidiAI by its datatype
    assert kleidiai_kernel(parse("xnn_pf32_gemm_minmax_ukernel_64x64__neonsme2")) == "kai (unmapped)"


def test_gemm_kinds_cover_the_gemm_like_names():
    kinds = Counter(parse(n).kind for n in NAMES)
    assert set(GEMM_KINDS) <= set(kinds)
    assert "unknown" not in kinds and "" not in kinds


# An independent, labelled list: each ISA token XNNPACK spells after `__` in a microkernel name, the family it belongs
# to, and where that is stated. Sources: XNNPACK's per-ISA microkernel lists (cmake/gen/<token>_microkernels.cmake and
# gen/<token>_microkernels.bzl, one file per token, guarded by the matching XNNPACK_ENABLE_* / compiler flag in
# CMakeLists.txt), the Arm A-profile architecture reference (SME/SME2 = FEAT_SME/FEAT_SME2; NEON = Advanced SIMD,
# with dot product FEAT_DotProd, I8MM FEAT_I8MM, BF16 FEAT_BF16, FP16 vector FEAT_FP16; ARMv6 SIMD32 = 32-bit
# "SIMD within a register", no NEON; fp16arith = scalar half-precision arithmetic), Intel's SDM (AVX-512 F/SKX/VNNI/
# BF16/FP16/AMX; 256-bit AVX-512VL as avx256skx/avx256vnni; AVX-VNNI(-INT8) is a VEX extension of AVX2), WebAssembly
# SIMD128 and relaxed-SIMD proposals, the RISC-V V extension, Qualcomm Hexagon HVX.
ISA_TOKEN_FAMILY = {
    "neonsme2": ("SME2", "FEAT_SME2 streaming SVE mode, KleidiAI *_sme2_* kernels"),
    "neonsme": ("SME", "FEAT_SME"),
    "neon": ("NEON", "Advanced SIMD, ARMv7/ARMv8"), "neonv8": ("NEON", "Advanced SIMD with ARMv8 rounding"),
    "neonfma": ("NEON", "Advanced SIMD + VFPv4 fused multiply-add"), "neonfp16": ("NEON", "Advanced SIMD fp16 conversion"),
    "neonfp16arith": ("NEON", "FEAT_FP16 vector arithmetic"), "neonbf16": ("NEON", "FEAT_BF16"),
    "neondot": ("NEON", "FEAT_DotProd"), "neondotfp16arith": ("NEON", "FEAT_DotProd + FEAT_FP16"),
    "neoni8mm": ("NEON", "FEAT_I8MM"), "neoni8mmbf16": ("NEON", "FEAT_I8MM + FEAT_BF16"),
    "neonmlal": ("NEON", "Advanced SIMD widening multiply-accumulate"),
    "armsimd32": ("Arm-scalar", "ARMv6 SIMD32: packed 8/16-bit lanes in general-purpose registers, not NEON"),
    "fp16arith": ("Arm-scalar", "ARMv8.2 FEAT_FP16 scalar half-precision instructions"),
    "avx512f": ("AVX-512", "AVX-512 Foundation"), "avx512skx": ("AVX-512", "AVX-512 F+CD+BW+DQ+VL (Skylake-X)"),
    "avx512vnni": ("AVX-512", "AVX-512 VNNI"), "avx512vnnigfni": ("AVX-512", "AVX-512 VNNI + GFNI"),
    "avx512bf16": ("AVX-512", "AVX-512 BF16"), "avx512fp16": ("AVX-512", "AVX-512 FP16"),
    "avx512amx": ("AVX-512", "AMX tiles with AVX-512"), "avx256skx": ("AVX-512", "AVX-512VL at 256 bits"),
    "avx256vnni": ("AVX-512", "AVX-512VL VNNI at 256 bits"),
    "avxvnni": ("AVX2-FMA", "AVX-VNNI (VEX-encoded, an AVX2-class extension)"),
    "avxvnniint8": ("AVX2-FMA", "AVX-VNNI-INT8"), "avx2": ("AVX2-FMA", "AVX2"), "fma3": ("AVX2-FMA", "FMA3"),
    "avx": ("AVX", "AVX"), "f16c": ("AVX", "F16C half-precision conversion (AVX-era)"),
    "sse": ("SSE", "SSE"), "sse2": ("SSE", "SSE2"), "ssse3": ("SSE", "SSSE3"), "sse41": ("SSE", "SSE4.1"),
    "sse2fma": ("SSE", "SSE2 with FMA3 instructions"),
    "wasmsimd": ("WebAssembly", "SIMD128"), "wasmrelaxedsimd": ("WebAssembly", "relaxed SIMD"),
    "wasmsdot": ("WebAssembly", "relaxed SIMD signed dot"), "wasmusdot": ("WebAssembly", "relaxed SIMD unsigned dot"),
    "rvv": ("RISC-V", "RISC-V V extension"), "rvvfp16arith": ("RISC-V", "RVV with Zvfh"),
    "hvx": ("Hexagon", "Hexagon Vector eXtensions"),
    "scalar": ("scalar", "portable C"),
}


def _isa_token(name: str) -> str:
    """The ISA token of a name, read without the module under test: the first token after `__` in the list."""
    for tok in name.split("__", 1)[1].split("_"):
        if tok in ISA_TOKEN_FAMILY:
            return tok
    raise AssertionError(f"no labelled ISA token in {name}")


def test_every_logged_name_gets_the_family_of_its_isa_token():
    fams = Counter()
    for n in NAMES:
        token = _isa_token(n)
        expected = ISA_TOKEN_FAMILY[token][0]
        k = parse(n)
        assert (k.isa, k.isa_family) == (token, expected), n
        fams[expected] += 1
    # per-family counts from the list itself (hand-checkable with grep -c)
    assert fams["SME2"] == 13 and fams["SME"] == 10
    assert fams["Arm-scalar"] == sum(1 for n in NAMES if _isa_token(n) in ("armsimd32", "fp16arith"))
    assert set(fams) == set(FAMILIES)
    assert sum(fams.values()) == len(NAMES)


@pytest.mark.parametrize("token", sorted(ISA_TOKEN_FAMILY))
def test_each_labelled_token_alone(token):
    assert isa_family(token) == ISA_TOKEN_FAMILY[token][0]
