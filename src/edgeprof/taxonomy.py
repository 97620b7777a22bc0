"""One operator taxonomy for every op name edgeprof meets.

Sources understood (each name is first recognised by its form):

* ExecuTorch portable/optimized kernels ``native_call_<op>.<overload>`` and ATen/edge ops
  (``aten.convolution.default``, ``aten::linear``, ``dim_order_ops._to_dim_order_copy.default``,
  ``quantized_decomposed.dequantize_per_tensor.default``) → the ATen op table;
* XNNPACK operator strings ``<Operator> (<layout>[, <dtypes>])[ <microkernel type>][ #N]``
  (``Convolution (NHWC, F32) IGEMM #3``, ``Fully Connected (NC, QD8, F32, QC8W) GEMM``) → the XNNPACK table,
  with the dtype tokens read from the parentheses;
* Core ML MIL op types (``conv``, ``ios18.linear``, ``constexpr_lut_to_dense``) → the MIL table;
* ONNX operator types (``Conv``, ``QLinearConv``, ``MatMulNBits``, ``SkipLayerNormalization``) and LiteRT builtins
  (``DEPTHWISE_CONV_2D``, ``FULLY_CONNECTED``), matched exactly → :mod:`edgeprof.taxonomy_runtimes`; an execution
  provider's or delegate's fused subgraph (``OpenVINO-EP-subgraph_2``, ``TfLiteXNNPackDelegate``) →
  ``OTHER/delegated-subgraph``;
* ExecuTorch framework events (``Method::execute``, ``OPERATOR_CALL``, ``DELEGATE_CALL``, ``JF_CALL`` …)
  → ``FRAMEWORK`` (not an operator category: analyses account for them as overhead);
* anything else → keyword rules (ordered: ``convert`` before ``conv``, ``bilinear`` before ``linear``,
  ``layer_norm``/``LayerNorm``, ``Concatenate`` …), else ``OTHER``.

Categories: CONV (subtypes depthwise, pointwise, transposed, igemm), GEMM (fully-connected, batched-matmul,
matmul), ATTENTION, ELEMENTWISE, ACTIVATION, NORM, POOL, REDUCTION, DATA_MOVEMENT (transpose, copy, concat,
slice, pad, layout, …), RESHAPE (view-only), QUANT (quantize, dequantize, convert, weight decompression),
EMBEDDING (embedding and gather), RESIZE, OTHER. Users extend or override the rules with a TOML file
(:func:`from_document`, read by :func:`edgeprof.io.taxonomy_file.read_taxonomy`). ``TAXONOMY_VERSION`` changes
whenever a rule changes.

XNNPACK runs 1×1 convolutions as ``Fully Connected`` (GEMM): a CONV → GEMM shift between a portable and an
XNNPACK profile can be that rewrite, not a change in the model (:data:`FC_NOTE`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .conventions import INSTANCE_SUFFIX, WRAPPER_EVENTS
from .taxonomy_runtimes import LITERT, ONNX, SUBGRAPH, SUBGRAPH_SPEC

TAXONOMY_VERSION = "2026.12.2"
OTHER = "OTHER"  # the category of an op no rule matches
CATEGORIES = ("CONV", "GEMM", "ATTENTION", "ELEMENTWISE", "ACTIVATION", "NORM", "POOL", "REDUCTION",
              "DATA_MOVEMENT", "RESHAPE", "QUANT", "EMBEDDING", "RESIZE", OTHER)
FRAMEWORK = "FRAMEWORK"
FC_NOTE = ("XNNPACK runs 1×1 convolutions as Fully Connected (GEMM): in a convolutional model part of the GEMM time "
           "can be 1×1 convolutions.")


@dataclass(frozen=True)
class OpClass:
    category: str
    subtype: str
    op: str  # the operator's base name (no instance suffix, overload, namespace or dtype arguments)
    source: str  # xnnpack | portable | aten | mil | onnx | litert | subgraph | framework | keyword | override | unknown
    dtypes: tuple[str, ...] = ()
    rule: str = ""


def _t(spec: str) -> tuple[str, str]:
    cat, _, sub = spec.partition("/")
    return cat, sub


def _table_adder(table: dict[str, str]):
    def add(spec: str, *names: str) -> None:
        for n in names:
            table[n] = spec

    return add


# --- ATen / portable kernel ops (base name without leading underscores and without "_copy" view suffix) ---
_ATEN: dict[str, str] = {}
_aten = _table_adder(_ATEN)


_aten("CONV/conv", "convolution", "conv1d", "conv2d", "conv3d", "cudnn_convolution", "mkldnn_convolution", "convolution_backward")
_aten("CONV/transposed", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "convolution_transpose")
_aten("GEMM/fully-connected", "addmm", "linear", "linear_dq", "quantized_linear", "fc")
_aten("GEMM/matmul", "mm", "matmul", "dot", "vdot", "mv", "einsum", "addmv")
_aten("GEMM/batched-matmul", "bmm", "baddbmm")
_aten("ATTENTION/sdpa", "scaled_dot_product_attention", "scaled_dot_product_flash_attention",
      "scaled_dot_product_efficient_attention", "scaled_dot_product_flash_attention_for_cpu", "sdpa",
      "sdpa_with_kv_cache", "custom_sdpa", "update_cache", "multi_head_attention_forward", "native_multi_head_attention",
      "rope", "apply_rotary_emb")
_aten("ELEMENTWISE/arithmetic", "add", "sub", "rsub", "mul", "div", "floor_divide", "remainder", "fmod", "pow", "neg",
      "reciprocal", "rsqrt", "sqrt", "abs", "sign", "exp", "expm1", "log", "log10", "log1p", "log2", "sin", "cos",
      "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "ceil", "floor",
      "round", "trunc", "maximum", "minimum", "logit", "conj_physical", "addcmul", "addcdiv", "lerp", "square",
      "hypot", "copysign", "nan_to_num")
_aten("ELEMENTWISE/compare", "eq", "ne", "lt", "le", "gt", "ge", "isinf", "isnan", "isfinite", "where", "masked_fill",
      "logical_and", "logical_or", "logical_not", "logical_xor", "tril", "triu")
_aten("ELEMENTWISE/bitwise", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
      "bitwise_right_shift")
_aten("ACTIVATION/relu", "relu", "relu6", "hardtanh", "clamp", "clamp_min", "clamp_max", "threshold")
_aten("ACTIVATION/activation", "gelu", "sigmoid", "tanh", "silu", "hardswish", "hardsigmoid", "elu", "selu", "celu",
      "leaky_relu", "glu", "prelu", "softplus", "mish", "swish")
_aten("ACTIVATION/softmax", "softmax", "log_softmax", "safe_softmax")
_aten("NORM/layer-norm", "native_layer_norm", "layer_norm")
_aten("NORM/group-norm", "native_group_norm", "group_norm")
_aten("NORM/batch-norm", "native_batch_norm", "native_batch_norm_legit", "native_batch_norm_legit_no_training",
      "batch_norm", "native_batch_norm_legit_functional")
_aten("NORM/instance-norm", "instance_norm")
_aten("NORM/rms-norm", "rms_norm", "rmsnorm", "fused_rms_norm")
_aten("POOL/avg", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
      "adaptive_avg_pool3d")
_aten("POOL/max", "max_pool1d", "max_pool2d", "max_pool3d", "max_pool2d_with_indices",
      "max_pool2d_with_indices_backward", "adaptive_max_pool2d")
_aten("REDUCTION/reduce", "sum", "mean", "prod", "amax", "amin", "any", "all", "argmax", "argmin", "max", "min",
      "var", "var_mean", "std", "std_mean", "norm", "linalg_vector_norm", "logsumexp", "cumsum", "cumprod", "topk",
      "sort", "argsort", "aminmax")
_aten("DATA_MOVEMENT/transpose", "permute", "transpose", "t", "numpy_t", "flip", "roll")
_aten("DATA_MOVEMENT/concat", "cat", "stack", "concat", "hstack", "vstack")
_aten("DATA_MOVEMENT/slice", "slice", "select", "narrow", "split", "split_with_sizes", "unbind", "chunk",
      "diagonal", "as_strided", "unfold", "tensor_split")
_aten("DATA_MOVEMENT/expand", "expand", "repeat", "repeat_interleave", "tile", "broadcast_to")
_aten("DATA_MOVEMENT/pad", "constant_pad_nd", "pad", "reflection_pad1d", "reflection_pad2d", "reflection_pad3d",
      "replication_pad1d", "replication_pad2d", "replication_pad3d")
_aten("DATA_MOVEMENT/layout", "to_dim_order_copy", "clone_dim_order", "empty_dim_order", "pixel_shuffle",
      "pixel_unshuffle", "channel_shuffle", "contiguous")
_aten("DATA_MOVEMENT/copy", "copy", "copy_", "clone", "to_copy", "lift_fresh", "detach", "alias", "d2h_copy",
      "h2d_copy", "to")
_aten("DATA_MOVEMENT/scatter", "scatter", "scatter_add", "scatter_reduce", "select_scatter", "slice_scatter",
      "index_put", "index_put_", "masked_scatter", "masked_select", "index_copy", "index_add", "nonzero")
_aten("DATA_MOVEMENT/fill", "fill", "full", "full_like", "zeros", "zeros_like", "ones", "ones_like", "empty",
      "empty_like", "scalar_tensor", "arange", "linspace", "new_zeros", "new_ones", "new_full")
_aten("RESHAPE/view", "view", "reshape", "unsqueeze", "squeeze", "flatten", "unflatten", "unsafe_view",
      "view_as_real", "view_as_complex", "expand_dims", "et_view", "sym_size", "sym_numel", "squeeze_dims")
_aten("QUANT/quantize", "quantize_per_tensor", "quantize_per_channel", "quantize_per_token", "quantize_affine",
      "choose_qparams", "choose_qparams_per_token_asymmetric", "choose_qparams_tensor", "choose_qparams_affine")
_aten("QUANT/dequantize", "dequantize_per_tensor", "dequantize_per_channel", "dequantize_per_token",
      "dequantize_affine", "dequantize_per_channel_group")
_aten("EMBEDDING/embedding", "embedding", "embedding_bag", "embedding_byte", "embedding_4bit", "embedding_2bit",
      "quantized_embedding", "embedding_backward", "embedding_dense_backward", "embedding_sparse_backward",
      "embedding_renorm")
_aten("EMBEDDING/gather", "gather", "index_select", "index", "take", "take_along_dim")
_aten("RESIZE/upsample", "upsample_bilinear2d", "upsample_nearest2d", "upsample_bilinear2d_aa", "upsample_bicubic2d",
      "upsample_nearest1d", "upsample_linear1d", "upsample_nearest3d", "interpolate", "grid_sampler_2d",
      "grid_sampler")
_aten("OTHER/random", "rand", "randn", "randint", "bernoulli", "native_dropout", "dropout")
_aten("OTHER/distance", "cdist_forward", "pdist_forward", "cdist", "pdist")
_aten("OTHER/delegate", "executorch_call_delegate")

# --- XNNPACK operator names (the part before " (") ---------------------------------------------------------
_XNN: dict[str, str] = {}
_xnn = _table_adder(_XNN)


_xnn("CONV/conv", "Convolution")
_xnn("CONV/transposed", "Deconvolution")
_xnn("GEMM/fully-connected", "Fully Connected", "Dynamic Fully Connected")
_xnn("GEMM/batched-matmul", "Batch Matrix Multiply")
_xnn("ELEMENTWISE/arithmetic", "Add", "Subtract", "Multiply", "Divide", "Minimum", "Maximum", "Squared Difference",
     "Copy Sign", "Modulus", "ATan2", "Power", "Binary Elementwise", "Abs", "Negate", "Square", "Square Root",
     "Reciprocal Square Root", "Cube Root", "Exp", "Log", "Sine", "Cosine", "Ceiling", "Floor", "Bankders Rounding",
     "Bankers Rounding", "Sign", "Unary Elementwise")
_xnn("ELEMENTWISE/bitwise", "Bitwise And", "Bitwise Or", "Bitwise Xor", "Shift Left", "Shift Right Logical",
     "Shift Right Arithmetic", "Count Leading Zeros", "Population Count", "Bitwise Not")
_xnn("ACTIVATION/relu", "Clamp")
_xnn("ACTIVATION/activation", "ELU", "GELU", "ApproxGELU", "HardSwish", "LeakyReLU", "Sigmoid", "TanH", "PReLU")
_xnn("ACTIVATION/softmax", "Softmax")
_xnn("NORM/rms-norm", "Mean Squared")
_xnn("NORM/l2-norm", "Normalize")
_xnn("POOL/avg", "Average Pooling")
_xnn("POOL/max", "Max Pooling", "ArgMax Pooling")
_xnn("POOL/unpool", "Unpooling")
_xnn("REDUCTION/reduce", "Mean", "Sum", "Reduce Max", "Reduce Min")
_xnn("DATA_MOVEMENT/transpose", "Transpose")
_xnn("DATA_MOVEMENT/copy", "Copy")
_xnn("DATA_MOVEMENT/slice", "Slice")
_xnn("DATA_MOVEMENT/pad", "Constant Pad")
_xnn("DATA_MOVEMENT/layout", "Depth To Space", "Space To Depth")
_xnn("DATA_MOVEMENT/packing", "Pack LH")
_xnn("RESHAPE/view", "Static Reshape", "Static Expand Dims", "Fuse Dims", "Split Dims")
_xnn("QUANT/convert", "Convert")
_xnn("ATTENTION/rope", "RoPE")
_xnn("RESIZE/bilinear", "Resize Bilinear")
_xnn("OTHER/invalid", "Invalid", "Invalid Binary Op", "Invalid Unary Op")

_XNN_NO_ARGS = {"Invalid", "Invalid Binary Op", "Invalid Unary Op"}
_XNN_UKERNELS = ("IGEMM", "GEMM", "DWConv", "VMulCAddC", "Subconv2D", "SPMM", "Conv2D HWC2CHW",
                 "Pixelwise Average Pooling", "Average Pooling", "Reduce2", "Reduce", "Transpose")
_XNN_RE = re.compile(
    r"^(?P<op>[A-Za-z][A-Za-z0-9 \-]*?) \((?P<args>[^()]*)\)"
    r"(?: (?P<uk>" + "|".join(re.escape(u) for u in _XNN_UKERNELS) + r"))?(?: #\d+)?$")
_XNN_LAYOUTS = {"NC", "NHWC", "NCHW", "ND", "NWC", "NCW", "NDHWC", "NCDHW", "NTHC", "NCHW2NHWC", "NHWC2NCHW"}

# --- Core ML MIL op types ---------------------------------------------------------------------------------
_MIL: dict[str, str] = {}
_mil = _table_adder(_MIL)


_mil("CONV/conv", "conv")
_mil("CONV/transposed", "conv_transpose")
_mil("GEMM/fully-connected", "linear")
_mil("GEMM/matmul", "matmul", "einsum")
_mil("ATTENTION/sdpa", "scaled_dot_product_attention")
_mil("ELEMENTWISE/arithmetic", "add", "sub", "mul", "real_div", "floor_div", "mod", "pow", "maximum", "minimum",
     "abs", "sqrt", "rsqrt", "exp", "exp2", "log", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
     "tanh_", "ceil", "floor", "round", "sign", "inverse", "square", "erf", "clamped_relu_", "threshold")
_mil("ELEMENTWISE/compare", "equal", "not_equal", "greater", "greater_equal", "less", "less_equal", "logical_and",
     "logical_or", "logical_not", "logical_xor", "select", "band_part")
_mil("ACTIVATION/relu", "relu", "relu6", "clip", "clamped_relu")
_mil("ACTIVATION/activation", "gelu", "sigmoid", "tanh", "silu", "elu", "leaky_relu", "prelu", "softplus",
     "softsign", "scaled_tanh", "sigmoid_hard", "linear_activation", "thresholded_relu", "softplus_parametric")
_mil("ACTIVATION/softmax", "softmax", "log_softmax")
_mil("NORM/layer-norm", "layer_norm")
_mil("NORM/batch-norm", "batch_norm")
_mil("NORM/instance-norm", "instance_norm")
_mil("NORM/l2-norm", "l2_norm", "local_response_norm")
_mil("POOL/avg", "avg_pool")
_mil("POOL/max", "max_pool", "l2_pool")
_mil("REDUCTION/reduce", "reduce_mean", "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_argmax",
     "reduce_argmin", "reduce_l1_norm", "reduce_l2_norm", "reduce_log_sum", "reduce_log_sum_exp",
     "reduce_sum_square", "cumsum", "topk", "argsort", "non_maximum_suppression")
_mil("DATA_MOVEMENT/transpose", "transpose", "reverse", "reverse_sequence")
_mil("DATA_MOVEMENT/concat", "concat", "stack")
_mil("DATA_MOVEMENT/slice", "slice_by_index", "slice_by_size", "split", "sliding_windows")
_mil("DATA_MOVEMENT/pad", "pad")
_mil("DATA_MOVEMENT/expand", "tile")
_mil("DATA_MOVEMENT/layout", "depth_to_space", "space_to_depth", "pixel_shuffle", "pixel_unshuffle",
     "space_to_batch", "batch_to_space")
_mil("DATA_MOVEMENT/state", "slice_update", "read_state", "write_state", "coreml_update_state")
_mil("DATA_MOVEMENT/scatter", "scatter", "scatter_along_axis", "scatter_nd", "non_zero")
_mil("DATA_MOVEMENT/fill", "fill", "fill_like", "range_1d", "random_bernoulli", "random_categorical",
     "random_normal", "random_uniform", "identity")
_mil("RESHAPE/view", "reshape", "expand_dims", "squeeze", "flatten2d", "reshape_like", "shape")
_mil("QUANT/convert", "cast")
_mil("QUANT/quantize", "quantize")
_mil("QUANT/dequantize", "dequantize")
_mil("QUANT/weight-decompression", "constexpr_lut_to_dense", "constexpr_affine_dequantize",
     "constexpr_blockwise_shift_scale", "constexpr_sparse_to_dense", "constexpr_cast", "constexpr_sparse_blockwise_shift_scale",
     "constexpr_lut_to_sparse")
_mil("EMBEDDING/gather", "gather", "gather_along_axis", "gather_nd")
_mil("RESIZE/upsample", "upsample_bilinear", "upsample_nearest_neighbor", "resize_bilinear", "resize_nearest_neighbor",
     "crop_resize", "resize", "affine", "resample")
_mil("OTHER/const", "const")
_mil("OTHER/control-flow", "cond", "while_loop", "make_list", "list_read", "list_write", "list_length", "list_gather",
     "list_scatter")

FRAMEWORK_NAMES = {*WRAPPER_EVENTS, "JF_CALL", "MOVE_CALL", "FREE_CALL"}  # and every Method::… / Program::… event

# --- keyword rules for everything else (order matters: the first match wins) -------------------------------
_KEYWORDS: list[tuple[str, str]] = [
    (r"\b(de)?quantiz|\bconvert\b|\bcast\b|\bq(d|p)?8\b.*convert|fake[_ ]?quant", "QUANT/convert"),
    (r"attention|\bsdpa\b|\bmha\b|flash[_ ]?attn|\brope\b", "ATTENTION/attention"),
    (r"depthwise|dwconv", "CONV/depthwise"),
    (r"deconv|conv[_ ]?transpose|transpose[_ ]?conv", "CONV/transposed"),
    (r"\bconv(olution)?(\d?d)?\b|conv2d|conv1d|conv3d", "CONV/conv"),
    (r"bilinear|nearest|upsampl|interpolat|\bresize", "RESIZE/upsample"),
    (r"fully[_ ]?connected|\blinear\b|\bgemm\b|\bmatmul\b|\bbmm\b|\bmm\b|\baddmm\b|\bdense\b|inner[_ ]?product",
     "GEMM/matmul"),
    (r"layer[_ ]?norm|group[_ ]?norm|batch[_ ]?norm|instance[_ ]?norm|rms[_ ]?norm|\bnorm(alize|alization)?\b",
     "NORM/norm"),
    (r"pool", "POOL/pool"),
    (r"softmax", "ACTIVATION/softmax"),
    (r"hard[_ ]?swish|\bswish\b|\bgelu\b|\bsilu\b|\brelu6?\b|sigmoid|\btanh\b|\belu\b|leaky|\bprelu\b|hardtanh|\bmish\b"
     r"|\bclamp\b|\bclip\b", "ACTIVATION/activation"),
    (r"embedding|\bgather\b|index[_ ]?select", "EMBEDDING/gather"),
    (r"concat|\bcat\b|\bstack\b", "DATA_MOVEMENT/concat"),
    (r"transpose|permute", "DATA_MOVEMENT/transpose"),
    (r"\bpad\b|padding", "DATA_MOVEMENT/pad"),
    (r"\bslice|\bsplit\b|\bselect\b|\bnarrow\b", "DATA_MOVEMENT/slice"),
    (r"\bcopy\b|\bclone\b|memcpy", "DATA_MOVEMENT/copy"),
    (r"reshape|\bview\b|squeeze|flatten|expand[_ ]?dims", "RESHAPE/view"),
    (r"reduce|\bmean\b|\bsum\b|argmax|argmin|\bamax\b|\bamin\b|\bprod\b", "REDUCTION/reduce"),
    (r"\badd\b|\bsub(tract)?\b|\bmul(tiply)?\b|\bdiv(ide)?\b|\bpow(er)?\b|\bsqrt\b|\bexp\b|\blog\b|\babs\b|\bneg(ate)?\b|\bmax(imum)?\b|\bmin(imum)?\b|\bwhere\b",
     "ELEMENTWISE/arithmetic"),
]
_KEYWORDS_RE = [(re.compile(p, re.IGNORECASE), spec) for p, spec in _KEYWORDS]


def _normalize_aten(base: str) -> str:
    b = base.lstrip("_")
    if b.endswith("_copy") and b not in _ATEN and b[:-5] in _ATEN:  # view_copy, permute_copy, … (ET's copy variants)
        b = b[:-5]
    return b


class Taxonomy:
    """The rule set (built-in tables plus optional user overrides), with a cached ``classify``."""

    def __init__(self, overrides: list[tuple[re.Pattern, str]] | None = None, op_overrides: dict[str, str] | None = None,
                 version: str = TAXONOMY_VERSION):
        self.overrides = overrides or []
        self.op_overrides = op_overrides or {}
        self.version = version
        self.classify = lru_cache(maxsize=65536)(self._classify)

    def __getstate__(self) -> dict:  # picklable (a Dask worker gets the rules, and builds its own cache)
        return {"overrides": self.overrides, "op_overrides": self.op_overrides, "version": self.version}

    def __setstate__(self, state: dict) -> None:
        type(self).__init__(self, **state)

    def _classify(self, name: str) -> OpClass:
        name = (name or "").strip()
        for rx, spec in self.overrides:
            if rx.search(name):
                return OpClass(*_t(spec), op=name, source="override", rule=rx.pattern)
        if name in FRAMEWORK_NAMES or name.startswith(("Method::", "Program::")):
            return OpClass(FRAMEWORK, name, op=name, source="framework", rule="framework event")
        for table, source in ((ONNX, "onnx"), (LITERT, "litert")):
            if name in table:
                return OpClass(*_t(self.op_overrides.get(name) or table[name]), op=name, source=source,
                               rule=f"{source.upper()} {name}")
        if SUBGRAPH.search(name):
            return OpClass(*_t(SUBGRAPH_SPEC), op=name, source="subgraph", rule="fused subgraph")
        m = _XNN_RE.match(name)
        if m and m.group("op") in _XNN:
            return self._xnnpack(name, m)
        bare = INSTANCE_SUFFIX.sub("", name)
        if bare in _XNN_NO_ARGS:  # XNNPACK strings without a layout ("Invalid Unary Op")
            return OpClass(*_t(_XNN[bare]), op=bare, source="xnnpack", rule=f"XNNPACK {bare}")
        if name.startswith("native_call_"):
            body = name[len("native_call_"):]
            base = body.split(".", 1)[0]
            return self._table(_normalize_aten(base), name, "portable")
        if "::" in name or (name.count(".") >= 1 and name.split(".", 1)[0] in (
                "aten", "dim_order_ops", "quantized_decomposed", "torchao", "llama", "executorch_prim", "et_copy",
                "edge", "quantized", "cortex_m", "prims", "torch")):
            _ns, _, rest = name.replace("::", ".").partition(".")
            base = rest.split(".", 1)[0]
            return self._table(_normalize_aten(base), name, "aten")
        mil = re.sub(r"^ios\d+\.", "", name)
        if mil in _MIL or name.startswith("ios"):
            mil_spec = self.op_overrides.get(mil) or _MIL.get(mil)
            if mil_spec:
                return OpClass(*_t(mil_spec), op=mil, source="mil", rule=f"MIL {mil}")
        base = _normalize_aten(name.split(".", 1)[0])
        if base in self.op_overrides or base in _ATEN:
            return self._table(base, name, "aten")
        for rx, spec in _KEYWORDS_RE:
            if rx.search(name.replace("_", " ")):
                return OpClass(*_t(spec), op=name, source="keyword", rule=rx.pattern)
        return OpClass(OTHER, "unknown", op=name, source="unknown", rule="no rule")

    def _table(self, base: str, name: str, source: str) -> OpClass:
        spec = self.op_overrides.get(base) or _ATEN.get(base)
        if spec is None:
            for rx, kspec in _KEYWORDS_RE:
                if rx.search(base.replace("_", " ")):
                    return OpClass(*_t(kspec), op=base, source=source, rule="keyword " + rx.pattern)
            return OpClass(OTHER, "unknown", op=base, source=source, rule="no rule")
        return OpClass(*_t(spec), op=base, source=source, rule=f"ATen {base}")

    def _xnnpack(self, name: str, m: re.Match) -> OpClass:
        op, uk = m.group("op"), m.group("uk") or ""
        args = [a.strip() for a in m.group("args").split(",") if a.strip()]
        dtypes = tuple(a for a in args if a not in _XNN_LAYOUTS)
        cat, sub = _t(self.op_overrides.get(op) or _XNN[op])
        if op == "Convolution":
            sub = {"DWConv": "depthwise", "VMulCAddC": "depthwise", "IGEMM": "igemm", "SPMM": "sparse",
                   "Conv2D HWC2CHW": "direct"}.get(uk, "conv")
        elif op == "Convert":
            sub = "dynamic-quantize" if any(d in ("QD8", "QDU8", "QP8") for d in dtypes) else "convert"
        return OpClass(cat, sub, op=op, source="xnnpack", dtypes=dtypes, rule=f"XNNPACK {op}" + (f" {uk}" if uk else ""))


def from_document(doc: dict, path) -> Taxonomy:
    """A Taxonomy extended by a parsed TOML document (read by :func:`edgeprof.io.taxonomy_file.read_taxonomy`)::

        version = "team-1"            # optional: recorded in outputs next to the built-in version
        [ops]                          # exact op base names (ATen, MIL or XNNPACK operator) → CATEGORY[/subtype]
        my_fused_gelu = "ACTIVATION/gelu"
        "Fully Connected" = "GEMM/fc-or-1x1-conv"
        [[rule]]                       # regular expressions on the full name, tried first, in order
        match = "^MyDelegate/.*attn"
        category = "ATTENTION/custom"

    ``path`` names the file in errors.
    """
    from .errors import InputError

    def check(spec, where):
        if not isinstance(spec, str) or _t(spec)[0] not in CATEGORIES:
            raise InputError(path, f"{where}: category must be one of {', '.join(CATEGORIES)} (optionally /subtype), "
                                   f"got {spec!r}")
        return spec

    ops = doc.get("ops", {})
    if not isinstance(ops, dict):
        raise InputError(path, "[ops] must be a table of name = \"CATEGORY[/subtype]\"")
    op_overrides = {str(k): check(v, f"ops.{k}") for k, v in ops.items()}
    rules = []
    if not isinstance(doc.get("rule", []), list):
        raise InputError(path, "[[rule]] must be an array of tables")
    if "version" in doc and not isinstance(doc["version"], (str, int, float)):
        raise InputError(path, "version must be a string")
    for i, r in enumerate(doc.get("rule", [])):
        if not isinstance(r, dict) or "match" not in r or "category" not in r:
            raise InputError(path, f"rule {i + 1}: needs match and category")
        try:
            rx = re.compile(str(r["match"]))
        except (re.error, RecursionError, OverflowError) as e:
            raise InputError(path, f"rule {i + 1}: bad regular expression ({e})") from None
        rules.append((rx, check(r["category"], f"rule {i + 1}")))
    version = f"{TAXONOMY_VERSION}+{doc['version']}" if "version" in doc else f"{TAXONOMY_VERSION}+custom"
    return Taxonomy(rules, op_overrides, version)


DEFAULT = Taxonomy()


def classify(name: str) -> OpClass:
    """Classify one operator or event name with the built-in rules."""
    return DEFAULT.classify(name)
