"""Apple Neural Engine reports read the way their guide says to read them, as findings with evidence.

Order: the report's own status; graph interruptions (islands ranked by what they cost); CPU fallbacks by
reason and type, op-type hotspots and the top operations; optimisation signals; the measured prediction;
and, with an ane-costplan report, the plan's top ops and the cross-check of plan cost against measured
runtime. Every finding names the JSON section it comes from.

The profile's switch model charges ``interrupt_boundary_ms`` (300 ms by default) per device boundary —
about 2,400× what Core ML's own segmenter charges for a switch — so its "tax" is a ranking weight, not a
time. Islands are ranked again with a realistic boundary cost (0.2 ms by default) and the change is said.
"""

from __future__ import annotations

from ..conventions import fmt_ms
from ..ane_model import AneCostPlan, AneIsland, AneProfile
from ..taxonomy import DEFAULT
from .ane_plan import cross_check, finding, plan_findings, short_type

DEFAULT_BOUNDARY_MS = 0.2
HOTSPOT_SHARE_PCT = 5.0          # op types at or above this share of the summed runtime are hotspots
LUT_SHARE_PCT = 10.0             # constexpr_lut_to_dense time that means LUT expansion dominates
KV_OPS_MIN = 4                   # this many slice_update / slice_by_index / read_state ops = a KV-cache pattern
FEW_FALLBACKS = 3                # at most this many CPU fallback ops (with no interruption) = "mostly on ANE"
KV_TYPES = ("slice_update", "slice_by_index", "read_state", "write_state")
_MEASURED: dict[str | None, tuple[str, ...]] = {  # by the measured prediction's status (None: none recorded)
    "ok": ("info", "measured"),
    "not_run": ("warning", "the prediction was not measured (the tool skips it when no cost-model entries were "
                           "captured or the log was masked)"),
    "load_error": ("high", "the model failed to load with these compute units"),
    "prediction_failed": ("high", "the warm-up prediction failed"),
    "ane_compile_fallback_detected": ("high", "ANE compilation likely failed: one prediction took more than 3× the "
                                              "summed cost-model estimate, so the model probably ran on the CPU"),
    "unsupported_inputs": ("warning", "not measured: the model has non-array inputs the tool cannot fill"),
}


def _avg_ms(p: AneProfile) -> float | None:
    m = p.measured
    return m.get("average_ms") if m.get("status") == "ok" and m.get("average_ms", 0) > 0 else None


def _span(i: AneIsland) -> str:
    return f"{i.start_index}" if i.start_index == i.end_index else f"{i.start_index}-{i.end_index}"


def _label(i: AneIsland) -> str:
    kind = f"interruption #{i.id}" if i.is_interruption else {"lead": "leading run", "trail": "trailing run",
                                                               "all": "whole-function run"}.get(i.edge_kind, "edge run")
    t = short_type(i.first_type) + ("" if i.first_type == i.last_type else f"…{short_type(i.last_type)}")
    return f"{kind} {i.function}:{_span(i)} ({t})"


def rank_islands(p: AneProfile, boundary_ms: float) -> list[dict]:
    """Every non-focus run (interruptions and edge runs) with its cost under the report's boundary and under
    ``boundary_ms``, ranked both ways (1 = fix first)."""
    tool_b = p.compute.get("interrupt_boundary_ms", 300.0)
    rows = []
    for isl in p.interruptions + p.edge_runs:
        rows.append({
            "label": _label(isl), "id": isl.id, "function": isl.function, "span": _span(isl), "path": isl.path,
            "device": isl.device, "is_interruption": isl.is_interruption, "edge_kind": isl.edge_kind,
            "ops": isl.op_count, "first_type": short_type(isl.first_type), "last_type": short_type(isl.last_type),
            "reason": isl.reason, "soft_ops": isl.soft_ops, "hard_ops": isl.hard_ops,
            "missing_runtime_ops": isl.missing_runtime_ops, "switches": isl.switches, "runtime_ms": isl.runtime_ms,
            "plan_cost": isl.total_cost, "tool_cost_ms": isl.switches * tool_b + isl.runtime_ms,
            "cost_ms": isl.switches * boundary_ms + isl.runtime_ms, "start_index": isl.start_index,
        })
    # the tool's order: interruptions first, then by penalty, runtime, position
    for rank, r in enumerate(sorted(rows, key=lambda r: (not r["is_interruption"], -r["tool_cost_ms"], -r["runtime_ms"],
                                                         r["function"], r["start_index"])), 1):
        r["tool_rank"] = rank
    for rank, r in enumerate(sorted(rows, key=lambda r: (-r["cost_ms"], -r["runtime_ms"], r["function"],
                                                         r["start_index"])), 1):
        r["rank"] = rank
    return sorted(rows, key=lambda r: r["rank"])


def _interruptions_finding(p: AneProfile, boundary_ms: float) -> dict:
    gi = p.interruptions_summary
    n = gi.get("graph_interruptions", len(p.interruptions))
    ranked = rank_islands(p, boundary_ms)
    tool_b = p.compute.get("interrupt_boundary_ms", 300.0)
    avg = _avg_ms(p)
    focus = gi.get("focus_device", "ANE")
    if not ranked and not n:
        return finding(f"No {focus} graph interruptions", "graph_interruptions", "info",
                  [f"every non-const op runs on the {focus} or no island was reported"], interruptions=0, islands=[])
    real_tax = sum(r["cost_ms"] for r in ranked if r["is_interruption"])
    tool_tax = gi.get("estimated_total_tax_ms", sum(r["tool_cost_ms"] for r in ranked if r["is_interruption"]))
    if not ranked:  # counted but not listed (a cut-off or hand-trimmed report): nothing to rank
        return finding(f"{n} {focus} graph interruption(s) counted but none listed", "graph_interruptions", "high",
                       [f"graph_interruptions says {n} but its interruptions and edge_runs arrays are empty, so the "
                        f"islands cannot be located or ranked; the tool's estimate is {fmt_ms(tool_tax)} ms at "
                        f"{fmt_ms(tool_b, 6)} ms per boundary"], interruptions=n, boundary_ms=boundary_ms,
                       tool_boundary_ms=tool_b, tool_tax_ms=tool_tax, realistic_tax_ms=None, ranking_changed=False, islands=[])
    detail = []
    order_tool = [r["label"] for r in sorted(ranked, key=lambda r: r["tool_rank"])]
    order_real = [r["label"] for r in ranked]
    changed = order_tool != order_real
    top = ranked[0]
    if n:
        detail.append(f"{n} interruption(s): the tool's estimate is {fmt_ms(tool_tax)} ms per prediction at "
                      f"{fmt_ms(tool_b, 6)} ms per boundary"
                      + (f"; at {fmt_ms(boundary_ms, 6)} ms per boundary it is {fmt_ms(real_tax, 3)} ms"
                         if boundary_ms != tool_b else "")
                      + (f" ({100 * real_tax / avg:.0f} % of the measured {fmt_ms(avg, 3)} ms)" if avg else "")
                      + (f" — the tool's figure exceeds the whole measured prediction ({fmt_ms(avg, 3)} ms)"
                         if avg and tool_tax > avg else ""))
    else:
        detail.append(f"no interruption inside a function; {len(ranked)} run(s) at a function's start or end")
    if changed:
        first_tool = sorted(ranked, key=lambda r: r["tool_rank"])[0]
        detail.append(f"the ranking changes with a {fmt_ms(boundary_ms, 6)} ms boundary: {top['label']} "
                      f"({fmt_ms(top['runtime_ms'], 3)} ms of island time) ranks first; at {fmt_ms(tool_b, 6)} ms per boundary "
                      f"{first_tool['label']} ranked first because the switch charge outweighs any island's runtime")
    elif tool_b != boundary_ms:
        detail.append(f"the ranking is the same at {fmt_ms(tool_b, 6)} ms and at {fmt_ms(boundary_ms, 6)} ms per boundary")
    else:
        detail.append(f"ranked at the tool's own {fmt_ms(tool_b, 6)} ms per boundary (give --boundary-ms to rank at another)")
    for r in ranked[:10]:
        miss = f", {r['missing_runtime_ops']} op(s) without cost-model timing" if r["missing_runtime_ops"] else ""
        detail.append(f"#{r['rank']} {r['label']} {r['path']}: {r['ops']} op(s), {fmt_ms(r['runtime_ms'], 3)} ms + "
                      f"{r['switches']}×{fmt_ms(boundary_ms, 6)} ms switches; {r['soft_ops']} soft / {r['hard_ops']} hard"
                      f"{miss}; {r['reason'] or 'no reason logged'}")
    sev = "high" if n else "medium"
    title = (f"{n} {focus} graph interruption(s); fix first: {top['label']}" if n
             else f"No interruptions inside functions; {len(ranked)} edge run(s), largest: {top['label']}")
    return finding(title, "graph_interruptions", sev, detail, interruptions=n, boundary_ms=boundary_ms,
              tool_boundary_ms=tool_b, tool_tax_ms=tool_tax, realistic_tax_ms=real_tax, ranking_changed=changed,
              islands=ranked)


def _fallbacks_finding(p: AneProfile) -> dict | None:
    if not p.fallback_ops:
        return None
    groups: dict[str, dict[str, list]] = {}
    for o in p.fallback_ops:
        g = groups.setdefault(o["reason"] or "(no reason)", {})
        acc = g.setdefault(o["short_type"], [0, 0.0, set()])
        acc[0] += 1
        acc[1] += o["cost"]
        acc[2].add(o["device"])
    rows = []
    for reason, types in groups.items():
        for t, (n, cost, devs) in types.items():
            rows.append({"reason": reason, "type": t, "ops": n, "plan_cost": cost, "devices": sorted(devs),
                         "category": DEFAULT.classify(t).category})
    rows.sort(key=lambda r: (-r["plan_cost"], -r["ops"], r["reason"], r["type"]))
    by_reason = sorted(((reason, sum(r["ops"] for r in rows if r["reason"] == reason),
                         sum(r["plan_cost"] for r in rows if r["reason"] == reason)) for reason in groups),
                       key=lambda x: -x[2])
    detail = [f"{reason}: {n} op(s), {100 * c:.2f} % of the plan's cost — "
              + ", ".join(f"{r['type']} ×{r['ops']}" for r in rows if r["reason"] == reason) for reason, n, c in by_reason]
    total_cost = sum(o["cost"] for o in p.fallback_ops)
    # every op the report shows off the ANE — in the tool's fallback list (unsupported there), placed elsewhere in
    # ordered_placements (supported but not preferred), or inside an island — counted once: the islands and this
    # count must agree
    off = {(o["function"], o["index"]) for o in p.fallback_ops}
    off |= {(o.function, o.index) for o in p.placements if o.device not in ("ANE", "") and o.type != "const"}
    for i in p.interruptions + p.edge_runs:
        off |= {(i.function, k) for k in range(i.start_index, i.end_index + 1)}
    listed = len(p.fallback_ops)
    if len(off) > listed:
        detail.insert(0, f"{len(off)} op(s) run off the ANE (the islands and ordered_placements): {listed} in the "
                         f"tool's fallback list (unsupported there, with a reason), {len(off) - listed} not in it (the "
                         "ANE supports them but the compiler placed them elsewhere, or the report does not list why)")
    return finding(f"{len(off)} op(s) not on the ANE" + (f" ({listed} in the tool's fallback list)"
                                                          if len(off) > listed else "")
                   + f"; the listed ones hold {100 * total_cost:.2f} % of the plan's cost, {len(by_reason)} "
                     "reason(s)", "fallback_ops", "medium" if total_cost > 0.01 else "info", detail,
                   groups=rows, ops=len(off), listed_fallback_ops=listed, plan_cost=total_cost)


def _hotspots_finding(p: AneProfile) -> dict | None:
    if not p.op_types:
        return None
    rows = []
    for t in p.op_types:
        rows.append({"type": t["short_type"], "category": DEFAULT.classify(t["short_type"]).category,
                     "share_pct": t["share_pct"], "total_ms": t["total_ms"], "count": t["count"], "gbps": t["gbps"],
                     "bound": {"Mem": "memory", "Comp": "compute"}.get(t["bound"], "unknown"),
                     "weight_mb": t["weight_mb"]})
    rows.sort(key=lambda r: -r["share_pct"])
    hot = [r for r in rows if r["share_pct"] >= HOTSPOT_SHARE_PCT][:8] or rows[:3]
    mem = sum(r["share_pct"] for r in rows if r["bound"] == "memory")
    detail = [f"{r['type']} ({r['category']}): {r['share_pct']:.1f} % of the summed runtime, {fmt_ms(r['total_ms'], 3)} ms over "
              f"{r['count']} op(s), {r['bound']}-bound, {r['gbps']:.3g} GB/s" for r in hot]
    detail.append(f"memory-bound types take {mem:.0f} % of the summed runtime")
    return finding(f"Hotspot: {hot[0]['type']} {hot[0]['share_pct']:.0f} % of runtime ({hot[0]['bound']}-bound)",
              "op_type_breakdown", "info", detail, hotspots=hot, memory_bound_share_pct=mem)


def _top_ops_finding(p: AneProfile) -> dict | None:
    if not p.top_operations:
        return None
    grand = p.op_type_totals.get("grand_runtime_ms") or p.summary.get("grand_runtime_ms") or 0
    rows = [{"name": o["name"], "type": o["short_type"], "runtime_ms": o["runtime_ms"], "gbps": o["gbps"],
             "bound": o["bound"], "share_pct": 100 * o["runtime_ms"] / grand if grand else None}
            for o in p.top_operations[:5]]
    detail = [f"{r['name']} ({r['type']}): {fmt_ms(r['runtime_ms'], 3)} ms"
              + (f", {r['share_pct']:.1f} %" if r["share_pct"] else "") + f", {r['gbps']:.3g} GB/s, {r['bound']}" for r in rows]
    return finding(f"Most expensive op: {rows[0]['name']} ({rows[0]['type']})", "top_operations", "info", detail, ops=rows)


def _type_counts(p: AneProfile) -> dict[str, dict]:
    """short type → {ops, off_ane, sources}: every piece of evidence the report has — per-op placements, the
    ANE/CPU op-type maps and the op_type_breakdown counts — each type taking the largest count any of them gives
    (a breakdown may list ops the placement list cut off, and the reverse)."""
    sources: dict[str, dict[str, dict]] = {}

    def add(src, t, ops, off):
        e = sources.setdefault(src, {}).setdefault(t, {"ops": 0, "off_ane": 0})
        e["ops"] += ops
        e["off_ane"] += off

    for pl in p.placements:
        add("ordered_placements", pl.short_type, 1, int(pl.device not in ("ANE", "?")))
    for m, off in ((p.ane_op_types, 0), (p.cpu_op_types, 1)):
        for t, n in m.items():
            add("ane_op_types/cpu_op_types", short_type(t), n, n * off)
    for row in p.op_types:
        add("op_type_breakdown", row["short_type"], row["count"], 0)
    out: dict[str, dict] = {}
    for src, types in sources.items():
        for t, e in types.items():
            cur = out.setdefault(t, {"ops": 0, "off_ane": 0, "sources": []})
            cur["ops"] = max(cur["ops"], e["ops"])
            cur["off_ane"] = max(cur["off_ane"], e["off_ane"])
            cur["sources"].append(src)
    return out


def signals(p: AneProfile) -> list[dict]:
    """Optimisation signals, each with its evidence; silent when the evidence is not there."""
    out = []
    texts = [(f"unsupported_reasons_by_type.{t}", r) for t, rs in p.unsupported_reasons.items() for r in rs]
    texts += [(f"fallback_ops ({o['name'] or o['short_type']})", o["reason"]) for o in p.fallback_ops]
    texts += [(f"interruption #{i.id}", i.reason) for i in p.interruptions]
    int32 = [(w, r) for w, r in texts if "int32" in r.lower()]
    if int32:
        types = sorted({t for t, rs in p.unsupported_reasons.items() if any("int32" in r.lower() for r in rs)})
        out.append(finding("int32 tensors the ANE does not support", "unsupported_reasons_by_type", "high",
                      ["isolate int32 control and indexing (argmax, gather/scatter indices, positions): cast to fp16 "
                       "or move that logic out of the ANE graph"] + [f"{w}: {r}" for w, r in int32[:6]],
                      id_="signal_int32", types=_short_all(types), mentions=len(int32)))
    counts = _type_counts(p)
    kv = {t: counts[t] for t in KV_TYPES if t in counts}
    n_kv = sum(e["ops"] for e in kv.values())
    if n_kv >= KV_OPS_MIN:
        share = sum(t["share_pct"] for t in p.op_types if t["short_type"] in KV_TYPES)
        off = sum(e["off_ane"] for e in kv.values())
        section = "/".join(dict.fromkeys(src for e in kv.values() for src in e["sources"]))
        out.append(finding(f"Repeated KV-cache ops: {n_kv} ({'/'.join(kv)})", section,
                      "medium", ["revisit the KV-cache layout (one stateful cache updated in place, fewer slices per "
                                 "layer)"] + [f"{t}: {e['ops']} op(s), {e['off_ane']} off the ANE (from "
                                              f"{', '.join(e['sources'])})" for t, e in kv.items()]
                      + ([f"{share:.1f} % of the summed runtime"] if share else []),
                      id_="signal_kv_cache", ops=n_kv, off_ane=off, runtime_share_pct=share, by_type=kv))
    lut = [t for t in p.op_types if t["short_type"].startswith("constexpr_lut")]
    lut_share = sum(t["share_pct"] for t in lut)
    if lut and lut_share >= LUT_SHARE_PCT:
        wmb = sum(t["weight_mb"] for t in lut)
        grand_w = p.op_type_totals.get("grand_weight_mb") or 0
        out.append(finding(f"LUT expansion takes {lut_share:.0f} % of runtime", "op_type_breakdown", "medium",
                      ["constexpr_lut_to_dense decompresses palettized weights every prediction, so LUT expansion "
                       "dominates bandwidth: try coarser palettization groups, fewer bits only where it pays, or "
                       "linear (affine) quantization for the largest layers",
                       f"{wmb:.3g} MB of LUT input per prediction" + (f" ({100 * wmb / grand_w:.0f} % of weight traffic)"
                                                                      if grand_w else "")],
                      id_="signal_lut", share_pct=lut_share, weight_mb=wmb))
    n_int = p.interruptions_summary.get("graph_interruptions", len(p.interruptions))
    if n_int == 0 and len(p.fallback_ops) <= FEW_FALLBACKS and (p.summary.get("ane_ops") or p.ane_op_types or p.op_types):
        mem = sum(t["share_pct"] for t in p.op_types if t["bound"] == "Mem")
        tc = p.summary.get("total_cost") or 0
        ane_share = 100 * p.summary.get("ane_cost", 0) / tc if tc else None
        detail = ["no interruption and few fallbacks: placement is not the problem; focus on memory traffic "
                  "(weight size and precision, activation layout, fewer memory-bound ops)"]
        if ane_share is not None:
            detail.append(f"{ane_share:.1f} % of the plan's cost is on the ANE")
        if p.op_types:
            detail.append(f"memory-bound op types take {mem:.0f} % of the summed runtime")
        if p.measured.get("weight_bw_gbps"):
            detail.append(f"weights stream at {p.measured['weight_bw_gbps']:.3g} GB/s")
        out.append(finding("Mostly on the ANE: focus on memory traffic", "graph_interruptions", "info", detail,
                      id_="signal_mostly_ane", fallback_ops=len(p.fallback_ops), ane_cost_share_pct=ane_share,
                      memory_bound_share_pct=mem))
    for s in out:
        s["id"] = s["evidence"].pop("id_")
    return out


def _short_all(types):
    return [short_type(t) for t in types]


def _measured_finding(p: AneProfile) -> dict:
    m = p.measured
    status = m.get("status") or "not_run"
    if p.status.get("static_estimate"):
        return finding("Not measured: a static estimate", "measured_prediction", "info",
                       ["written by `edgeprof coreml --as-anemll`: placements from documented rules, runtimes from a "
                        "roofline — run anemll-profile on a Mac for a measured prediction"], status=status)
    sev, meaning = _MEASURED.get(status, ("warning", f"status {status!r}"))
    if status == "ok":
        sp = m.get("speedup_vs_sequential")
        detail = [f"{fmt_ms(m.get('average_ms', 0))} ms per prediction ({m.get('iter_per_sec', 0):.4g} iter/s, "
                  f"{m.get('runs', 0)} run(s); no spread is reported)"]
        if m.get("weight_bw_gbps"):
            detail.append(f"weights stream at {m['weight_bw_gbps']:.3g} GB/s; compute {m.get('gflops_per_sec', 0):.4g} GFLOP/s")
        if sp:
            detail.append(f"{sp:.2f}× the summed per-op estimate: " + (
                "ops overlap or pipeline (or the estimate is pessimistic)" if sp > 1 else
                "slower than the estimate: stalls, dispatch overhead or CPU work the estimate misses"))
        title = f"Measured: {fmt_ms(m.get('average_ms', 0))} ms per prediction"
    else:
        detail = [meaning] + ([f"error: {m['error']}"] if m.get("error") else [])
        if status == "ane_compile_fallback_detected" and m.get("steady_ms"):
            est = p.summary.get("grand_runtime_ms")
            detail.append(f"one prediction took {fmt_ms(m['steady_ms'])} ms" + (f" vs {fmt_ms(est)} ms estimated on the ANE"
                                                                         if est else ""))
        title = f"MEASUREMENT {status.upper()}: {meaning.split(':')[0]}"
    return finding(title, "measured_prediction", sev, detail, status=status, **{k: v for k, v in m.items() if k != "status"})


def _status_finding(p: AneProfile) -> dict | None:
    problems = []
    if p.status.get("no_costmodel_entries"):
        problems.append("no [CostModelFeature] entries were captured: runtimes, op types and measured numbers are "
                        "missing (clear ~/Library/Caches/anemll-profile/com.apple.e5rt* and re-run)")
    if p.status.get("log_data_masked"):
        problems.append("op names were masked as <private> (run with OS_ACTIVITY_DT_MODE=YES)")
    important = [s for s in p.missing if s in ("graph_interruptions", "ordered_placements", "measured_prediction",
                                               "op_type_breakdown", "summary")]
    if important:
        problems.append("sections missing from the report: " + ", ".join(important))
    if not problems:
        return None
    return finding("The report is incomplete", "status", "high" if p.status.get("no_costmodel_entries")
              or p.status.get("log_data_masked") else "warning", problems, missing=p.missing)


# --------------------------------------------------------------------------------------------------
# the whole reading
# --------------------------------------------------------------------------------------------------

def analyze_profile(p: AneProfile, plan: AneCostPlan | None = None, *, boundary_ms: float = DEFAULT_BOUNDARY_MS,
                    static: dict | None = None) -> dict:
    """Findings in the guide's order, each citing its JSON section, plus the headline (what to do first).
    ``static``: the static analysis of the same model (``edgeprof ane --model``), joined as the last finding."""
    findings = []
    st = _status_finding(p)
    if st:
        findings.append({**st, "id": "status"})
    gi = _interruptions_finding(p, boundary_ms)
    findings.append({**gi, "id": "graph_interruptions"})
    for fid, f in (("fallback_ops", _fallbacks_finding(p)), ("hotspots", _hotspots_finding(p)),
                   ("top_operations", _top_ops_finding(p))):
        if f:
            findings.append({**f, "id": fid})
    findings += signals(p)
    findings.append({**_measured_finding(p), "id": "measured_prediction"})
    cc = None
    if plan is not None:
        for i, f in enumerate(plan_findings(plan)):
            findings.append({**f, "id": "plan_top_ops" if i == 0 else "plan_no_device"})
        cc = cross_check(p, plan)
        sev = "medium" if cc["statements"] else "info"
        from .ane_plan import plan_unlisted_share

        unlisted = plan_unlisted_share(plan)
        agree = ("Cross-check: plan and profile agree" if unlisted <= 50 else
                 f"Cross-check: no disagreement in the ops the plan lists, but they hold only {100 - unlisted:.1f} % "
                 "of its cost — the rest cannot be checked")
        findings.append({**finding(f"Cross-check: {len(cc['statements'])} disagreement(s) between plan cost and measured "
                              "runtime/placement" if cc["statements"] else agree,
                              "cost plan × op_type_breakdown/top_operations/ordered_placements", sev,
                              cc["statements"] or ["no op type or op differs by 2× or more between plan share and "
                                                   "runtime share"], **cc), "id": "cross_check"})
    if static is not None:
        findings.append({**_static_finding(p, static), "id": "static_crosscheck"})
    n_int = gi["evidence"].get("interruptions", 0)
    if st and st["severity"] == "high":
        headline = st["title"] + ": " + st["detail"][0]
    elif p.measured.get("status") not in ("ok", None, "") and _MEASURED.get(p.measured.get("status"), ("",))[0] == "high":
        headline = next(f["title"] for f in findings if f["id"] == "measured_prediction")
    elif n_int:
        headline = gi["title"]
    else:
        hot = next((f for f in findings if f["id"] == "hotspots"), None)
        headline = ("No graph interruptions; " + (hot["title"] if hot else "no runtime breakdown in the report"))
    return {"model": p.name, "source": p.source, "version": p.version,
            "costplan": plan.source if plan else None, "boundary_ms": boundary_ms, "headline": headline,
            "findings": findings, "warnings": p.warnings + (plan.warnings if plan else []),
            "summary": _summary_row(p, findings)}


def _static_finding(p: AneProfile, static: dict) -> dict:
    from .mil_crosscheck import cross_check_static

    cc = cross_check_static(p, static)
    detail = [f"{cc['matched_ops']} placed ops matched to the model ({cc['unmatched_ops']} not found); the static "
              f"estimate was right for {cc['agree']} and wrong for {cc['disagree']}, {cc['not_known']} not known by the rules"]
    detail += [f"{w['function']}[{w['index']}] {w['type']} {w['name']}: estimated {w['predicted']} ({w['rule']}), "
               f"measured {w['measured']}" for w in cc["wrong"][:10]]
    detail += [f"{r['short_type']}: {fmt_ms(r['measured_ms'])} ms measured → "
               + (f"{r['achieved_gflops']:.3g} GFLOP/s, " if r["achieved_gflops"] is not None else "FLOPs not known, ")
               + f"{r['achieved_gbps']:.3g} GB/s from the static bytes" for r in cc["op_types"][:8]]
    sev = "medium" if cc["disagree"] else "info"
    if cc["disagree"]:
        title = f"Static estimate vs measured placement: {cc['disagree']} op(s) placed differently"
    elif not cc["matched_ops"]:  # no evidence either way: likely another model than the profile's
        sev = "medium"
        title = (f"Static estimate not compared: none of the profile's {cc['unmatched_ops']} placed ops is in the "
                 "model given (is it the model that was profiled?)")
    elif not cc["agree"]:
        title = f"Static estimate not compared: the rules know none of the {cc['matched_ops']} matched ops"
    else:
        title = f"Static estimate agrees with the measured placement ({cc['agree']} of {cc['matched_ops']} matched ops)"
    f = finding(title, "ordered_placements × model (mil_static)", sev, detail, **cc)
    f["source"] = "anemll_json+mil_static"
    return f


def analyze_plan(plan: AneCostPlan) -> dict:
    findings = [{**f, "id": "plan_top_ops" if i == 0 else "plan_no_device"} for i, f in enumerate(plan_findings(plan))]
    return {"model": plan.name, "source": plan.source, "costplan": plan.source,
            "headline": findings[0]["title"], "findings": findings, "warnings": plan.warnings,
            "summary": {"model": plan.name, "kind": "costplan", "ops": len(plan.operations)}}


def _summary_row(p: AneProfile, findings: list[dict]) -> dict:
    s = p.summary
    placed = (s.get("ane_ops", 0) + s.get("cpu_ops", 0) + s.get("gpu_ops", 0)) or None
    tc = s.get("total_cost") or 0
    hot = next((f for f in findings if f["id"] == "hotspots"), None)
    return {"model": p.name, "kind": "profile", "status": p.measured.get("status"),
            "latency_ms": _avg_ms(p), "iter_per_sec": p.measured.get("iter_per_sec") if _avg_ms(p) else None,
            "ane_ops_pct": 100 * s.get("ane_ops", 0) / placed if placed else None,
            "ane_cost_pct": 100 * s.get("ane_cost", 0) / tc if tc else None,
            "interruptions": p.interruptions_summary.get("graph_interruptions", len(p.interruptions)),
            "fallback_ops": len(p.fallback_ops),
            "top_type": hot["evidence"]["hotspots"][0]["type"] if hot else None,
            "signals": [f["id"] for f in findings if f["id"].startswith("signal_")]}
