"""Memory (pure): what a model plans, what its launches measured per phase, and what the gap between them is made
of as far as the evidence tells.

Measured: each launch of ``edgeprof run`` records, per phase (``start``: the interpreter and the runtime's import;
``load``; ``init``; ``warmup``; ``runs``), the worker's peak resident set during the phase, and its resident and
proportional sets at the phase's end (:mod:`edgeprof.collect.procmem`). A configuration's figure is the median over
its launches.

Planned: an ExecuTorch program's memory plan (the arenas of its method, per memory id) and the bytes of its
constants and delegate blobs; an ONNX model's weights (its initializers).

The gap: the measured footprint — the peak during the timed runs above the resident set the runtime had before
loading anything (the ``start`` phase's end) — is split into the parts the evidence names: ``inputs`` (measured: what
the harness's copies of the inputs added; ``model_bytes`` is the footprint without them), ``weights`` (what the
program stores, counted once it is loaded), ``planned_activations`` (the memory plan's arenas) and ``unexplained``
(the rest: allocator slack, runtime workspaces a delegate allocates itself, libraries loaded late). A part is never
estimated: a program whose plan edgeprof cannot read leaves everything unexplained.
"""

from __future__ import annotations

import statistics

MEASURED_FIELDS = ("peak_rss_bytes", "rss_bytes", "pss_bytes")


def phase_table(launches: list[dict]) -> list[dict]:
    """Per phase, in the order the launches went through them: the median over launches of each measured field,
    and how many launches measured it."""
    order: list[str] = []
    values: dict[str, dict[str, list[int]]] = {}
    for mem in launches:
        for row in (mem or {}).get("phases") or []:
            ph = row.get("phase")
            if not isinstance(ph, str):
                continue
            if ph not in values:
                order.append(ph)
                values[ph] = {f: [] for f in MEASURED_FIELDS}
            for f in MEASURED_FIELDS:
                v = row.get(f)
                if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
                    values[ph][f].append(v)
    out = []
    for ph in order:
        r = {"phase": ph, "launches": max(len(v) for v in values[ph].values())}
        for f in MEASURED_FIELDS:
            v = values[ph][f]
            r[f] = statistics.median(v) if v else None
        out.append(r)
    return out


def plan_of_program(summary: dict) -> dict:
    """The planned memory of an ExecuTorch program (:func:`edgeprof.analysis.pte_program.summarize`): arenas per
    memory id of each method, and the bytes the file stores (constants, delegate blobs, named data)."""
    methods = [{"method": m["plan"], "planned_bytes": m["planned_bytes"],
                "arenas": [{"memory_id": a["id"], "bytes": a["bytes"], "tensors": len(a["tensors"])}
                           for a in m["arenas"]]} for m in summary["memory_plan"]]
    kinds: dict[str, int] = {}
    for p in summary["sizes"]:
        kinds[p["kind"]] = kinds.get(p["kind"], 0) + p["bytes"]
    weights = sum(v for k, v in kinds.items() if k in ("constant", "delegate", "named_data"))
    return {"kind": "pte", "methods": methods, "planned_activation_bytes": max((m["planned_bytes"] for m in methods),
                                                                               default=0),
            "weight_bytes": weights, "file_bytes": summary["file_size"], "bytes_by_kind": kinds}


def plan_of_onnx(model: dict, file_bytes: int) -> dict:
    """The planned memory of an ONNX model (:func:`edgeprof.io.onnx_model.read_onnx`): its weights (initializer
    bytes, each once). ONNX plans no activation memory: the runtime does, at session creation."""
    from .onnx_cost import tensor_bytes

    seen = {t["name"]: tensor_bytes(t) for n in model["nodes"] for t in n["inputs"] if t is not None and t["weight"]}
    return {"kind": "onnx", "methods": [], "planned_activation_bytes": None, "weight_bytes": sum(seen.values()),
            "file_bytes": file_bytes, "bytes_by_kind": {"initializers": sum(seen.values())}}


def plan_of_coreml(totals: dict) -> dict:
    """What a Core ML model's weights take (:func:`edgeprof.analysis.mil_cost.totals`): the bytes its weight files
    store (each blob once: what loading maps), and the dense bytes its constants expand to once decompressed
    (palettized, quantized or sparse weights are stored smaller than they compute)."""
    return {"kind": "coreml", "weight_bytes": totals["weight_stored_unique"],
            "dense_weight_bytes": totals["weight_dense"], "blobs": totals["blobs"],
            "weight_files": dict(totals["weight_files"])}


def litert_reported(rep: dict) -> str:
    """A sentence of what LiteRT's benchmark_model reported of its process's memory."""
    from ..conventions import fmt_bytes

    parts = []
    if rep.get("init_delta_bytes") is not None:
        parts.append(f"the peak resident set grew {fmt_bytes(rep['init_delta_bytes'])} by the end of init and "
                     f"{fmt_bytes(rep['overall_delta_bytes'])} by the end")
    if rep.get("peak_bytes") is not None:
        parts.append(f"the sampled peak footprint was {fmt_bytes(rep['peak_bytes'])}")
    return "benchmark_model reported: " + "; ".join(parts) + " (the tool's own figures, its memory included)"


def _get(table: list[dict], phase: str, field: str):
    return next((r[field] for r in table if r["phase"] == phase and r.get(field) is not None), None)


def gap(table: list[dict], plan: dict | None) -> dict | None:
    """What the measured footprint is made of (see the module docstring), or None without both ends measured."""
    base = _get(table, "start", "rss_bytes")
    peak = _get(table, "runs", "peak_rss_bytes")
    if base is None or peak is None:
        return None
    footprint = peak - base
    parts = [{"part": "runtime", "bytes": base, "evidence": "measured: resident set before the model was loaded"}]
    known = 0
    before, after = _get(table, "init", "rss_bytes"), _get(table, "inputs", "rss_bytes")
    if before is not None and after is not None:
        parts.append({"part": "inputs", "bytes": after - before,
                      "evidence": "measured: what the harness's copies of the inputs added (the inputs phase)"})
        known += after - before
    if plan is not None:
        if plan.get("weight_bytes") is not None:
            parts.append({"part": "weights", "bytes": plan["weight_bytes"], "evidence": f"planned: the {plan['kind']} "
                          "file's stored weights"})
            known += plan["weight_bytes"]
        if plan.get("planned_activation_bytes") is not None:
            parts.append({"part": "planned_activations", "bytes": plan["planned_activation_bytes"],
                          "evidence": "planned: the memory plan's arenas"})
            known += plan["planned_activation_bytes"]
    parts.append({"part": "unexplained", "bytes": footprint - known,
                  "evidence": "measured footprint minus the planned parts (negative: planned memory never touched)"})
    planned = sum(p["bytes"] for p in parts if p["part"] in ("weights", "planned_activations"))
    return {"baseline_rss_bytes": base, "peak_rss_bytes": peak, "footprint_bytes": footprint,
            "model_bytes": footprint - (parts[1]["bytes"] if parts[1]["part"] == "inputs" else 0),
            "planned_bytes": planned if plan is not None else None, "parts": parts}


def onnx_weights_by_node(model: dict) -> dict[str, int]:
    """Per node of an ONNX model: the bytes of the weights (initializers) it reads."""
    from .onnx_cost import tensor_bytes

    return {n["name"]: sum(tensor_bytes(t) for t in n["inputs"] if t is not None and t["weight"]) for n in model["nodes"]}


def ort_node_sizes(rows: list[dict], weights: dict[str, int] | None = None) -> dict:
    """Per node of an ONNX Runtime profile (one run's nodes: ``name``, ``op``, ``provider``, and the sizes ONNX
    Runtime recorded): activation (inputs read), output and parameter bytes; per provider their sums; the largest
    nodes. A node whose parameter size is 0 while its model node has weights (``weights``: node name → initializer
    bytes, when the model is known) holds them prepacked: ``parameters`` says ``prepacked``."""
    nodes = []
    for r in rows:
        p = r.get("parameter_size")
        w = (weights or {}).get(r["name"])
        state = "prepacked" if w and p is not None and p < w else ("none" if not p else "stored")
        nodes.append({**r, "parameters": state, "model_weight_bytes": w})
    by: dict[str, dict] = {}
    for n in nodes:
        b = by.setdefault(n["provider"], {"provider": n["provider"], "nodes": 0, "activation_size": 0,
                                          "output_size": 0, "parameter_size": 0, "prepacked_nodes": 0})
        b["nodes"] += 1
        for f in ("activation_size", "output_size", "parameter_size"):
            b[f] += n.get(f) or 0
        b["prepacked_nodes"] += n["parameters"] == "prepacked"
    largest = sorted(nodes, key=lambda n: -((n.get("output_size") or 0) + (n.get("activation_size") or 0)))[:10]
    return {"nodes": nodes, "by_provider": sorted(by.values(), key=lambda b: b["provider"]), "largest": largest}


def allocations(profile) -> dict:
    """An ETDump's allocation events per allocator and block (``load``: the load/init block; ``runs``: the execute
    runs): events, bytes allocated, the largest allocation. ExecuTorch's allocators hand out memory and free it only
    all at once (a reset), which the profile does not record: the bytes allocated are what the allocator handed out,
    an upper bound of what it held at any time."""
    import polars as pl

    a = profile.allocations
    if a.height == 0:
        return {"allocators": [], "events": 0, "bytes": 0,
                "note": "no allocation events: the runtime that recorded it tracked no allocator (ExecuTorch's "
                        "Python runtime never does)"}
    rows = (a.with_columns(pl.when(pl.col("run_index") < 0).then(pl.lit("load")).otherwise(pl.lit("runs"))
                           .alias("phase"), pl.col("allocator").fill_null("(unnamed)"))
            .group_by("allocator", "phase").agg(pl.len().alias("events"), pl.col("size_bytes").sum().alias("bytes"),
                                                pl.col("size_bytes").max().alias("largest_bytes"))
            .sort("allocator", "phase"))
    return {"allocators": rows.to_dicts(), "events": a.height, "bytes": int(a["size_bytes"].sum()),
            "runs_recorded": profile.n_runs}


def compare_memory(baseline: list[dict], candidate: list[dict], *, threshold: float, level: float = 0.95,
                   field: str = "peak_rss_bytes") -> dict:
    """Two arms' launches (each launch's recorded memory, :mod:`edgeprof.collect.procmem`), phase by phase: the ratio
    candidate / baseline of ``field`` (the peak resident set by default) — the exponent of the difference of the arms'
    mean log values, launches being the units (each arm's ``…_bytes`` is its geometric mean, so the ratio is theirs)
    — with a Welch t interval when each arm has at least two launches, and
    its verdict at δ = ``threshold`` (:func:`edgeprof.conventions.memory_verdict`). One launch per arm measures no
    launch-to-launch variation: the ratio is stated without an interval, the verdict inconclusive."""
    import math

    from ..conventions import fmt_bytes, memory_verdict
    from .special import stdtrit

    def values(launches, phase):
        out = []
        for m in launches:
            row = next((r for r in (m or {}).get("phases") or [] if r.get("phase") == phase), None)
            v = (row or {}).get(field)
            if isinstance(v, (int, float)) and v > 0:
                out.append(float(v))
        return out

    phases = [r["phase"] for r in (baseline[0].get("phases") or [])] if baseline else []
    rows = []
    for ph in phases:
        b, c = values(baseline, ph), values(candidate, ph)
        if not b or not c:
            continue
        lb, lc = [math.log(x) for x in b], [math.log(x) for x in c]
        d = sum(lc) / len(lc) - sum(lb) / len(lb)
        # each arm's typical value is its geometric mean: the ratio beside it is exactly theirs
        row = {"phase": ph, "metric": field, "baseline_bytes": math.exp(sum(lb) / len(lb)),
               "candidate_bytes": math.exp(sum(lc) / len(lc)),
               "baseline_launches": len(b), "candidate_launches": len(c), "estimate": math.exp(d),
               "ci_low": None, "ci_high": None}
        if len(b) >= 2 and len(c) >= 2:
            vb, vc = statistics.variance(lb) / len(lb), statistics.variance(lc) / len(lc)
            se = math.sqrt(vb + vc)
            if se > 0:
                df = (vb + vc) ** 2 / ((vb ** 2 / (len(lb) - 1)) + (vc ** 2 / (len(lc) - 1)))
                t = float(stdtrit(df, 0.5 + level / 2))
            else:
                t = 0.0
            row["ci_low"], row["ci_high"] = math.exp(d - t * se), math.exp(d + t * se)
        row["verdict"] = memory_verdict(row["ci_low"], row["ci_high"], threshold)
        rows.append(row)
    runs = next((r for r in rows if r["phase"] == "runs"), rows[-1] if rows else None)
    verdict = runs["verdict"] if runs else "not_measured"
    if runs is None:
        statement = "No launch of both arms recorded its memory (collect with edgeprof run)."
    else:
        span = (f" [{runs['ci_low']:.3f}–{runs['ci_high']:.3f}]" if runs["ci_low"] is not None
                else " (one launch per arm: no interval)")
        where = "during the timed runs" if runs["phase"] == "runs" else f"of phase {runs['phase']}"
        statement = (f"peak memory {where}: {fmt_bytes(runs['baseline_bytes'])} → "
                     f"{fmt_bytes(runs['candidate_bytes'])}, ratio {runs['estimate']:.3f}{span}; verdict {verdict}")
    return {"metric": field, "threshold": threshold, "level": level, "phases": rows, "verdict": verdict,
            "statement": statement, "convention": "ratio = candidate / baseline (> 1: the candidate takes more)"}
