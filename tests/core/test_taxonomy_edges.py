"""Edges of the operator taxonomy: each keyword rule on a real op name only that rule's leading or trailing
alternative matches (TensorFlow/TFLite/Caffe op types, ATen ops missing from the ATen table), the namespace forms of
ATen names, XNNPACK layout tokens, and user overrides of MIL op types with an opset prefix."""

from __future__ import annotations

import pytest

from edgeprof.taxonomy import FC_NOTE, Taxonomy, classify

# Real op names that no table lists, so only a keyword rule names them; each is matched by the first (or last)
# alternative of its rule's pattern, and by no later rule: the category is the one a reader of the model gives it.
KEYWORD_ONLY = [
    # (name, category, subtype or None when any subtype will do)
    ("aten.fake_quantize_per_tensor_affine.default", "QUANT", None),   # torch.fake_quantize_per_tensor_affine
    ("FakeQuantWithMinMaxVars", "QUANT", None),                         # TensorFlow quantization-aware training
    ("aten._scaled_dot_product_cudnn_attention.default", "ATTENTION", None),  # PyTorch SDPA, cuDNN backend
    ("DepthwiseConv2dNative", "CONV", "depthwise"),                     # TensorFlow depthwise convolution
    ("Deconvolution", "CONV", "transposed"),                            # Caffe layer type
    ("Convolution", "CONV", "conv"),                                    # Caffe layer type
    ("ResizeBilinear", "RESIZE", None),                                 # TensorFlow
    ("FullyConnected", "GEMM", None),                                   # TFLite op, CamelCase as TF Lite's converter logs it
    ("LayerNorm", "NORM", None),
    ("GlobalAvgPool2D", "POOL", None),                                  # Keras layer
    ("aten._softmax_backward_data.default", "ACTIVATION", "softmax"),   # softmax's gradient
    ("aten.hardswish_backward.default", "ACTIVATION", None),            # hardswish's gradient
    ("EmbeddingLookup", "EMBEDDING", None),                             # TensorFlow / TFLite embedding_lookup
    ("ConcatV2", "DATA_MOVEMENT", "concat"),                            # TensorFlow
    ("ConjugateTranspose", "DATA_MOVEMENT", "transpose"),               # TensorFlow
    ("aten.pad_sequence.default", "DATA_MOVEMENT", "pad"),              # torch.nn.utils.rnn.pad_sequence
    ("aten.slice_backward.default", "DATA_MOVEMENT", "slice"),          # slice's gradient
    ("aten._copy_from.default", "DATA_MOVEMENT", "copy"),               # the copy behind Tensor.copy_ across devices
    ("aten._reshape_alias.default", "RESHAPE", None),                   # the view reshape() decomposes into
    ("aten.segment_reduce.default", "REDUCTION", None),                 # torch.segment_reduce
    ("aten.add_.Tensor", "ELEMENTWISE", None),                          # in-place add (Tensor.add_)
]


@pytest.mark.parametrize("name,category,subtype", KEYWORD_ONLY, ids=[n for n, _, _ in KEYWORD_ONLY])
def test_names_only_a_keyword_rule_knows_get_their_category(name, category, subtype):
    c = classify(name)
    assert c.category == category
    if subtype is not None:
        assert c.subtype == subtype


def test_a_name_no_rule_knows_is_other():
    # the control for the table above: a TensorFlow op of none of the categories
    assert classify("NoOp").category == "OTHER"


@pytest.mark.parametrize("name", ["aten::linear", "aten.linear.default", "aten.linear"])
def test_aten_names_in_either_namespace_form_use_the_aten_table(name):
    """``aten::op`` (TorchScript / profiler) and ``aten.op[.overload]`` (export / edge dialect) name the same op:
    torch.nn.Linear is a fully-connected layer, found by the ATen table, not guessed from a keyword."""
    c = classify(name)
    assert (c.category, c.subtype, c.op, c.source, c.rule) == ("GEMM", "fully-connected", "linear", "aten", "ATen linear")


def test_a_torch_function_name_with_one_dot_is_read_as_a_namespace():
    c = classify("torch.matmul")
    assert (c.category, c.subtype, c.op, c.source, c.rule) == ("GEMM", "matmul", "matmul", "aten", "ATen matmul")


def test_portable_kernel_events_are_read_as_portable_kernels():
    c = classify("native_call_convolution.out")
    assert (c.category, c.op, c.source, c.rule) == ("CONV", "convolution", "portable", "ATen convolution")


def test_only_leading_underscores_are_dropped_from_a_namespaced_base_name():
    assert classify("aten::_softmax").op == "softmax"
    # a custom op's own capital letters are part of its name
    assert classify("custom::XLA_matmul.default").op == "XLA_matmul"


def test_xnnpack_layout_tokens_are_not_datatypes():
    assert classify("Fully Connected (NC, F32) GEMM").dtypes == ("F32",)
    assert classify("Transpose (ND, X8) #5").dtypes == ("X8",)
    assert classify("Fully Connected (NC, QD8, F32, QC8W) GEMM #2").dtypes == ("QD8", "F32", "QC8W")


def test_xnnpack_convolution_microkernel_type_sets_the_subtype_and_rule():
    c = classify("Convolution (NHWC, F32) IGEMM #3")
    assert (c.category, c.subtype, c.rule) == ("CONV", "igemm", "XNNPACK Convolution IGEMM")
    c = classify("Convolution (NHWC, QC8) DWConv #1")
    assert (c.category, c.subtype, c.rule) == ("CONV", "depthwise", "XNNPACK Convolution DWConv")
    c = classify("Convolution (NHWC, F32) #1")  # no microkernel type logged
    assert (c.subtype, c.rule) == ("conv", "XNNPACK Convolution")


def test_an_op_override_names_a_mil_op_type_also_with_its_opset_prefix():
    """A user's [ops] entry for a MIL op type the built-in table lacks applies to ``ios17.<op>`` as a Core ML
    profile reports it (one_hot is a MIL op of coremltools' iOS 15+ opsets)."""
    tax = Taxonomy(op_overrides={"one_hot": "DATA_MOVEMENT/one-hot"})
    c = tax.classify("ios17.one_hot")
    assert (c.category, c.subtype, c.op, c.source) == ("DATA_MOVEMENT", "one-hot", "one_hot", "mil")
    assert classify("ios17.one_hot").category == "OTHER"  # without the override no rule knows it


def test_the_fully_connected_note_says_what_xnnpack_does():
    # README: "XNNPACK runs 1×1 convolutions as `Fully Connected`, so part of a CNN's GEMM time can be convolutions"
    assert FC_NOTE.startswith("XNNPACK runs 1×1 convolutions as Fully Connected (GEMM)")
    assert FC_NOTE.endswith("1×1 convolutions.")


@pytest.mark.parametrize("name", ["aten.embedding_dense_backward.default", "aten::embedding_backward",
                                  "aten.embedding_renorm_.default"])
def test_embeddings_backward_passes_are_embeddings_not_matrix_multiplies(name):
    """ATen's embedding backward ops (native_functions.yaml) carry "dense" in their names; the GEMM keyword rule
    must not claim them."""
    assert classify(name).category == "EMBEDDING"
