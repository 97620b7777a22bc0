"""Core ML static analysis as Markdown (``edgeprof coreml --markdown``, and the terminal view)."""

from __future__ import annotations

from ..conventions import fmt_ms
from .markdown import cell, code, table, text


def _si(n, units: tuple, fmt: str, bare: str, unknown: str) -> str:
    """``n`` with the largest of ``units`` (G, M, K prefixes) it reaches; ``bare`` below them."""
    if n is None:
        return unknown
    for unit, f in zip(units, (1e9, 1e6, 1e3)):
        if abs(n) >= f:
            return format(n / f, fmt) + unit
    return bare.format(n)


def _b(n) -> str:
    return _si(n, (" GB", " MB", " KB"), ".2f", "{} B", "—")


def _f(n) -> str:
    return _si(n, ("G", "M", "K"), ".3g", "{}", "not known")


def model_section(m: dict, level: int = 3, top: int = 25) -> str:
    h = "#" * level
    t = m["totals"]
    est = m["estimate"]
    gi = est["graph_interruptions"]
    role = f" ({m['role']})" if m["role"] else ""
    out = [f"{h} Core ML model: {cell(m['model'])}{role}", "",
           f"{m['form']} · version {m['version']} · functions: "
           + ", ".join(f"{f['name']} ({f['opset']}, {f['ops']} ops)" for f in m["functions"]), "",
           f"- **{_f(t['flops'])}FLOPs** per prediction ({_f(t['macs'])} multiply-adds)"
           + (f"; FLOPs not known for: {', '.join(t['ops_flops_not_known'])}" if t["ops_flops_not_known"] else ""),
           f"- weights: {_b(t['weight_read'])} read dense per prediction, {_b(t['weight_stored_unique'])} stored "
           f"({t['blobs']} blob{'s' if t['blobs'] != 1 else ''}; weight files {_b(sum(t['weight_files'].values()))})",
           f"- activations: {_b(t['act_read'])} read, {_b(t['written'])} written", ""]
    out += [f"{h}# Hazards (evidence: mil_static)", ""]
    if m["hazards"]:
        for z in m["hazards"]:
            out.append(f"- **{cell(z['title'])}** — {z['op_count']} ops: {cell(', '.join(z['ops'][:6]))}"
                       f"{' …' if z['op_count'] > 6 else ''}  \n  _rule {code(z['rule'])}: {cell(z['rule_source'])}_")
    else:
        out.append("- none of the documented rules fires")
    c = est["chip"]
    dc = est["device_counts"]
    out += ["", f"{h}# ANE placement estimate (an estimate: mil_static rules + roofline on {c['name']})", "",
            f"- predicted: {dc.get('ANE', 0)} ops ANE, {dc.get('CPU', 0)} CPU, {dc.get('non-ANE', 0)} CPU or GPU, "
            f"{dc.get('?', 0)} not known",
            f"- estimated islands: {gi['graph_interruptions']} interruptions ({gi['interrupted_ops']} ops), "
            f"{gi['edge_runs_ignored']} edge runs; switch cost {est['boundary_ms']} ms per boundary",
            f"- roofline time of the ANE ops {fmt_ms(est['estimated_ms'])} ms at {c['ane_tops']} TOPS ({c['tops_precision']}), "
            f"{c['dram_gbps']} GB/s — _{cell(c['source'])}_"
            + (f"; {est['ops_not_timed']} op(s) placed elsewhere are not timed (their device's figures are not known)"
               if est.get("ops_not_timed") else ""), ""]
    isl = gi["interruptions"] + gi["edge_runs"]
    if isl:
        out.append(table(["#", "function", "ops", "span", "path", "reason"],
                         [[i["id"] or "edge", i["function"], i["op_count"], f"{i['start_index']}–{i['end_index']}", i["path"],
                           cell(i["reason"][:90])] for i in isl[:10]]))
        out.append("")
    out += [f"{h}# By op type", ""]
    out.append(table(["type", "category", "ops", "FLOPs", "share", "weights dense", "weights stored", "act read",
                      "written", "FLOP/B"],
                     [[r["short_type"], r["category"], r["count"], _f(r["flops"]) if r["flops_known"] else "not known",
                       f"{r['share_flops_pct']:.1f} %", _b(r["weight_read"]), _b(r["weight_stored"]), _b(r["act_read"]),
                       _b(r["written"]), "—" if r["intensity"] is None else f"{r['intensity']:.2f}"]
                      for r in m["op_types"]]))
    ops = sorted((o for o in m["ops"] if o["predicted_device"] != "const"), key=lambda o: -(o["estimated_ms"] or 0))
    out += ["", f"{h}# Top ops by estimated time", ""]
    out.append(table(["fn[idx]", "type", "name", "out", "FLOPs", "weights", "device", "est ms", "bound", "note"],
                     [[f"{o['function']}[{o['index']}]", o["type"], cell(o["name"][:40]), o["outputs"], _f(o["flops"]),
                       _b(o["weight_read"]), o["predicted_device"],
                       "—" if o["estimated_ms"] is None else f"{o['estimated_ms']:.3g}", o["bound"], cell(o["note"][:50])]
                      for o in ops[:top]]))
    return "\n".join(out) + "\n"


def coreml_markdown(doc: dict, level: int = 2) -> str:
    parts = [model_section(m, level + 1) for m in doc["models"]]
    for e in doc.get("errors", []):
        parts.append(f"> error: {cell(e['error'])}\n")
    return "\n".join(parts)


def coreml_diff_markdown(d: dict, level: int = 3) -> str:
    h = "#" * level
    out = [f"{h} Core ML model diff (static estimate): {cell(d['before'])} → {cell(d['after'])}", ""]
    out += [f"- {text(s)}" for s in d["statements"]] + [""]
    if d["op_types"]:
        out.append(table(["type", "ops before", "ops after", "FLOPs before", "FLOPs after", "stored before", "stored after"],
                         [[r["short_type"], r["count_before"], r["count_after"], _f(r["flops_before"]),
                           _f(r["flops_after"]), _b(r["weight_stored_before"]), _b(r["weight_stored_after"])]
                          for r in d["op_types"]]))
    return "\n".join(out) + "\n"
