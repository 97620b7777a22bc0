"""``.mlpackage`` (and single-file ``.mlmodel``) → :class:`~edgeprof.mil_model.MilProgram`, through coremltools'
protobuf schema (the ``coreml`` extra).

Only coremltools' generated ``proto`` modules are loaded, under a private name: importing ``coremltools``
itself takes seconds (it imports torch when present) and prints proxy warnings on Linux, and nothing else of
it is needed to read a model specification.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

from ..errors import InputError
from ..mil_model import MAX_DIM, MAX_RANK, Arg, Blob, Block, Function, MilProgram, MilType, Op, Value

_PROTO_NAME = "_edgeprof_coremltools_proto"
MAX_MANIFEST_BYTES = 1 << 20  # a package's Manifest.json (a few hundred bytes in practice)
MAX_SPEC_BYTES = 2 << 30  # protobuf messages cannot be larger
# MIL_pb2.DataType names → the spelling of model.mil text
_DTYPES = {"BOOL": "bool", "STRING": "string", "FLOAT16": "fp16", "FLOAT32": "fp32", "FLOAT64": "fp64", "BFLOAT16": "bf16",
           "FLOAT8E4M3FN": "fp8e4m3fn", "FLOAT8E5M2": "fp8e5m2", "INT4": "int4", "INT8": "int8", "INT16": "int16",
           "INT32": "int32", "INT64": "int64", "UINT1": "uint1", "UINT2": "uint2", "UINT3": "uint3", "UINT4": "uint4",
           "UINT6": "uint6", "UINT8": "uint8", "UINT16": "uint16", "UINT32": "uint32", "UINT64": "uint64"}


class CoreMLBundleError(InputError):
    """A Core ML bundle that cannot be read (not a bundle, no manifest, unparsable specification, …)."""


def proto_modules():
    """coremltools' ``proto`` package (Model_pb2, MIL_pb2), imported without importing coremltools."""
    mod = sys.modules.get(_PROTO_NAME)
    if mod is not None:
        return mod
    from ..errors import MissingExtraError

    spec = importlib.util.find_spec("coremltools")
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtraError("coreml", "reading .mlpackage / .mlmodel files")
    d = os.path.join(next(iter(spec.submodule_search_locations)), "proto")
    pspec = importlib.util.spec_from_file_location(_PROTO_NAME, os.path.join(d, "__init__.py"),
                                                   submodule_search_locations=[d])
    assert pspec is not None and pspec.loader is not None  # a .py file has both
    mod = importlib.util.module_from_spec(pspec)
    sys.modules[_PROTO_NAME] = mod
    try:
        pspec.loader.exec_module(mod)
    except Exception:
        del sys.modules[_PROTO_NAME]
        raise
    return mod


def spec_path(package: Path) -> Path:
    """The model specification file of an ``.mlpackage``, found through its Manifest.json."""
    manifest = package / "Manifest.json"
    from ..files import is_file, read_text

    if not is_file(manifest):
        raise CoreMLBundleError(package, "not an .mlpackage: no Manifest.json")
    try:
        m = json.loads(read_text(manifest, MAX_MANIFEST_BYTES, "package manifest", CoreMLBundleError))
        entry = m["itemInfoEntries"][m["rootModelIdentifier"]]
        path = package / "Data" / entry["path"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise CoreMLBundleError(manifest, f"unreadable package manifest ({type(e).__name__}: {e})") from None
    if not is_file(path):
        raise CoreMLBundleError(package, f"the manifest names {entry['path']!r}, which is not in the package")
    return path


def read_spec(path: Path):
    """Parse a Core ML model specification (protobuf) file."""
    pb = proto_modules()
    spec = pb.Model_pb2.Model()
    from ..files import read_regular

    data = read_regular(path, MAX_SPEC_BYTES, "Core ML model specification", CoreMLBundleError)
    try:
        spec.ParseFromString(data)
    except Exception as e:  # protobuf's DecodeError and friends
        raise CoreMLBundleError(path, f"not a Core ML model specification ({type(e).__name__}: {e})") from None
    return spec


def program_from_spec(spec, source: str) -> MilProgram:
    kind = spec.WhichOneof("Type")
    if kind != "mlProgram":
        raise CoreMLBundleError(source, f"a {kind or 'empty'} model, not an ML Program: static analysis reads ML Programs "
                                        "(mlprogram, iOS 15+)")
    pb = proto_modules()
    names = {v: k for k, v in pb.MIL_pb2.DataType.items()}
    conv = _Converter(names, source)
    default = spec.description.defaultFunctionName or "main"
    order = sorted(spec.mlProgram.functions.keys(), key=lambda k: (k != default, k))
    functions = {}
    for fname in order:
        fn = spec.mlProgram.functions[fname]
        if fn.opset not in fn.block_specializations:
            raise CoreMLBundleError(source, f"function '{fname}' has no block for its opset '{fn.opset}'")
        blk = fn.block_specializations[fn.opset]
        functions[fname] = Function(fname, fn.opset, [(i.name, conv.type(i.type)) for i in fn.inputs],
                                    conv.ops(blk, fname), list(blk.outputs))
    desc = {"inputs": [i.name for i in spec.description.input], "outputs": [o.name for o in spec.description.output],
            "states": [s.name for s in spec.description.state], "metadata": dict(spec.description.metadata.userDefined)}
    return MilProgram(source, "mlpackage", str(spec.specificationVersion), functions, description=desc)


_RAW = {"uint8": "<u1", "int8": "<i1", "uint16": "<u2", "int16": "<i2", "uint32": "<u4", "int32": "<i4",
        "uint64": "<u8", "int64": "<i8", "fp16": "<f2", "fp32": "<f4", "fp64": "<f8", "bool": "<u1"}


def _raw_values(raw: bytes, dtype: str) -> list:
    """Raw tensor bytes as a list of numbers (sub-byte and unknown dtypes stay a list of bytes)."""
    import numpy as np

    code = _RAW.get(dtype)
    if code is None or len(raw) % np.dtype(code).itemsize:
        return list(raw)
    return np.frombuffer(raw, dtype=code).tolist()


class _Converter:
    def __init__(self, dtype_names: dict, source: str):
        self.dtype_names = dtype_names
        self.source = source

    def dtype(self, code: int) -> str:
        return _DTYPES.get(self.dtype_names.get(code, ""), self.dtype_names.get(code, f"dtype{code}").lower())

    def type(self, vt) -> MilType:
        which = vt.WhichOneof("type")
        if which == "tensorType":
            tt = vt.tensorType
            shape = tuple(d.constant.size if d.WhichOneof("dimension") == "constant" else "?" for d in tt.dimensions)
            if len(shape) > MAX_RANK or any(isinstance(d, int) and d > MAX_DIM for d in shape):
                raise CoreMLBundleError(self.source, f"a tensor of shape {list(shape)[:20]} (a dimension above {MAX_DIM} "
                                                     f"or rank above {MAX_RANK}) is not a model")
            return MilType("tensor" if tt.rank > 0 or shape else "scalar", self.dtype(tt.dataType), shape)
        if which == "stateType":
            inner = self.type(vt.stateType.wrappedType)
            return MilType("state", inner.dtype, inner.shape, inner)
        return MilType({"listType": "list", "dictionaryType": "dict", "tupleType": "tuple"}.get(which, which or "?"))

    def value(self, v) -> Value:
        typ = self.type(v.type)
        which = v.WhichOneof("value")
        if which == "blobFileValue":
            return Value(typ, None, Blob(v.blobFileValue.fileName, int(v.blobFileValue.offset)))
        if which == "immediateValue" and v.immediateValue.WhichOneof("value") == "tensor":
            t = v.immediateValue.tensor
            kind = t.WhichOneof("value")
            vals = getattr(t, kind).values if kind else []
            # small integer / fp16 tensors are stored as raw little-endian bytes
            vals = _raw_values(bytes(vals), typ.dtype) if kind == "bytes" else list(vals)
            return Value(typ, vals[0] if typ.kind == "scalar" and len(vals) == 1 else vals)
        return Value(typ)

    def ops(self, blk, fname: str) -> list[Op]:
        out = []
        for i, op in enumerate(blk.operations):
            attrs = {k: self.value(v) for k, v in op.attributes.items()}
            name_v = attrs.pop("name", None)
            outputs = [(o.name, self.type(o.type)) for o in op.outputs]
            name = (name_v.value if name_v is not None and isinstance(name_v.value, str)
                    else (outputs[0][0] if outputs else op.type))
            inputs = {}
            for param in sorted(op.inputs.keys()):
                inputs[param] = [Arg(name=b.name) if b.WhichOneof("binding") == "name" else Arg(value=self.value(b.value))
                                 for b in op.inputs[param].arguments]
            blocks = [Block(self.ops(b, fname), list(b.outputs)) for b in op.blocks]
            out.append(Op(i, fname, op.type, name, outputs, inputs, attrs, blocks))
        return out
