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

What counts as a *fallback* is said per runtime (:attr:`edgeprof.runtimes.Runtime.fallback_means`): an operator that
leaves an accelerator placement for another — its runtime's CPU kernels, or another accelerator (ANE → GPU).
Figures and documents: :mod:`.placement_parts`; two builds diffed, and history: :mod:`.placement_diff`.
"""

from __future__ import annotations

import dataclasses
import re

from ..conventions import ms
from ..placement_model import INFERRED, MEASURED, PLANNED, STATIC, UNKNOWN, PlacedOp, Placement
from ..runtimes import COREML, EXECUTORCH, HOST_BACKEND, ONNXRUNTIME, runtime

# what a fallback is, in each runtime's words (documents and the README quote these)
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
    r0 = leaf[starts[0]:starts[0] + lengths[0]]
    names0 = ev["name"].gather(r0).cast(pl.String).to_list()
    backends0 = ev["delegate_backend"].gather(r0).cast(pl.String).to_list()
    module0 = ev["module_path"].gather(r0).cast(pl.String).to_list() if "module_path" in ev.columns else [None] * r0.size
    ids = profile.name_groups()[0]
    dur = ev["duration_ns"].fill_null(0).to_numpy().astype(np.float64)
    # the runs of the first run's length, one row each: those whose operators are the first run's, by name
    rows = leaf[starts[lengths == r0.size][:, None] + np.arange(r0.size)]
    like_first = (ids[rows] == ids[r0]).all(axis=1)
    same = np.flatnonzero(like_first)
    times = dur[rows[like_first]].mean(axis=0)
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
            users = [c for o in outs for c in consumers.get(o, [])]
            ins = [by_output[t["name"]] for t in n["inputs"] if t is not None and not t["weight"]
                   and t.get("name") in by_output]
            if len(users) == 1 and direct.get(users[0]["name"]) is not None:
                hit = direct[users[0]["name"]]
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
