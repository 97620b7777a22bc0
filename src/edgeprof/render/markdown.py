"""Markdown renderings (GitHub-flavoured tables), safe for text that came from data.

Names in profiles, logs and manifests are whatever their authors wrote. Every value goes through :func:`text`
(or :func:`cell`, :func:`code`): code spans are found by CommonMark's own rule (a run of n backticks closes
at the next run of exactly n), so a viewer and edgeprof always agree on what is code; control characters are
shown as :func:`edgeprof.conventions.shown` shows them everywhere (``\\x1b``, never raw: ``cat report.md`` sets no
window title); outside code spans ``<``, ``>`` and ``&`` become entities (no HTML, no autolink), backslashes are
doubled (no escape of ours is undone), and a ``]`` that could close a link, image or reference definition is
escaped. Inside a code span nothing is interpreted by any viewer.
"""

from __future__ import annotations

import re

from ..conventions import display, shown

_RUN = re.compile(r"`+")


def code_spans(s: str) -> list[tuple[bool, str]]:
    """``s`` cut into (is_code, piece) as CommonMark reads it; code pieces keep their backtick fences."""
    out: list[tuple[bool, str]] = []
    pos = 0  # start of the text not yet emitted
    i = 0
    while True:
        m = _RUN.search(s, i)
        if m is None:
            break
        n = len(m.group(0))
        j = m.end()
        close = None
        while True:
            c = _RUN.search(s, j)
            if c is None:
                break
            if len(c.group(0)) == n:
                close = c
                break
            j = c.end()
        if close is None:  # no closing run: these backticks are literal text; a later run may still open
            i = m.end()
            continue
        if m.start() > pos:
            out.append((False, s[pos:m.start()]))
        out.append((True, s[m.start():close.end()]))
        pos = i = close.end()
    if pos < len(s):
        out.append((False, s[pos:]))
    return out


def code_content(piece: str) -> str:
    """The text a code span shows: fences removed, one space stripped from each side when both are spaces."""
    n = len(piece) - len(piece.lstrip("`"))
    inner = piece[n:len(piece) - n]
    if len(inner) >= 2 and inner[0] == inner[-1] == " " and inner.strip(" "):
        inner = inner[1:-1]
    return inner


_LINK_CLOSE = re.compile(r"\](?=[(\[:])")


_OPENS = re.compile(r"<(?!\s|$)")  # a "<" that could open an HTML tag or an autolink ("p < 0.001" cannot)


def _escape_text(s: str) -> str:
    # ">" opens nothing inside a line (a quote only at its start, escaped by text(); a tag's or an autolink's end
    # only after a "<", escaped here)
    s = _OPENS.sub("&lt;", s.replace("\\", "\\\\").replace("&", "&amp;"))
    return _LINK_CLOSE.sub(r"\\]", s)


_BLOCK_START = re.compile(r"^(\s*)([#>+=-]|\d{1,9}(?=[.)]))")


def text(v) -> str:
    """Text from data, safe in Markdown: control characters and line breaks shown (``\\n``), code spans as CommonMark
    finds them kept, everything else escaped (see the module docstring); a leading ``#``, ``>``, ``-``, ``+``, ``=``
    or ``1.`` is escaped too, so a value never turns its line into a heading, quote or list."""
    return _BLOCK_START.sub(lambda m: m.group(1) + ("\\" + m.group(2) if not m.group(2)[0].isdigit()
                                                    else m.group(2) + "\\"), _inline(v), count=1)


def _inline(v, pipes: bool = False) -> str:
    """``v`` on one line: its code spans (as CommonMark finds them) kept, with what is unsafe in them shown (a code
    span from :func:`code` went through :func:`~edgeprof.conventions.shown` already), the rest shown and escaped;
    ``pipes``: ``|`` escaped for a table cell."""
    out = []
    for is_code, piece in code_spans(display(v)):
        if is_code:
            piece = shown(piece, rendered=True)
            out.append(piece.replace("|", "\\|") if pipes else piece)
        else:
            piece = shown(piece)
            out.append(_escape_text(piece.replace("|", "\\|") if pipes else piece))
    return "".join(out)


def code(v) -> str:
    """``v`` as one code span, whatever backticks it holds (fenced by a longer run, padded where needed), its
    control characters shown (:func:`~edgeprof.conventions.shown`)."""
    s = shown(v)
    longest = max((len(r) for r in _RUN.findall(s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or (s.startswith(" ") and s.endswith(" ") and s.strip()) else ""
    return f"{fence}{pad}{s}{pad}{fence}" if s else "` `"


class Cell(str):
    """A value :func:`cell` made safe already (a renderer may escape a name itself before handing it to
    :func:`table`): never escaped twice."""


def cell(v) -> str:
    """One table cell (or a name inside our own line): pipes escaped, otherwise as :func:`text` without the
    line-start escapes a cell does not need; None is empty; a :class:`Cell` is returned as it is."""
    if v is None:
        return ""
    if isinstance(v, Cell):
        return v
    return Cell(_inline(v, pipes=True))


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
        title = (f"{b} vs {c}: {what} (XNNPACK delegated)"
                 + (f", kernels matching '{flt}'" if flt and flt.lower() != "gemm" else ""))
    out = [f"#### **{cell(title)}**", "", f"**Verdict:** {text(view['verdict'])}", ""]
    if view["kernels"]:
        rows = [[code(k["kernel_name"]), "✅ registered" if k["baseline"] else "❌ absent",
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
        out.append(f"{h}# {mark} {cell(f['title'])}  \n_from {code(f['section'])}_")
        out.append("")
        if f["id"] == "graph_interruptions" and f["evidence"].get("islands"):
            out += [f"- {text(d)}" for d in f["detail"][:2]] + [""]
            out.append(table(ISLAND_HEADERS, _island_rows(f["evidence"]["islands"])))
        else:
            out += [f"- {text(d)}" for d in f["detail"]] + [""]
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
    out = [f"### ANE diff: {cell(d['before'])} → {cell(d['after'])}", ""] + [f"- {text(s)}" for s in d["statements"]] + [""]
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
