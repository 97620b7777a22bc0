"""Static cost of a Core ML program, per operation in program order: FLOPs, bytes, weights (pure functions).

Counting rules (one multiply-add = 2 FLOPs; ``macs`` is kept apart so matrix work compares with other
counters, which count 2·MACs and no bias):

=========================================  ======================================================================
conv                                       MACs = numel(out) · (Cin/groups) · prod(kernel); + numel(out) with bias
conv_transpose                             MACs = numel(x) · (Cout/groups) · prod(kernel); + numel(out) with bias
linear                                     MACs = numel(out) · K (weight [N, K]); + numel(out) with bias
matmul / einsum-free batched matmul        MACs = numel(out) · K, K = x[-2] when transpose_x else x[-1]
scaled_dot_product_attention               MACs = BH·L·S·E + BH·L·S·Ev; + 5·BH·L·S (scale, mask, softmax)
softmax / log_softmax                      5 · numel
layer_norm, batch_norm, instance_norm, …   8 · numel
reduce_*                                   numel(input)
max_pool / avg_pool / l2_pool              numel(out) · prod(kernel_sizes)
elementwise, compare, relu family          numel(out)
transcendental (exp, gelu, sigmoid, …)     4 · numel(out) (a convention: one evaluation ≈ 4 FLOPs)
views, copies, gathers, casts, state ops   0 (data movement; bytes only)
constexpr_* weight decompression           0 at run time: a load-time expansion, reported as stored → dense bytes
anything else                              not known (``flops`` is None, never guessed)
=========================================  ======================================================================

Bytes: *activation read* = the dense bytes of non-constant inputs; *weight read* = the dense bytes of
constant tensor operands (what the op consumes after decompression), *weight stored* = their bytes on disk
(the compressed operands of a ``constexpr_*`` op); *written* = the outputs' bytes. Constant scalars and
shape/axis parameters of ≤ 64 bytes are parameters, not traffic. ``gather`` from a constant table reads only
the gathered rows; ``write_state`` writes its value; ``slice_update`` notes the in-place slice it writes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..mil_model import MilProgram, MilType, Op, short_type
from ..taxonomy import classify

PARAM_BYTES = 64          # constant operands at or below this size are parameters, not weights
VIEW_OPS = frozenset({"reshape", "expand_dims", "squeeze", "flatten2d", "reshape_like", "identity"})
ELEMENTWISE = frozenset({
    "add", "sub", "mul", "real_div", "floor_div", "mod", "pow", "maximum", "minimum", "abs", "ceil", "floor", "round",
    "sign", "inverse", "square", "sqrt", "rsqrt", "equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor", "select", "relu", "relu6", "clip", "clamped_relu",
    "leaky_relu", "prelu", "threshold", "thresholded_relu", "linear_activation", "band_part", "sigmoid_hard"})
TRANSCENDENTAL = frozenset({"exp", "exp2", "log", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
                            "erf", "gelu", "sigmoid", "silu", "elu", "softplus", "softsign", "scaled_tanh",
                            "softplus_parametric"})
NORMS = frozenset({"layer_norm", "batch_norm", "instance_norm", "l2_norm", "local_response_norm"})
POOLS = frozenset({"max_pool", "avg_pool", "l2_pool"})
MOVEMENT = frozenset({
    "reshape", "expand_dims", "squeeze", "flatten2d", "reshape_like", "identity", "transpose", "concat", "stack", "split",
    "slice_by_index", "slice_by_size", "gather", "gather_nd", "gather_along_axis", "scatter", "scatter_nd",
    "scatter_along_axis", "cast", "slice_update", "read_state", "write_state", "coreml_update_state", "pad", "tile",
    "shape", "fill", "fill_like", "depth_to_space", "space_to_depth", "pixel_shuffle", "pixel_unshuffle", "reverse",
    "const", "range_1d", "band_part_", "sliding_windows"})


@dataclass
class OpCost:
    function: str
    index: int
    type: str
    name: str
    category: str
    outputs: str                 # "fp16[1,16,32,32]" (comma-joined when several)
    inputs: str                  # "x=fp16[1,3,32,32] weight=fp16[16,3,3,3]*" (* = constant)
    macs: int | None
    flops: int | None            # None = not known
    act_read: int | None         # bytes; None when a shape is flexible
    weight_read: int
    weight_stored: int
    written: int | None
    note: str = ""
    output: str = ""             # the first output's name (what anemll-profile calls the op)

    @property
    def intensity(self) -> float | None:
        """FLOPs per byte moved (activations + dense weights + outputs)."""
        moved = (self.act_read or 0) + self.weight_read + (self.written or 0)
        return self.flops / moved if self.flops is not None and moved else None

    def to_json(self) -> dict:
        d = {k: getattr(self, k) for k in ("function", "index", "type", "name", "category", "outputs", "inputs", "macs",
                                           "flops", "act_read", "weight_read", "weight_stored", "written", "note", "output")}
        d["intensity"] = self.intensity
        return d


class _Symbols:
    """Per function: each variable's type and whether it is a constant (and its stored bytes)."""

    def __init__(self, prog: MilProgram, fn):
        self.types: dict[str, MilType] = dict(fn.inputs)
        self.const: dict[str, Op] = {}
        self.stored: dict[str, int] = {}

    def add(self, op: Op, stored: int) -> None:
        for n, t in op.outputs:
            self.types[n] = t
        if op.type == "const" or op.type.startswith("constexpr_"):
            for n, _ in op.outputs:
                self.const[n] = op
                self.stored[n] = stored


def _param_value(op: Op, syms: _Symbols, param: str, default=None):
    a = op.arg(param)
    if a is None:
        return default
    if a.value is not None:
        return a.value.value
    c = syms.const.get(a.name or "")
    if c is not None and "val" in c.attrs:
        return c.attrs["val"].value
    return default


def _arg_type(op: Op, syms: _Symbols, param: str) -> MilType | None:
    a = op.arg(param)
    if a is None:
        return None
    return a.value.type if a.value is not None else syms.types.get(a.name or "")


def _prod(xs) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def _own_stored(op: Op) -> int:
    """Bytes on disk of a const / constexpr op's own operands (attributes and inline values)."""
    vals = list(op.attrs.values()) + [a.value for args in op.inputs.values() for a in args if a.value is not None]
    # blobs, and inline tensors too large to be parameters (a shape or an axis is not a weight)
    return sum(v.stored_bytes for v in vals if v.blob is not None or (v.type.nbytes or 0) > PARAM_BYTES)


def _macs_flops(op: Op, syms: _Symbols, out: MilType | None) -> tuple[int | None, int | None, str]:
    t = short_type(op.type)
    n_out = out.numel if out is not None else None
    has_bias = op.arg("bias") is not None
    if t in MOVEMENT or t.startswith("constexpr_"):
        return 0, 0, "view" if t in VIEW_OPS else ""
    if n_out is None:
        return None, None, "flexible shape"
    if t == "conv":
        w = _arg_type(op, syms, "weight")
        if w is None or not w.is_static or len(w.shape) < 3:
            return None, None, ""
        macs = n_out * w.shape[1] * _prod(w.shape[2:])
        return macs, 2 * macs + (n_out if has_bias else 0), f"groups={_param_value(op, syms, 'groups', 1)}, k={list(w.shape[2:])}"
    if t == "conv_transpose":
        w, x = _arg_type(op, syms, "weight"), _arg_type(op, syms, "x")
        if w is None or x is None or not w.is_static or x.numel is None or len(w.shape) < 3:
            return None, None, ""
        macs = x.numel * w.shape[1] * _prod(w.shape[2:])
        return macs, 2 * macs + (n_out if has_bias else 0), ""
    if t == "linear":
        w = _arg_type(op, syms, "weight")
        if w is None or not w.is_static or len(w.shape) != 2:
            return None, None, ""
        macs = n_out * w.shape[1]
        return macs, 2 * macs + (n_out if has_bias else 0), f"K={w.shape[1]}"
    if t == "matmul":
        x = _arg_type(op, syms, "x")
        if x is None or not x.is_static or not x.shape:
            return None, None, ""
        tx = bool(_param_value(op, syms, "transpose_x", False))
        k = x.shape[-2] if tx and len(x.shape) >= 2 else x.shape[-1]
        return n_out * k, 2 * n_out * k, f"K={k}"
    if t == "scaled_dot_product_attention":
        q, k, v = (_arg_type(op, syms, p) for p in ("query", "key", "value"))
        if q is None or k is None or v is None or any(not a.is_static or len(a.shape) < 2 for a in (q, k, v)):
            return None, None, ""
        bh, L, E = _prod(q.shape[:-2]), q.shape[-2], q.shape[-1]
        S, Ev = k.shape[-2], v.shape[-1]
        macs = bh * L * S * E + bh * L * S * Ev
        return macs, 2 * macs + 5 * bh * L * S, f"L={L}, S={S}"
    if t in ("softmax", "log_softmax"):
        return 0, 5 * n_out, ""
    if t in NORMS:
        return 0, 8 * n_out, ""
    if t.startswith("reduce_"):
        x = _arg_type(op, syms, "x")
        return (0, x.numel, "") if x is not None and x.numel is not None else (None, None, "")
    if t in POOLS:
        k = _param_value(op, syms, "kernel_sizes")
        return (0, n_out * _prod(k), f"kernel={list(k)}") if isinstance(k, list) and k else (None, None, "")
    if t in ELEMENTWISE:
        return 0, n_out, ""
    if t in TRANSCENDENTAL:
        return 0, 4 * n_out, ""
    return None, None, "FLOPs not known for this op"


def _bytes(op: Op, syms: _Symbols, t: str) -> tuple[int | None, int, int, str]:
    """(activation bytes read, dense weight bytes read, stored weight bytes, note)."""
    act: int | None  # None once an input's size is not known
    nb: int | None
    act, wread, wstored, note = 0, 0, 0, ""
    for param, args in op.inputs.items():
        for a in args:
            if a.value is not None:  # inline value (iOS18 constexpr operands, literals)
                nb = a.value.type.nbytes or 0
                if a.value.blob is not None or nb > PARAM_BYTES:
                    wread += nb
                    wstored += a.value.stored_bytes
                continue
            typ = syms.types.get(a.name or "")
            nb = typ.nbytes if typ is not None else None
            if a.name in syms.const:
                if nb is not None and nb > PARAM_BYTES:
                    if t == "gather" and param == "x":  # only the gathered rows are read
                        out = op.outputs[0][1] if op.outputs else None
                        nb = out.nbytes if out is not None and out.nbytes is not None else nb
                        note = "reads only the gathered rows of a constant table"
                        wread += nb
                        wstored += nb
                        continue
                    wread += nb
                    wstored += syms.stored.get(a.name, nb)
                continue
            if t == "write_state" and param == "input":
                continue  # the state handle itself; the value written is ``data``
            if nb is None:  # a flexible shape: the bytes are not known
                act = None
                continue
            if act is not None:
                act += nb
    return act, wread, wstored, note


def op_costs(prog: MilProgram) -> list[OpCost]:
    """One row per operation (consts included, cost 0), functions in program order."""
    rows: list[OpCost] = []
    act: int | None  # unknown for a flexible shape
    written: int | None
    for fn in prog.functions.values():
        syms = _Symbols(prog, fn)
        for op in fn.ops:
            t = short_type(op.type)
            stored = _own_stored(op) if (t == "const" or t.startswith("constexpr_")) else 0
            out = op.outputs[0][1] if op.outputs else None
            macs, flops, note = _macs_flops(op, syms, out)
            if t == "const" or t.startswith("constexpr_"):
                dense = sum((ty.nbytes or 0) for _, ty in op.outputs)
                act, wread, wstored = 0, 0, stored
                written = 0
                if t.startswith("constexpr_") and dense:
                    note = f"stored {stored} B -> dense {dense} B ({dense / stored:.2f}x)" if stored else ""
            else:
                act, wread, wstored, bnote = _bytes(op, syms, t)
                note = "; ".join(x for x in (note, bnote) if x)
                written = 0
                for _, ty in op.outputs:
                    written = None if ty.nbytes is None or written is None else written + ty.nbytes
                if t == "write_state":
                    dt = _arg_type(op, syms, "data")
                    written = dt.nbytes if dt is not None else None
                if t == "slice_update":
                    ut = _arg_type(op, syms, "update")
                    if ut is not None and ut.nbytes is not None:
                        note = "; ".join(x for x in (note, f"in-place slice {ut.nbytes} B") if x)
            syms.add(op, stored)
            ins = " ".join(f"{p}={(at.text() if (at := _arg_type(op, syms, p)) else '?')}"
                           f"{'*' if (args[0].value is not None or args[0].name in syms.const) else ''}"
                           for p, args in op.inputs.items() if len(args) == 1)
            rows.append(OpCost(fn.name, op.index, op.type, op.name, classify(op.type).category,
                               ",".join(ty.text() for _, ty in op.outputs), ins, macs, flops, act, wread, wstored,
                               written, note, op.outputs[0][0] if op.outputs else op.name))
    return rows


def type_table(rows: list[OpCost]) -> list[dict]:
    """Per op type (consts left out): the same row shape as anemll-profile's ``op_type_breakdown`` where it
    applies (``type``, ``short_type``, ``count``, ``gflop``, ``weight_mb``) plus the static byte counts."""
    by: dict[str, dict] = {}
    for r in rows:
        if r.type == "const":
            continue
        short = short_type(r.type)
        d = by.setdefault(short, {"type": r.type, "short_type": short, "category": r.category, "count": 0,
                                  "flops": 0, "flops_known": True, "act_read": 0, "weight_read": 0,
                                  "weight_stored": 0, "written": 0})
        d["count"] += 1
        if r.flops is None:
            d["flops_known"] = False
        else:
            d["flops"] += r.flops
        d["act_read"] += r.act_read or 0
        d["weight_read"] += r.weight_read
        d["weight_stored"] += r.weight_stored
        d["written"] += r.written or 0
    total = sum(d["flops"] for d in by.values()) or 1
    out = []
    for d in by.values():
        d["gflop"] = d["flops"] / 1e9
        d["weight_mb"] = d["weight_read"] / 1e6
        d["share_flops_pct"] = 100 * d["flops"] / total
        moved = d["act_read"] + d["weight_read"] + d["written"]
        d["intensity"] = d["flops"] / moved if moved else None
        out.append(d)
    return sorted(out, key=lambda d: (-d["flops"], -d["weight_read"], d["short_type"]))


def totals(prog: MilProgram, rows: list[OpCost]) -> dict:
    """Program totals; weight bytes both per use and unique (each blob once), and the weight files' sizes."""
    seen: dict[tuple, int] = {}
    for b in prog.blobs():
        seen[(b.path, b.offset)] = b.size or 0
    known = [r.flops for r in rows if r.flops is not None]
    return {
        "ops": len(rows), "const_ops": sum(r.type == "const" for r in rows),
        "flops": sum(known), "macs": sum(r.macs or 0 for r in rows),
        "ops_flops_not_known": sorted({r.type for r in rows if r.flops is None}),
        "act_read": sum(r.act_read or 0 for r in rows), "written": sum(r.written or 0 for r in rows),
        "weight_read": sum(r.weight_read for r in rows),
        "weight_stored_per_use": sum(r.weight_stored for r in rows if r.type != "const" and not r.type.startswith("constexpr_")),
        "weight_stored_unique": sum(seen.values()),
        "weight_dense": sum(sum((ty.nbytes or 0) for _, ty in op.outputs) for op in prog.all_ops()
                            if (op.type == "const" and op.attrs.get("val") is not None and op.attrs["val"].blob is not None)
                            or op.type.startswith("constexpr_")),
        "weight_files": dict(prog.weight_files),
        "blobs": len(seen),
    }
