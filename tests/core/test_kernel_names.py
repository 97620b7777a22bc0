"""XNNPACK kernel-name grammar: every name XNNPACK can log, and a table of hard cases."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from testdata import DATA

from edgeprof.kernel_names import (
    FAMILIES,
    GEMM_KINDS,
    isa_family,
    kleidiai_kernel,
    kleidiai_wrappers,
    normalize_kind,
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
        assert k.isa_family in (*FAMILIES, "unknown")
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


# --- the microkernel kind: XNNPACK says it in each "Using <kind> microkernel '<name>'" line of a real log, an oracle
# that does not go through the name grammar. A name logged under two kinds (xx_copy: "unary" from the unary config
# and "copy" from the transpose config) cannot be told from its name and is left out.
_USING = re.compile(r"Using (\w+) microkernel '(xnn_\w+)'")


def _logged_kinds() -> dict[str, str]:
    seen: dict[str, set] = {}
    for log in sorted((DATA / "xnnpack").glob("*.log")):
        for m in _USING.finditer(log.read_text(errors="replace")):
            seen.setdefault(m.group(2), set()).add(m.group(1))
    return {name: kinds.pop() for name, kinds in seen.items() if len(kinds) == 1}


def test_kind_inferred_from_the_name_is_the_kind_xnnpack_logs():
    logged = _logged_kinds()
    assert len(logged) >= 80 and len(set(logged.values())) >= 15
    wrong = {n: (k, parse(n).kind) for n, k in logged.items() if parse(n).kind != normalize_kind(k)}
    assert not wrong


# kinds of the configs no bundled log exercises; source: the "Using … microkernel" table of XNNPACK's configs
# (src/configs/*-config.c at the pinned commit: reduce-config.c logs "reduce" for rsum/rmax/…, "reduce_discontiguous"
# for rdsum/rdmax…; cmul-config.c "cmul" for vcmul; dwconv2d-chw-config.c, conv-hwc2chw-config.c,
# ibilinear-chw-config.c their own kinds; binary-elementwise-config.c "binary" for v<op>, v<op>c and vr<op>c)
KINDS = {
    "xnn_f16_f32acc_rsum_ukernel__avx512skx_u32_acc2": "reduce",
    "xnn_f16_f32acc_rsum2_ukernel__avx512skx_u32_acc2": "reduce",
    "xnn_bf16_rmax_ukernel__neon_u32_acc4": "reduce", "xnn_bf16_rmin_ukernel__neon_u32_acc4": "reduce",
    "xnn_bf16_rminmax_ukernel__neon_u32_acc4": "reduce",
    "xnn_f32_rdsum_ukernel_7p7x__hvx_u128": "reduce_discontiguous",
    "xnn_f16_vcmul_ukernel__neonfp16arith_u16": "cmul",
    "xnn_f16_dwconv2d_chw_ukernel_3x3p1__neonfp16arith_2x8": "dwconv2d_chw",
    "xnn_f32_dwconv_minmax_ukernel_25p8c__neon": "dwconv",
    "xnn_f16_conv_hwc2chw_ukernel_3x3s2p1c3x4__neonfp16arith_2x2": "conv_hwc2chw",
    "xnn_f16_ibilinear_chw_ukernel__neonfp16arith_p8": "ibilinear_chw",
    "xnn_f16_ibilinear_ukernel__fma3_u8": "ibilinear",
    "xnn_f16_vmulcaddc_minmax_ukernel_c8__fma3_2x": "vmulcaddc",
    "xnn_f16_vsub_ukernel__f16c_u16": "binary", "xnn_f16_vmul_ukernel__f16c_u16": "binary",
    "xnn_f16_vdiv_ukernel__avx512fp16_u64": "binary", "xnn_f16_vmax_ukernel__f16c_u16": "binary",
    "xnn_f16_vmin_ukernel__f16c_u16": "binary", "xnn_f16_vsqrdiff_ukernel__f16c_u16": "binary",
    "xnn_f16_vprelu_ukernel__f16c_u16": "binary", "xnn_f32_vcopysign_ukernel__avx_u16": "binary",
    "xnn_f32_vsubc_ukernel__avx512f_u32": "binary", "xnn_f32_vrsubc_ukernel__avx512f_u32": "binary",
    "xnn_f32_vrdivc_ukernel__avx512f_u32": "binary",
    "xnn_f32_vabs_ukernel__avx512f_u16": "unary", "xnn_f32_vsqrt_ukernel__avx512f_rsqrt_u16": "unary",
    "xnn_f16_spmm_minmax_ukernel_32x1__neonfp16arith_pipelined": "spmm",
    "xnn_f32_argmaxpool_ukernel_9p8x__neon_c4": "argmaxpool", "xnn_x32_unpool_ukernel__neon": "unpool",
    "xnn_qd8_f32_qc8w_gemm_minmax_ukernel_1x8c8__avx2": "dqgemm",
    "xnn_qdu8_f32_qc8w_igemm_minmax_ukernel_1x8c8__avx2": "dqigemm",
    "xnn_qp8_f32_qb4w_gemm_minmax_ukernel_16x4c16s2__neoni8mm_mstep4": "qp8gemm_bl",
    "xnn_qp8_f32_qc8w_gemm_minmax_ukernel_16x4c8__neoni8mm_mstep4": "qp8gemm",
    "xnn_x16_transposec_ukernel__8x8_reuse_dec_zip_neon": "transpose",
    "xnn_xx_transposev_ukernel__1x1_scalar_memcpy": "transpose",
}


@pytest.mark.parametrize("name", sorted(KINDS))
def test_kind_of_each_config(name):
    k = parse(name)
    assert k.kind == KINDS[name]
    assert k.is_gemm == (KINDS[name] in ("gemm", "igemm", "dqgemm", "dqigemm", "qp8gemm", "qp8gemm_bl"))


def test_the_kind_table_names_are_real():
    # all but the qdu8 one: the dqgemm config names qdu8 datatypes, no qdu8 kernel is in the list at this commit
    assert set(KINDS) - set(NAMES) == {"xnn_qdu8_f32_qc8w_igemm_minmax_ukernel_1x8c8__avx2"}


def test_architecture_tokens():
    # an architecture token is the arch, not the ISA; alone it still gives the family
    k = parse("xnn_f32_gemm_minmax_ukernel_4x8__asm_aarch64_ld128")
    assert (k.arch, k.isa, k.isa_family, k.asm) == ("aarch64", "aarch64", "NEON", True)
    k = parse("xnn_f32_gemm_minmax_ukernel_4x8__asm_aarch32_ld64")
    assert (k.arch, k.isa, k.isa_family) == ("aarch32", "aarch32", "NEON")
    for arch in ("wasm32", "wasmsimd32", "wasmrelaxedsimd32"):
        k = parse(f"xnn_f32_vadd_ukernel__{arch}_u4")
        assert (k.arch, k.isa, k.isa_family) == (arch, arch, "WebAssembly"), arch
    k = parse("xnn_f32_gemm_minmax_ukernel_6x16__asm_amd64_u4")       # amd64 alone names no family
    assert (k.arch, k.isa, k.isa_family) == ("amd64", "", "unknown")
    # the first architecture token wins; a second one is not the ISA
    k = parse("xnn_f32_vadd_ukernel__aarch64_neonfma_aarch32")
    assert (k.arch, k.isa) == ("aarch64", "neonfma")
    # every name of the list: the arch is the first of these tokens in its target
    for n in NAMES:
        toks = n.split("__")[1].split("_")
        arch = next((t for t in toks if t in ("aarch64", "aarch32", "amd64")), "")
        assert parse(n).arch == arch, n


def test_micro_architecture_tuning():
    assert parse("xnn_f32_gemm_minmax_ukernel_6x8__asm_aarch64_neonfma_cortex_a53").uarch == "cortex_a53"
    assert parse("xnn_f16_gemm_minmax_ukernel_6x16__asm_aarch64_neonfp16arith_cortex_a55r0").uarch == "cortex_a55r0"
    # "cortex" as the last token, or followed by something that is not a core name, is no tuning
    assert parse("xnn_f32_gemm_minmax_ukernel_6x8__aarch64_neonfma_cortex").uarch == ""
    assert parse("xnn_f32_gemm_minmax_ukernel_6x8__aarch64_neonfma_cortex_x1").uarch == ""
    assert parse("xnn_f32_gemm_minmax_ukernel_6x8__aarch64_neonfma_ld64_cortex_a7").uarch == "cortex_a7"
    assert sum(1 for n in NAMES if parse(n).uarch) == sum(1 for n in NAMES if re.search(r"_cortex_a\d+", n))


def test_names_without_xnn_prefix_or_datatype():
    k = parse("f32_gemm_minmax_ukernel_4x8__neon")
    assert (k.dtype, k.op, k.tile, k.isa) == ("f32", "gemm", "4x8", "neon")
    k = parse("xnn_gemm_minmax_ukernel_4x8__neon")                    # no datatype token
    assert (k.dtype, k.op, k.variant) == ("", "gemm", "minmax")
    k = parse("xnn_f32_gemm_minmax_ukernel_4x8_extra__neon")          # a tile of two tokens keeps both
    assert k.tile == "4x8_extra" and (k.tile_mr, k.tile_nr) == (None, None)


def test_transpose_tile_follows_the_double_underscore():
    k = parse("xnn_x16_transposec_ukernel__8x8_reuse_dec_zip_neon")
    assert (k.tile, k.tile_mr, k.tile_nr, k.isa) == ("8x8", 8, 8, "neon")
    # only for transposes, and only a block shape
    assert parse("xnn_f32_vadd_ukernel__4x4_neon").tile == ""
    assert parse("xnn_x16_transposec_ukernel__reuse_neon").tile == ""
    assert all(parse(n).tile for n in NAMES if parse(n).op in ("transposec", "transposev"))


def test_kleidiai_by_datatype_when_the_wrapper_is_not_in_the_map():
    # packed-LHS / qp8 datatypes exist only as KleidiAI wrappers (source: XNNPACK's gemm-config.c, the pf32/pf16/pqs8
    # configs and the qp8 KleidiAI configs); tiles not in the map still count as KleidiAI
    for name in ("xnn_pf16_gemm_minmax_ukernel_64x64c2__neonsme2", "xnn_pqs8_qc8w_gemm_minmax_ukernel_64x64c4__neonsme2",
                 "xnn_qp8_f32_qc4w_gemm_minmax_ukernel_2x64c4__neonsme2", "xnn_pf32_gemm_minmax_ukernel_64x64__neonsme",
                 "xnn_x8_packq_f32qp8_ukernel__scalar_u1", "xnn_x32_pack_lh_ukernel__gemm_neonsme",
                 "xnn_x16_pack_lh_ukernel__gemm_neonsme2_v2"):
        assert name not in kleidiai_wrappers()
        assert kleidiai_kernel(parse(name)) == "kai (unmapped)", name
    # an LHS pack for NEON, or any other datatype, is not KleidiAI
    for name in ("xnn_x32_pack_lh_ukernel__neon", "xnn_f32_gemm_minmax_ukernel_64x64__neonsme2",
                 "xnn_f32_qs8_vcvt_ukernel__avx2_u64"):
        assert kleidiai_kernel(parse(name)) is None, name
