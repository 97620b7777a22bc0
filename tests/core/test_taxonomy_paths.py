"""Which path of the taxonomy classifies a name, and what each path reports (source, rule, subtype, dtypes):
XNNPACK operator strings with every microkernel suffix and layout XNNPACK prints, framework events, namespaced
ATen names, MIL types, keyword and no-rule fallbacks, overrides and the TOML document's errors."""

from __future__ import annotations

import pickle
import re

import pytest
from testdata import documentation

from edgeprof.errors import InputError
from edgeprof.taxonomy import CATEGORIES, DEFAULT, TAXONOMY_VERSION, classify, from_document

README = documentation()  # the README and docs/, in reading order

# XNNPACK's operator-object string: "<op> (<layout>, <dtypes>) <microkernel type> #<n>"; the microkernel types
# XNNPACK prints (src/operator-type strings and xnn_microkernel_type_to_string at the pinned commit)
SUFFIXES = {"IGEMM": "igemm", "GEMM": "conv", "DWConv": "depthwise", "VMulCAddC": "depthwise", "Subconv2D": "conv",
            "SPMM": "sparse", "Conv2D HWC2CHW": "direct", "Pixelwise Average Pooling": "conv",
            "Average Pooling": "conv", "Reduce2": "conv", "Reduce": "conv", "Transpose": "conv"}
LAYOUTS = ("NC", "NHWC", "NCHW", "ND", "NWC", "NCW", "NDHWC", "NCDHW", "NTHC", "NCHW2NHWC", "NHWC2NCHW")


def test_version_and_categories_are_the_documented_ones():
    assert f"version `{TAXONOMY_VERSION}`, recorded in every output" in README and TAXONOMY_VERSION == "2026.12.2"
    for cat in ("EMBEDDING", "RESIZE", "CONV", "GEMM", "OTHER"):
        assert cat in CATEGORIES
    assert classify("aten.embedding.default").category == "EMBEDDING"
    assert classify("aten.upsample_bilinear2d.vec").category == "RESIZE"


@pytest.mark.parametrize("suffix", sorted(SUFFIXES))
def test_every_microkernel_suffix(suffix):
    c = classify(f"Convolution (NHWC, F32) {suffix} #3")
    assert (c.source, c.op, c.dtypes, c.subtype, c.rule) == ("xnnpack", "Convolution", ("F32",), SUFFIXES[suffix],
                                                             f"XNNPACK Convolution {suffix}")
    d = classify(f"Average Pooling (NHWC, QU8) {suffix}")
    assert (d.source, d.category, d.rule) == ("xnnpack", "POOL", f"XNNPACK Average Pooling {suffix}")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_layouts_are_not_datatypes(layout):
    c = classify(f"Fully Connected ({layout}, QD8, F32, QC8W) GEMM #1")
    assert c.dtypes == ("QD8", "F32", "QC8W") and c.source == "xnnpack"


def test_xnnpack_subtypes():
    assert classify("Deconvolution (NHWC, F32) IGEMM #1").subtype == "transposed"
    assert classify("Convert (NC, F32, QD8) #1").subtype == "dynamic-quantize"
    assert classify("Convert (NC, F32, QDU8) #1").subtype == "dynamic-quantize"
    assert classify("Convert (NC, F32, QP8) #1").subtype == "dynamic-quantize"
    assert classify("Convert (NC, F32, QS8) #1").subtype == "convert"
    assert classify("Convolution (NHWC, F32) #2").subtype == "conv"
    inv = classify("Invalid Unary Op #4")
    assert (inv.source, inv.op, inv.rule) == ("xnnpack", "Invalid Unary Op", "XNNPACK Invalid Unary Op")


@pytest.mark.parametrize("name", ["Method::step", "Method::anything", "Program::load_method", "Program::other", "JF_CALL",
                                  "MOVE_CALL",
                                  "FREE_CALL", "OPERATOR_CALL", "DELEGATE_CALL", "  Method::execute  "])
def test_framework_events(name):
    c = classify(name)
    assert (c.category, c.source, c.rule, c.op) == ("FRAMEWORK", "framework", "framework event", name.strip())


@pytest.mark.parametrize("ns", ["aten", "dim_order_ops", "quantized_decomposed", "torchao", "llama", "executorch_prim",
                                "et_copy", "edge", "quantized", "cortex_m", "prims", "torch"])
def test_namespaced_names(ns):
    c = classify(f"{ns}.add.Tensor")
    assert (c.source, c.op, c.rule) == ("aten", "add", "ATen add")
    c = classify(f"{ns}::mul")
    assert (c.source, c.op) == ("aten", "mul")


def test_names_that_only_look_namespaced():
    c = classify("mydelegate.add.Tensor")                   # an unknown namespace: the whole name is matched
    assert c.source == "keyword" and c.category == "ELEMENTWISE"
    c = classify("sigmoid.default")                         # no namespace, a known ATen base before the dot
    assert (c.source, c.op) == ("aten", "sigmoid")
    assert classify("aten.add").op == "add" and classify("aten.add").source == "aten"


def test_portable_kernels_strip_underscores_and_copy_variants():
    c = classify("native_call__softmax.out")
    assert (c.source, c.op, c.category) == ("portable", "softmax", "ACTIVATION")
    c = classify("native_call_view_copy.out")
    assert (c.op, c.category) == ("view", "RESHAPE")
    c = classify("native_call_my_fancy_conv2d.out")          # not in the ATen table: a keyword rule, named as such
    assert c.source == "portable" and c.category == "CONV" and c.rule.startswith("keyword ")
    c = classify("native_call_fused_relu_op.out")             # underscores separate words for the keyword rules
    assert (c.category, c.source) == ("ACTIVATION", "portable")
    c = classify("native_call_zzz.out")
    assert (c.category, c.subtype, c.source, c.rule) == ("OTHER", "unknown", "portable", "no rule")


def test_mil_types():
    c = classify("ios18.conv")
    assert (c.source, c.op, c.rule) == ("mil", "conv", "MIL conv")
    c = classify("ios17.brand_new_op")                       # an unknown MIL type falls through to the keywords
    assert c.source in ("keyword", "unknown") and c.op == "ios17.brand_new_op"
    t = from_document({"ops": {"brand_new_op": "GEMM/custom"}}, "t.toml")
    c = t.classify("ios17.brand_new_op")                     # a user rule for a new MIL type is a MIL rule
    assert (c.source, c.category, c.op) == ("mil", "GEMM", "brand_new_op")


@pytest.mark.parametrize("name,pattern_word", [("MyDelegate/conv_block", "conv"), ("fused_upsampling_x2", "upsampl"),
                                               ("custom_bilinear_op", "bilinear"), ("fancy_slice_op", "slice")])
def test_keyword_rules_name_their_pattern(name, pattern_word):
    c = classify(name)
    assert c.source == "keyword" and pattern_word in c.rule and re.search(c.rule, name.replace("_", " "), re.I)


def test_no_rule():
    c = classify("zzz_unheard_of")
    assert (c.category, c.subtype, c.source, c.rule) == ("OTHER", "unknown", "unknown", "no rule")


def test_overrides_and_pickling():
    t = from_document({"version": "team-1", "ops": {"zzz": "GEMM/custom"},
                       "rule": [{"match": "^MyDelegate/", "category": "ATTENTION/custom"}]}, "t.toml")
    c = t.classify("MyDelegate/conv_block")
    assert (c.category, c.subtype, c.source, c.rule) == ("ATTENTION", "custom", "override", "^MyDelegate/")
    assert t.classify("zzz").category == "GEMM" and t.version == f"{TAXONOMY_VERSION}+team-1"
    u = pickle.loads(pickle.dumps(t))
    assert (u.version, u.op_overrides, [r.pattern for r, _ in u.overrides]) == \
        (t.version, t.op_overrides, ["^MyDelegate/"])
    assert u.classify("MyDelegate/x").source == "override"
    assert from_document({}, "t").version == f"{TAXONOMY_VERSION}+custom"
    assert from_document({"version": 3}, "t").version == f"{TAXONOMY_VERSION}+3"
    assert DEFAULT.version == TAXONOMY_VERSION


@pytest.mark.parametrize("doc,message", [
    ({"ops": ["x"]}, 't.toml: [ops] must be a table of name = "CATEGORY[/subtype]"'),
    ({"rule": {"match": "x"}}, "t.toml: [[rule]] must be an array of tables"),
    ({"version": ["v"]}, "t.toml: version must be a string"),
    ({"rule": [{"match": "x"}]}, "t.toml: rule 1: needs match and category"),
    ({"rule": [{"category": "GEMM"}]}, "t.toml: rule 1: needs match and category"),
    ({"rule": ["x"]}, "t.toml: rule 1: needs match and category"),
    ({"ops": {"x": "NOPE"}}, "t.toml: ops.x: category must be one of"),
])
def test_document_errors(doc, message):
    with pytest.raises(InputError) as e:
        from_document(doc, "t.toml")
    assert str(e.value).startswith(message)
