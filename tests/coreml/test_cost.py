"""Static FLOPs and bytes of Core ML programs against independent counts: hand counts from the models'
definitions, torch's FLOP counter on the torch models they were converted from, and coremltools' own
program loader (pymil) for the dense weight bytes."""

from __future__ import annotations

import contextlib
import io
import os

import numpy as np
import pytest

from edgeprof.analysis.mil_cost import op_costs, totals, type_table
from edgeprof.io.coreml import read_bundle

from .conftest import PACKAGES, SAMPLES, package, require_coremltools


def _flops(name: str) -> tuple[int, int]:
    prog = read_bundle(package(name))
    t = totals(prog, op_costs(prog))
    assert t["ops_flops_not_known"] == []
    return t["flops"], 2 * t["macs"]


def _lin(n_out, k):  # the converter gives every linear a bias (zeros when the source had none)
    return 2 * n_out * k + n_out


# conv(3→16, 3×3, same) on 1×3×32×32 (+bias), relu, 2×2 max-pool, linear 4096→10 (+bias), softmax (5/element)
CONV_NET = (2 * (16 * 32 * 32) * 3 * 9 + 16 * 32 * 32) + 16 * 32 * 32 + (16 * 16 * 16) * 4 + _lin(10, 4096) + 5 * 10
S, D, H = 16, 64, 4
ATTENTION = (8 * S * D            # layer_norm
             + 4 * _lin(S * D, D)   # q, k, v, o projections
             + 2 * (H * S * S) * (D // H) * 2   # QKᵀ and PV
             + H * S * S          # scale
             + 5 * H * S * S      # softmax
             + S * D              # residual
             + 8 * S * D          # layer_norm
             + _lin(S * 4 * D, D) + 4 * (S * 4 * D) + _lin(S * D, 4 * D)  # FFN with gelu
             + S * D)             # residual
SDPA = 4 * _lin(S * D, D) + 2 * 2 * (H * S * S * (D // H)) + 5 * H * S * S


@pytest.mark.parametrize("name, expected", [
    ("conv_relu_linear_ios16", CONV_NET), ("conv_relu_linear_ios18", CONV_NET), ("conv_palettized4_ios16", CONV_NET),
    ("conv_palettized4_ios18", CONV_NET), ("conv_int8_ios16", CONV_NET), ("conv_int4_blockwise_ios18", CONV_NET),
    ("conv_pruned50_ios18", CONV_NET), ("attention_block_ios17", ATTENTION), ("attention_palettized6_ios17", ATTENTION),
    ("sdpa_block_ios18", SDPA),
    # int32 model: reduce_sum over (1,8,32) and argmax over it, ×10 and the int add on (1,8), the gather's
    # negative-index guard (greater_equal, add, select on (1,8))
    ("int32_gather_fp32prec_ios17", 256 + 256 + 8 + 8 + 3 * 8),
])
def test_flops_equal_hand_counts(name, expected):
    assert _flops(name)[0] == expected


def test_compressed_weights_do_not_change_flops_but_shrink_storage():
    base = read_bundle(package("conv_relu_linear_ios18"))
    tb = totals(base, op_costs(base))
    for name in ("conv_palettized4_ios18", "conv_int4_blockwise_ios18", "conv_pruned50_ios18"):
        p = read_bundle(package(name))
        t = totals(p, op_costs(p))
        assert t["flops"] == tb["flops"] and t["weight_read"] == tb["weight_read"]
        assert t["weight_stored_unique"] < 0.6 * tb["weight_stored_unique"], name


@pytest.fixture(scope="module")
def torch_models():
    if os.environ.get("EDGEPROF_REQUIRE_RUN"):  # CI: torch (the run extra) is there, the oracle must run
        import torch
    else:
        torch = pytest.importorskip("torch", reason="torch (the run extra) is not installed")
    from torch import nn

    class ToyCNN(nn.Module):  # the definition the fixture was converted from (fixtures/coreml/recipes)
        def __init__(self):
            super().__init__()
            self.conv1, self.bn1 = nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16)
            self.conv2, self.pool, self.fc = nn.Conv2d(16, 32, 3, padding=1, stride=2), nn.AdaptiveAvgPool2d(1), nn.Linear(32, 10)

        def forward(self, x):
            x = torch.relu(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
            return self.fc(self.pool(x).flatten(1))

    class TinyTransformer(nn.Module):
        def __init__(self, vocab=128, d=64, heads=4, layers=2, seq=16):
            super().__init__()
            self.emb, self.pos = nn.Embedding(vocab, d), nn.Parameter(torch.zeros(1, seq, d))
            layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=4 * d, batch_first=True, dropout=0.0)
            self.enc, self.head = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False), nn.Linear(d, vocab)

        def forward(self, ids):
            return self.head(self.enc(self.emb(ids) + self.pos))

    return torch, ToyCNN().eval(), TinyTransformer().eval()


def _torch_flops(torch, model, x) -> int:
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    # the math attention path, so QKᵀ and PV are counted (the fused CPU kernel has no FLOP formula)
    with sdpa_kernel(SDPBackend.MATH), counter, contextlib.redirect_stdout(io.StringIO()):
        model(x)
    return counter.get_total_flops()


@pytest.mark.parametrize("frontend", ["jit", "export"])
def test_matrix_flops_match_torchs_flop_counter(torch_models, frontend):
    """torch counts 2·MACs of convolutions and matrix products (no bias, no elementwise): the same as 2 × our
    multiply-adds, within 1 %."""
    torch, cnn, tr = torch_models
    want_cnn = _torch_flops(torch, cnn, torch.zeros(1, 3, 32, 32))
    want_tr = _torch_flops(torch, tr, torch.zeros(1, 16, dtype=torch.long))
    got_cnn = _flops(f"torch_toycnn_{frontend}")[1]
    got_tr = _flops(f"torch_tinytransformer_{frontend}")[1]
    assert want_cnn > 3_000_000 and want_tr > 3_000_000
    assert abs(got_cnn - want_cnn) <= 0.01 * want_cnn, (got_cnn, want_cnn)
    assert abs(got_tr - want_tr) <= 0.01 * want_tr, (got_tr, want_tr)


@pytest.fixture(scope="module")
def pymil():
    require_coremltools()
    import coremltools as ct

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        from coremltools.converters.mil.frontend.milproto.load import load
    return ct, load


def _pymil_weight_read(ct, load, path) -> int:
    """Dense bytes of the constant tensors (> 64 B) each compute op consumes, materialised by coremltools."""
    m = ct.models.MLModel(str(path), skip_model_load=True)
    spec = m.get_spec()
    prog = load(model_spec=spec, specification_version=spec.specificationVersion, file_weights_dir=m.weights_dir)
    total = 0
    for op in prog.functions["main"].operations:
        if op.op_type == "const" or op.op_type.startswith("constexpr_"):
            continue
        for v in op.inputs.values():
            for var in (v if isinstance(v, (list, tuple)) else [v]):
                src = var.op
                if src is None or not (src.op_type == "const" or src.op_type.startswith("constexpr_")):
                    continue
                val = src.materialized_val_inference() if src.op_type.startswith("constexpr_") else var.val
                arr = np.asarray(val)
                if arr.dtype.kind in "USO":  # strings are parameters (a mode, a dtype name), never weights
                    continue
                if arr.dtype.kind in "iub" and not src.op_type.startswith("constexpr_"):
                    nbytes = arr.size * {"int32": 4, "int16": 2, "uint16": 2}.get(str(arr.dtype), arr.itemsize)
                else:
                    nbytes = arr.size * (2 if arr.dtype == np.float16 else arr.itemsize)
                if nbytes > 64:
                    total += nbytes
    return total


@pytest.mark.parametrize("name", [n for n in PACKAGES if "int32" not in n and "tinytransformer" not in n])
def test_dense_weight_bytes_match_coremltools_materialised_values(pymil, name):
    ct, load = pymil
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        want = _pymil_weight_read(ct, load, package(name))
    prog = read_bundle(package(name))
    assert totals(prog, op_costs(prog))["weight_read"] == want > 10_000


def test_type_table_sums_to_the_op_rows_and_the_mlmodelc_gives_the_same_costs(compiled):
    for name in SAMPLES:
        pkg, txt = read_bundle(package(name)), read_bundle(compiled(name))
        rp, rt = op_costs(pkg), op_costs(txt)
        assert [(r.index, r.type, r.flops, r.act_read, r.weight_read, r.weight_stored, r.written) for r in rp] == \
               [(r.index, r.type, r.flops, r.act_read, r.weight_read, r.weight_stored, r.written) for r in rt]
        tt = type_table(rp)
        assert sum(t["count"] for t in tt) == sum(r.type != "const" for r in rp)
        assert sum(t["flops"] for t in tt) == sum(r.flops or 0 for r in rp)


def test_gather_from_a_constant_table_reads_only_the_rows():
    prog = read_bundle(package("int32_kvcache_state_ios18"))
    g = next(r for r in op_costs(prog) if r.type == "gather")
    assert g.weight_read == 8 * 32 * 2  # 8 token rows of 32 fp16, not the 100×32 table
    su = next(r for r in op_costs(prog) if r.type == "slice_update")
    assert "in-place slice 512 B" in su.note
    ws = next(r for r in op_costs(prog) if r.type == "write_state")
    assert ws.written == 64 * 32 * 2
