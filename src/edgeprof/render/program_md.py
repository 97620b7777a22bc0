"""``edgeprof program`` as Markdown (and the terminal view)."""

from __future__ import annotations

from .markdown import cell, code, table, text


def program_markdown(d: dict, level: int = 3) -> str:
    h = "#" * level
    out = [f"{h} ExecuTorch program: {cell(d['file'])}", "",
           f"{d['file_size']:,} bytes · methods: {', '.join(d['methods'])} · "
           f"sizes add up: {'yes' if d['sizes_add_up'] else 'NO'}", ""]
    out.append(table(["part", "kind", "bytes", "share", "offset"],
                     [[cell(p["part"]), p["kind"], f"{p['bytes']:,}", f"{100 * p['bytes'] / d['file_size']:.1f} %",
                       "—" if p["offset"] is None else p["offset"]] for p in d["sizes"]]))
    out += ["", f"{h}# Work per inference (from the recorded shapes)", ""]
    out.append(table(["category", "instructions", "FLOPs", "multiply-adds", "weight bytes"],
                     [[w["category"], w["instructions"], f"{w['flops']:,}" if w["flops_known"] else "not known",
                       f"{w['macs']:,}", f"{w['weight_bytes']:,}"] for w in d["work"]]))
    c = d["constants"]
    out += ["", f"{h}# Constants: {c['count']} tensors, {c['bytes']:,} bytes", ""]
    if c["largest"]:
        out.append(table(["value", "dtype", "shape", "bytes", "used by"],
                         [[r["value"], r["dtype"], str(r["sizes"]), f"{r['bytes']:,}", cell(", ".join(r["owners"])[:80])]
                          for r in c["largest"]]))
    for m in d["memory_plan"]:
        out += ["", f"{h}# Memory plan of {code(m['plan'])}: {m['planned_bytes']:,} bytes planned", ""]
        out.append(table(["arena", "bytes", "tensors", "highest byte used"],
                         [[a["id"], "—" if a["bytes"] is None else f"{a['bytes']:,}", len(a["tensors"]),
                           f"{a['highest_byte_used']:,}"] for a in m["arenas"]]))
        out += [""] + [f"- {x['role']} {x['value']}: {x['dtype']} {x['sizes']}" for x in m["io"]]
    out += ["", f"{h}# Instructions", ""]
    out.append(table(["#", "kind", "name", "FLOPs", "args", "module / op types (ETRecord)"],
                     [[i["index"], i["kind"], cell(i["name"] + (f" — {i['delegate']['nodes']['mix']}"
                                                               if i.get("delegate") and i["delegate"]["nodes"] else "")),
                       "not known" if i.get("flops") is None else f"{i['flops']:,}",
                       cell(", ".join(i["args"])[:90]),
                       cell(((i.get("module_path") or "") + " " + ", ".join(sorted(set(i.get("op_types") or []))))[:90])]
                      for i in d["instructions"][:200]]))
    return "\n".join(out) + "\n"


def program_diff_markdown(d: dict, level: int = 3) -> str:
    out = [f"{'#' * level} Programs: {cell(d['before'])} → {cell(d['after'])}", ""]
    return "\n".join(out + [f"- {text(s)}" for s in d["statements"]]) + "\n"


def _g(x) -> str:
    return "—" if x is None else f"{x:.3g}"


def program_join_markdown(j: dict, level: int = 4) -> str:
    h = "#" * level
    out = [f"{h} Work vs time ({cell(j['program'])}, method {code(j['method'])}: {j['matched']} of "
           f"{j['program_instructions']} instructions timed)", ""]
    out.append(table(["category", "ms/run", "GFLOP/s", "instructions", "weight share"],
                     [[c["category"], f"{c['ms_per_run']:.4g}", _g(c["gflops"]), c["instructions"],
                       f"{c['weight_share_pct']:.1f} %"] for c in j["categories"]]))
    if j.get("unmatched", {}).get("nodes"):
        u = j["unmatched"]
        out += ["", f"{u['nodes']} profiled node(s) have no node of that name in the model (fused or renamed by "
                    f"ONNX Runtime's graph optimizer): {u['ms_per_run']:.4g} ms per run, e.g. "
                    + ", ".join(code(n) for n in u["names"][:5]) + "."]
    if j.get("category_rates"):
        out += ["", "By category, the FLOPs of the work the profile's time holds (a fused node's with the node that "
                    "holds it) against that time:", "",
                table(["category", "ms/run", "GFLOP", "GFLOP/s"],
                      [[c["category"], f"{c['ms_per_run']:.4g}", _g(c["flops"] / 1e9 if c["flops_known"] else None),
                        _g(c["gflops"])] for c in j["category_rates"]])]
    top = sorted(j["instructions"], key=lambda r: -r["ms_per_run"])[:15]
    onnx = str(j.get("evidence", "")).startswith("ort_json")  # an ONNX model's nodes: no XNNPACK graph behind them
    head = ["#", "node" if onnx else "instruction", "ms/run", "GFLOP/s", "GB/s", "FLOP/B", "weights"]
    out += ["", table(head + ([] if onnx else ["XNNPACK nodes"]),
                      [[r["index"], cell(r["name"]), f"{r['ms_per_run']:.4g}", _g(r["gflops"]), _g(r["gbps"]),
                        _g(r["intensity"]), f"{r['weight_share_pct']:.1f} %"]
                       + ([] if onnx else [cell(r.get("nodes", ""))]) for r in top])]
    return "\n".join(out) + "\n"
