"""Markdown renderings (GitHub-flavoured tables)."""

from __future__ import annotations

import re

_CODE = re.compile(r"(`+)(.*?)\1", re.DOTALL)


def text(v) -> str:
    """Text from data, safe in Markdown: ``<``, ``>`` and ``&`` escaped outside code spans (an operator named
    ``<script>`` stays text in every Markdown viewer), line breaks flattened."""
    s = str(v).replace("\r", " ").replace("\n", " ")
    out, pos = [], 0
    for m in _CODE.finditer(s):
        out.append(_escape_html(s[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_escape_html(s[pos:]))
    return "".join(out)


def _escape_html(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def cell(v) -> str:
    """One table cell: pipes escaped, line breaks flattened, HTML escaped outside code spans, None empty."""
    if v is None:
        return ""
    return text(str(v).replace("\\", "\\\\").replace("|", "\\|"))


def table(headers: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(cell(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def _families(d: dict) -> str:
    return ", ".join(f"{f} ×{n}" for f, n in d.items()) or "—"


def kernel_view(view: dict, title: str | None = None) -> str:
    """The kernel view as Markdown: title, verdict, kernel table, summaries by ISA family and by kind."""
    b, c = view["baseline_name"], view["candidate_name"]
    flt = view.get("filter_op")
    if title is None:
        what = "GEMM/IGEMM kernel view" if flt and flt.lower() == "gemm" else "Kernel view"
        title = f"{b} vs {c}: {what} (XNNPACK delegated)" + (f", kernels matching '{flt}'" if flt and flt.lower() != "gemm" else "")
    out = [f"#### **{cell(title)}**", "", f"**Verdict:** {text(view['verdict'])}", ""]
    if view["kernels"]:
        rows = [[f"`{k['kernel_name']}`", "✅ registered" if k["baseline"] else "❌ absent",
                 "✅ registered" if k["candidate"] else "❌ absent", k["isa_family"], k["isa"] or "?", k["category"],
                 (k["kleidiai_kernel"] or "yes") if k["kleidiai"] else ""]
                for k in view["kernels"]]
        out.append(table(["Kernel", b, c, "ISA family", "ISA", "Kind", "KleidiAI"], rows))
        out += ["##### By ISA family (kernels registered)", ""]
        out.append(table(["ISA family", b, c], [[f["family"], f["baseline"], f["candidate"]] for f in view["by_family"]]))
        out += ["##### By kind", ""]
        out.append(table(["Kind", b, c], [[k["kind"], _families(k["baseline"]), _families(k["candidate"])]
                                          for k in view["by_kind"]]))
    else:
        out += ["No kernels found matching the filter criteria.", ""]
    out += [f"_{text(view['note'])}_", ""]
    return "\n".join(out)


def _island_rows(islands: list[dict], limit: int = 10) -> list[list]:
    return [[r["rank"], r["tool_rank"], r["label"], r["path"], r["ops"], f"{r['runtime_ms']:.3g}",
             f"{r['cost_ms']:.3g}", f"{r['tool_cost_ms']:.4g}", f"{r['soft_ops']}/{r['hard_ops']}", r["reason"]]
            for r in islands[:limit]]


ISLAND_HEADERS = ["#", "tool #", "island", "path", "ops", "runtime ms", "cost ms", "tool cost ms", "soft/hard", "reason"]


def ane_findings(result: dict, level: int = 3) -> str:
    """One report's findings as a Markdown section (headline, then each finding citing its JSON section)."""
    h = "#" * level
    out = [f"{h} Apple Neural Engine: {cell(result['model'])}", "", f"**{cell(result['headline'])}**", ""]
    for f in result["findings"]:
        mark = {"high": "🔴", "medium": "🟠", "warning": "🟡"}.get(f["severity"], "ℹ️")
        out.append(f"{h}# {mark} {cell(f['title'])}  \n_from `{f['section']}`_")
        out.append("")
        if f["id"] == "graph_interruptions" and f["evidence"].get("islands"):
            out += [f"- {cell(d)}" for d in f["detail"][:2]] + [""]
            out.append(table(ISLAND_HEADERS, _island_rows(f["evidence"]["islands"])))
        else:
            out += [f"- {cell(d)}" for d in f["detail"]] + [""]
    for w in result.get("warnings", []):
        out.append(f"> warning: {cell(w)}")
    return "\n".join(out) + "\n"


def _v(x, fmt="{:.3g}") -> str:
    return "—" if x is None else fmt.format(x)


def ane_summary(folder: dict) -> str:
    rows = [[s.get("role") or "—", s["model"], s["kind"], s.get("status") or "—", _v(s.get("latency_ms"), "{:.4g}"),
             _v(s.get("ane_cost_pct"), "{:.1f}"), s.get("interruptions", "—"), s.get("fallback_ops", "—"),
             s.get("top_type") or "—", s["headline"]] for s in folder["summary"]]
    return table(["role", "model", "report", "measured", "latency ms", "ANE cost %", "interruptions", "fallback ops",
                  "top op type", "headline"], rows)


def ane_folder(folder: dict) -> str:
    """A model folder: the summary table, then each submodel's findings."""
    return "### Apple Neural Engine reports\n\n" + ane_summary(folder) + "\n" + "\n".join(
        ane_findings(r, level=4) for r in folder["reports"])


def ane_diff(d: dict) -> str:
    out = [f"### ANE diff: {cell(d['before'])} → {cell(d['after'])}", ""] + [f"- {cell(s)}" for s in d["statements"]] + [""]
    if d["reports"] == "profile":
        if d["interruptions"]["fixed"] or d["interruptions"]["introduced"]:
            rows = [["fixed", x["function"], x["first_type"], x["last_type"], x["reason"], x["count"]]
                    for x in d["interruptions"]["fixed"]]
            rows += [["introduced", x["function"], x["first_type"], x["last_type"], x["reason"], x["count"]]
                     for x in d["interruptions"]["introduced"]]
            out.append(table(["island", "function", "first op", "last op", "reason", "count"], rows))
        out.append(table(["op type", "category", "runtime share before %", "after %", "Δ pp", "ops before", "after"],
                         [[r["type"], r["category"], f"{r['runtime_share_before_pct']:.1f}",
                           f"{r['runtime_share_after_pct']:.1f}", f"{r['delta_pp']:+.1f}", r["count_before"],
                           r["count_after"]] for r in d["op_types"][:15]]))
    else:
        out.append(table(["op type", "category", "plan share before %", "after %", "Δ pp", "ops before", "after"],
                         [[r["type"], r["category"], f"{r['plan_share_before_pct']:.1f}", f"{r['plan_share_after_pct']:.1f}",
                           f"{r['delta_pp']:+.1f}", r["count_before"], r["count_after"]] for r in d["op_types"][:15]]))
    return "\n".join(out) + "\n"
