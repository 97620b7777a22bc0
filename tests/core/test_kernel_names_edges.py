"""Edges of the XNNPACK kernel-name grammar (../shared/reference/xnnpack_kernels.md, sections 2.1-2.6): the
architecture-only targets, the tile forms, the micro-architecture suffix at the end of a name, the ISA families a
report lists, the GEMM kinds of quantized kernels and the KleidiAI-only datatypes."""

from __future__ import annotations

import pytest

from edgeprof.kernel_names import FAMILIES, isa_family, kleidiai_kernel, parse

# one ISA token per family the reference's classifier names, with that family (section 2.5)
TOKEN_FAMILY = [
    ("neonsme2", "SME2"), ("neonsme", "SME"), ("neonfma", "NEON"), ("fp16arith", "Arm-scalar"),
    ("armsimd32", "Arm-scalar"), ("avx512skx", "AVX-512"), ("avx2", "AVX2-FMA"), ("avx", "AVX"), ("f16c", "AVX"),
    ("sse41", "SSE"), ("wasmsimd", "WebAssembly"), ("rvv", "RISC-V"), ("hvx", "Hexagon"), ("scalar", "scalar"),
]


@pytest.mark.parametrize("token,family", TOKEN_FAMILY)
def test_each_isa_token_gets_a_family_the_report_lists(token, family):
    assert isa_family(token) == family
    assert family in FAMILIES


def test_the_report_lists_the_families_accelerated_first():
    assert FAMILIES.index("SME2") < FAMILIES.index("SME") < FAMILIES.index("NEON") < FAMILIES.index("Arm-scalar")
    assert FAMILIES.index("AVX-512") < FAMILIES.index("AVX2-FMA") < FAMILIES.index("AVX") < FAMILIES.index("SSE")
    assert FAMILIES[-1] == "scalar"


def test_sme2_as_a_kleidiai_engine_token_is_sme2_not_sme():
    # KleidiAI spells its engines sme / sme2 (kai_…_sme2_mopa); the spelling rule alone would say SME
    assert isa_family("sme2") == "SME2"
    assert isa_family("sme") == "SME"


@pytest.mark.parametrize("arch,family", [("aarch64", "NEON"), ("aarch32", "NEON"), ("wasm32", "WebAssembly"),
                                         ("wasmsimd32", "WebAssembly"), ("wasmrelaxedsimd32", "WebAssembly")])
def test_a_target_naming_only_an_architecture_takes_its_family(arch, family):
    k = parse(f"xnn_f32_gemm_minmax_ukernel_4x8__{arch}")
    assert (k.arch, k.isa, k.isa_family) == (arch, arch, family)


@pytest.mark.parametrize("arch,isa", [("wasm32", "wasmsimd"), ("wasmsimd32", "wasmsimd"),
                                      ("wasmrelaxedsimd32", "wasmrelaxedsimd"), ("aarch64", "neonfma")])
def test_an_architecture_token_before_the_isa_is_the_arch_not_the_isa(arch, isa):
    k = parse(f"xnn_f32_gemm_minmax_ukernel_4x8__{arch}_{isa}")
    assert (k.arch, k.isa) == (arch, isa)


def test_the_reference_worked_example_with_micro_architecture_tuning():
    # "f32 GEMM, fused clamp, MR=6 × NR=8, hand-written AArch64 asm, NEON+FMA, tuned for Cortex-A75, with prefetch"
    k = parse("xnn_f32_gemm_minmax_ukernel_6x8__asm_aarch64_neonfma_cortex_a75_prfm")
    assert (k.tile_mr, k.tile_nr, k.tile_kr, k.asm, k.arch, k.isa, k.uarch) == \
        (6, 8, None, True, "aarch64", "neonfma", "cortex_a75")


def test_a_micro_architecture_at_the_very_end_of_the_name():
    k = parse("xnn_f32_gemm_minmax_ukernel_1x8__asm_aarch64_neonfma_cortex_a53")  # in XNNPACK's logged list
    assert (k.uarch, k.isa, k.tile_mr, k.tile_nr) == ("cortex_a53", "neonfma", 1, 8)


def test_a_name_cut_off_after_cortex_parses_without_a_micro_architecture():
    k = parse("xnn_f32_gemm_minmax_ukernel_1x8__asm_aarch64_neonfma_cortex")
    assert (k.uarch, k.isa, k.isa_family) == ("", "neonfma", "NEON")


def test_a_name_of_datatypes_only_has_no_op():
    k = parse("xnn_qd8_f32")
    assert (k.dtype, k.op, k.kind) == ("qd8_f32", "", "")


def test_gemm_tiles_with_k_block():
    k = parse("xnn_qs8_qc8w_gemm_minmax_fp32_ukernel_4x16c4__neondot")
    assert (k.tile, k.tile_mr, k.tile_nr, k.tile_kr) == ("4x16c4", 4, 16, 4)


def test_a_transpose_tile_follows_the_double_underscore():
    k = parse("xnn_x32_transposec_ukernel__4x4_aarch64_neon_tbl128")  # the reference's example
    assert (k.tile, k.tile_mr, k.tile_nr, k.isa, k.kind) == ("4x4", 4, 4, "neon", "transpose")


@pytest.mark.parametrize("name,kind", [
    ("xnn_qd8_f32_qc8w_gemm_minmax_ukernel_10x16c8__avx512vnni_prfm", "dqgemm"),
    ("xnn_qd8_f32_qc8w_igemm_minmax_ukernel_4x8c8__avx2", "dqigemm"),
    ("xnn_qp8_f32_qb4w_gemm_minmax_ukernel_8x4c16s2__neoni8mm_mstep2", "qp8gemm_bl"),
    ("xnn_qp8_f32_qc4w_gemm_minmax_ukernel_16x64c4__neonsme2", "qp8gemm"),
])
def test_quantized_gemm_kinds_are_gemms(name, kind):
    k = parse(name)
    assert (k.kind, k.is_gemm) == (kind, True)


def test_a_vector_kernel_is_not_a_gemm():
    assert parse("xnn_f32_vadd_ukernel__avx_u16").is_gemm is False


@pytest.mark.parametrize("name", [
    # master-only SME2 kernel (reference, section 0 and the KleidiAI table): not in the pinned wrapper map
    "xnn_qp8_f16_qc8w_gemm_minmax_ukernel_16x64c4__neonsme2",
    # packed-LHS kernels at a tile the pinned map lacks
    "xnn_pf32_gemm_minmax_ukernel_64x64__neonsme2",
    "xnn_pf16_gemm_minmax_ukernel_64x64c2__neonsme2",
    "xnn_pqs8_qc8w_gemm_minmax_ukernel_64x64c4__neonsme2",
])
def test_kleidiai_only_datatypes_are_kleidiai_even_when_unmapped(name):
    assert kleidiai_kernel(parse(name)) == "kai (unmapped)"


def test_an_unmapped_kernel_of_an_ordinary_datatype_is_not_kleidiai():
    assert kleidiai_kernel(parse("xnn_f32_gemm_minmax_ukernel_64x64__neonfma")) is None
