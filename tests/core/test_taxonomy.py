"""The operator taxonomy: every XNNPACK operator string, every portable kernel, the MIL ops of the Core ML
fixtures, the Arm kit's known misclassifications, dtype tokens and user overrides."""

from __future__ import annotations

import json

import pytest

from edgeprof.errors import InputError
from edgeprof.io.taxonomy_file import read_taxonomy as load_overrides
from edgeprof.taxonomy import CATEGORIES, FRAMEWORK, TAXONOMY_VERSION, classify

from testdata import DATA


def xnnpack_strings():
    rows = [line.rstrip("\n").split("\t") for line in (DATA / "xnnpack_operator_strings.tsv").read_text().splitlines()
            if line and not line.startswith("#")][1:]
    return [(name, expected) for name, _ref, expected in rows]


@pytest.mark.parametrize("name,expected", xnnpack_strings())
def test_every_xnnpack_operator_string(name, expected):
    c = classify(name)
    assert c.category == expected and c.source == "xnnpack"
    # as they appear in ETDumps: with an instance suffix (and a microkernel type where XNNPACK adds one)
    assert classify(name + " #3").category == expected


PORTABLE_EXPECTED = {  # one representative per rule of the ATen table (the full list is checked for coverage below)
    "convolution.out": "CONV", "addmm.out": "GEMM", "mm.out": "GEMM", "bmm.out": "GEMM", "add.out": "ELEMENTWISE",
    "where.self_out": "ELEMENTWISE", "bitwise_and.Tensor_out": "ELEMENTWISE", "relu.out": "ACTIVATION",
    "hardtanh.out": "ACTIVATION", "_softmax.out": "ACTIVATION", "gelu.out": "ACTIVATION",
    "native_layer_norm.out": "NORM", "_native_batch_norm_legit_no_training.out": "NORM", "native_group_norm.out": "NORM",
    "avg_pool2d.out": "POOL", "max_pool2d_with_indices.out": "POOL", "_adaptive_avg_pool2d.out": "POOL",
    "mean.out": "REDUCTION", "sum.IntList_out": "REDUCTION", "argmax.out": "REDUCTION", "topk.values": "REDUCTION",
    "permute_copy.out": "DATA_MOVEMENT", "cat.out": "DATA_MOVEMENT", "slice_copy.Tensor_out": "DATA_MOVEMENT",
    "constant_pad_nd.out": "DATA_MOVEMENT", "_to_dim_order_copy.out": "DATA_MOVEMENT", "_clone_dim_order.out": "DATA_MOVEMENT",
    "expand_copy.out": "DATA_MOVEMENT", "full_like.out": "DATA_MOVEMENT", "scatter_add.out": "DATA_MOVEMENT",
    "view_copy.out": "RESHAPE", "unsqueeze_copy.out": "RESHAPE", "squeeze_copy.dims_out": "RESHAPE",
    "embedding.out": "EMBEDDING", "index_select.out": "EMBEDDING", "gather.out": "EMBEDDING",
    "upsample_bilinear2d.vec_out": "RESIZE", "upsample_nearest2d.vec_out": "RESIZE", "grid_sampler_2d.out": "RESIZE",
    "rand.out": "OTHER", "_cdist_forward.out": "OTHER",
}


@pytest.mark.parametrize("op,expected", sorted(PORTABLE_EXPECTED.items()))
def test_portable_kernel_rules(op, expected):
    c = classify(f"native_call_{op}")
    assert c.category == expected and c.source == "portable"


def test_every_portable_kernel_gets_its_labelled_category():
    ops = [ln.strip() for ln in (DATA / "et_portable_functions_yaml_ops.txt").read_text().splitlines() if ln.strip()]
    assert len(ops) == 209
    labels = {n: spec for n, table, spec, _ in _labels() if table == "aten"}
    for op in ops:
        # the kernel's base name read here, not by the module: no namespace, overload or leading underscores, and
        # ExecuTorch's `<view>_copy` kernels labelled as their view op when only that is listed
        base = op.split("::")[-1].split(".")[0].lstrip("_")
        if base not in labels and base.endswith("_copy"):
            base = base[: -len("_copy")]
        assert base in labels, op
        c = classify("native_call_" + op.split("::")[-1])
        assert f"{c.category}/{c.subtype}" == labels[base], op


def test_mil_ops_of_the_coreml_fixtures():
    ops = sorted({o for v in json.loads((DATA / "coreml_fixture_mil_op_types.json").read_text()).values() for o in v})
    expected = {
        "add": "ELEMENTWISE", "cast": "QUANT", "concat": "DATA_MOVEMENT", "const": "OTHER",
        "constexpr_affine_dequantize": "QUANT", "constexpr_blockwise_shift_scale": "QUANT",
        "constexpr_lut_to_dense": "QUANT", "constexpr_sparse_to_dense": "QUANT", "conv": "CONV",
        "expand_dims": "RESHAPE", "gather": "EMBEDDING", "gelu": "ACTIVATION", "greater_equal": "ELEMENTWISE",
        "layer_norm": "NORM", "linear": "GEMM", "matmul": "GEMM", "max_pool": "POOL", "mul": "ELEMENTWISE",
        "read_state": "DATA_MOVEMENT", "reduce_argmax": "REDUCTION", "reduce_mean": "REDUCTION", "reduce_sum": "REDUCTION",
        "relu": "ACTIVATION", "reshape": "RESHAPE", "scaled_dot_product_attention": "ATTENTION", "select": "ELEMENTWISE",
        "slice_by_index": "DATA_MOVEMENT", "slice_update": "DATA_MOVEMENT", "softmax": "ACTIVATION", "squeeze": "RESHAPE",
        "transpose": "DATA_MOVEMENT", "write_state": "DATA_MOVEMENT",
    }
    assert ops == sorted(expected)
    for op in ops:
        assert classify(op).category == expected[op], op
        assert classify(f"ios18.{op}").category == expected[op], op  # anemll reports prefix the opset


@pytest.mark.parametrize("name,expected", [
    # the Arm kit's misclassifications, fixed
    ("Convert (NC, F32, QD8)", "QUANT"), ("Convert (NC) #2", "QUANT"), ("layer_norm", "NORM"),
    ("native_call_native_layer_norm.out", "NORM"), ("aten.native_layer_norm.default", "NORM"),
    ("Max Pooling (NHWC, F32) #1", "POOL"), ("Average Pooling (NHWC, F32) Average Pooling #1", "POOL"),
    ("HardSwish (NC) #4", "ACTIVATION"), ("Concatenate", "DATA_MOVEMENT"), ("Copy (NC, X32) #1", "DATA_MOVEMENT"),
    ("Batch Matrix Multiply (NC, F32) GEMM #1", "GEMM"), ("Square Root (NC)", "ELEMENTWISE"),
    ("Resize Bilinear (NHWC) #1", "RESIZE"), ("upsample_bilinear2d", "RESIZE"), ("aten::addmm", "GEMM"),
    ("aten.mm.default", "GEMM"), ("aten.cat.default", "DATA_MOVEMENT"), ("Softmax (NC, F32) #2", "ACTIVATION"),
    ("Mean (ND) Reduce2 #1", "REDUCTION"), ("Copy Sign (ND)", "ELEMENTWISE"), ("Reciprocal Square Root (NC)", "ELEMENTWISE"),
    # other sources
    ("dim_order_ops._to_dim_order_copy.default", "DATA_MOVEMENT"),
    ("quantized_decomposed.dequantize_per_tensor.default", "QUANT"),
    ("quantized_decomposed::quantize_per_channel", "QUANT"), ("aten.scaled_dot_product_attention.default", "ATTENTION"),
    ("LayerNorm", "NORM"), ("Conv2D", "CONV"), ("DepthwiseConv2D", "CONV"), ("InnerProduct", "GEMM"),
    ("ResizeNearestNeighbor", "RESIZE"), ("my_mystery_op", "OTHER"),
])
def test_names_from_every_source(name, expected):
    assert classify(name).category == expected


@pytest.mark.parametrize("name,subtype,dtypes", [
    ("Convolution (NHWC, F32) IGEMM #3", "igemm", ("F32",)),
    ("Convolution (NHWC, QC8) DWConv #1", "depthwise", ("QC8",)),
    ("Convolution (NHWC, F32) VMulCAddC", "depthwise", ("F32",)),
    ("Convolution (NHWC, PQS8, QS8, QC8W) IGEMM", "igemm", ("PQS8", "QS8", "QC8W")),
    ("Deconvolution (NHWC, F32) Subconv2D", "transposed", ("F32",)),
    ("Fully Connected (NC, QD8, F32, QC8W) GEMM #2", "fully-connected", ("QD8", "F32", "QC8W")),
    ("Fully Connected (NC, PF32) GEMM", "fully-connected", ("PF32",)),
    ("Batch Matrix Multiply (NC, F32) GEMM", "batched-matmul", ("F32",)),
    ("Convert (NC, F32, QP8)", "dynamic-quantize", ("F32", "QP8")),
    ("Transpose (ND, X8) #5", "transpose", ("X8",)),
])
def test_subtypes_and_dtype_tokens(name, subtype, dtypes):
    c = classify(name)
    assert (c.subtype, c.dtypes) == (subtype, dtypes)


@pytest.mark.parametrize("name", ["Method::execute", "Method::init", "Program::load_method", "OPERATOR_CALL",
                                  "DELEGATE_CALL", "JF_CALL", "MOVE_CALL", "FREE_CALL"])
def test_framework_events_are_not_operators(name):
    assert classify(name).category == FRAMEWORK == "FRAMEWORK"


def test_toml_overrides(tmp_path):
    f = tmp_path / "tax.toml"
    f.write_text('version = "team-2"\n[ops]\n"Fully Connected" = "GEMM/fc-or-1x1-conv"\nmy_fused_gelu = "ACTIVATION/gelu"\n'
                 '[[rule]]\nmatch = "^MyDelegate/.*attn"\ncategory = "ATTENTION/custom"\n')
    tax = load_overrides(f)
    assert tax.version == f"{TAXONOMY_VERSION}+team-2"
    assert tax.classify("Fully Connected (NC, F32) GEMM #1").subtype == "fc-or-1x1-conv"
    assert tax.classify("native_call_my_fused_gelu.out").category == "ACTIVATION"
    assert tax.classify("MyDelegate/layer0/attn").category == "ATTENTION"
    assert tax.classify("Convolution (NHWC, F32) IGEMM").category == "CONV"  # the rest unchanged
    bad = tmp_path / "bad.toml"
    bad.write_text('[ops]\nx = "NOT_A_CATEGORY"\n')
    with pytest.raises(InputError, match="category must be one of"):
        load_overrides(bad)
    bad.write_text("[ops\n")
    with pytest.raises(InputError, match="not valid TOML"):
        load_overrides(bad)


def _labels():
    rows = [line.split("\t") for line in (DATA / "taxonomy_labels.tsv").read_text().splitlines()
            if line and not line.startswith("#")]
    assert all(len(r) == 4 and r[3] for r in rows)  # every label names its source
    return rows


LABELS = _labels()


@pytest.mark.parametrize("name,table,spec", [(n, t, s) for n, t, s, _ in LABELS], ids=lambda v: str(v))
def test_every_rule_against_the_labelled_list(name, table, spec):
    cat, _, sub = spec.partition("/")
    if table == "aten":  # as a portable kernel event and as an edge/ATen op name — by this rule, not a fallback
        for form in (f"native_call_{name}.out", f"aten.{name}.default"):
            c = classify(form)
            assert (c.category, c.subtype, c.rule) == (cat, sub, f"ATen {name}"), form
    elif table == "xnnpack":
        form = name if name.startswith("Invalid") else f"{name} (NC, F32) #1"
        c = classify(form)
        expect_sub = {"Convolution": "conv", "Convert": "convert"}.get(name, sub)
        assert (c.category, c.subtype, c.source, c.rule) == (cat, expect_sub, "xnnpack", f"XNNPACK {name}"), form
    elif table in ("onnx", "litert"):  # exactly as an ONNX Runtime profile's op_name / LiteRT's op name
        c = classify(name)
        assert (c.category, c.subtype, c.source, c.rule) == (cat, sub, table, f"{table.upper()} {name}"), name
    else:
        for form in (name, f"ios18.{name}"):
            c = classify(form)
            assert (c.category, c.subtype, c.source, c.rule) == (cat, sub, "mil", f"MIL {name}"), form


def test_the_labelled_list_is_for_this_taxonomy_version_and_its_categories():
    head = (DATA / "taxonomy_labels.tsv").read_text().splitlines()[1]
    assert f"(taxonomy {TAXONOMY_VERSION})" in head and TAXONOMY_VERSION == "2026.12.2"
    assert CATEGORIES == ("CONV", "GEMM", "ATTENTION", "ELEMENTWISE", "ACTIVATION", "NORM", "POOL", "REDUCTION",
                          "DATA_MOVEMENT", "RESHAPE", "QUANT", "EMBEDDING", "RESIZE", "OTHER")
    assert {spec.split("/")[0] for _, _, spec, _ in LABELS} == set(CATEGORIES)


def test_the_labelled_list_covers_every_table_entry():
    from edgeprof import taxonomy as t
    listed = {(n, tb) for n, tb, _, _ in LABELS}
    from edgeprof import taxonomy_runtimes as rt
    tables = {"aten": t._ATEN, "xnnpack": t._XNN, "mil": t._MIL, "onnx": rt.ONNX, "litert": rt.LITERT}
    assert {(n, tb) for tb, table in tables.items() for n in table} == listed


# One labelled example per keyword rule: names from delegates and tools the tables do not know (Qualcomm QNN, Arm
# Ethos-U/Vela, TFLite, ONNX Runtime, MediaTek op names as they appear in their profiles) and the category a reader of
# the model would give them.
KEYWORD_EXAMPLES = {
    "FakeQuantize": "QUANT",                       # ONNX / OpenVINO
    "q8 convert": "QUANT",
    "MultiHeadAttention_fused": "ATTENTION",       # ONNX Runtime contrib op
    "flash_attn_fwd": "ATTENTION",
    "DepthwiseConv2dNative": "CONV",               # TFLite / TensorFlow
    "TransposeConv": "CONV",                       # TFLite
    "qnn_conv2d_nhwc": "CONV",                     # QNN
    "ResizeNearestNeighbor": "RESIZE",             # TensorFlow
    "InnerProduct": "GEMM",                        # Caffe / Vela
    "FullyConnected": "GEMM",                      # TFLite
    "LayerNorm_fused": "NORM",
    "GlobalAvgPool2D": "POOL",                     # Keras
    "Softmax_1": "ACTIVATION",
    "HardSwish_int8": "ACTIVATION",
    "EmbeddingLookup": "EMBEDDING",                # TFLite
    "ConcatV2": "DATA_MOVEMENT",                   # TensorFlow
    "Transpose_12": "DATA_MOVEMENT",
    "Padding_op": "DATA_MOVEMENT",
    "StridedSlice split": "DATA_MOVEMENT",
    "memcpy_h2d": "DATA_MOVEMENT",
    "Reshape_3": "RESHAPE",
    "ReduceMeanV2": "REDUCTION",                   # TensorFlow
    "ElementWise add": "ELEMENTWISE",
    "MyCustomThing": "OTHER",
}


@pytest.mark.parametrize("name,expected", sorted(KEYWORD_EXAMPLES.items()))
def test_keyword_rules_on_names_from_other_delegates(name, expected):
    assert classify(name).category == expected


def test_every_keyword_rule_has_a_labelled_example():
    from edgeprof import taxonomy as t
    used = {classify(n).rule for n in KEYWORD_EXAMPLES}
    assert {p for p, _ in t._KEYWORDS} <= used


def test_fused_subgraphs_of_providers_and_delegates_are_named_as_such():
    """An execution provider's or a delegate's fused subgraph is one op whose inner ops the profile does not list."""
    from edgeprof.taxonomy import OpClass

    for name in ("OpenVINO-EP-subgraph_3", "TfLiteXNNPackDelegate", "TfLiteGpuDelegateV2", "DELEGATE",
                 "TRTKernel_graph_main_123_0", "CoreMLExecutionProvider_CoreML_8891_0_0"):
        assert classify(name) == OpClass("OTHER", "delegated-subgraph", op=name, source="subgraph",
                                         rule="fused subgraph"), name
    # an ONNX type and a LiteRT builtin: their own tables, named so in source and rule
    assert classify("QLinearConv") == OpClass("CONV", "conv", op="QLinearConv", source="onnx", rule="ONNX QLinearConv")
    assert classify("DEPTHWISE_CONV_2D") == OpClass("CONV", "depthwise", op="DEPTHWISE_CONV_2D", source="litert",
                                                    rule="LITERT DEPTHWISE_CONV_2D")
    assert classify("OpenVINO-EP-subgraph").category == "OTHER" and classify("OpenVINO-EP-subgraph").source != "subgraph"
