"""``edgeprof placement`` as Markdown (and the terminal view): one placement, or two builds diffed."""

from __future__ import annotations

from ..conventions import evidence_name
from .markdown import cell, table, text


def _ms(v) -> str:
    return "—" if v is None else f"{v:.4f}"


def _pct(v) -> str:
    return "—" if v is None else f"{v:.1f} %"


def _num(v) -> str:
    return "—" if v is None else f"{v:,.0f}"


def placement_markdown(d: dict, level: int = 3) -> str:
    h = "#" * level
    out = [f"{h} Placement: {cell(d['input'])}", "",
           f"{text(d['runtime_title'])} · evidence: {evidence_name(d['evidence'])} · fingerprint `{d['fingerprint']}`"
           + (f" · {d['runs']} run(s)" if d["runs"] else ""), "", text(d["statement"]), ""]
    out.append(table(["placement", "accelerated", "operators", "partitions", "ms per run", "time share",
                      "FLOPs", "FLOPs share", "plan weight share"],
                     [[cell(r["placement"]), "yes" if r["accelerated"] else "no", r["ops"], r["partitions"],
                       _ms(r["time_ms"]), _pct(r["time_share_pct"]), _num(r["flops"]), _pct(r["flops_share_pct"]),
                       _pct(r["plan_weight_share_pct"])] for r in d["placements"]]))
    out += ["", f"{h}# Partitions (maximal runs of one placement, in execution order)", ""]
    out.append(table(["#", "placement", "operators", "first–last", "ms per run", "FLOPs"],
                     [[p["index"], cell(p["placement"]), p["ops"], f"{p['first']}–{p['last']}", _ms(p["time_ms"]),
                       _num(p["flops"])] for p in d["partitions"]]))
    out += ["", f"{h}# Operators", ""]
    out.append(table(["#", "key", "name", "placement", "basis", "ms per run", "FLOPs"],
                     [[o["index"], cell(o["key"]), cell(o["name"]), cell(o["placement"]), o["basis"],
                       _ms(o["time_ms"]), _num(o["flops"])] for o in d["operators"][:500]]))
    if len(d["operators"]) > 500:
        out += ["", f"({len(d['operators']) - 500} more operators in the JSON)"]
    out += ["", f"A fallback here is {text(d['fallback_means'])}."]
    out += [f"- {text(w)}" for w in d["warnings"]]
    return "\n".join(out) + "\n"


def placement_diff_markdown(d: dict, level: int = 3) -> str:
    h = "#" * level
    out = [f"{h} Placement: {cell(d['baseline'])} → {cell(d['candidate'])}", "",
           f"Verdict: **{d['verdict']}** · fingerprints `{d['baseline_fingerprint']}` → `{d['candidate_fingerprint']}`",
           ""]
    out += [f"- {text(s)}" for s in d["statements"]]
    if d["moved"]:
        out += ["", f"{h}# Operators that moved", ""]
        out.append(table(["key", "baseline name", "from", "to", "kind", "baseline ms", "candidate ms", "time cost ms"],
                         [[cell(m["key"]), cell(m["name"]), cell(m["from"]), cell(m["to"]), m["kind"],
                           _ms(m["baseline_ms"]), _ms(m["candidate_ms"]),
                           "—" if m["cost_ms"] is None else f"{m['cost_ms']:+.4f}"] for m in d["moved"]]))
    p = d["partitions"]
    out += ["", f"{h}# Partitions", "",
            f"{p['baseline']} → {p['candidate']} partitions ({p['baseline_accelerated']} → {p['candidate_accelerated']} "
            f"accelerated)."]
    for s in p["split"]:
        out.append(f"- baseline partition {s['baseline_partition']} ({cell(s['placement'])}) split into candidate "
                   f"partitions {', '.join(map(str, s['into']))}")
    for m in p["merged"]:
        out.append(f"- candidate partition {m['candidate_partition']} ({cell(m['placement'])}) merges baseline "
                   f"partitions {', '.join(map(str, m['from']))}")
    for side, rows in (("baseline", d["only_baseline"]), ("candidate", d["only_candidate"])):
        if rows:
            out += ["", f"{h}# Only in the {side}", ""]
            out.append(table(["key", "name", "placement", "ms per run"],
                             [[cell(r["key"]), cell(r["name"]), cell(r["placement"]), _ms(r["time_ms"])]
                              for r in rows[:200]]))
    out += ["", f"A fallback here is {text(d['fallback_means'])}."]
    return "\n".join(out) + "\n"
