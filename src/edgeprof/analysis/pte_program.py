"""What is inside an ExecuTorch program (pure): bytes by part, constant tensors and their owners, the memory
plan, the instruction list, and the XNNPACK delegates' node mix.

* **Sizes** add up to the file size exactly: the program flatbuffer (extended header included; inline
  constant buffers and inline delegate data are parts of it and listed as such), each data segment by what
  references it (constant data, a delegate blob by backend and delegate index, named data, mutable data, or
  nothing), and the padding between them.
* **Memory plan**: per method, the arenas ``non_const_buffer_sizes[1:]`` (index 0 is reserved by the format),
  the tensors placed in each (offset, bytes) and their lifetime *derived* from the instruction list (first and
  last instruction naming the value; the program does not store lifetimes), inputs and outputs.
* **XNNPACK delegates**: nodes by kind, datatypes, quantization, and the weight bytes each node reads (its
  constant values).
"""

from __future__ import annotations

from ..pte_model import PteProgram

XNN_WEIGHT_FIELDS = ("filter_id", "bias_id", "input2_id", "input1_id", "input_id", "key_id", "value_id", "mask_id",
                     "scale_id", "query_id", "input3_id", "input4_id", "input5_id")


def size_parts(prog: PteProgram) -> list[dict]:
    """Every byte of the file in one part: ``{part, kind, bytes, offset}``; the bytes sum to the file size."""
    parts = [{"part": "program flatbuffer", "kind": "program", "bytes": prog.header["program_size"], "offset": 0}]
    base = prog.header["segment_base_offset"]
    owners: dict[int, tuple[str, str]] = {}
    if prog.constant_offsets and prog.constant_segment is not None:
        owners[prog.constant_segment] = ("constant data", "constant")
    for plan in prog.plans:
        for d in plan.delegates:
            if d.location == "segment":
                owners[d.data_index] = (f"delegate {plan.name}#{d.index} ({d.backend})", "delegate")
    for key, seg in prog.named_data:
        owners.setdefault(seg, (f"named data {key}", "named_data"))
    for seg in prog.mutable_segments:
        owners.setdefault(seg, ("mutable data", "mutable"))
    for s in prog.segments:
        name, kind = owners.get(s.index, (f"segment {s.index} (not referenced)", "unreferenced"))
        parts.append({"part": name, "kind": kind, "bytes": s.size, "offset": base + s.offset, "segment": s.index})
    covered = sorted((p["offset"], p["offset"] + p["bytes"]) for p in parts if p["bytes"])
    padding, at = 0, 0
    for a, b in covered:
        if a < at:
            raise ValueError(f"segments overlap at byte {a}")
        padding += a - at
        at = b
    padding += prog.file_size - at
    parts.append({"part": "padding and alignment", "kind": "padding", "bytes": padding, "offset": None})
    return parts


def _uses(plan) -> dict[int, list[int]]:
    """value index → instruction positions that name it (tensor lists expanded)."""
    uses: dict[int, list[int]] = {}
    for n, ins in enumerate(plan.instructions):
        for a in ins.args:
            for v in [a, *plan.lists.get(a, [])]:
                uses.setdefault(v, []).append(n)
    return uses


def _label(plan, ins) -> str:
    if ins.kind == "kernel":
        return ins.op + (f".{ins.overload}" if ins.overload else "")
    if ins.kind == "delegate":
        d = plan.delegates[ins.delegate]
        return f"DELEGATE_CALL {d.backend}#{d.index}"
    return ins.kind


def constants(prog: PteProgram) -> list[dict]:
    """Constant tensors (data in the program, not memory-planned) with their bytes and the instructions that use them."""
    out = []
    for plan in prog.plans:
        uses = _uses(plan)
        for v, t in plan.tensors.items():
            if t.data_buffer_idx > 0 and t.allocation is None:
                owners = sorted({_label(plan, plan.instructions[n]) for n in uses.get(v, [])})
                out.append({"plan": plan.name, "value": v, "dtype": t.dtype, "sizes": list(t.sizes), "bytes": t.nbytes,
                            "buffer": t.data_buffer_idx, "owners": owners})
    return sorted(out, key=lambda r: (-r["bytes"], r["plan"], r["value"]))


def memory_plan(prog: PteProgram) -> list[dict]:
    out = []
    for plan in prog.plans:
        uses = _uses(plan)
        arenas = [{"id": i, "bytes": b, "tensors": []} for i, b in enumerate(plan.non_const_buffer_sizes) if i > 0]
        by_id = {a["id"]: a for a in arenas}
        for v, t in sorted(plan.tensors.items()):
            if t.allocation is None:
                continue
            mid, off = t.allocation
            u = uses.get(v, [])
            rec = {"value": v, "dtype": t.dtype, "sizes": list(t.sizes), "offset": off, "bytes": t.nbytes,
                   "first_use": min(u) if u else None, "last_use": max(u) if u else None,
                   "input": v in plan.inputs, "output": v in plan.outputs}
            by_id.setdefault(mid, {"id": mid, "bytes": None, "tensors": []})["tensors"].append(rec)
        for a in by_id.values():
            ends = [r["offset"] + r["bytes"] for r in a["tensors"]]
            a["highest_byte_used"] = max(ends) if ends else 0
            a["fits"] = a["bytes"] is not None and a["highest_byte_used"] <= a["bytes"]
        io = [{"role": "input" if v in plan.inputs else "output", "value": v,
               "dtype": plan.tensors[v].dtype if v in plan.tensors else plan.value_kinds[v],
               "sizes": list(plan.tensors[v].sizes) if v in plan.tensors else None} for v in plan.inputs + plan.outputs]
        out.append({"plan": plan.name, "arenas": sorted(by_id.values(), key=lambda a: a["id"]),
                    "planned_bytes": sum(b for b in plan.non_const_buffer_sizes[1:]), "io": io})
    return out


def instructions(prog: PteProgram) -> list[dict]:
    out = []
    for plan in prog.plans:
        for n, ins in enumerate(plan.instructions):
            args = []
            for a in ins.args:
                t = plan.tensors.get(a)
                args.append(f"{t.dtype}{list(t.sizes)}" if t is not None else
                            (plan.value_kinds[a] if 0 <= a < len(plan.value_kinds) else "?"))
            rec = {"plan": plan.name, "index": n, "chain": ins.chain, "kind": ins.kind, "name": _label(plan, ins),
                   "args": args}
            if ins.kind == "delegate":
                d = plan.delegates[ins.delegate]
                rec["delegate"] = {"backend": d.backend, "index": d.index, "bytes": d.size,
                                   "nodes": xnn_summary(d.xnnpack) if d.xnnpack else None}
            out.append(rec)
    return out


def xnn_summary(g) -> dict:
    """Node mix, datatypes, quantization and weight bytes of one XNNPACK graph."""
    kinds: dict[str, int] = {}
    dtypes: dict[str, int] = {}
    quant: dict[str, int] = {}
    weight = 0
    nodes = []
    for nd in g.nodes:
        kinds[nd.type] = kinds.get(nd.type, 0) + 1
        w, dts = 0, []
        for f in XNN_WEIGHT_FIELDS:
            v = g.values.get(nd.attrs.get(f)) if f in nd.attrs else None
            if v is None:
                continue
            dts.append(v.dtype)
            if v.constant_idx > 0:
                w += v.constant_bytes
                if v.quant:
                    quant[v.quant] = quant.get(v.quant, 0) + 1
        out = g.values.get(nd.attrs.get("output_id"))
        if out is not None:
            dts.append(out.dtype)
        for d in set(dts):
            dtypes[d] = dtypes.get(d, 0) + 1
        weight += w
        nodes.append({"index": nd.index, "type": nd.type, "debug_handle": nd.debug_handle, "weight_bytes": w,
                      "dtypes": sorted(set(dts)), "output": list(out.dims) if out is not None else None})
    mix = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
    return {"count": len(g.nodes), "mix": f"{len(g.nodes)} nodes: {mix}", "by_type": kinds, "dtypes": dtypes,
            "quantization": quant, "weight_bytes": weight, "constant_bytes": g.constant_size, "nodes": nodes}


def summarize(prog: PteProgram) -> dict:
    from ..taxonomy import classify
    from .pte_cost import instruction_costs

    parts = size_parts(prog)
    consts = constants(prog)
    ins = instructions(prog)
    cats: dict[str, dict] = {}
    for row, c in zip(ins, instruction_costs(prog)):
        row.update(macs=c["macs"], flops=c["flops"], weight_bytes=c["weight_bytes"])
        cat = "DELEGATE" if row["kind"] == "delegate" else (classify(row["name"].split(".")[0]).category
                                                             if row["kind"] == "kernel" else "CONTROL")
        k = cats.setdefault(cat, {"category": cat, "instructions": 0, "macs": 0, "flops": 0, "flops_known": True,
                                  "weight_bytes": 0})
        k["instructions"] += 1
        k["macs"] += c["macs"]
        k["weight_bytes"] += c["weight_bytes"] or 0
        if c["flops"] is None:
            k["flops_known"] = False
        else:
            k["flops"] += c["flops"]
    return {
        "work": sorted(cats.values(), key=lambda k: (-k["flops"], k["category"])),
        "file": prog.source, "file_size": prog.file_size, "version": prog.version, "header": prog.header,
        "sizes": parts, "sizes_add_up": sum(p["bytes"] for p in parts) == prog.file_size,
        "constants": {"count": len(consts), "bytes": sum({(c["plan"], c["buffer"]): c["bytes"] for c in consts}.values()),
                      "largest": consts[:15]},  # bytes: each constant buffer once (tensors may share one)
        "memory_plan": memory_plan(prog),
        "instructions": ins,
        "delegates": [{"plan": pl.name, "index": d.index, "backend": d.backend, "location": d.location, "bytes": d.size,
                       **({"xnnpack": xnn_summary(d.xnnpack)} if d.xnnpack else {})}
                      for pl in prog.plans for d in pl.delegates],
        "methods": [pl.name for pl in prog.plans],
    }


def compare_programs(a: dict, b: dict) -> dict:
    """Two :func:`summarize` documents: sizes by kind, planned memory, operators and XNNPACK nodes."""
    def by_kind(doc):
        out: dict[str, int] = {}
        for p in doc["sizes"]:
            out[p["kind"]] = out.get(p["kind"], 0) + p["bytes"]
        return out

    def ops(doc):
        out: dict[str, int] = {}
        for i in doc["instructions"]:
            out[i["name"].split("#")[0]] = out.get(i["name"].split("#")[0], 0) + 1
        return out

    def nodes(doc):
        out: dict[str, int] = {}
        for d in doc["delegates"]:
            for k, n in d.get("xnnpack", {}).get("by_type", {}).items():
                out[k] = out.get(k, 0) + n
        return out

    def delta(x, y):
        return [{"name": k, "before": x.get(k, 0), "after": y.get(k, 0)} for k in sorted(set(x) | set(y))
                if x.get(k, 0) != y.get(k, 0)]

    pa = sum(m["planned_bytes"] for m in a["memory_plan"])
    pb = sum(m["planned_bytes"] for m in b["memory_plan"])
    st = [f"file: {a['file_size']:,} → {b['file_size']:,} bytes"]
    st += [f"{r['name']}: {r['before']:,} → {r['after']:,} bytes" for r in delta(by_kind(a), by_kind(b))]
    st.append(f"planned memory: {pa:,} → {pb:,} bytes")
    st += [f"{r['name']}: {r['before']} → {r['after']} instructions" for r in delta(ops(a), ops(b))]
    st += [f"XNNPACK {r['name']}: {r['before']} → {r['after']} nodes" for r in delta(nodes(a), nodes(b))]
    return {"before": a["file"], "after": b["file"], "sizes": delta(by_kind(a), by_kind(b)),
            "planned_bytes": {"before": pa, "after": pb}, "instructions": delta(ops(a), ops(b)),
            "xnnpack_nodes": delta(nodes(a), nodes(b)), "statements": st}
