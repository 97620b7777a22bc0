"""The normalized ExecuTorch program (``.pte``): what :mod:`edgeprof.io.pte` reads and the program analyses use."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Segment:
    index: int
    offset: int          # relative to the segment base
    size: int


@dataclass(frozen=True)
class PlanTensor:
    value: int                   # EValue index
    dtype: str
    elem_size: int               # bytes per element (0 when the scalar type is unknown)
    sizes: tuple
    data_buffer_idx: int         # > 0: constant data (an index into the constant segment / buffer)
    allocation: tuple | None     # (memory_id, offset) when memory-planned
    dynamism: int = 0            # 0 static, 1 dynamic bound, 2 dynamic unbound

    @property
    def numel(self) -> int:
        n = 1
        for s in self.sizes:
            n *= s
        return n

    @property
    def nbytes(self) -> int:
        return self.numel * self.elem_size


@dataclass
class Instruction:
    chain: int
    index: int
    kind: str                    # kernel · delegate · move · jump_false · free
    op: str = ""                 # kernel calls: operator name and overload
    overload: str = ""
    delegate: int | None = None  # delegate calls: the plan's delegate index
    args: list = field(default_factory=list)


@dataclass(frozen=True)
class XnnValue:
    id: int
    dtype: str
    dims: tuple
    constant_idx: int            # > 0: a constant (weights)
    constant_bytes: int          # its stored bytes
    quant: str | None            # per_channel, per_tensor, per_token_dynamic, per_channel_group(…)
    dq_dtype: str = "invalid"


@dataclass
class XnnNode:
    index: int
    type: str                    # XNNPACK node kind without the XNN prefix: FullyConnected, Conv2d, …
    attrs: dict
    debug_handle: int


@dataclass
class XnnGraph:
    version: str
    header_size: int
    graph_size: int
    constant_size: int
    input_ids: list
    output_ids: list
    nodes: list = field(default_factory=list)
    values: dict = field(default_factory=dict)          # id → XnnValue
    constant_sizes: list = field(default_factory=list)
    constant_keys: list = field(default_factory=list)    # named-data keys of constants stored outside the blob


@dataclass
class Delegate:
    index: int
    backend: str
    location: str                # segment · inline
    data_index: int
    size: int                    # blob bytes
    file_offset: int | None      # where the blob starts in the file (segments)
    xnnpack: XnnGraph | None = None


@dataclass
class ExecutionPlan:
    name: str
    inputs: list
    outputs: list
    non_const_buffer_sizes: list
    value_kinds: list = field(default_factory=list)
    tensors: dict = field(default_factory=dict)          # value index → PlanTensor
    ints: dict = field(default_factory=dict)
    lists: dict = field(default_factory=dict)
    operators: list = field(default_factory=list)        # (name, overload)
    delegates: list = field(default_factory=list)
    instructions: list = field(default_factory=list)


@dataclass
class PteProgram:
    source: str
    file_size: int
    header: dict
    version: int
    segments: list = field(default_factory=list)
    constant_segment: int | None = None
    constant_offsets: list = field(default_factory=list)
    mutable_segments: list = field(default_factory=list)
    named_data: list = field(default_factory=list)        # (key, segment index)
    inline_constant_bytes: list = field(default_factory=list)
    inline_delegate_bytes: list = field(default_factory=list)
    plans: list = field(default_factory=list)
