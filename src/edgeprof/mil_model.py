"""The normalized Core ML program (ML Program / MIL): what the ``model.mil`` text reader and the ``.mlpackage``
reader both produce, and what the static analyses read.

A program has functions; a function has typed inputs, operations in program order and output names. An
operation's inputs bind parameter names to variables or to inline values; an inline or ``const`` value may
live in a weight file (``BLOBFILE(path, offset)``), described by the MILBlob record found there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# bits per element of each MIL dtype (the text spelling; the protobuf enum is mapped onto these names)
DTYPE_BITS = {
    "fp16": 16, "fp32": 32, "fp64": 64, "bf16": 16, "int4": 4, "int8": 8, "int16": 16, "int32": 32, "int64": 64,
    "uint1": 1, "uint2": 2, "uint3": 3, "uint4": 4, "uint6": 6, "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64,
    "bool": 8, "fp8e4m3fn": 8, "fp8e5m2": 8, "string": 0,
}

def short_type(t: str) -> str:
    """An op type without its opset prefix (``ios18.conv`` → ``conv``), as anemll-profile's ``short_type``."""
    return t.split(".", 1)[1] if t.startswith("ios") and "." in t else t


MAX_DIM = 2 ** 31 - 1   # a larger dimension (or a rank above MAX_RANK) is not a model: the readers refuse it
MAX_RANK = 16


@dataclass(frozen=True)
class MilType:
    """A value's type: ``kind`` tensor, scalar, state (wrapping a tensor), list, dict or tuple."""

    kind: str
    dtype: str = ""
    shape: tuple = ()     # ints; a str for a flexible/symbolic dimension
    inner: MilType | None = None  # state<tensor<…>>: the tensor

    @property
    def tensor(self) -> MilType:
        return self.inner if self.kind == "state" and self.inner is not None else self

    @property
    def is_static(self) -> bool:
        return all(isinstance(d, int) for d in self.tensor.shape)

    @property
    def numel(self) -> int | None:
        """Element count (1 for a scalar); None when a dimension is flexible."""
        n = 1
        for d in self.tensor.shape:
            if not isinstance(d, int):
                return None
            n *= d
        return n

    @property
    def nbytes(self) -> int | None:
        """Dense bytes (sub-byte dtypes rounded up to whole bytes); None when flexible or not a tensor/scalar."""
        n = self.numel
        t = self.tensor
        if n is None or t.kind not in ("tensor", "scalar") or t.dtype not in DTYPE_BITS:
            return None
        return (n * DTYPE_BITS[t.dtype] + 7) // 8

    def text(self) -> str:
        t = self.tensor
        if self.kind == "state":
            return f"state<{t.text()}>"
        if self.kind == "tensor":
            return f"{self.dtype}[{','.join(str(d) for d in self.shape)}]"
        return self.dtype or self.kind


@dataclass
class Blob:
    """A weight stored in a MILBlob file: the reference and, once the file is read, its record."""

    path: str            # as written in the program, e.g. "@model_path/weights/weight.bin"
    offset: int          # of the 64-byte metadata record
    dtype: str = ""      # from the record (MILBlob's own codes, mapped to MIL names)
    size: int | None = None       # stored bytes
    data_offset: int | None = None


@dataclass(frozen=True)
class Value:
    """An inline value: its type and either a Python value (scalars, small tensors, strings) or a blob."""

    type: MilType
    value: object = None
    blob: Blob | None = None

    @property
    def stored_bytes(self) -> int:
        if self.blob is not None:
            return self.blob.size if self.blob.size is not None else (self.type.nbytes or 0)
        return self.type.nbytes or 0


@dataclass(frozen=True)
class Arg:
    """One binding of an operation parameter: a variable name, or an inline value."""

    name: str | None = None
    value: Value | None = None


@dataclass
class Op:
    index: int                      # position in its function (program order, 0-based)
    function: str
    type: str
    name: str
    outputs: list[tuple[str, MilType]]
    inputs: dict[str, list[Arg]]   # a tuple argument ``(a, b)`` is a list of several bindings
    attrs: dict[str, Value] = field(default_factory=dict)  # const ``val``, iOS16 constexpr operands, …
    blocks: list[Block] = field(default_factory=list)
    line: int | None = None         # in model.mil text

    def arg(self, param: str) -> Arg | None:
        a = self.inputs.get(param)
        return a[0] if a else None


@dataclass
class Block:
    ops: list[Op]
    outputs: list[str]


@dataclass
class Function:
    name: str
    opset: str                          # "ios18" in text, "CoreML8" in protobuf (kept as written)
    inputs: list[tuple[str, MilType]]
    ops: list[Op]
    outputs: list[str]


@dataclass
class MilProgram:
    source: str                     # the bundle path
    form: str                       # "mlpackage" (protobuf) or "mlmodelc" (model.mil text)
    version: str                    # program(1.3) → "1.3"; the spec version for a package
    functions: dict[str, Function]
    attrs: dict = field(default_factory=dict)
    weight_files: dict[str, int] = field(default_factory=dict)   # program path → file size
    description: dict = field(default_factory=dict)              # inputs/outputs/metadata when the bundle says

    @property
    def n_ops(self) -> int:
        return sum(len(f.ops) for f in self.functions.values())

    def all_ops(self):
        """Every operation, nested blocks included, in program order."""
        def walk(ops):
            for op in ops:
                yield op
                for b in op.blocks:
                    yield from walk(b.ops)
        for f in self.functions.values():
            yield from walk(f.ops)

    def blobs(self):
        """Every weight reference (inputs and attributes) of every operation."""
        for op in self.all_ops():
            for v in op.attrs.values():
                if v.blob is not None:
                    yield v.blob
            for args in op.inputs.values():
                for a in args:
                    if a.value is not None and a.value.blob is not None:
                        yield a.value.blob
