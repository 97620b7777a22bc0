"""Static ANE hazards, a placement estimate and a roofline time estimate for a Core ML program (pure).

Evidence label: ``mil_static`` — everything here is read from the program, nothing was run. Each rule names
its source; an op no rule speaks about is placed ``?`` ("not known"), never guessed.

Rules (id — what — placement consequence — source):

* ``int32`` — an op with an int32/int64 tensor input or output (constant parameters of ≤ 64 B excepted) —
  CPU. Source: anemll-profile's captured compiler message "Unsupported tensor data type: int32" and
  ane-costplan's guidance that ops without a device are CPU ops ("gathers, int32 work"), the anemll-profile / ane-costplan guide.
* ``gather`` — gather / gather_nd / gather_along_axis / scatter* (indexing) — CPU. Source: the anemll-profile /
  ane-costplan guide, as above.
* ``fp32`` — a compute op on fp32 tensors — not ANE (CPU or GPU). Source: coremltools "Typed Execution" guide
  (the Neural Engine computes in float16; fp32 ML programs run on CPU/GPU).
* ``dynamic_shape`` — a flexible (unknown) dimension in the op's tensors — not ANE for non-default shapes.
  Source: Apple engineer, developer forums thread 724930 (range flexibility runs on the ANE only at the
  default shape; enumerated shapes can).
* ``kv_state`` — read_state / write_state / slice_update / coreml_update_state / slice_by_index, ≥ KV_OPS_MIN of
  them — a KV-cache pattern to review (placement not known). Source: the anemll-profile / ane-costplan guide
  ("Repeated slice_update, slice_by_index, or read_state: investigate KV-cache layout").
* ``lut_expansion`` — constexpr_lut_to_dense weights ≥ LUT_SHARE_PCT of the dense weight bytes — LUT
  expansion may dominate memory traffic. Source: the anemll-profile / ane-costplan guide ("Large constexpr_lut_to_dense cost").
* ANE-capable ops (placed ``ANE`` when no rule above applies and tensors are fp16 with static shapes): the op
  types Apple's ANE reference implementation of transformers is built from — conv, linear/matmul (einsum),
  softmax, layer_norm, elementwise add/mul, transpose, reshape, split, concat. Source: Apple Machine Learning
  Research, "Deploying Transformers on the Apple Neural Engine" (2022). Anything else: ``?``.

Roofline: per op ``max(FLOPs / peak, bytes / bandwidth)`` against the chip figures in :data:`CHIPS`.
"""

from __future__ import annotations

from typing import Any

from ..mil_model import short_type as _short
from ..mil_model import MilProgram
from .ane import KV_OPS_MIN, KV_TYPES, LUT_SHARE_PCT
from .ane_islands import Placement, islands, summary
from .mil_cost import PARAM_BYTES, OpCost, op_costs, totals, type_table

EVIDENCE = "mil_static"
HARD_INT = frozenset({"int32", "int64"})
GATHER_OPS = frozenset({"gather", "gather_nd", "gather_along_axis", "scatter", "scatter_nd", "scatter_along_axis"})
STATE_OPS = frozenset(KV_TYPES) - {"slice_by_index"} | {"coreml_update_state"}  # slicing alone is not a cache
ANE_OPS = frozenset({"conv", "linear", "matmul", "einsum", "softmax", "layer_norm", "add", "mul", "transpose", "reshape",
                     "split", "concat"})
RULES = {
    "int32": ("anemll-profile guide: 'Unsupported tensor data type: int32'; "
              "ane-costplan: ops without a device are CPU (int32 work)"),
    "gather": "ane-costplan guide: 'no_device' ops are CPU ops (gathers, int32 work)",
    "fp32": "coremltools Typed Execution guide: the Neural Engine computes in float16",
    "dynamic_shape": "developer.apple.com/forums/thread/724930: range-flexible shapes run on the ANE only at the default shape",
    "kv_state": "anemll-profile guide: repeated slice_update, slice_by_index or read_state: investigate KV-cache layout",
    "lut_expansion": "anemll-profile guide: large constexpr_lut_to_dense cost: LUT expansion may dominate memory bandwidth",
    "ane_op": "Apple ML Research, 'Deploying Transformers on the Apple Neural Engine' (2022): the ops its ANE model uses",
}
# Public peak figures. ``ane_tops`` as Apple states it; ``tops_precision`` says in which precision (from A17 Pro /
# M4 on, Apple quotes INT8 TOPS, which this estimate halves for fp16 work). ``dram_gbps``: unified memory bandwidth.
CHIPS: dict[str, dict[str, Any]] = {
    "M1": {"ane_tops": 11.0, "tops_precision": "fp16", "dram_gbps": 68.25,
           "source": "Apple Newsroom 2020-11-10 (11 trillion ops/s); bandwidth: LPDDR4X-4266 × 128 bit"},
    "M2": {"ane_tops": 15.8, "tops_precision": "fp16", "dram_gbps": 100.0,
           "source": "Apple Newsroom 2022-06-06 (15.8 trillion ops/s, 100 GB/s)"},
    "M3": {"ane_tops": 18.0, "tops_precision": "fp16", "dram_gbps": 100.0,
           "source": "Apple Newsroom 2023-10-30 (18 trillion ops/s; 100 GB/s)"},
    "M4": {"ane_tops": 38.0, "tops_precision": "int8", "dram_gbps": 120.0,
           "source": "Apple Newsroom 2024-05-07 (38 trillion ops/s, 120 GB/s)"},
}
DEFAULT_CHIP = "M2"


def _tensor_dtypes(op, types: dict, consts: set) -> tuple[set[str], bool]:
    """dtypes of the op's non-parameter tensors (inputs and outputs), and whether any dimension is flexible."""
    dts, flexible = set(), False
    tys = [t for _, t in op.outputs]
    for args in op.inputs.values():
        for a in args:
            ty = a.value.type if a.value is not None else types.get(a.name or "")
            if ty is None:
                continue
            if (a.value is not None or a.name in consts) and (ty.nbytes or 0) <= PARAM_BYTES:
                continue
            tys.append(ty)
    for ty in tys:
        t = ty.tensor
        if t.kind in ("tensor", "scalar") and t.dtype:
            dts.add(t.dtype)
        flexible |= not ty.is_static
    return dts, flexible


def op_hazards(prog: MilProgram) -> list[dict]:
    """Per non-const op: its rule hits and the predicted device (ANE, CPU, non-ANE, ?) with the deciding rule."""
    out = []
    for fn in prog.functions.values():
        types: dict = dict(fn.inputs)
        consts: set[str] = set()
        for op in fn.ops:
            t = _short(op.type)
            is_const = t == "const" or t.startswith("constexpr_")
            if not is_const:
                dts, flexible = _tensor_dtypes(op, types, consts)
                hits = []
                if dts & HARD_INT:
                    hits.append("int32")
                if t in GATHER_OPS:
                    hits.append("gather")
                if "fp32" in dts and t != "cast":
                    hits.append("fp32")
                if flexible:
                    hits.append("dynamic_shape")
                if t in KV_TYPES or t in STATE_OPS:
                    hits.append("kv_state")
                if "int32" in hits or "gather" in hits:
                    device, rule = "CPU", hits[0]
                elif "fp32" in hits or "dynamic_shape" in hits:
                    device, rule = "non-ANE", "fp32" if "fp32" in hits else "dynamic_shape"
                elif t in ANE_OPS and dts <= {"fp16", "bool"}:
                    device, rule = "ANE", "ane_op"
                elif t == "cast" and dts == {"fp16", "fp32"}:
                    device, rule = "non-ANE", "fp32"
                else:
                    device, rule = "?", ""
                out.append({"function": fn.name, "index": op.index, "name": op.name, "type": op.type, "short_type": t,
                            "hazards": hits, "device": device, "rule": rule, "dtypes": sorted(dts)})
            for n, ty in op.outputs:
                types[n] = ty
                if is_const:
                    consts.add(n)
    return out


def program_hazards(prog: MilProgram, rows: list[OpCost], per_op: list[dict]) -> list[dict]:
    """Program-level hazards: one entry per rule that fires, with the ops it names."""
    found = []

    def add(rule: str, severity: str, title: str, ops: list[dict], **evidence):
        found.append({"rule": rule, "severity": severity, "title": title, "source": EVIDENCE, "rule_source": RULES[rule],
                      "ops": [f"{o['function']}[{o['index']}] {o['short_type']} {o['name']}" for o in ops[:20]],
                      "op_count": len(ops), "evidence": evidence})

    for rule, sev, title in (("int32", "high", "int32/int64 tensors: these ops cannot run on the ANE"),
                             ("gather", "high", "gathers / indexing: CPU ops (no ANE device)"),
                             ("fp32", "warning", "fp32 compute: the ANE computes in fp16, these ops run on CPU/GPU"),
                             ("dynamic_shape", "warning", "flexible shapes: ANE only at the default shape")):
        ops = [o for o in per_op if rule in o["hazards"]]
        if ops:
            add(rule, sev, title, ops, types=sorted({o["short_type"] for o in ops}))
    kv = [o for o in per_op if "kv_state" in o["hazards"]]
    if any(o["short_type"] in STATE_OPS for o in kv):  # slices alone are not a cache: a state op must be there
        counts: dict[str, int] = {}
        for o in kv:
            counts[o["short_type"]] = counts.get(o["short_type"], 0) + 1
        add("kv_state", "warning" if len(kv) >= KV_OPS_MIN else "info",
            "KV-cache state pattern (state reads/writes, slice updates): review the cache layout", kv, counts=counts,
            threshold=KV_OPS_MIN)
    dense_total = sum(sum((ty.nbytes or 0) for _, ty in op.outputs) for op in prog.all_ops()
                      if op.type.startswith("constexpr_") or (op.type == "const" and "val" in op.attrs
                                                             and op.attrs["val"].blob is not None))
    lut = [r for r in rows if _short(r.type) == "constexpr_lut_to_dense"]
    lut_dense = sum(sum((ty.nbytes or 0) for _, ty in op.outputs) for op in prog.all_ops()
                    if _short(op.type) == "constexpr_lut_to_dense")
    if lut and dense_total:
        share = 100 * lut_dense / dense_total
        if share >= LUT_SHARE_PCT:
            add("lut_expansion", "warning", f"LUT-palettized weights expand to {share:.0f} % of the dense weight bytes",
                [{"function": r.function, "index": r.index, "short_type": _short(r.type), "name": r.name} for r in lut],
                share_pct=share, dense_bytes=lut_dense, stored_bytes=sum(r.weight_stored for r in lut),
                threshold_pct=LUT_SHARE_PCT)
    return found


def chip(name: str) -> dict:
    from ..errors import UsageError

    if name not in CHIPS:
        raise UsageError(f"unknown chip '{name}': known are {', '.join(CHIPS)}")
    c = CHIPS[name]
    peak = c["ane_tops"] * 1e12 / (2 if c["tops_precision"] == "int8" else 1)
    return {"name": name, **c, "fp16_flops_per_s": peak, "bytes_per_s": c["dram_gbps"] * 1e9}


def roofline(rows: list[OpCost], chip_info: dict, devices: dict | None = None) -> dict[tuple[str, int], dict]:
    """Per op: estimated ms and whether compute or memory bound, against the chip's ANE peak and bandwidth — for
    the ops estimated on the ANE (``devices``: (function, index) → predicted device; all when None). An op placed
    elsewhere gets no time: the ANE's figures are not its device's, and no public figures for those are kept."""
    out = {}
    for r in rows:
        if r.type == "const" or _short(r.type).startswith("constexpr_"):
            continue
        if devices is not None and devices.get((r.function, r.index), "ANE") != "ANE":
            out[(r.function, r.index)] = {"ms": None, "bound": "", "flops_known": r.flops is not None,
                                          "not_known": "not on the ANE: its device's peak figures are not known"}
            continue
        moved = (r.act_read or 0) + r.weight_read + (r.written or 0)
        tc = (r.flops or 0) / chip_info["fp16_flops_per_s"]
        tm = moved / chip_info["bytes_per_s"]
        out[(r.function, r.index)] = {"ms": 1e3 * max(tc, tm), "bound": "Comp" if tc >= tm else "Mem",
                                      "flops_known": r.flops is not None}
    return out


def placement_estimate(prog: MilProgram, rows: list[OpCost], per_op: list[dict], chip_info: dict,
                       boundary_ms: float) -> dict:
    """Predicted placements, the islands they make (same algorithm as the measured analysis), and totals."""
    roof = roofline(rows, chip_info, {(o["function"], o["index"]): o["device"] for o in per_op})
    total_ms = sum(v["ms"] or 0.0 for v in roof.values()) or 1.0
    places = []
    for o in per_op:
        rf = roof.get((o["function"], o["index"]))
        ms = (rf["ms"] or 0.0) if rf else 0.0
        device = "CPU" if o["device"] == "CPU" else ("Other" if o["device"] == "non-ANE" else o["device"])
        places.append(Placement(o["function"], o["index"], o["name"], o["type"], device, ms / total_ms,
                                o["device"] == "ANE", rf["ms"] if rf else None,
                                f"{o['rule']}: {RULES[o['rule']]}" if o["rule"] and o["device"] != "ANE" else ""))
    isl = islands(places, boundary_ms=boundary_ms)
    counts: dict[str, int] = {}
    for o in per_op:
        counts[o["device"]] = counts.get(o["device"], 0) + 1
    return {"placements": places, "islands": isl, "summary": summary(isl), "device_counts": counts,
            "roofline": roof, "estimated_ms": sum(v["ms"] or 0.0 for v in roof.values()), "chip": chip_info,
            "ops_not_timed": sum(1 for v in roof.values() if v["ms"] is None),
            "evidence": EVIDENCE, "label": "estimate"}


ROLES = (("embed", "embeddings"), ("prefill", "prefill"), ("decode", "decode"), ("ffn", "decode"), ("lm_head", "lm_head"),
         ("lmhead", "lm_head"), ("head", "lm_head"))


def role(name: str) -> str:
    """The submodel's role in an LLM split (embeddings, prefill, decode, lm_head) when its name says so."""
    low = name.lower()
    return next((r for key, r in ROLES if key in low), "")


def analyze_program(prog: MilProgram, *, chip_name: str = DEFAULT_CHIP, boundary_ms: float) -> dict:
    """The whole static analysis of one program as a JSON-ready document."""
    rows = op_costs(prog)
    per_op = op_hazards(prog)
    est = placement_estimate(prog, rows, per_op, chip(chip_name), boundary_ms)
    hz = {(o["function"], o["index"]): o for o in per_op}
    ops = []
    for r in rows:
        d = r.to_json()
        h = hz.get((r.function, r.index))
        rf = est["roofline"].get((r.function, r.index))
        d.update(hazards=h["hazards"] if h else [], predicted_device=h["device"] if h else "const",
                 rule=h["rule"] if h else "", estimated_ms=rf["ms"] if rf else None, bound=rf["bound"] if rf else "")
        ops.append(d)
    name = prog.source.rstrip("/").rsplit("/", 1)[-1]
    return {
        "model": name, "path": prog.source, "role": role(name), "form": prog.form, "version": prog.version,
        "functions": [{"name": f.name, "opset": f.opset, "ops": len(f.ops),
                       "inputs": [{"name": n, "type": t.text()} for n, t in f.inputs], "outputs": f.outputs}
                      for f in prog.functions.values()],
        "totals": totals(prog, rows),
        "op_types": type_table(rows),
        "hazards": program_hazards(prog, rows, per_op),
        "estimate": {
            "label": "estimate", "evidence": EVIDENCE, "chip": est["chip"], "boundary_ms": boundary_ms,
            "device_counts": est["device_counts"], "estimated_ms": est["estimated_ms"],
            "ops_not_timed": est["ops_not_timed"],
            "graph_interruptions": {**est["summary"], "interruptions": [i.__dict__ for i in est["islands"] if i.is_interruption],
                                    "edge_runs": [i.__dict__ for i in est["islands"] if not i.is_interruption]},
        },
        "ops": ops,
        "rules": RULES,
    }
