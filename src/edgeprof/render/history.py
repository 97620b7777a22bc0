"""A history for people: the trend page (self-contained HTML, also as Markdown) and the terminal tables of
``edgeprof history`` and ``edgeprof ingest``. The page and the Markdown come from one list of blocks (the
report's renderer), so they say the same things with the same numbers."""

from __future__ import annotations

from datetime import datetime, timezone

from ..conventions import fmt_ms
from .document import to_html, to_markdown
from .markdown import code
from .svg_history import point_values



def _change_rows(s: dict) -> list[list]:
    rows = []
    for c in s["changes"]:
        att = c["attribution"]
        if att is None:  # a line appearing or disappearing: its statement says it all
            rows.append([c["commit_after"], c["commit_before"], c["direction"], c["status"], "", c["statement"], "", ""])
            continue
        cats = ", ".join(f"{x['name']} {x['delta_ms']:+.3g} ms ({x['share_of_change_pct']:.0f} %)"
                         if x["share_of_change_pct"] is not None else f"{x['name']} {x['delta_ms']:+.3g} ms"
                         for x in att["categories"][:3])
        ops = ", ".join(f"{code(x['name'])} {x['delta_ms']:+.3g} ms" + (f" ({x['presence']})" if x["presence"] in
                        ("appeared", "disappeared") else "") for x in att["operators"][:3])
        status = c["status"] + (f" ({c['commits_needed']} more commit(s) would confirm it)"
                                if c["status"] == "possible" else "")
        rows.append([c["commit_after"], c["commit_before"], c["direction"], status,
                     f"{c['change_pct']:+.1f} % [{c['ci_pct'][0]:+.1f}, {c['ci_pct'][1]:+.1f}]", cats, ops,
                     c["kind_evidence"] or ""])
    return rows


def blocks(d: dict, *, generated: str | None = None, last: int = 40) -> list[tuple]:
    gen = generated or datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out: list[tuple] = [("title", f"edgeprof history: {d['metric']}"),
                        ("p", f"_store {d['store']} · threshold {100 * d['threshold']:g} % · generated {gen}_"),
                        ("p", d["method"])]
    if d["regressions"]:
        out.append(("verdict", "slower", "**Regression:** " + "; ".join(d["regressions"])))
    if d.get("fallbacks"):
        out.append(("verdict", "slower", "**Fallback:** " + "; ".join(d["fallbacks"])))
    out.append(("h2", "Trend"))
    out.append(("chart", "history_trend", {"series": d["series"], "metric": d["metric"]}))
    out.append(("h2", "Changes"))
    for s in d["series"]:
        out.append(("h3", s["label"]))
        out.append(("p", f"{len(s['points'])} commits; launch-to-launch SD {100 * s['tau']:.1f} % ({s['tau_source']})"
                    + (f"; {s['excluded_launches']} launch(es) without this metric left out" if s["excluded_launches"] else "")))
        if s["changes"]:
            out.append(("table", ["commit", "after", "direction", "status", "change", "categories (share of change)",
                                  "operators", "kind of change"], _change_rows(s)))
        else:
            out.append(("p", "No change beyond the threshold."))
        if s.get("placement_changes"):
            out.append(("list", [(c["statement"], []) for c in s["placement_changes"]]))
    out.append(("h2", "Where the time goes over commits"))
    out.append(("chart", "history_shares", {"series": d["series"]}))
    out.append(("h2", f"Commits (newest {last})"))
    for s in d["series"]:
        out.append(("h3", s["label"]))
        shown = [(p, point_values(p)) for p in s["points"][-last:]]
        rows = [[p["commit"], p["time"] or "", p["launches"], fmt_ms(e[0]), f"{fmt_ms(e[1])}–{fmt_ms(e[2])}"]
                for p, e in shown]
        unit = shown[0][1][3] if shown else "ms"
        out.append(("table", ["commit", "time", "launches", f"{d['metric']} ({unit})", "95 % interval"], rows[::-1]))
    return out


def html(d: dict, generated: str | None = None) -> str:
    return to_html(blocks(d, generated=generated), f"edgeprof history: {d['metric']}")


def markdown(d: dict, generated: str | None = None) -> str:
    return to_markdown(blocks(d, generated=generated))


def print_history(d: dict, last: int = 15) -> None:
    from typing import Any

    from rich.table import Table

    from .terminal import console, escape

    out = console()
    for s in d["series"]:
        t = Table(title=f"{escape(s['label'])} — {escape(d['metric'])} per commit (newest {min(last, len(s['points']))} of "
                        f"{len(s['points'])})", title_justify="left")
        shown = [(p, point_values(p)) for p in s["points"][-last:]]
        unit = shown[0][1][3] if shown else "ms"
        cols: tuple[tuple[str, dict[str, Any]], ...] = (
            ("commit", {}), ("time", {}), ("launches", {"justify": "right"}), (unit, {"justify": "right"}),
            ("95 % interval", {"justify": "right"}))
        for col, kw in cols:
            t.add_column(col, **kw)
        for p, (est, lo, hi, _) in shown:
            t.add_row(escape(str(p["commit"])), escape(p["time"] or ""), str(p["launches"]), fmt_ms(est),
                      f"{fmt_ms(lo)}–{fmt_ms(hi)}")
        out.print(t)
        for c in s["changes"]:
            color = {"regression": "red", "improvement": "green"}.get(c["direction"], "yellow")
            out.print(f"[{color}]{c['direction']}[/{color}] ({c['status']}): {escape(c['statement'])}")
            if c.get("kind_evidence"):
                out.print(f"  kind: {escape(c['kind_evidence'])}")
        if not s["changes"]:
            out.print("no change beyond the threshold")
        for c in s.get("placement_changes") or []:
            color = "red" if c["fallbacks"] else "yellow"
            out.print(f"[{color}]placement[/{color}]: {escape(c['statement'])}")
    for r in d["regressions"]:
        out.print(f"[red]regression:[/red] {escape(r)}")
    for r in d.get("fallbacks") or []:
        out.print(f"[red]fallback:[/red] {escape(r)}")


def print_ingest(d: dict) -> None:
    from .terminal import console, escape

    out = console()
    out.print(f"{len(d['added'])} launch(es) added, {len(d['skipped'])} already stored, {len(d['errors'])} failed — "
              f"{escape(d['store'])} ({d['store_kind']}; {d['engine']}; {d['seconds']:.2f} s)")
    for r in d.get("relabeled", []):
        out.print(f"relabelled {escape(r['source'])}: " + escape("; ".join(
            f"{k} {r['from'][k]} → {r['to'][k]}" for k in r["fields"])))
    c = d["counts"]
    out.print(f"store now holds {c['launches']} launches, {c['runs']} runs, {c['operators']} operator rows")
