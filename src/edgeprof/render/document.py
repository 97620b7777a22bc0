"""The document engine of the reports: a list of blocks — ``("title", text)``, ``("h2", text)``, ``("h3", text)``,
``("p", text)``, ``("verdict", verdict, text)``, ``("table", header, rows)``, ``("list"|"olist", [(item,
[sub items])])``, ``("chart", kind, data)`` — written as Markdown or as one self-contained HTML page with inline
SVG charts. The report (:mod:`edgeprof.render.report`) and the history trend page (:mod:`edgeprof.render.history`)
build blocks; this module alone writes them, so both say the same things in both formats."""

from __future__ import annotations

import html
import re

from ..conventions import display, shown
from . import svg
from .markdown import code_content, code_spans, table, text

escape = svg.escape  # text from data in HTML: shown (conventions.shown), then HTML-escaped


def _chart_only(bl: list[tuple], i: int) -> bool:
    """Whether the section the heading at ``i`` opens holds nothing but charts (Markdown leaves them out)."""
    stop = ("title", "h2") if bl[i][0] == "h2" else ("title", "h2", "h3")
    rest = next((bl[i + 1:j] for j in range(i + 1, len(bl)) if bl[j][0] in stop), bl[i + 1:])
    return all(b[0] in ("chart", "h3") for b in rest)


def to_markdown(bl: list[tuple]) -> str:
    out = []
    for i, b in enumerate(bl):
        kind = b[0]
        if kind in ("h2", "h3") and _chart_only(bl, i):
            continue  # a section of charts only: the HTML page has them
        if kind == "title":
            out += [f"# {text(b[1])}", ""]
        elif kind == "h2":
            out += [f"## {text(b[1])}", ""]
        elif kind == "h3":
            out += [f"### {text(b[1])}", ""]
        elif kind in ("p", "verdict"):
            out += [text(b[-1]), ""]
        elif kind == "table":
            out.append(table(b[1], b[2]))
        elif kind in ("list", "olist"):
            for i, (item, sub) in enumerate(b[1], 1):
                out.append(f"{i}. {text(item)}" if kind == "olist" else f"- {text(item)}")
                out += [f"   - {text(s)}" for s in sub]
            out.append("")
    # whatever outside text a block held, every piece went through text() or table(); the whole document is
    # checked once more on its way out (nothing still unsafe is ever written raw)
    return shown("\n".join(out).rstrip() + "\n", lines=True, rendered=True)


# --------------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------------

CSS = """
:root{color-scheme:light}
body{font:15px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#111827;margin:0;background:#fff}
main{max-width:1040px;margin:0 auto;padding:24px 28px 64px}
h1{font-size:26px;margin:0 0 4px} h2{font-size:20px;margin:32px 0 10px;padding-bottom:4px;border-bottom:1px solid #e5e7eb}
h3{font-size:16px;margin:20px 0 8px}
table{border-collapse:collapse;margin:8px 0 14px;font-size:13px;width:100%}
th,td{border:1px solid #e5e7eb;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f9fafb;font-weight:600} td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
code{font:12.5px ui-monospace,SFMono-Regular,Menlo,monospace;background:#f3f4f6;padding:0 3px;border-radius:3px;overflow-wrap:anywhere}
.verdict{padding:10px 14px;border-radius:6px;margin:14px 0;border-left:5px solid #6b7280;background:#f9fafb}
.verdict.faster{border-color:#059669;background:#ecfdf5}.verdict.slower{border-color:#dc2626;background:#fef2f2}
.verdict.inconclusive{border-color:#d97706;background:#fffbeb}
figure{margin:10px 0 18px;break-inside:avoid} svg.chart{display:block;height:auto}
figcaption{font-size:13px;font-weight:600;color:#374151;margin:0 0 4px}
ul{padding-left:22px} li{margin:3px 0} .muted{color:#6b7280}
@media print{body{font-size:12px} main{max-width:none;padding:0} h2{break-after:avoid} table,figure{break-inside:avoid}
a{color:inherit}}
"""  # noqa: E501 - the stylesheet is written into each report as it stands


def _inline(text: str) -> str:
    """Markdown-lite → HTML: code spans as CommonMark finds them (their text shown verbatim, what is unsafe in it
    shown as :func:`~edgeprof.conventions.shown` shows it, then HTML-escaped), then **bold** and _italic_ in the
    rest (after escaping)."""
    out = []
    for is_code, piece in code_spans(display(text)):
        if is_code:
            out.append(f"<code>{html.escape(code_content(shown(piece, rendered=True)))}</code>")
            continue
        h = escape(piece)
        h = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", h)
        out.append(re.sub(r"(?<![\w/])_([^_]+)_(?![\w/])", r"<em>\1</em>", h))
    return "".join(out)


_NUM = re.compile(r"^[−+\-]?[\d.,]+(?:e[+-]?\d+)?(?: \[[^\]]+\])?%?$")


CAPTIONS = {"latency_trend": "Latency of every run (warm-up shaded, outliers ringed)",
            "distribution": "Latency distribution per configuration",
            "stacked": "Where the time goes: share of each run by category",
            "roofline": "Each timed kernel: arithmetic intensity against achieved GFLOP/s (log scales; no device peaks "
                        "are recorded, so no roof is drawn)",
            "history_trend": "The metric per commit with its launch-aware 95 % interval; lines mark the changes",
            "history_shares": "Each category's share of the end-to-end mean, per commit"}


def _chart(kind: str, arg) -> str:
    if kind == "latency_trend":
        return svg.latency_trend(arg)
    if kind == "distribution":
        return svg.distribution(arg)
    if kind == "stacked":
        return svg.stacked_bars(arg)
    if kind == "hbars":
        return svg.hbars(arg["items"], arg["title"])
    if kind == "timeline":
        return svg.timeline(arg["segments"], arg["title"], arg.get("lane_names"))
    if kind == "roofline":
        return svg.roofline(arg["points"], arg["title"])
    if kind == "history_trend":
        from . import svg_history

        return svg_history.trend(arg["series"], arg["metric"])
    if kind == "history_shares":
        from . import svg_history

        return svg_history.shares(arg["series"])
    raise ValueError(kind)


def to_html(bl: list[tuple], title: str) -> str:
    out = ['<!doctype html><html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
           "img-src data:\">",
           f"<title>{escape(title)}</title><style>{CSS}</style></head><body><main>"]
    for b in bl:
        kind = b[0]
        if kind == "title":
            out.append(f"<h1>{_inline(b[1])}</h1>")
        elif kind == "h2":
            out.append(f'<h2 id="{_slug(b[1])}">{_inline(b[1])}</h2>')
        elif kind == "h3":
            out.append(f"<h3>{_inline(b[1])}</h3>")
        elif kind == "p":
            out.append(f"<p>{_inline(b[1])}</p>")
        elif kind == "verdict":
            out.append(f'<div class="verdict {escape(b[1])}">{_inline(b[2])}</div>')
        elif kind == "table":
            head = "".join(f"<th>{_inline(h)}</th>" for h in b[1]) if any(b[1]) else ""
            rows = "".join("<tr>" + "".join(
                f'<td class="num">{_inline(x)}</td>' if _NUM.match(str(x)) or " → " in str(x) else f"<td>{_inline(x)}</td>"
                for x in r) + "</tr>" for r in b[2])
            out.append(f"<table>{'<thead><tr>' + head + '</tr></thead>' if head else ''}<tbody>{rows}</tbody></table>")
        elif kind in ("list", "olist"):
            items = []
            for item, sub in b[1]:
                inner = "".join(f"<li>{_inline(s)}</li>" for s in sub)
                items.append(f"<li>{_inline(item)}{'<ul>' + inner + '</ul>' if inner else ''}</li>")
            tag = "ol" if kind == "olist" else "ul"
            out.append(f"<{tag}>" + "".join(items) + f"</{tag}>")
        elif kind == "chart":
            cap = CAPTIONS.get(b[1]) or (b[2].get("title") if isinstance(b[2], dict) else "")
            out.append(f'<figure data-chart="{b[1]}"><figcaption>{escape(cap)}</figcaption>{_chart(b[1], b[2])}</figure>')
    out.append("</main></body></html>\n")
    return shown("\n".join(out), lines=True, rendered=True)  # as to_markdown: checked once more on its way out


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")
