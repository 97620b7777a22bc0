"""ONNX models (``.onnx``) → the plain node list :mod:`edgeprof.analysis.onnx_cost` prices: per node its index,
name, op type, attributes the cost formulas read, and the shape, element size and origin (weight or activation)
of every input and output, with shapes from ONNX's own shape inference. Needs the ``ort`` extra (``onnx``).

Weights stored outside the file (``external_data``) count by their declared shape and type; nothing is loaded.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from ..errors import InputError, MissingExtraError

MAX_ONNX_BYTES = 2 << 30  # protobuf's own limit for one model file
_ATTRS = ("group", "kernel_shape", "transA", "transB", "strides", "pads", "dilations")


def _onnx():
    try:
        import onnx
    except ImportError:
        raise MissingExtraError("ort", "reading an ONNX model") from None
    return onnx


def read_onnx(path) -> dict:
    """``{"file", "producer", "opsets", "nodes": [...]}`` of an ONNX model (the main graph; subgraphs of ``If`` and
    ``Loop`` are not expanded)."""
    from ..files import read_regular

    onnx = _onnx()
    path = Path(path)
    data = read_regular(path, MAX_ONNX_BYTES, "ONNX model")
    try:
        model = onnx.load_model_from_string(data)
    except Exception as e:  # protobuf raises its own DecodeError and others
        raise InputError(path, f"not an ONNX model ({type(e).__name__}: "
                               f"{str(e).splitlines()[0][:120] if str(e) else ''})") from None
    if not model.graph.node:
        raise InputError(path, "an ONNX model with no nodes (is it an ONNX file?)")
    with contextlib.suppress(Exception):  # a model shape inference cannot follow keeps the shapes it declares
        model = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    g = model.graph
    elem = {}
    for v in (*g.input, *g.value_info, *g.output):
        t = v.type.tensor_type
        if t.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
            elem[v.name] = (dims, t.elem_type)
    weights = {}
    for t in g.initializer:
        weights[t.name] = (list(t.dims), t.data_type)
        elem[t.name] = (list(t.dims), t.data_type)

    def size(elem_type: int) -> int | None:
        try:
            return onnx.helper.tensor_dtype_to_np_dtype(elem_type).itemsize
        except Exception:  # strings, undefined, and types numpy does not have
            return None

    def tensor(name: str) -> dict | None:
        """None for an optional input left out; a shape of None when shape inference could not tell it."""
        if not name:
            return None
        dims, et = elem.get(name, (None, 0))
        return {"name": name, "shape": dims, "itemsize": size(et) if et else None, "weight": name in weights}

    nodes = []
    for i, n in enumerate(g.node):
        attrs = {}
        for a in n.attribute:
            if a.name in _ATTRS:
                attrs[a.name] = list(a.ints) if a.ints else int(a.i)
        nodes.append({"index": i, "name": n.name or f"{n.op_type}_{i}", "op": n.op_type, "domain": n.domain or "ai.onnx",
                      "attrs": attrs, "inputs": [tensor(x) for x in n.input], "outputs": [tensor(x) for x in n.output]})
    return {"file": str(path), "producer": model.producer_name, "nodes": nodes,
            "opsets": {o.domain or "ai.onnx": int(o.version) for o in model.opset_import}}
