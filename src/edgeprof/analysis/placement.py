"""Placement (pure): where each operator ran, the partitions it forms, the share of time and work each placement
carries, and what changed between two builds.

Builders turn each normalized input into one :class:`~edgeprof.placement_model.Placement`: a profile (ETDump, ONNX
Runtime, LiteRT — its leaf operators in execution order, placed on the backend that ran them), an ExecuTorch
program (its instructions, each XNNPACK node of a delegate as an operator of its own), an ONNX model with the
providers a session assigns, and an anemll-profile / ane-costplan report (the compute plan's device per MIL op).

A *partition* is a maximal run of one placement in topological order — never a runtime's own subgraph name, which
counts up across a process. An operator is paired with the same operator of another build by its ``key``: the
model's own name where the runtime keeps one that survives a rebuild (ONNX node names, MIL op names), else its
operator family and occurrence (``sigmoid#0``: the first sigmoid of the graph) — families are the same across a
runtime's vocabularies (``aten::sigmoid.out``, XNNPACK's ``Sigmoid``, ONNX ``Sigmoid``, TFLite ``LOGISTIC``).

What counts as a *fallback* is per runtime (:data:`FALLBACK`): an operator that leaves an accelerator placement for
another — its runtime's CPU kernels, or another accelerator (ANE → GPU).
"""

from __future__ import annotations

import dataclasses
import re

from ..conventions import ms
from ..placement_model import INFERRED, MEASURED, PLANNED, STATIC, UNKNOWN, PlacedOp, Placement
from ..runtimes import COREML, EXECUTORCH, HOST_BACKEND, ONNXRUNTIME, runtime

# what a fallback is, in each runtime's words (documents and the README quote these)
FALLBACK = {
    EXECUTORCH.name: "an operator that ran inside a delegate (XNNPACK, Core ML, …) in the baseline and runs as an "
                     "ExecuTorch portable (CPU) kernel — or in another delegate — in the candidate",
    ONNXRUNTIME.name: "a node that ran on an execution provider other than CPUExecutionProvider in the baseline and "
                      "runs on CPUExecutionProvider — or another provider — in the candidate",
    "litert": "an op that ran inside a delegate (XNNPACK, GPU, NNAPI, …) in the baseline and runs as a builtin CPU "
              "kernel — or in another delegate — in the candidate",
    COREML.name: "a MIL op the compute plan placed on the Neural Engine (or the GPU) in the baseline and places on "
                 "another compute unit in the candidate",
}

# --------------------------------------------------------------------------------------------------
# operator families: one name per operator across the runtimes' vocabularies
# --------------------------------------------------------------------------------------------------

_SYNONYMS = {
    "conv": ("convolution", "conv", "conv1d", "conv2d", "conv3d", "depthwiseconv2d", "convolution2d",
             "depthwiseconvolution2d", "fusedconv", "nchwcconv", "qlinearconv", "convinteger"),
    "conv_transpose": ("convtranspose", "deconvolution", "deconvolution2d", "transposeconv", "convtranspose2d"),
    "matmul": ("fullyconnected", "addmm", "mm", "bmm", "linear", "gemm", "matmul", "batchmatmul",
               "batchmatrixmultiply", "qlinearmatmul", "matmulinteger", "matmulnbits", "fusedmatmul",
               "dynamicquantizematmul", "qgemm"),
    "max_pool": ("maxpooling", "maxpooling2d", "maxpool2dwithindices", "maxpool2d", "maxpool", "argmaxpooling2d"),
    "avg_pool": ("averagepooling", "averagepooling2d", "avgpool2d", "averagepool", "avgpool", "adaptiveavgpool2d"),
    "mean": ("mean", "meandim", "reducemean", "globalaveragepool", "globalaveragepooling", "globalaveragepooling2d",
             "globalavgpooling2d", "globalavgpool"),
    "sigmoid": ("sigmoid", "logistic"),
    "relu": ("relu", "clamp", "relu6", "hardtanh", "relun1to1", "relu0to1"),
    "add": ("add", "add2", "addnd", "addtensor"),
    "mul": ("mul", "multiply", "multiply2", "multiplynd"),
    "sub": ("sub", "subtract", "subtractnd", "rsub"),
    "div": ("div", "divide", "dividend"),
    "softmax": ("softmax", "softmax2d"),
    "transpose": ("transpose", "permute", "permutecopy", "statictranspose", "transposend"),
    "reshape": ("reshape", "view", "viewcopy", "staticreshape", "flatten", "squeeze", "unsqueeze", "unsqueezecopy",
                "squeezecopy", "expanddims", "copync"),
    "copy": ("copy", "clone", "todimordercopy", "clonedimordercopy", "convert", "identity"),
    "concat": ("cat", "concat", "concatenate", "concatenation", "concatenate2", "concatenate3", "concatenate4"),
    "batch_norm": ("nativebatchnormlegitnotraining", "batchnormalization", "batchnorm"),
    "layer_norm": ("layernormalization", "nativelayernorm", "layernorm"),
    "gelu": ("gelu", "quickgelu", "fastgelu", "biasgelu"),
    "hardswish": ("hardswish", "hswish"),
    "pad": ("pad", "constantpad", "constantpadnd", "staticconstantpad"),
    "resize": ("resize", "upsamplenearest2d", "upsamplebilinear2d", "resizebilinear", "resizenearestneighbor",
               "upsample", "staticresizebilinear2d"),
}
_FAMILY = {alias: fam for fam, aliases in _SYNONYMS.items() for alias in aliases}
_XNN_OPERATOR = re.compile(r"^(?P<op>[A-Za-z][A-Za-z0-9 ]*?)\s*\(")  # "Sigmoid (NC, F32)", "Convolution (NHWC, …"
_OCCURRENCE = re.compile(r"\s*#\d+$")


def op_family(name: str) -> str:
    """The operator family of an op as any runtime names it: ``native_call_sigmoid.out``, ``aten::sigmoid.out``,
    ``aten.sigmoid.default``, XNNPACK's ``Sigmoid (NC, F32)`` and node ``Sigmoid``, ONNX ``Sigmoid``, TFLite
    ``LOGISTIC`` and MIL ``ios18.sigmoid`` are all ``sigmoid``. An op the table does not know keeps its own
    normalized name."""
    s = _OCCURRENCE.sub("", name.strip())
    s = s.rsplit("/", 1)[-1]  # "Delegate/Sigmoid (NC, F32):8" → the op
    m = _XNN_OPERATOR.match(s)
    if m:
        s = m.group("op")
    s = re.sub(r":\d+$", "", s)
    for prefix in ("native_call_", "aten::", "aten.", "aten_", "xnn_define_", "xnn"):
        if s.startswith(prefix) and len(s) > len(prefix):
            s = s[len(prefix):]
    s = re.sub(r"^ios\d+\.", "", s)
    s = s.split(".")[0]  # overloads: .out, .default, .Tensor
    key = re.sub(r"[^a-z0-9]", "", s.lower())
    return _FAMILY.get(key, key or "op")


def _keyed(ops: list[dict]) -> list[dict]:
    """Give each op a pairing key when it has none: ``family#k``, its occurrence among ops of its family."""
    seen: dict[str, int] = {}
    for o in ops:
        if o.get("key"):
            continue
        k = seen.get(o["family"], 0)
        seen[o["family"]] = k + 1
        o["key"] = f"{o['family']}#{k}"
    return ops


def _placement(source: str, runtime_name: str, evidence: str, ops: list[dict], **kw) -> Placement:
    host = runtime(runtime_name).host_backend
    placed = [PlacedOp(index=i, **o) for i, o in enumerate(_keyed(ops))]
    return Placement(source=source, runtime=runtime_name, evidence=evidence, host=host, ops=placed, **kw)


# --------------------------------------------------------------------------------------------------
# builders: one per kind of evidence
# --------------------------------------------------------------------------------------------------

def _opaque(name: str) -> bool:
    """A profile entry that stands for a whole accelerator partition whose operators it does not list (ONNX
    Runtime's ``<EP>-subgraph_N`` nodes)."""
    from ..taxonomy import classify

    return classify(name).subtype == "delegated-subgraph"


def from_profile(profile) -> Placement:
    """A profile's leaf operators in execution order, each on the backend that ran it, with its mean time per run.

    Leaf operators are the events with no operator inside them: a portable kernel, a delegate's op, an ONNX Runtime
    node, a LiteRT op. Runs are put side by side by position; runs whose sequence of operators differs from the
    first run's are left out of the times (``runs`` counts those used). An entry that stands for a whole accelerator
    partition (ONNX Runtime's provider subgraphs) is one opaque operator of family ``partition``."""
    import numpy as np
    import polars as pl

    from ..model import KINDS

    rt = profile.runtime or EXECUTORCH.name
    ev = profile.events
    host_word = runtime(rt).host_backend
    run = ev["run_index"].to_numpy()
    kind = ev["kind"].to_physical().to_numpy()
    parent = ev["parent"].fill_null(-1).to_numpy().astype(np.int64)
    framework = KINDS.index("framework")
    candidate = (run >= 0) & (kind != framework)
    has_child = np.zeros(ev.height, dtype=bool)
    inner = parent[candidate]
    has_child[inner[inner >= 0]] = True
    leaf = np.flatnonzero(candidate & ~has_child)
    if leaf.size == 0:
        return _placement(profile.source, rt, profile.format, [], runs=profile.n_runs,
                          warnings=[f"{profile.source}: no operator events in its runs"])
    r = run[leaf]
    starts = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
    lengths = np.diff(np.r_[starts, leaf.size])
    names_all = ev["name"].cast(pl.String)
    r0 = leaf[starts[0]:starts[0] + lengths[0]]
    names0 = names_all.gather(r0).to_list()
    backends0 = ev["delegate_backend"].cast(pl.String).gather(r0).to_list()
    module0 = ev["module_path"].cast(pl.String).gather(r0).to_list() if "module_path" in ev.columns else [None] * r0.size
    ids = profile.name_groups()[0]
    sig0 = ids[r0]
    dur = ev["duration_ns"].fill_null(0).to_numpy().astype(np.float64)
    same = [k for k, (s, n) in enumerate(zip(starts, lengths))
            if n == r0.size and np.array_equal(ids[leaf[s:s + n]], sig0)]
    times = np.mean([dur[leaf[starts[k]:starts[k] + lengths[k]]] for k in same], axis=0) if same else dur[r0]
    ops = []
    partitions_seen: dict[str, int] = {}
    for name, backend, module, t in zip(names0, backends0, module0, times.tolist()):
        accelerated = backend not in (HOST_BACKEND, "framework", None)
        where = backend if accelerated else host_word
        label = _OCCURRENCE.sub("", name)
        if accelerated and _opaque(label):
            k = partitions_seen.get(where, 0)
            partitions_seen[where] = k + 1
            ops.append({"key": f"partition:{where}#{k}", "name": module or label, "op": label, "family": "partition",
                        "placement": where, "accelerated": True, "basis": MEASURED, "time_ms": ms(t)})
            continue
        ops.append({"name": module if rt == ONNXRUNTIME.name and module else label, "op": label,
                    "family": op_family(label), "placement": where, "accelerated": accelerated, "basis": MEASURED,
                    "time_ms": ms(t)})
    lat = profile.latency_ns()
    lat = lat[np.isfinite(lat)]
    warn = [] if len(same) == len(starts) else [
        f"{len(starts) - len(same)} of {len(starts)} runs ran a different sequence of operators from the first run; "
        "times are means over the runs like it"]
    return _placement(profile.source, rt, profile.format, ops, runs=len(same) or 1,
                      run_ms=ms(float(lat.mean())) if lat.size else None, warnings=warn)


def from_program(prog, method: str | None = None) -> Placement:
    """An ExecuTorch program (``.pte``, read statically): its instructions in order — a kernel instruction is an
    operator on the portable kernels, each node of an XNNPACK delegate an operator of that delegate, a delegate
    whose contents edgeprof does not read one opaque operator — with FLOPs where the counter knows them."""
    from .pte_cost import kernel_cost, xnn_node_cost

    plans = [p for p in prog.plans if method is None or p.name == method] or prog.plans[:1]
    plan = plans[0]
    ops = []
    opaque: dict[str, int] = {}
    for ins in plan.instructions:
        if ins.kind == "kernel":
            name = f"{ins.op}.{ins.overload}" if ins.overload else ins.op
            ops.append({"name": name, "op": name, "family": op_family(name), "placement": HOST_BACKEND,
                        "accelerated": False, "basis": STATIC, "flops": kernel_cost(plan, ins)["flops"]})
        elif ins.kind == "delegate":
            d = plan.delegates[ins.delegate]
            if d.xnnpack is None:
                k = opaque.get(d.backend, 0)
                opaque[d.backend] = k + 1
                ops.append({"key": f"partition:{d.backend}#{k}", "name": f"{d.backend} delegate {d.index}",
                            "op": d.backend, "family": "partition", "placement": d.backend, "accelerated": True,
                            "basis": STATIC})
                continue
            for nd in d.xnnpack.nodes:
                ops.append({"name": nd.type, "op": nd.type, "family": op_family(nd.type), "placement": d.backend,
                            "accelerated": True, "basis": STATIC, "flops": xnn_node_cost(d.xnnpack, nd)["flops"]})
    warn = [f"{prog.source}: method '{method}' is not in the program; placed '{plan.name}'"] if (
        method and plan.name != method) else []
    return _placement(prog.source, EXECUTORCH.name, "pte_static", ops, warnings=warn)


def with_work(measured: Placement, static: Placement) -> Placement:
    """``measured`` (a profile's placement) with the FLOPs of ``static`` (the program it ran) on each operator that
    pairs with one of the program's by key on the same placement — in families whose operators the two count
    alike (a family with a different number of operators on each side pairs nothing: no figure is moved to an
    operator it may not belong to)."""
    from collections import Counter

    count_m = Counter(op.family for op in measured.ops)
    count_s = Counter(op.family for op in static.ops)
    by_key = {op.key: op for op in static.ops}
    ops = []
    for op in measured.ops:
        s = by_key.get(op.key)
        if op.flops is None and s is not None and s.flops is not None and s.placement == op.placement \
                and count_m[op.family] == count_s[op.family]:
            op = dataclasses.replace(op, flops=s.flops)
        ops.append(op)
    return dataclasses.replace(measured, ops=ops, evidence=f"{measured.evidence}+pte_static")


def from_onnx_assignment(model: dict, assigned: dict[str, str], source: str) -> Placement:
    """An ONNX model's nodes in graph order, each on the execution provider a session assigned it
    (``assigned``: node name → provider, from :mod:`edgeprof.io.ort_assignment`), with FLOPs."""
    from .onnx_cost import node_cost

    host = ONNXRUNTIME.host_backend
    ops = []
    for n in model["nodes"]:
        ep = assigned.get(n["name"], UNKNOWN)
        ops.append({"key": n["name"], "name": n["name"], "op": n["op"], "family": op_family(n["op"]),
                    "placement": ep, "accelerated": ep not in (host, UNKNOWN), "basis": STATIC,
                    "flops": node_cost(n)["flops"]})
    missing = sum(1 for n in model["nodes"] if n["name"] not in assigned)
    warn = [f"{missing} node(s) were not in the session's assignment (removed by its graph optimizations)"] if missing else []
    return _placement(source, ONNXRUNTIME.name, "ort_assignment", ops, warnings=warn)


def _profile_name(name: str) -> str:
    """An ONNX Runtime profile's node name as the model's: the NCHWc transformer renames a node after its output
    (``r0_nchwc``)."""
    return name[:-len("_nchwc")] if name.endswith("_nchwc") else name


def from_ort_profile_and_model(profile, model: dict) -> Placement:
    """An ONNX Runtime profile placed node by node on the ONNX model it ran. A model node is placed where the
    profile times it (by its name or its output's name, as the NCHWc transformer renames); a node the optimizer
    fused into a timed neighbour (a Conv whose only consumer is a timed Relu, or a node whose only input comes from a
    timed node that feeds nothing else) is placed with that neighbour; any other node is inside an accelerator
    partition the profile times only as a whole — placed there (``inferred``) when the profile has one such
    provider, left unknown otherwise. Profile nodes that are no model node (layout reorders) stay as operators of
    their own."""
    prof = from_profile(profile)
    timed = {}  # model-side name → profile op
    for op in prof.ops:
        if op.family != "partition":
            timed[_profile_name(op.name)] = op
    by_output = {t["name"]: n for n in model["nodes"] for t in n["outputs"] if t is not None and t.get("name")}
    consumers: dict[str, list] = {}
    for n in model["nodes"]:
        for t in n["inputs"]:
            if t is not None and not t["weight"] and t.get("name"):
                consumers.setdefault(t["name"], []).append(n)

    def match(n):
        if n["name"] in timed:
            return timed[n["name"]]
        for t in n["outputs"]:
            if t is not None and t.get("name") in timed:
                return timed[t["name"]]
        return None

    direct = {n["name"]: match(n) for n in model["nodes"]}
    partitions = sorted({op.placement for op in prof.ops if op.family == "partition"})
    ops = []
    from .onnx_cost import node_cost

    for n in model["nodes"]:
        hit = direct[n["name"]]
        basis = MEASURED
        if hit is None:
            outs = [t["name"] for t in n["outputs"] if t is not None and t.get("name")]
            after = [c for o in outs for c in consumers.get(o, [])]
            ins = [by_output[t["name"]] for t in n["inputs"] if t is not None and not t["weight"]
                   and t.get("name") in by_output]
            if len(after) == 1 and direct.get(after[0]["name"]) is not None:
                hit = direct[after[0]["name"]]
            elif len(ins) == 1 and direct.get(ins[0]["name"]) is not None and all(
                    len(consumers.get(o["name"], [])) == 1 for o in ins[0]["outputs"] if o is not None):
                hit = direct[ins[0]["name"]]
            basis = INFERRED
        if hit is not None and hit.family != "partition":
            where, acc = hit.placement, hit.accelerated
        elif len(partitions) == 1:
            where, acc = partitions[0], True
        else:
            where, acc = UNKNOWN, False
        t = hit.time_ms if hit is not None and basis == MEASURED else None
        ops.append({"key": n["name"], "name": n["name"], "op": n["op"], "family": op_family(n["op"]),
                    "placement": where, "accelerated": acc, "basis": basis, "time_ms": t,
                    "flops": node_cost(n)["flops"]})
    # profile operators with no model node (layout reorders the optimizer inserted) after the model node the
    # profile ran before them; an opaque partition's own time after the last node placed in it
    after: dict[int, list[dict]] = {}
    last = -1
    node_of = {id(op): n["index"] for n in model["nodes"] for op in [direct[n["name"]]] if op is not None}
    for op in prof.ops:
        if id(op) in node_of:
            last = max(last, node_of[id(op)])
            continue
        if op.family == "partition":
            inside = [o["key"] for o in ops if o["placement"] == op.placement]
            at = max((n["index"] for n in model["nodes"] if n["name"] in inside), default=last)
            entry = {"key": op.key, "name": op.name, "op": op.op, "family": op.family, "placement": op.placement,
                     "accelerated": True, "basis": MEASURED, "time_ms": op.time_ms}
        else:
            at = last
            entry = {"key": f"runtime:{op.name}", "name": op.name, "op": op.op, "family": op.family,
                     "placement": op.placement, "accelerated": op.accelerated, "basis": MEASURED, "time_ms": op.time_ms}
        after.setdefault(at, []).append(entry)
    ordered = after.get(-1, [])
    for i, o in enumerate(ops):
        ordered.append(o)
        ordered.extend(after.get(i, []))
    ops = ordered
    warn = list(prof.warnings)
    if len(partitions) > 1:
        warn.append(f"{len(partitions)} accelerator providers time whole partitions ({', '.join(partitions)}): the "
                    "model nodes inside them are left unknown")
    return _placement(profile.source, ONNXRUNTIME.name, "ort_json+onnx", ops, runs=prof.runs, run_ms=prof.run_ms,
                      warnings=warn)


def from_ane(report) -> Placement:
    """An anemll-profile report's compute plan (``ordered_placements``: the preferred device of every non-const
    op), or an ane-costplan plan (a device only where it names one). Keys are ``function/name`` (MIL names survive
    a rebuild of the same model); the plan's weight of each op is its share of the work."""
    from ..ane_model import AneCostPlan
    from .ane_islands import Placement as IslandPlacement, focus_device

    ops = []
    if isinstance(report, AneCostPlan):
        for o in report.operations:
            dev = o.get("device") or UNKNOWN
            fn = o.get("function") or "main"
            ops.append({"key": f"{fn}/{o['index']}:{o['short_type']}", "name": f"{o['index']}:{o['type']}",
                        "op": o["type"], "family": op_family(o["type"]), "placement": dev,
                        "accelerated": dev in ("ANE", "GPU"), "basis": PLANNED, "plan_weight": o.get("cost")})
        unknown = sum(1 for o in ops if o["placement"] == UNKNOWN)
        warn = [f"{unknown} of {len(ops)} ops have no device in the cost plan (run it on the Mac with the model "
                "compiled, or use an anemll-profile report)"] if unknown else []
        return _placement(report.source, COREML.name, "costplan_json", ops, focus="ANE", warnings=warn)
    focus = focus_device([IslandPlacement(p.function, p.index, p.name, p.type, p.device, p.cost)
                          for p in report.placements], bool(report.compute.get("compute_units_all")))
    for p in sorted(report.placements, key=lambda p: (p.function, p.index)):
        ops.append({"key": f"{p.function}/{p.name}", "name": p.name, "op": p.type, "family": op_family(p.type),
                    "placement": p.device, "accelerated": p.device in ("ANE", "GPU"), "basis": PLANNED,
                    "plan_weight": p.cost})
    measured = report.measured or {}
    return _placement(report.source, COREML.name, "anemll_json", ops, focus=focus,
                      run_ms=measured.get("steady_ms") or measured.get("average_ms"),
                      runs=measured.get("runs") if measured.get("status") == "ok" else None)


# --------------------------------------------------------------------------------------------------
# partitions and shares
# --------------------------------------------------------------------------------------------------

def partitions(pl_: Placement) -> list[dict]:
    """Maximal runs of one placement in topological order: ``{index, placement, accelerated, first, last, ops,
    op_keys, time_ms, flops, plan_weight}`` (a figure None when no operator of the run carries it)."""
    out: list[dict] = []
    for op in pl_.ops:
        if out and out[-1]["placement"] == op.placement:
            p = out[-1]
        else:
            p = {"index": len(out), "placement": op.placement, "accelerated": op.accelerated, "first": op.index,
                 "last": op.index, "ops": 0, "op_keys": [], "time_ms": None, "flops": None, "plan_weight": None}
            out.append(p)
        p["last"] = op.index
        p["ops"] += 1
        p["op_keys"].append(op.key)
        for f in ("time_ms", "flops", "plan_weight"):
            v = getattr(op, f)
            if v is not None:
                p[f] = (p[f] or 0) + v
    return out


def _share(part: float | None, whole: float | None) -> float | None:
    return part / whole * 100 if part is not None and whole else None


def shares(pl_: Placement) -> list[dict]:
    """Per placement: operators, partitions, time and work, and their shares of the operators' sums (a share of
    the sum of the operators that carry the figure: shares add up to 100)."""
    rows: dict[str, dict] = {}
    parts = partitions(pl_)
    for op in pl_.ops:
        r = rows.setdefault(op.placement, {"placement": op.placement, "accelerated": op.accelerated, "ops": 0,
                                           "partitions": 0, "time_ms": None, "flops": None, "plan_weight": None})
        r["ops"] += 1
        for f in ("time_ms", "flops", "plan_weight"):
            v = getattr(op, f)
            if v is not None:
                r[f] = (r[f] or 0) + v
    for p in parts:
        rows[p["placement"]]["partitions"] += 1
    totals = {f: sum(r[f] for r in rows.values() if r[f] is not None) for f in ("time_ms", "flops", "plan_weight")}
    for r in rows.values():
        r["time_share_pct"] = _share(r["time_ms"], totals["time_ms"])
        r["flops_share_pct"] = _share(r["flops"], totals["flops"])
        r["plan_weight_share_pct"] = _share(r["plan_weight"], totals["plan_weight"])
    return sorted(rows.values(), key=lambda r: (not r["accelerated"], -(r["time_ms"] or 0), r["placement"]))


def fingerprint(pl_: Placement) -> str:
    """A short digest of which operator runs where (keys and placements in order; times left out): two builds with
    the same placement have the same fingerprint whatever their timings."""
    import hashlib

    h = hashlib.sha256()
    for op in pl_.ops:
        h.update(f"{op.key}\x1f{op.placement}\x1e".encode())
    return h.hexdigest()[:16]


def describe(pl_: Placement) -> dict:
    """The placement document: operators, partitions, per-placement shares, fingerprint and the runtime's words."""
    rt = runtime(pl_.runtime)
    parts = partitions(pl_)
    acc = [p for p in parts if p["accelerated"]]
    host_parts = [p for p in parts if not p["accelerated"] and p["placement"] != UNKNOWN]
    between = sum(1 for p in host_parts if any(a["index"] < p["index"] for a in acc)
                  and any(a["index"] > p["index"] for a in acc))
    rows = shares(pl_)
    acc_time = sum(r["time_ms"] or 0 for r in rows if r["accelerated"])
    tot_time = sum(r["time_ms"] or 0 for r in rows)
    return {
        "input": pl_.source, "runtime": pl_.runtime, "runtime_title": rt.title, "evidence": pl_.evidence,
        "host": pl_.host, "focus": pl_.focus, "fallback_means": FALLBACK.get(pl_.runtime, FALLBACK[EXECUTORCH.name]),
        "runs": pl_.runs, "run_ms": pl_.run_ms, "fingerprint": fingerprint(pl_),
        "operators": [dataclasses.asdict(op) for op in pl_.ops],
        "partitions": parts, "placements": rows,
        "summary": {"operators": len(pl_.ops), "accelerated_operators": sum(op.accelerated for op in pl_.ops),
                    "host_operators": sum(1 for op in pl_.ops if not op.accelerated and op.placement != UNKNOWN),
                    "unknown_operators": sum(1 for op in pl_.ops if op.placement == UNKNOWN),
                    "partitions": len(parts), "accelerated_partitions": len(acc), "host_partitions": len(host_parts),
                    "host_partitions_between_accelerated": between,
                    "accelerated_time_share_pct": _share(acc_time, tot_time) if tot_time else None},
        "statement": _statement(pl_, parts, rows),
        "warnings": list(pl_.warnings),
    }


def _statement(pl_: Placement, parts: list[dict], rows: list[dict]) -> str:
    n = len(pl_.ops)
    if not n:
        return f"{pl_.source}: no operators to place."
    acc = sum(op.accelerated for op in pl_.ops)
    head = f"{acc} of {n} operators on an accelerator ({', '.join(r['placement'] for r in rows if r['accelerated']) or 'none'})"
    t = [r for r in rows if r["time_share_pct"] is not None]
    if t:
        at = sum(r["time_share_pct"] for r in t if r["accelerated"])
        head += f", {at:.1f} % of operator time"
    f = [r for r in rows if r["flops_share_pct"] is not None]
    if f:
        af = sum(r["flops_share_pct"] for r in f if r["accelerated"])
        head += f", {af:.1f} % of FLOPs"
    w = [r for r in rows if r["plan_weight_share_pct"] is not None]
    if w:
        aw = sum(r["plan_weight_share_pct"] for r in w if r["accelerated"])
        head += f", {aw:.1f} % of the plan's weight"
    return f"{head}; {len(parts)} partition(s) in execution order."


# --------------------------------------------------------------------------------------------------
# two builds
# --------------------------------------------------------------------------------------------------

FAIL_ON = ("fallback", "new-partition")


def diff(a: Placement, b: Placement) -> dict:
    """Baseline ``a`` against candidate ``b``: every paired operator whose placement changed (``moved``: a
    ``fallback`` when it leaves an accelerator placement, ``promotion`` when it reaches one from the CPU kernels,
    ``transfer`` between two accelerators — a fallback too: it left its accelerator), operators only in one build,
    partitions that split or merged, the time the moved operators cost (their candidate time minus their baseline
    time, where both are measured) and a verdict: ``same_placement``, ``fallback``, ``new_partition``,
    ``promotion``, ``changed``."""
    ka = {op.key: op for op in a.ops}
    kb = {op.key: op for op in b.ops}
    moved = []
    for op in a.ops:
        o2 = kb.get(op.key)
        if o2 is None or o2.placement == op.placement or UNKNOWN in (op.placement, o2.placement):
            continue
        kind = "fallback" if op.accelerated else ("promotion" if o2.accelerated else "transfer")
        if op.accelerated and o2.accelerated:
            kind = "fallback"  # left its accelerator for another one (ANE → GPU)
        cost = o2.time_ms - op.time_ms if op.time_ms is not None and o2.time_ms is not None else None
        moved.append({"key": op.key, "name": op.name, "candidate_name": o2.name, "op": op.op, "family": op.family,
                      "from": op.placement, "to": o2.placement, "kind": kind, "baseline_ms": op.time_ms,
                      "candidate_ms": o2.time_ms, "cost_ms": cost, "index": op.index, "candidate_index": o2.index})
    only_a = [{"key": op.key, "name": op.name, "op": op.op, "placement": op.placement, "time_ms": op.time_ms}
              for op in a.ops if op.key not in kb]
    only_b = [{"key": op.key, "name": op.name, "op": op.op, "placement": op.placement, "time_ms": op.time_ms}
              for op in b.ops if op.key not in ka]
    pa, pb = partitions(a), partitions(b)
    split, merged = _partition_changes(pa, pb)
    fallbacks = [m for m in moved if m["kind"] == "fallback"]
    # candidate CPU operators that pair with nothing while the baseline ran an accelerator partition whose contents
    # it does not list: they may have run inside it (an ONNX Runtime profile without its model)
    opaque = sorted({op.placement for op in a.ops if op.family == "partition"})
    suspected = [r["key"] for r in only_b if opaque and not kb[r["key"]].accelerated
                 and r["placement"] != UNKNOWN and not r["key"].startswith("runtime:")]
    warnings = []
    if a.evidence.split("+")[0] != b.evidence.split("+")[0]:
        warnings.append(f"the two inputs are different kinds of evidence ({a.evidence} and {b.evidence}): "
                        "operators are paired by family and occurrence, and one side may list operators the other "
                        "does not (layout conversions a runtime inserts)")
    costs = [m["cost_ms"] for m in moved if m["cost_ms"] is not None]
    acc_a = sum(1 for p in pa if p["accelerated"])
    acc_b = sum(1 for p in pb if p["accelerated"])
    host_b_new = [p for p in pb if not p["accelerated"] and p["placement"] != UNKNOWN
                  and not any(k in ka and not ka[k].accelerated for k in p["op_keys"])]
    new_partition = len(pb) > len(pa) or bool(split)
    if fallbacks or suspected:
        verdict = "fallback"
    elif new_partition:
        verdict = "new_partition"
    elif moved:
        verdict = "promotion" if all(m["kind"] == "promotion" for m in moved) else "changed"
    elif only_a or only_b:
        verdict = "changed"
    else:
        verdict = "same_placement"
    out = {
        "baseline": a.source, "candidate": b.source, "runtime": b.runtime, "baseline_runtime": a.runtime,
        "baseline_fingerprint": fingerprint(a), "candidate_fingerprint": fingerprint(b),
        "moved": moved, "only_baseline": only_a, "only_candidate": only_b,
        "partitions": {"baseline": len(pa), "candidate": len(pb), "baseline_accelerated": acc_a,
                       "candidate_accelerated": acc_b, "split": split, "merged": merged,
                       "new_host_partitions": [{"index": p["index"], "placement": p["placement"], "ops": p["ops"],
                                                "op_keys": p["op_keys"][:20], "time_ms": p["time_ms"]}
                                               for p in host_b_new]},
        "fallbacks": len(fallbacks), "suspected_fallbacks": suspected, "opaque_baseline_partitions": opaque,
        "baseline_evidence": a.evidence, "candidate_evidence": b.evidence, "warnings": warnings,
        "promotions": sum(m["kind"] == "promotion" for m in moved),
        "moved_cost_ms": sum(costs) if costs else None, "moved_cost_known": len(costs) == len(moved),
        "run_ms": {"baseline": a.run_ms, "candidate": b.run_ms},
        "verdict": verdict,
        "fallback_means": FALLBACK.get(b.runtime, FALLBACK[EXECUTORCH.name]),
    }
    out["statements"] = diff_statements(out)
    return out


def _partition_changes(pa: list[dict], pb: list[dict]) -> tuple[list[dict], list[dict]]:
    """Partitions of the baseline whose operators the candidate spreads over several partitions (split), and
    candidate partitions that hold operators of several baseline partitions (merged); by operator keys."""
    where_b = {k: p["index"] for p in pb for k in p["op_keys"]}
    where_a = {k: p["index"] for p in pa for k in p["op_keys"]}
    split, merged = [], []
    for p in pa:
        into = sorted({where_b[k] for k in p["op_keys"] if k in where_b})
        if len(into) > 1:
            split.append({"baseline_partition": p["index"], "placement": p["placement"], "into": into})
    for p in pb:
        frm = sorted({where_a[k] for k in p["op_keys"] if k in where_a})
        if len(frm) > 1:
            merged.append({"candidate_partition": p["index"], "placement": p["placement"], "from": frm})
    return split, merged


def gate(d: dict, fail_on: str) -> str | None:
    """Why ``--fail-on fallback`` / ``new-partition`` fails on diff ``d``, or None when it passes."""
    if fail_on == "fallback" and d["fallbacks"]:
        first = next(m for m in d["moved"] if m["kind"] == "fallback")
        return (f"{d['fallbacks']} operator(s) fell back; first: {first['name']} ({first['key']}) "
                f"{first['from']} → {first['to']}")
    if fail_on == "fallback" and d["suspected_fallbacks"]:
        return (f"{len(d['suspected_fallbacks'])} CPU operator(s) appear that the baseline may have run inside "
                f"{', '.join(d['opaque_baseline_partitions'])}; first: {d['suspected_fallbacks'][0]}")
    if fail_on == "new-partition":
        p = d["partitions"]
        if p["candidate"] > p["baseline"] or p["split"]:
            return (f"partitions {p['baseline']} → {p['candidate']}"
                    + (f"; baseline partition {p['split'][0]['baseline_partition']} split into "
                       f"{len(p['split'][0]['into'])}" if p["split"] else ""))
    return None


def _fmt(v: float | None) -> str:
    return "not measured" if v is None else f"{v:+.3f} ms"


def diff_statements(d: dict) -> list[str]:
    """The diff in sentences, each from the diff's own fields."""
    out = []
    moved = d["moved"]
    if not moved and not d["only_baseline"] and not d["only_candidate"]:
        out.append(f"Same placement: every operator runs where it ran (fingerprint {d['candidate_fingerprint']}).")
    for m in moved:
        also = "" if m["name"] == m["key"] else f" ({m['key']})"
        out.append(f"{m['kind']}: {m['name']}{also} {m['from']} → {m['to']}; time {_fmt(m['cost_ms'])}.")
    p = d["partitions"]
    if p["baseline"] != p["candidate"] or p["split"] or p["merged"]:
        out.append(f"Partitions {p['baseline']} → {p['candidate']} ({p['baseline_accelerated']} → "
                   f"{p['candidate_accelerated']} accelerated); {len(p['split'])} split, {len(p['merged'])} merged.")
    if d["suspected_fallbacks"]:
        out.append(f"{len(d['suspected_fallbacks'])} CPU operator(s) of the candidate pair with nothing while the "
                   f"baseline ran {', '.join(d['opaque_baseline_partitions'])} as a whole: they may have fallen back "
                   "(give the ONNX model, --model, to place every node).")
    if d["only_baseline"] or d["only_candidate"]:
        out.append(f"{len(d['only_baseline'])} operator(s) only in the baseline, {len(d['only_candidate'])} only in "
                   "the candidate (the builds' graphs differ there).")
    if moved:
        out.append(f"Moved operators' time: {_fmt(d['moved_cost_ms'])}"
                   + ("" if d["moved_cost_known"] else " (only where both builds time them)") + f"; verdict {d['verdict']}.")
    else:
        out.append(f"Verdict {d['verdict']}.")
    return out


# --------------------------------------------------------------------------------------------------
# a series of commits (the history store)
# --------------------------------------------------------------------------------------------------

def placement_changes(order: list[str], times: dict, by_commit: dict[str, list[dict]]) -> list[dict]:
    """Where a series' placement changed: ``order`` — its commits in time order; ``by_commit`` — per commit the
    placements rows of its launches (``op_key``, ``op_name``, ``placement``, ``accelerated``, ``ms_per_run``,
    ``fingerprint``, ``launch_id``), the first launch's standing for the commit. One entry per commit whose
    fingerprint differs from the commit before (that had one): the operators that moved, each a fallback or a
    promotion, with their time per run after the change."""
    out = []
    prev_k, prev = None, None
    for k in order:
        launches = by_commit.get(k)
        if not launches:
            continue
        first = launches[0]
        if prev is not None and first[0]["fingerprint"] != prev[0]["fingerprint"]:
            before = {r["op_key"]: r for r in prev}
            after = {r["op_key"] for r in first}
            moved = []
            for r in first:
                b = before.get(r["op_key"])
                if b is None or b["placement"] == r["placement"]:
                    continue
                kind = "fallback" if b["accelerated"] else ("promotion" if r["accelerated"] else "transfer")
                moved.append({"key": r["op_key"], "name": r["op_name"], "from": b["placement"], "to": r["placement"],
                              "kind": kind, "ms_per_run_before": b["ms_per_run"], "ms_per_run": r["ms_per_run"]})
            falls = [m for m in moved if m["kind"] == "fallback"]
            appeared = [r["op_key"] for r in first if r["op_key"] not in before]
            gone = [key for key in before if key not in after]
            what = "; ".join(f"{m['name']} ({m['key']}) {m['from']} → {m['to']}"
                             + ("" if m["ms_per_run"] is None else f", {m['ms_per_run']:.4g} ms per run")
                             for m in moved[:4]) + (" …" if len(moved) > 4 else "")
            head = ("fallback" if falls else "placement change") + f" at {k} (after {prev_k})"
            statement = f"{head}: {what}" if moved else f"{head}: {len(appeared)} operator(s) appeared, {len(gone)} gone"
            out.append({"commit_before": prev_k, "commit_after": k, "time_after": times.get(k),
                        "fingerprint_before": prev[0]["fingerprint"], "fingerprint_after": first[0]["fingerprint"],
                        "moved": moved, "fallbacks": len(falls), "appeared": appeared, "disappeared": gone,
                        "launches_disagree": len({lr[0]["fingerprint"] for lr in launches if lr}) > 1,
                        "statement": statement})
        prev_k, prev = k, first
    return out
