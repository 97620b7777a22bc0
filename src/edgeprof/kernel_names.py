"""XNNPACK microkernel names: the naming grammar, ISA families and the KleidiAI wrappers.

A logged kernel name reads ``xnn_<dtypes>_<op>[_<variant>…]_ukernel[_<tile>]__<target>``. Everything
after the double underscore is the target: an optional ``asm`` and architecture token (``aarch64``,
``amd64``…), exactly one ISA token (``neonsme2``, ``neonfma``, ``avx2``, ``scalar``…), then
micro-architecture tuning (``cortex_a53``) and implementation details (``u16``, ``acc2``, ``prfm``).
``transposec``/``transposev`` put their tile right after the ``__``.

ISA tokens are matched whole (split on ``_``), never as substrings: ``sme`` is inside ``neonsme2`` and
``avx`` is a prefix of ``avx2``, and counting those twice is the classic mistake.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

# ISA families, in the order a report lists them (accelerated first)
FAMILIES = ("SME2", "SME", "NEON", "Arm-scalar", "AVX-512", "AVX2-FMA", "AVX", "SSE", "WebAssembly", "RISC-V", "Hexagon",
            "scalar")
UNKNOWN = "unknown"

# ISA token → family. Most tokens name their family by their prefix (``neon…``, ``avx512…``, ``sse…``, ``wasm…``,
# ``rvv…``; every token of XNNPACK's ISA list at the ExecuTorch-pinned commit is checked against a labelled list in
# tests/core/test_kernel_names.py); this table holds the tokens whose spelling does not tell, and it wins.
_ISA = {
    "sme2": "SME2",  # a KleidiAI engine name (the prefix rule would say SME)
    # Arm without NEON vectors: ARMv6 SIMD32 (packed 8/16-bit lanes in 32-bit registers), ARMv8.2 scalar FP16
    "fp16arith": "Arm-scalar", "armsimd32": "Arm-scalar",
    "avx2": "AVX2-FMA", "fma3": "AVX2-FMA", "avx": "AVX", "f16c": "AVX",
    "hvx": "Hexagon",
    "scalar": "scalar",
}
# tokens that only say which architecture an (often hand-written) kernel is for
_ARCH = {"aarch64": "NEON", "aarch32": "NEON", "amd64": None, "wasm32": "WebAssembly", "wasmsimd32": "WebAssembly",
         "wasmrelaxedsimd32": "WebAssembly"}
# the spelling rules, in order (``neonsme2`` before ``neonsme`` before ``neon``); tokens newer than XNNPACK's list
# get a family the same way
_ISA_PATTERNS = (
    (re.compile(r"^neonsme2"), "SME2"), (re.compile(r"^(neon)?sme"), "SME"), (re.compile(r"^neon"), "NEON"),
    (re.compile(r"^avx(512|256|10)"), "AVX-512"), (re.compile(r"^avxvnni"), "AVX2-FMA"),
    (re.compile(r"^s{1,2}se\d*"), "SSE"), (re.compile(r"^wasm"), "WebAssembly"), (re.compile(r"^rvv"), "RISC-V"),
)
_DTYPE = re.compile(r"^(?:xx|(?:f|bf|pf|pqs|qs|qu|qd|qdu|qp|qc|qb|s|u|x|i|cs)\d+(?:acc|w)?)$")
_GEMM_TILE = re.compile(r"^(\d{1,9})x(\d{1,9})(v?)(?:c(\d{1,9}))?(?:s(\d{1,9}))?$")
_BLOCK_TILE = re.compile(r"^\d+x\d+$")
_UARCH_CORE = re.compile(r"^a\d+(?:r\d+)?$")

GEMM_KINDS = ("gemm", "igemm", "dqgemm", "dqigemm", "qp8gemm", "qp8gemm_bl")
_BINARY = {"vadd", "vsub", "vmul", "vdiv", "vmax", "vmin", "vsqrdiff", "vprelu", "vcopysign"}
# datatypes whose GEMM kernels exist only as KleidiAI wrappers (packed LHS: SME/SME2; qp8: NEON or SME)
KLEIDIAI_DTYPES = ("pf32", "pf16", "pqs8", "qp8")


@dataclass(frozen=True)
class KernelName:
    """One kernel identifier, decoded. Fields are "" / None where the name does not say."""

    name: str
    dtype: str            # all datatype tokens: "qd8_f32_qc8w"
    op: str               # "gemm", "igemm", "dwconv", "vadd", "transposec", …
    variant: str          # "minmax", "minmax_fp32", "chw", …
    tile: str             # "4x8c8", "9p16c", "4x4" (transposes), …
    target: str           # everything after "__" (the Arm kit's arch_chain)
    isa: str              # the ISA token, exactly: "neonsme2", "neonfma", "avx2", …
    isa_family: str       # one of FAMILIES, or "unknown"
    arch: str             # "aarch64", "amd64", … or ""
    asm: bool             # hand-written assembly
    uarch: str            # "cortex_a53", … or ""
    tile_mr: int | None
    tile_nr: int | None
    tile_kr: int | None
    kind: str             # the log's microkernel kind ("gemm", "dqigemm", "transpose", …), inferred from the name

    @property
    def is_gemm(self) -> bool:
        return self.kind in GEMM_KINDS

    @property
    def has_sme(self) -> bool:
        """SME but not SME2 (so a kernel is never counted under both)."""
        return self.isa_family == "SME"

    @property
    def has_sme2(self) -> bool:
        return self.isa_family == "SME2"


def isa_family(token: str) -> str:
    """Family of one ISA token (the exact table first, then by spelling)."""
    fam = _ISA.get(token)
    if fam:
        return fam
    for pat, fam in _ISA_PATTERNS:
        if pat.match(token):
            return fam
    return UNKNOWN


def _kind(dtypes: list[str], op: str, variant: str) -> str:
    first = dtypes[0] if dtypes else ""
    if op in ("gemm", "igemm"):
        if first in ("qd8", "qdu8"):
            return "dq" + op
        if first == "qp8":
            return "qp8gemm_bl" if "qb4w" in dtypes else "qp8gemm"
        return op
    if op == "dwconv2d":
        return "dwconv2d_chw"
    if op == "conv":
        return "conv_hwc2chw"
    if op == "ibilinear" and variant.startswith("chw"):
        return "ibilinear_chw"
    if op in ("transposec", "transposev"):
        return "transpose"
    if op.startswith("rd"):
        return "reduce_discontiguous"
    if op in ("rsum", "rsum2", "rmax", "rmin", "rminmax"):
        return "reduce"
    if op == "vcmul":
        return "cmul"
    if op == "vmulcaddc":
        return "vmulcaddc"
    if op.startswith("v"):
        b = "v" + op[2:] if op.startswith("vr") else op
        if b not in _BINARY and b.endswith("c"):
            b = b[:-1]
        return "binary" if b in _BINARY else "unary"
    if op == "pack":
        return "pack_lh"
    return op


def _parse_tile(tile: str):
    m = _GEMM_TILE.match(tile)
    if not m:
        return None, None, None
    return int(m.group(1)), int(m.group(2)), (int(m.group(4)) if m.group(4) else None)


@lru_cache(maxsize=8192)
def parse(name: str) -> KernelName:
    """Decode a kernel identifier. Never raises: unknown parts stay empty and the family ``unknown``."""
    name = name.strip()
    base, sep, target = name.partition("__")
    toks = base.split("_")
    if toks and toks[0] == "xnn":
        toks = toks[1:]
    tile = ""
    if "ukernel" in toks:
        i = toks.index("ukernel")
        tile = "_".join(toks[i + 1:])
        toks = toks[:i]
    j = 0
    while j < len(toks) and _DTYPE.match(toks[j]):
        j += 1
    dtypes = toks[:j]
    op = toks[j] if j < len(toks) else ""
    variant = "_".join(toks[j + 1:])
    ttoks = [t for t in target.split("_") if t] if sep else []
    if op in ("transposec", "transposev") and ttoks and _BLOCK_TILE.match(ttoks[0]) and not tile:
        tile = ttoks[0]
    isa, family, arch, asm, uarch = "", UNKNOWN, "", False, ""
    for k, t in enumerate(ttoks):
        if t == "asm":
            asm = True
        elif t in _ARCH and not arch:
            arch = t
        elif t == "cortex" and k + 1 < len(ttoks) and _UARCH_CORE.match(ttoks[k + 1]):
            uarch = f"cortex_{ttoks[k + 1]}"
        elif not isa:
            fam = isa_family(t)
            if fam != UNKNOWN:
                isa, family = t, fam
    if not isa and arch and (arch_family := _ARCH.get(arch)):
        isa, family = arch, arch_family  # e.g. an aarch64-only kernel that names no further extension
    mr, nr, kr = _parse_tile(tile)
    return KernelName(name=name, dtype="_".join(dtypes), op=op, variant=variant, tile=tile, target=target,
                      isa=isa, isa_family=family, arch=arch, asm=asm, uarch=uarch, tile_mr=mr, tile_nr=nr,
                      tile_kr=kr, kind=_kind(dtypes, op, variant))


@lru_cache(maxsize=1)
def kleidiai_wrappers() -> dict[str, str]:
    """XNNPACK wrapper name → the KleidiAI kernel it calls (``kai_…``), for the pinned XNNPACK commit."""
    text = resources.files("edgeprof").joinpath("data/kleidiai_wrappers.tsv").read_text(encoding="utf-8")
    out = {}
    for line in text.splitlines():
        wrapper, _, kai = line.partition("\t")
        if wrapper and kai:
            out[wrapper.strip()] = "kai_" + kai.strip()
    return out


def kleidiai_kernel(k: KernelName) -> str | None:
    """The KleidiAI kernel behind an XNNPACK wrapper: its name when known, ``"kai (unmapped)"`` when the
    datatype path exists only in KleidiAI, else None."""
    kai = kleidiai_wrappers().get(k.name)
    if kai:
        return kai
    first = k.dtype.split("_")[0] if k.dtype else ""
    if first in KLEIDIAI_DTYPES or (k.op == "pack" and k.isa_family in ("SME", "SME2")) or k.op == "packq":
        return "kai (unmapped)"
    return None


def normalize_kind(kind: str) -> str:
    """The log's microkernel kind as the Arm kit reports it (lower case; transposes are ``transpose``)."""
    kind = kind.strip().lower()
    return "transpose" if kind in ("transposec", "transposev") else kind
