"""``edgeprof memory`` as Markdown (and the terminal view)."""

from __future__ import annotations

from ..conventions import fmt_bytes as _b
from .markdown import cell, table, text


def memory_markdown(d: dict, level: int = 3) -> str:
    h = "#" * level
    out = [f"{h} Memory", ""]
    for c in d["configurations"]:
        out += [f"{h}# {cell(c['name'])} ({c['launches']} launch(es), {cell(c['runtime'] or '?')})", "",
                text(c["statement"]), ""]
        out.append(table(["phase", "peak RSS", "RSS at its end", "PSS at its end", "launches"],
                         [[p["phase"], _b(p["peak_rss_bytes"]), _b(p["rss_bytes"]), _b(p["pss_bytes"]), p["launches"]]
                          for p in c["phases"]]))
        if c["gap"]:
            out += ["", table(["part", "bytes", "evidence"], [[g["part"], _b(g["bytes"]), text(g["evidence"])]
                                                               for g in c["gap"]["parts"]])]
        opts = ", ".join(f"{k}={v}" for k, v in sorted(c["options"].items()))
        out += ["", f"Peaks per {c['peak_scope']}; memory options: {text(opts) or 'none recorded'}; reading them cost "
                    f"{c['cost_ms']:.1f} ms per launch, outside the timed runs.", ""]
    for p in d["programs"]:
        out += [f"{h}# Program {cell(p['program'])}", "",
                f"weights {_b(p['weight_bytes'])}; planned activations {_b(p['planned_activation_bytes'])}", ""]
        for m in p["methods"]:
            out.append(table(["method", "memory id", "bytes", "tensors"],
                             [[cell(m["method"]), a["memory_id"], _b(a["bytes"]), a["tensors"]] for a in m["arenas"]]))
    for o in d["ort_profiles"]:
        out += ["", f"{h}# ONNX Runtime profile {cell(o['profile'])}", ""]
        out.append(table(["provider", "nodes", "activations read", "outputs", "parameters", "prepacked nodes"],
                         [[cell(b["provider"]), b["nodes"], _b(b["activation_size"]), _b(b["output_size"]),
                           _b(b["parameter_size"]), b["prepacked_nodes"]] for b in o["by_provider"]]))
        out += ["", table(["node", "op", "activations read", "output", "parameters"],
                          [[cell(n["name"]), cell(n["op"]), _b(n["activation_size"]), _b(n["output_size"]),
                            "prepacked" if n["parameters"] == "prepacked" else _b(n["parameter_size"])]
                           for n in o["largest"]])]
    for e in d["etdumps"]:
        out += ["", f"{h}# ETDump {cell(e['etdump'])}: {e['events']} allocation event(s), {_b(e['bytes'])}", ""]
        if e["allocators"]:
            out.append(table(["allocator", "phase", "events", "bytes allocated", "largest"],
                             [[cell(a["allocator"]), a["phase"], a["events"], _b(a["bytes"]), _b(a["largest_bytes"])]
                              for a in e["allocators"]]))
        else:
            out.append(text(e["note"]))
    for m in d.get("coreml_models") or []:
        out += ["", f"{h}# Core ML model {cell(m['model'])}", "",
                f"weights stored {_b(m['weight_bytes'])} in {m['blobs']} blob(s); {_b(m['dense_weight_bytes'])} once "
                "decompressed (what its constants compute as)", ""]
    for r in d.get("litert_reports") or []:
        out += ["", f"{h}# LiteRT {cell(r['profile'])}", "", text(r["statement"]), ""]
    out += [f"- {text(w)}" for w in d["warnings"]]
    return "\n".join(out) + "\n"
