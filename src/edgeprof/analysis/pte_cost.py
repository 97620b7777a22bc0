"""FLOPs and bytes per instruction of an ExecuTorch program, from the tensor shapes it records (pure).

Formulas (one multiply-add = 2 FLOPs; ``macs`` kept apart so matrix work compares with FLOP counters that
count 2·MACs without bias or elementwise work):

=====================================  ===========================================================================
aten ``convolution`` (out variant)     MACs = numel(out) · weight[1] · prod(weight[2:])  (+ numel(out) with bias)
aten ``addmm``                         MACs = numel(out) · mat1[-1]  (+ numel(out) for the added bias)
aten ``mm`` / ``bmm``                  MACs = numel(out) · self[-1]
aten ``linear``                        MACs = numel(out) · weight[1]  (+ numel(out) with bias)
XNNPACK FullyConnected                 MACs = numel(out) · input[-1]  (+ numel(out) with a bias value)
XNNPACK Conv2d / DepthwiseConv2d       MACs = numel(out) · group_input_channels · kernel_h · kernel_w
XNNPACK ConvTranspose2d                MACs = numel(input) · group_output_channels · kernel_h · kernel_w
XNNPACK BatchMatrixMultiply            MACs = numel(out) · input1[-1]
elementwise / activations              numel(out)  (exp, gelu, sigmoid, tanh: 4 · numel — a convention)
softmax, log_softmax (aten, XNNPACK)   5 · numel(out)  (max, subtract, exp, sum, divide: as ONNX and Core ML)
layer norm, batch norm                 8 · numel(out)
copies, views, permutes, converts      0
anything else                          not known (None), never guessed
=====================================  ===========================================================================

Bytes: tensors read (inputs; constants counted as weights) and written (the out tensor), from dtype × shape.
An out-variant kernel lists its out tensor last (twice: argument and return value); a kernel returning several
tensors ends with the list of them (the first is the result used for the element count).
"""

from __future__ import annotations

from ..pte_model import PteProgram

_ELEMENTWISE = {"add", "sub", "mul", "div", "relu", "hardtanh", "clamp", "minimum", "maximum", "neg", "abs", "where",
                "eq", "ne", "lt", "gt", "le", "ge", "logical_not", "logical_and", "logical_or", "rsub", "pow",
                "sqrt", "rsqrt", "square", "hardswish", "hardsigmoid", "leaky_relu", "floor", "ceil", "round",
                "max_pool2d_with_indices", "avg_pool2d", "mean", "sum", "any", "amax", "full_like"}
_TRANSCENDENTAL = {"exp", "gelu", "sigmoid", "tanh", "log", "sin", "cos", "silu"}
_SOFTMAX = {"_softmax", "softmax", "_log_softmax", "log_softmax"}
_NORM = {"native_layer_norm", "_native_batch_norm_legit_no_training", "native_batch_norm"}
_MOVE = {"permute_copy", "view_copy", "unsqueeze_copy", "squeeze_copy", "expand_copy", "select_copy", "slice_copy",
         "_clone_dim_order", "clone", "cat", "split_with_sizes_copy", "transpose_copy", "t_copy", "_to_copy",
         "_to_dim_order_copy", "index", "embedding", "constant_pad_nd", "alias_copy", "split_copy"}
XNN_ELEMENTWISE = {"Add", "Subtract", "Multiply", "Div", "Minimum", "Maximum", "Clamp", "Negate", "Abs", "Square",
                   "SquareRoot", "ReciprocalSquareRoot", "Floor", "Ceiling", "Hardswish", "LeakyReLU", "PReLU", "ELU",
                   "MaxPooling2d", "AvgPooling2d", "GlobalAvgPooling2d", "ArgMaxPooling2d"}
XNN_TRANSCENDENTAL = {"Sigmoid", "Tanh", "Gelu", "Exp", "Log", "Sin", "Cos"}
XNN_MOVE = {"StaticTranspose", "StaticReshape", "Convert", "StaticSlice", "StaticConstantPad", "Copy", "Concatenate2",
            "Concatenate3", "Concatenate4", "Concatenate5", "StaticResizeBilinear2D"}


def _numel(dims) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def kernel_cost(plan, ins) -> dict:
    """MACs, FLOPs and bytes of one kernel call (FLOPs not known when the shapes do not fit the op's formula)."""
    try:
        return _kernel_cost(plan, ins)
    except (IndexError, KeyError, TypeError):
        return {"macs": 0, "flops": None, "weight_bytes": 0, "act_read": 0, "written": 0}


def _kernel_cost(plan, ins) -> dict:
    op = ins.op.split("::")[-1]
    last = ins.args[-1] if ins.args else None
    outs = list(plan.lists.get(last, [])) if last in plan.lists else ([last] if last is not None else [])
    out = plan.tensors.get(outs[0]) if outs else None
    inputs = [plan.tensors[a] for a in dict.fromkeys(ins.args) if a in plan.tensors and a not in outs]
    macs, flops = 0, None
    n_out = out.numel if out is not None else 0
    if op == "convolution" and len(inputs) >= 2:
        w = inputs[1].sizes
        macs = n_out * w[1] * _numel(w[2:])
        flops = 2 * macs + (n_out if len(inputs) > 2 and inputs[2].numel else 0)
    elif op == "addmm" and len(inputs) >= 2:
        macs = n_out * inputs[1].sizes[-1]
        flops = 2 * macs + n_out
    elif op in ("mm", "bmm") and inputs:
        macs = n_out * inputs[0].sizes[-1]
        flops = 2 * macs
    elif op == "linear" and len(inputs) >= 2:
        macs = n_out * inputs[1].sizes[1]
        flops = 2 * macs + (n_out if len(inputs) > 2 else 0)
    elif op in _MOVE:
        flops = 0
    elif op in _ELEMENTWISE:
        flops = max(n_out, sum(t.numel for t in inputs[:1]))
    elif op in _TRANSCENDENTAL:
        flops = 4 * n_out
    elif op in _SOFTMAX:
        flops = 5 * n_out
    elif op in _NORM:
        flops = 8 * n_out
    weights = sum(t.nbytes for t in inputs if t.data_buffer_idx > 0 and t.allocation is None)
    act = sum(t.nbytes for t in inputs if not (t.data_buffer_idx > 0 and t.allocation is None))
    return {"macs": macs, "flops": flops, "weight_bytes": weights, "act_read": act,
            "written": sum(plan.tensors[o].nbytes for o in outs if o in plan.tensors)}


def xnn_node_cost(g, nd) -> dict:
    try:
        return _xnn_node_cost(g, nd)
    except (IndexError, KeyError, TypeError):
        return {"macs": 0, "flops": None}


def _xnn_node_cost(g, nd) -> dict:
    a = nd.attrs
    val = g.values.get
    out = val(a.get("output_id"))
    n_out = _numel(out.dims) if out is not None else 0
    macs, flops = 0, None
    t = nd.type
    if t == "FullyConnected" and val(a.get("input1_id")) is not None:
        macs = n_out * val(a["input1_id"]).dims[-1]
        bias = val(a.get("bias_id"))
        flops = 2 * macs + (n_out if bias is not None and a.get("bias_id") != 0xFFFFFFFF else 0)
    elif t in ("Conv2d", "DepthwiseConv2d"):
        macs = n_out * a["group_input_channels"] * a["kernel_height"] * a["kernel_width"]
        flops = 2 * macs
    elif t == "ConvTranspose2d" and val(a.get("input1_id")) is not None:
        macs = _numel(val(a["input1_id"]).dims) * a["group_output_channels"] * a["kernel_height"] * a["kernel_width"]
        flops = 2 * macs
    elif t == "BatchMatrixMultiply" and val(a.get("input1_id")) is not None:
        macs = n_out * val(a["input1_id"]).dims[-1]
        flops = 2 * macs
    elif t in XNN_MOVE:
        flops = 0
    elif t in XNN_ELEMENTWISE:
        flops = n_out
    elif t in XNN_TRANSCENDENTAL:
        flops = 4 * n_out
    elif t == "Softmax":
        flops = 5 * n_out
    return {"macs": macs, "flops": flops}


def xnn_weight_bytes(prog: PteProgram, g) -> int:
    """Bytes of an XNNPACK graph's constants: in its own blob, or in the program's named data (by key)."""
    named = {k: prog.segments[i].size for k, i in prog.named_data if i < len(prog.segments)}
    return sum(size if size else named.get(key or "", 0) for size, key in zip(g.constant_sizes, g.constant_keys))


def instruction_costs(prog: PteProgram) -> list[dict]:
    """Per instruction of every plan: MACs, FLOPs (None when any part is not known) and bytes."""
    rows = []
    for plan in prog.plans:
        for n, ins in enumerate(plan.instructions):
            if ins.kind == "kernel":
                c = kernel_cost(plan, ins)
            elif ins.kind == "delegate" and plan.delegates[ins.delegate].xnnpack is not None:
                g = plan.delegates[ins.delegate].xnnpack
                parts = [xnn_node_cost(g, nd) for nd in g.nodes]
                c = {"macs": sum(p["macs"] for p in parts),
                     "flops": None if any(p["flops"] is None for p in parts) else sum(p["flops"] for p in parts),
                     "weight_bytes": xnn_weight_bytes(prog, g), "act_read": None, "written": None}
            else:
                c = {"macs": 0, "flops": None if ins.kind == "delegate" else 0, "weight_bytes": 0, "act_read": 0,
                     "written": 0}
            rows.append({"plan": plan.name, "index": n, "kind": ins.kind, **c})
    return rows
