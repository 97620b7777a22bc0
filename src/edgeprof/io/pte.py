"""ExecuTorch programs (``.pte``) → :class:`~edgeprof.pte_model.PteProgram`, without torch.

File layout (ExecuTorch 1.x): a FlatBuffer (root offset, file identifier ``ET12``) whose first bytes after
the identifier are an *extended header* — ``eh00``, ``uint32`` header length, ``uint64`` program size,
``uint64`` segment base offset, ``uint64`` segment data size (from header length 32) — then the program
flatbuffer; after it, padding and the data segments (``Program.segments``: offset/size relative to the
segment base) holding the constant data, delegate blobs and named data. Only the program flatbuffer and the
XNNPACK delegates' headers and graphs are read; constant data and other backends' blobs are sized from the
tables, never loaded, so memory does not follow the file.

XNNPACK blobs start with their own header (``XH00`` at byte 4, ``uint16`` length 30, ``uint32`` flatbuffer
offset and size, ``uint32`` constant data offset, ``uint64`` constant data size) and an ``XN00`` flatbuffer
(``XNNGraph``: nodes with their value ids, values with datatype, dims, constant buffer and quantization).

Schemas: ExecuTorch 1.5.1 ``program.fbs``, ``scalar_type.fbs``, XNNPACK ``runtime_schema.fbs``.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError
from ..pte_model import (Delegate, Instruction, PlanTensor, PteProgram, Segment, XnnGraph, XnnNode, XnnValue,
                         ExecutionPlan)
from .fbobj import FB, Table

SCALAR_TYPES = {0: ("uint8", 1), 1: ("int8", 1), 2: ("int16", 2), 3: ("int32", 4), 4: ("int64", 8), 5: ("fp16", 2),
                6: ("fp32", 4), 7: ("fp64", 8), 11: ("bool", 1), 12: ("qint8", 1), 13: ("quint8", 1), 14: ("qint32", 4),
                15: ("bf16", 2), 16: ("quint4x2", 1), 17: ("quint2x4", 1), 22: ("bits16", 2), 23: ("fp8e5m2", 1),
                24: ("fp8e4m3fn", 1), 25: ("fp8e5m2fnuz", 1), 26: ("fp8e4m3fnuz", 1), 27: ("uint16", 2),
                28: ("uint32", 4), 29: ("uint64", 8)}
EVALUE_KINDS = {1: "null", 2: "int", 3: "bool", 4: "double", 5: "tensor", 6: "string", 7: "int_list", 8: "double_list",
                9: "bool_list", 10: "tensor_list", 11: "optional_tensor_list"}
XNN_DTYPES = {0: "invalid", 1: "fp32", 2: "fp16", 3: "qint8", 4: "quint8", 5: "qint32", 6: "qcint8", 7: "qcint32",
              8: "qcint4", 9: "qdint8", 10: "qbint4", 11: "qpint8", 12: "int32", 13: "pfp32", 14: "bf16"}
XNN_DTYPE_BITS = {"fp32": 32, "fp16": 16, "qint8": 8, "quint8": 8, "qint32": 32, "qcint8": 8, "qcint32": 32,
                  "qcint4": 4, "qdint8": 8, "qbint4": 4, "qpint8": 8, "int32": 32, "pfp32": 32, "bf16": 16}
# XNodeUnion members in schema order (the union type is the 1-based position); their table shapes
_N2 = ("input1_id", "input2_id", "output_id", "flags")
_N1 = ("input_id", "output_id", "flags")
_CONV = ("padding_top", "padding_right", "padding_bottom", "padding_left", "kernel_height", "kernel_width",
         "subsampling_height", "subsampling_width", "dilation_height", "dilation_width", "group_input_channels",
         "group_output_channels", "groups", "adjustment_height", "adjustment_width", "input1_id", "filter_id", "bias_id",
         "output_id", "flags")
_POOL = ("padding_top", "padding_right", "padding_bottom", "padding_left", "pooling_height", "pooling_width",
         "stride_height", "stride_width", "dilation_height", "dilation_width", "input_id", "output_id", "flags")
_CAT = ("axis", "input1_id", "input2_id", "input3_id", "input4_id", "output_id", "flags", "input5_id")
XNODES = [
    ("Add", _N2), ("FullyConnected", ("input1_id", "filter_id", "bias_id", "output_id", "flags")), ("Softmax", _N1),
    ("Sigmoid", _N1), ("StaticTranspose", ("num_dims", "perm", "input_id", "output_id", "flags")), ("Clamp", _N1),
    ("Conv2d", _CONV), ("Div", _N2),
    ("StaticResizeBilinear2D", ("new_height", "new_width", "input_id", "output_id", "flags")),
    ("StaticConstantPad", ("pre_paddings", "post_paddings", "padding_value", "input_id", "output_id", "flags")),
    ("AvgPooling2d", _POOL), ("Minimum", _N2), ("DepthwiseConv2d", _CONV), ("MaxPooling2d", _POOL), ("Multiply", _N2),
    ("Subtract", _N2), ("Floor", _N1), ("Convert", _N1), ("GlobalAvgPooling2d", _N1),
    ("StaticReshape", ("num_dims", "new_shape", "input_id", "output_id", "flags")),
    ("ArgMaxPooling2d", ("padding_top", "padding_right", "padding_bottom", "padding_left", "pooling_height",
                         "pooling_width", "input_id", "output_value_id", "output_index_id", "flags")),
    ("SquareRoot", _N1), ("Ceiling", _N1), ("Hardswish", _N1),
    ("LeakyReLU", ("negative_slope", "input_id", "output_id", "flags")),
    ("Maximum", _N2), ("Negate", _N1), ("Square", _N1), ("ELU", ("alpha", "input_id", "output_id", "flags")), ("Abs", _N1),
    ("PReLU", _N2), ("Concatenate2", _CAT), ("Concatenate3", _CAT), ("Concatenate4", _CAT),
    ("StaticSlice", ("num_dims", "offsets", "sizes", "input_id", "output_id", "flags")),
    ("ScaledDotProductAttention", ("query_id", "key_id", "value_id", "scale_id", "mask_id", "output_id", "flags")),
    ("BatchMatrixMultiply", _N2), ("Concatenate5", _CAT), ("ConvTranspose2d", _CONV), ("ReciprocalSquareRoot", _N1),
    ("Log", _N1), ("Gelu", _N1), ("Tanh", _N1), ("Exp", _N1), ("Sin", _N1), ("Copy", _N1), ("Cos", _N1),
]
_LIST_FIELDS = {"perm", "new_shape", "offsets", "sizes", "pre_paddings", "post_paddings"}
_FLOAT_FIELDS = {"padding_value", "negative_slope", "alpha"}


class CorruptProgramError(InputError):
    """A .pte whose header, tables or segments do not hold together (truncated, lying offsets, …)."""


def read_pte(path) -> PteProgram:
    path = Path(path)
    from ..files import open_regular

    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size < 16:
            raise CorruptProgramError(path, f"{size} bytes: too short to be an ExecuTorch program", offset=0)
        return _read(_File(f, size), size, path)


class _File:
    """Reads byte ranges of the open file on demand (slices, as on a bytes object)."""

    def __init__(self, f, size: int):
        self.f, self.size = f, size

    def __getitem__(self, s: slice) -> bytes:
        self.f.seek(s.start)
        return self.f.read(max(0, min(s.stop, self.size) - s.start))


def _read(mm: _File, size: int, path) -> PteProgram:
    ident = bytes(mm[4:8])
    if ident != b"ET12":
        from .sniff import kind, wrong_kind

        head = bytes(mm[0:64])
        if kind(head)[0] not in ("unknown", "pte"):
            raise CorruptProgramError(path, wrong_kind(path, "an ExecuTorch program (.pte)", head), offset=4)
        raise CorruptProgramError(path, f"not an ExecuTorch program: file identifier {ident!r}, expected b'ET12'",
                                  offset=4)
    header: dict[str, int | None] = {"present": False, "length": 0, "program_size": size, "segment_base_offset": 0,
                                     "segment_data_size": 0}
    if bytes(mm[8:12]) == b"eh00":
        length = int.from_bytes(mm[12:16], "little")
        if length < 24 or 8 + length > size:
            raise CorruptProgramError(path, f"extended header length {length} is impossible", offset=12)
        psize = int.from_bytes(mm[16:24], "little")
        sbase = int.from_bytes(mm[24:32], "little")
        sdata = int.from_bytes(mm[32:40], "little") if length >= 32 else None
        if psize > size or psize < 40:
            raise CorruptProgramError(path, f"extended header says the program is {psize} bytes; the file has {size}",
                                      offset=16)
        if sbase and (sbase < psize or sbase > size):
            raise CorruptProgramError(path, f"segment base offset {sbase} lies outside the {size}-byte file", offset=24)
        if sdata is not None and sbase and sbase + sdata > size:
            raise CorruptProgramError(path, f"segment data ({sdata} bytes at {sbase}) runs past the end of the "
                                            f"{size}-byte file (truncated?)", offset=32)
        header = {"present": True, "length": length, "program_size": psize, "segment_base_offset": sbase,
                  "segment_data_size": sdata}
    fb = FB(mm[0:header["program_size"]], path, CorruptProgramError)
    root = fb.root("Program")
    prog = PteProgram(source=str(path), file_size=size, header=header, version=root.scalar(0, "I"))
    prog.segments = [Segment(i, t.scalar(0, "Q"), t.scalar(1, "Q")) for i, t in enumerate(root.tables(4, "segments"))]
    base = header["segment_base_offset"]
    if prog.segments and not base:
        raise CorruptProgramError(path, "the program lists data segments but has no segment base offset", offset=24)
    at = header["program_size"]
    for s in sorted(prog.segments, key=lambda s: s.offset):
        if base + s.offset + s.size > size:
            raise CorruptProgramError(path, f"segment {s.index} ({s.size} bytes at {s.offset} past the segment base "
                                            f"{base}) runs past the end of the {size}-byte file", offset=base + s.offset)
        if s.size and base + s.offset < at:
            raise CorruptProgramError(path, f"segment {s.index} at byte {base + s.offset} overlaps the program or the "
                                            f"segment before it (which end at byte {at})", offset=base + s.offset)
        at = max(at, base + s.offset + s.size)
    prog.inline_constant_bytes = [t.vector(0, 1, "storage")[1] for t in root.tables(2, "constant_buffer")]
    prog.inline_delegate_bytes = [t.vector(0, 1, "data")[1] for t in root.tables(3, "backend_delegate_data")]
    cs = root.table(5, "constant_segment")
    if cs is not None:
        prog.constant_segment = cs.scalar(0, "I")
        prog.constant_offsets = cs.scalars(1, "Q", "offsets")
        if prog.constant_offsets and prog.constant_segment >= len(prog.segments):
            raise CorruptProgramError(path, f"constant segment index {prog.constant_segment} but only "
                                            f"{len(prog.segments)} segments", offset=cs.pos)
    prog.mutable_segments = [t.scalar(0, "I") for t in root.tables(6, "mutable_data_segments")]
    prog.named_data = [(t.string(0, "key") or "", t.scalar(1, "I")) for t in root.tables(7, "named_data")]
    for p in root.tables(1, "execution_plan"):
        prog.plans.append(_plan(p, prog, mm, path))
    return prog


def _plan(p: Table, prog: PteProgram, mm, path) -> ExecutionPlan:
    plan = ExecutionPlan(name=p.string(0, "name") or "", inputs=p.scalars(3, "i", "inputs"),
                         outputs=p.scalars(4, "i", "outputs"),
                         non_const_buffer_sizes=p.scalars(8, "q", "non_const_buffer_sizes"))
    for i, ev in enumerate(p.tables(2, "values")):
        kind, t = ev.union(0, "val")
        k = EVALUE_KINDS.get(kind, f"unknown{kind}")
        plan.value_kinds.append(k)
        if k == "tensor" and t is not None:
            st = t.scalar(0, "b", 0)
            dtype, esize = SCALAR_TYPES.get(st, (f"scalar_type{st}", 0))
            sizes = t.scalars(2, "i", "sizes")
            ai = t.table(6, "allocation_info")
            mem = None
            if ai is not None:
                mem = (ai.scalar(0, "I"), ai.scalar(1, "I") | (ai.scalar(2, "I") << 32))
            plan.tensors[i] = PlanTensor(i, dtype, esize, tuple(sizes), t.scalar(5, "I"), mem, t.scalar(8, "b", 0))
        elif k == "int" and t is not None:
            plan.ints[i] = t.scalar(0, "q")
        elif k == "tensor_list" and t is not None:
            plan.lists[i] = t.scalars(0, "i", "items")
    ops = [(t.string(0, "name") or "", t.string(1, "overload") or "") for t in p.tables(6, "operators")]
    plan.operators = ops
    for d, t in enumerate(p.tables(7, "delegates")):
        ref = t.table(1, "processed")
        loc, idx = (ref.scalar(0, "b", 0), ref.scalar(1, "I")) if ref is not None else (0, 0)
        plan.delegates.append(_delegate(d, t.string(0, "id") or "", loc, idx, prog, mm, path))
    for c, chain in enumerate(p.tables(5, "chains")):
        for n, ins in enumerate(chain.tables(2, "instructions")):
            kind, a = ins.union(0, "instr_args")
            rec = Instruction(c, n, {1: "kernel", 2: "delegate", 3: "move", 4: "jump_false", 5: "free"}.get(kind, "unknown"))
            if a is not None and kind in (1, 2):
                idx = a.scalar(0, "i")
                rec.args = a.scalars(1, "i", "args")
                if kind == 1:
                    if not 0 <= idx < len(ops):
                        raise CorruptProgramError(path, f"kernel call names operator {idx} of {len(ops)}", offset=a.pos)
                    rec.op, rec.overload = ops[idx]
                else:
                    if not 0 <= idx < len(plan.delegates):
                        raise CorruptProgramError(path, f"delegate call names delegate {idx} of {len(plan.delegates)}",
                                                  offset=a.pos)
                    rec.delegate = idx
            elif a is not None:
                rec.args = [a.scalar(0, "i"), a.scalar(1, "i")] if kind in (3, 4) else [a.scalar(0, "i")]
            plan.instructions.append(rec)
    n = len(plan.value_kinds)
    refs = [("inputs", v) for v in plan.inputs] + [("outputs", v) for v in plan.outputs]
    refs += [(f"instruction {i.index} arguments", v) for i in plan.instructions for v in i.args
             if i.kind in ("kernel", "delegate", "free")]
    refs += [(f"value {k} list", v) for k, items in plan.lists.items() for v in items]
    for where, v in refs:
        if not 0 <= v < n:
            raise CorruptProgramError(path, f"method '{plan.name}': {where} name value {v}, but the method has {n} values",
                                      offset=p.pos)
    return plan


def _delegate(index: int, backend: str, location: int, idx: int, prog: PteProgram, mm, path) -> Delegate:
    if location == 1:  # SEGMENT
        if idx >= len(prog.segments):
            raise CorruptProgramError(path, f"delegate {index} ({backend}) names segment {idx} of {len(prog.segments)}")
        seg = prog.segments[idx]
        start, size = prog.header["segment_base_offset"] + seg.offset, seg.size
        d = Delegate(index, backend, "segment", idx, size, start)
    else:
        if idx >= len(prog.inline_delegate_bytes):
            raise CorruptProgramError(path, f"delegate {index} ({backend}) names inline data {idx} of "
                                            f"{len(prog.inline_delegate_bytes)}")
        d = Delegate(index, backend, "inline", idx, prog.inline_delegate_bytes[idx], None)
    if backend == "XnnpackBackend" and d.file_offset is not None:
        d.xnnpack = read_xnnpack(mm, d.file_offset, d.size, path)
    elif backend == "XnnpackBackend":  # inline: find the bytes through the program flatbuffer
        d.xnnpack = _inline_xnnpack(mm, prog, idx, path)
    return d


def _inline_xnnpack(mm, prog: PteProgram, idx: int, path) -> XnnGraph | None:
    fb = FB(mm[0:prog.header["program_size"]], path, CorruptProgramError)
    t = fb.root("Program").tables(3, "backend_delegate_data")[idx]
    start, n = t.vector(0, 1, "data")
    return read_xnnpack(mm, start, n, path)


def read_xnnpack(mm, start: int, size: int, path) -> XnnGraph:
    """Decode an XNNPACK delegate blob at ``start`` (its header and graph; constant data only sized)."""
    head = mm[start:start + 30]
    if size < 30 or head[4:8] != b"XH00":
        raise CorruptProgramError(path, "XNNPACK delegate blob without its XH00 header", offset=start + 4)
    hlen = int.from_bytes(head[8:10], "little")
    fo = int.from_bytes(head[10:14], "little")
    fs = int.from_bytes(head[14:18], "little")
    co = int.from_bytes(head[18:22], "little")
    cs = int.from_bytes(head[22:30], "little")
    if hlen != 30 or fo + fs > size or co + cs > size:
        raise CorruptProgramError(path, f"XNNPACK header (length {hlen}, graph {fs} bytes at {fo}, constants {cs} bytes "
                                        f"at {co}) does not fit its {size}-byte blob", offset=start + 8)
    fb = FB(mm[start + fo:start + fo + fs], path, CorruptProgramError, base=start + fo)
    g = fb.root("XNNGraph")
    graph = XnnGraph(version=g.string(0, "version") or "", header_size=hlen, graph_size=fs, constant_size=cs,
                     input_ids=g.scalars(4, "I", "input_ids"), output_ids=g.scalars(5, "I", "output_ids"))
    consts = [(t.scalar(0, "Q"), t.scalar(1, "Q"), t.string(2, "named_key")) for t in g.tables(8, "constant_data")]
    graph.constant_sizes = [c[1] for c in consts]
    graph.constant_keys = [c[2] for c in consts]
    for t in g.tables(2, "xvalues"):
        kind, v = t.union(0, "xvalue_union")
        if v is None:
            continue
        quant = None
        if kind == 2:  # XNNQuantizedTensorValue: tensor_value, quant_params (union)
            qk, q = v.union(1, "quant_params")
            quant = {1: "per_channel", 2: "per_tensor", 3: "per_token_dynamic", 4: "per_channel_group"}.get(qk)
            if qk == 4 and q is not None and quant is not None:
                quant += f"(group {q.scalar(2, 'i')})"
            v = v.table(0, "tensor_value")
            if v is None:
                continue
        dt = XNN_DTYPES.get(v.scalar(0, "h", 0), "invalid")
        dims = v.scalars(2, "I", "dims")
        cbi = v.scalar(3, "I")
        nbytes = consts[cbi][1] if 0 < cbi < len(consts) else 0
        graph.values[v.scalar(6, "I")] = XnnValue(v.scalar(6, "I"), dt, tuple(dims), cbi, nbytes, quant,
                                                  XNN_DTYPES.get(v.scalar(7, "h", 0), "invalid"))
    for i, t in enumerate(g.tables(1, "xnodes")):
        kind, n = t.union(0, "xnode_union")
        if not 1 <= kind <= len(XNODES) or n is None:
            graph.nodes.append(XnnNode(i, f"unknown{kind}", {}, t.scalar(2, "I")))
            continue
        name, fields = XNODES[kind - 1]
        attrs = {}
        for k, f in enumerate(fields):
            if f in _LIST_FIELDS:
                attrs[f] = n.scalars(k, "I", f)
            elif f in _FLOAT_FIELDS:
                attrs[f] = n.scalar(k, "f", 0.0)
            else:
                attrs[f] = n.scalar(k, "I", 0)
        graph.nodes.append(XnnNode(i, name, attrs, t.scalar(2, "I")))
    return graph
