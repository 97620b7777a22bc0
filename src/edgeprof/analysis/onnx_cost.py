"""FLOPs and bytes per node of an ONNX model (pure, from :func:`edgeprof.io.onnx_model.read_onnx`'s node list),
in the conventions of :mod:`edgeprof.analysis.pte_cost` (one multiply-add = 2 FLOPs; ``macs`` kept apart):

==============================================  ================================================================
``Conv``, ``ConvInteger``, ``QLinearConv``      MACs = numel(out) · (C_in / group) · prod(kernel)  (+ numel(out) with bias)
``ConvTranspose``                               MACs = numel(in) · (C_out / group) · prod(kernel)
``Gemm``, ``QGemm``                             MACs = M · N · K  (+ M · N with C)
``MatMul``, ``MatMulInteger``, ``QLinearMatMul``  MACs = numel(out) · K  (K: A's last dimension)
elementwise, activations                        numel(out)  (Exp, Erf, Gelu, Sigmoid, Tanh: 4 · numel)
``Softmax``, ``LogSoftmax``                     5 · numel(out)  (max, subtract, exp, sum, divide)
``MaxPool``, ``AveragePool``, ``LpPool``        numel(out) · prod(kernel_shape)
``Global*Pool``, ``Reduce*``                    numel(input)  (every input element is read and combined once)
``LayerNormalization``, ``BatchNormalization``  8 · numel(out)
copies, reshapes, transposes, casts, gathers    0
anything else, or a shape inference left open   not known (None), never guessed
==============================================  ================================================================

Bytes: activations read (inputs that are not initializers), weights (initializers) and written (outputs), from
element size × shape; a tensor of unknown shape counts 0 and marks the byte figures incomplete.
"""

from __future__ import annotations

from math import prod
from typing import TYPE_CHECKING, Any

from ..taxonomy import classify

if TYPE_CHECKING:
    from typing import TypeGuard

_CONV = {"Conv", "ConvInteger", "QLinearConv"}
_GEMM = {"Gemm", "QGemm"}
_MATMUL = {"MatMul", "MatMulInteger", "QLinearMatMul"}
_TRANSCENDENTAL = {"Exp", "Log", "Erf", "Gelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Softplus", "Mish",
                   "Sin", "Cos"}
_SOFTMAX = {"Softmax", "LogSoftmax"}
_WINDOW_POOL = {"MaxPool", "AveragePool", "LpPool", "QLinearAveragePool"}
_NORM = {"LayerNormalization", "BatchNormalization", "InstanceNormalization", "GroupNormalization"}
_ZERO = {"DATA_MOVEMENT", "RESHAPE", "QUANT", "EMBEDDING"}


def _known(t) -> TypeGuard[dict]:
    return t is not None and t["shape"] is not None and all(isinstance(d, int) for d in t["shape"])


def tensor_bytes(t) -> int:
    """Bytes of one tensor of a node (:func:`edgeprof.io.onnx_model.read_onnx`), 0 when its shape or type is not known."""
    return prod(t["shape"]) * t["itemsize"] if _known(t) and t["itemsize"] else 0



def node_cost(node: dict) -> dict:
    """``{"macs", "flops", "weight_bytes", "act_read", "written", "bytes_complete"}`` of one node."""
    ins, outs = node["inputs"], node["outputs"]
    present = [t for t in ins if t is not None]
    out: dict[str, Any] = {"weight_bytes": sum(tensor_bytes(t) for t in present if t["weight"]),
                           "act_read": sum(tensor_bytes(t) for t in present if not t["weight"]),
                           "written": sum(tensor_bytes(t) for t in outs if t is not None),
                           "bytes_complete": all(_known(t) and t["itemsize"] for t in [*present, *[o for o in outs if o]])}
    out.update(macs=0, flops=None)
    y = outs[0] if outs else None
    if not _known(y):
        return out
    n_out = prod(y["shape"])
    op = node["op"]
    try:
        if op in _CONV:
            w = ins[3] if op == "QLinearConv" else ins[1]
            x = ins[0]
            macs = n_out * (x["shape"][1] // node["attrs"].get("group", 1)) * prod(w["shape"][2:])
            bias = (len(ins) > (8 if op == "QLinearConv" else 2)) and ins[-1] is not None and op == "Conv"
            out.update(macs=macs, flops=2 * macs + (n_out if bias else 0))
        elif op == "ConvTranspose":
            x, w = ins[0], ins[1]
            macs = prod(x["shape"]) * w["shape"][1] * prod(w["shape"][2:])
            out.update(macs=macs, flops=2 * macs)
        elif op in _GEMM:
            a = ins[0]["shape"]
            k = a[0] if node["attrs"].get("transA", 0) else a[1]
            macs = n_out * k
            has_c = len(ins) > (2 if op == "Gemm" else 6) and ins[2 if op == "Gemm" else 6] is not None
            out.update(macs=macs, flops=2 * macs + (n_out if has_c else 0))
        elif op in _MATMUL:
            macs = n_out * ins[0]["shape"][-1]
            out.update(macs=macs, flops=2 * macs)
        elif op in _TRANSCENDENTAL:
            out["flops"] = 4 * n_out
        elif op in _SOFTMAX:
            out["flops"] = 5 * n_out
        elif op in _WINDOW_POOL:
            out["flops"] = n_out * prod(node["attrs"]["kernel_shape"])
        elif (op.startswith("Global") and op.endswith("Pool")) or op.startswith("Reduce") \
                or op == "QLinearGlobalAveragePool":
            x = ins[0]
            out["flops"] = prod(x["shape"]) if _known(x) else None
        elif op in _NORM:
            out["flops"] = 8 * n_out
        else:
            cat = classify(op).category
            if cat in _ZERO:
                out["flops"] = 0
            elif cat in ("ELEMENTWISE", "ACTIVATION", "POOL", "REDUCTION"):
                out["flops"] = n_out
    except (TypeError, IndexError, KeyError, ZeroDivisionError):
        out.update(macs=0, flops=None)
    return out


def program_view(model: dict) -> tuple[dict, list[dict]]:
    """(summary, costs) shaped as :func:`edgeprof.analysis.pte_join.join_program` reads a program's: one
    instruction per node of the graph ``main``."""
    summary = {"file": model["file"], "methods": ["main"],
               "instructions": [{"index": n["index"], "name": n["op"], "plan": "main", "kind": "kernel",
                                 "node": n["name"]} for n in model["nodes"]]}
    costs = [{"index": n["index"], "plan": "main", **node_cost(n)} for n in model["nodes"]]
    return summary, costs


def by_node_name(profile, model: dict):
    """(profile, unmatched): the profile with each ONNX Runtime node event's ``instruction_id`` set to the index of
    the model's node of the same name (``module_path``), −1 where none has it — ONNX Runtime's graph optimizer
    fuses and renames nodes (``FusedConv``, NCHWc reorders), whose time is then reported as unmatched: ``{"nodes",
    "ms_per_run", "names"}`` of those."""
    import dataclasses

    import polars as pl

    from ..conventions import ms

    index = {n["name"]: n["index"] for n in model["nodes"]}
    ev = profile.events
    names = ev["module_path"].cast(pl.String)
    new = pl.Series("instruction_id", [index.get(s, -1) if s is not None else i
                                       for s, i in zip(names.to_list(), ev["instruction_id"].to_list())], dtype=pl.Int32)
    out = dataclasses.replace(profile, events=ev.with_columns(new))
    calls = out.execute_events().filter(pl.col("kind").is_in(["operator_call", "delegate_call"])
                                        & (pl.col("instruction_id") < 0))
    left = sorted(set(calls["module_path"].cast(pl.String).to_list()))
    return out, {"nodes": len(left), "names": left[:20],
                 "ms_per_run": ms(float(calls["duration_ns"].sum() or 0)) / max(profile.n_runs, 1)}


def _holder(node: dict, timed: set, producer: dict) -> dict | None:
    """The node whose time holds ``node``'s work: itself when the profile times it (by its name, or by its op type
    — ONNX Runtime renames the nodes it re-lays out, ``…_nchwc``, and keeps their op), else — a node the runtime
    fused away (a Relu folded into the Conv before it: no Relu is timed at all) — the timed node that produced its
    input, followed back through other fused nodes; None when no timed node holds it."""
    seen = set()
    while node["name"] not in timed and node["op"] not in timed:
        if node["index"] in seen:
            return None
        seen.add(node["index"])
        fused_from = next((producer[t["name"]] for t in node["inputs"]
                           if t is not None and not t["weight"] and t.get("name") in producer), None)
        if fused_from is None:
            return None
        node = fused_from
    return node


def category_rates(model: dict, categories_ms: dict, timed: set | None = None) -> list[dict]:
    """Per operator category: the FLOPs of the work the profile's time in that category holds, against that time
    per run — achieved GFLOP/s. ``timed``: the node names and op types the profile times; a node it does not time
    (fused away)
    has its FLOPs counted with the timed node that holds it (:func:`_holder`: a Relu fused into a Conv is CONV work
    in CONV time), never as the work of its own category's other nodes' time; work no timed node holds is left out
    (``flops_untimed``). Without ``timed`` every node is counted by its own op type."""
    flops: dict[str, int] = {}
    known: dict[str, bool] = {}
    producer = {t["name"]: n for n in model["nodes"] for t in n["outputs"] if t is not None and t.get("name")}
    untimed = 0
    for n in model["nodes"]:
        f = node_cost(n)["flops"]
        h = n if timed is None else _holder(n, timed, producer)
        if h is None:
            untimed += f or 0
            continue
        cat = classify(h["op"]).category
        flops[cat] = flops.get(cat, 0) + (f or 0)
        known[cat] = known.get(cat, True) and f is not None
    rows = []
    for cat in sorted(set(flops) | {c for c in categories_ms if c.isupper()}):
        t = categories_ms.get(cat, 0.0)
        f = flops.get(cat)
        rows.append({"category": cat, "flops": f, "flops_known": known.get(cat, False), "ms_per_run": t,
                     "gflops": f / t / 1e6 if f and t > 0 and known.get(cat) else None})
    rows.sort(key=lambda r: -r["ms_per_run"])
    if untimed:
        rows.append({"category": "(no timed node)", "flops": untimed, "flops_known": True, "ms_per_run": 0.0,
                     "gflops": None})
    return rows
