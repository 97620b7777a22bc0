"""Terminal output (rich): tables for people, progress bars on stderr."""

from __future__ import annotations

import sys

from rich.markup import escape as _markup_escape

from ..conventions import fmt_ms, fmt_pct, shown
from ..documents_base import ABSENT
from ..runtimes import HOST_BACKEND, host_name, vocabulary
from .cells import TYPICAL_HEADER, TYPICAL_NOTE, speedup_cell, typical_cell


def escape(value) -> str:
    """Text from data as rich markup: shown by :func:`edgeprof.conventions.shown` (every control character as
    ``\\x1b`` …), then its brackets escaped, so a name is neither a terminal sequence nor rich markup."""
    return _markup_escape(shown(value))


class _NoBar:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, done, total, path):
        pass


class _RichBar:
    def __init__(self, label: str = "analyze", eta: bool = False):
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn,
                                   TimeRemainingColumn)

        columns = [TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
        if eta:
            columns += [TextColumn("eta"), TimeRemainingColumn()]
        self._progress = Progress(*columns, TextColumn("{task.description}"), console=Console(stderr=True),
                                  transient=True)
        self._task: TaskID | None = None

    def __enter__(self):
        self._progress.__enter__()
        return self

    def __exit__(self, *exc):
        return self._progress.__exit__(*exc)

    def update(self, done, total, path):
        if self._task is None:
            self._task = self._progress.add_task("", total=total)
        self._progress.update(self._task, completed=done, description=escape(shown(path)[-60:]))


def progress_bar(enabled: bool | None, label: str = "analyze", eta: bool = False):
    """A progress bar on stderr (with the time remaining when ``eta``); by default only on a terminal."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    return _RichBar(label, eta) if enabled else _NoBar()


def console(stderr: bool = False):
    """A rich Console; when not writing to a terminal, use a fixed width wide enough for our tables. Text from data reaches it
    through :func:`escape`; whatever string did not is still shown by :func:`edgeprof.conventions.shown` before rich reads it
    (rich would drop a BEL silently and pass an ESC), and every segment is checked again on its way out: rich's own styling
    and cursor control pass, a control character in a name does not. Emoji codes in names stay text."""
    from rich.console import Console
    from rich.segment import Segment

    class SafeConsole(Console):
        def render_str(self, text, **kw):
            return super().render_str(shown(text, lines=True, rendered=True), **kw)

        def _render_buffer(self, buffer):
            return super()._render_buffer(s if s.control else Segment(shown(s.text, lines=True, rendered=True),
                                                                      s.style, s.control) for s in buffer)

    stream = sys.stderr if stderr else sys.stdout
    return SafeConsole(file=stream, width=None if stream.isatty() else 120, highlight=False, emoji=False)


def print_analyze(result) -> None:
    from typing import Any

    from rich.table import Table

    out = console()
    s = result.summary
    t = Table(title=f"edgeprof analyze: {s['analysed_count']} of {s['etdump_count']} profiles", title_justify="left")
    cols: tuple[tuple[str, dict[str, Any]], ...] = (
        ("experiment", {}), ("profile", {"overflow": "fold"}), ("runs", {"justify": "right"}),
        ("events", {"justify": "right"}), ("median ms", {"justify": "right"}), ("p90 ms", {"justify": "right"}), ("ETRecord", {}))
    for col, kw in cols:
        t.add_column(col, **kw)
    for e in s["per_etdump"]:
        lat = e["latency_ms"]
        t.add_row(escape(e["experiment"] or "—"), escape(e["etdump"].rsplit("/", 1)[-1]), str(e["runs"]), str(e["events"]),
                  fmt_ms(lat["median_ms"]), fmt_ms(lat["p90_ms"]), escape(e["etrecord_status"]))
    for f in s["errors"]:
        t.add_row("[red]failed[/red]", escape(f["etdump"].rsplit("/", 1)[-1]), "", "", "", "", "")
    out.print(t)
    if result.summary_path is not None:
        out.print(f"wrote {len(result.outputs)} files; summary: {escape(result.summary_path)}")


def print_latency(reports) -> None:
    """One table per launch (:class:`~edgeprof.api.results.LatencyReport`): headline statistics, interval,
    warm-up, drift, outliers — read from the typed document."""
    from rich.table import Table

    out = console()
    for r in (x.doc for x in reports):
        src = vocabulary(r.get("runtime"))["run_event"] if r.source == "method_execute" else r.source.replace("_", " ")
        t = Table(title=escape(f"{r.name}  ({r.count} runs, latency from {src})"),
                  title_justify="left", show_header=False, box=None, padding=(0, 2))
        t.add_column("what", style="bold")
        t.add_column("value")
        p, ci = r.percentiles or {}, r.ci["median"]
        t.add_row("median", escape(f"{fmt_ms(r.median_ms)} ms"
                                   + (f"  [95% CI {fmt_ms(ci['low_ms'])}–{fmt_ms(ci['high_ms'])}]" if ci else "")))
        t.add_row("mean ± std", f"{fmt_ms(r.mean_ms)} ± {fmt_ms(r.std_dev_ms)} ms  (CV {fmt_pct(r.cv_percent)} %)")
        t.add_row("MAD / IQR", f"{fmt_ms(r.mad_ms)} / {fmt_ms(r.iqr_ms)} ms")
        t.add_row("min / max", f"{fmt_ms(r.min_ms)} / {fmt_ms(r.max_ms)} ms")
        t.add_row("p50 p75 p90 p95 p99", "  ".join(fmt_ms(p.get(k)) for k in ("p50", "p75", "p90", "p95", "p99")) + " ms")
        t.add_row("trimmed mean 5 % / 10 %", f"{fmt_ms(r.trimmed_mean_5_ms)} / {fmt_ms(r.trimmed_mean_10_ms)} ms")
        o = r.outliers
        t.add_row("outliers (kept)",
                  f"{o['count']} ({o['percentage']:.1f} %) outside Tukey fences" if o["bounds"] else o["method"])
        w = r.warmup
        if w["count"]:
            t.add_row("warm-up", warmup_sentence(w, r.median_ms, r.mean_ms))
        else:
            t.add_row("warm-up", "none detected" if w["testable"] else w.get("note", "not testable"))
        d = r.drift
        slope, mk = d["slope_percent_per_100_runs"], d["mann_kendall"]
        if mk.get("p_value") is None:
            t.add_row("drift", mk.get("note", "not testable"))
        else:
            t.add_row("drift", (f"[yellow]{d['direction']}[/yellow]: " if d["significant"] else "none: ")
                      + f"{slope:+.1f} % per 100 runs (Theil–Sen), Mann–Kendall p = {mk['p_value']:.3g}")
        m = r.multimodality
        if m["hint"]:
            t.add_row("shape", f"[yellow]{m['note']}[/yellow] ({m['modes']} modes)")
        out.print(t)
        out.print()


def warmup_sentence(w: dict, median_ms, mean_ms) -> str:
    """The warm-up row: what made the leading runs warm-up (their median against the median after them), and the
    statistics without them beside the same statistics with them — so a mean that rises without them (the runs
    after them have a slow tail) reads as what it is."""
    wo = w["without_warmup"]
    head = (f"[yellow]first {w['count']} run(s) slower[/yellow]: median {fmt_ms(w['warmup_median_ms'])} ms vs "
            f"{fmt_ms(w['steady_median_ms'])} ms after them ({escape(w['evidence'])}); without them: "
            f"median {fmt_ms(wo['median_ms'])} ms (with them {fmt_ms(median_ms)}), "
            f"mean {fmt_ms(wo['mean_ms'])} ms (with them {fmt_ms(mean_ms)})")
    if wo["mean_ms"] > mean_ms:
        head += " — the mean rises without them: they are slower than the median after them, not than its mean"
    return head


def _with_role(name: str, role: str) -> str:
    """An arm's column head: its name and role, the role said once (a name already suffixed keeps its suffix)."""
    return name if name.endswith(f" ({role})") else f"{name} ({role})"


def print_compare(result) -> None:
    """A comparison (:class:`~edgeprof.api.results.Comparison`), read from its typed document."""
    from rich.table import Table

    r = result.doc
    out = console()
    t = Table(title="baseline vs candidate (speedup = baseline / candidate; > 1: candidate faster)", title_justify="left")
    for col in ("", _with_role(escape(r.baseline["name"]), "baseline"), _with_role(escape(r.candidate["name"]), "candidate")):
        t.add_column(col, justify="right" if col else "left")
    b, c = r.baseline, r.candidate
    t.add_row("launches", str(len(b["launches"])), str(len(c["launches"])))
    t.add_row("runs used", str(b["count"]), str(c["count"]))
    t.add_row("warm-up runs left out", str(sum(x["warmup_dropped"] for x in b["launches"])),
              str(sum(x["warmup_dropped"] for x in c["launches"])))
    for key, label in (("median_ms", "median ms"), ("mean_ms", "mean ms"), ("cv_percent", "CV %")):
        t.add_row(label, fmt_ms(b.get(key)), fmt_ms(c.get(key)))
    t.add_row("p90 ms", fmt_ms((b.get("percentiles") or {}).get("p90")), fmt_ms((c.get("percentiles") or {}).get("p90")))
    out.print(t)
    if r.ci:
        ci, hl, tests = r.ci, r.hodges_lehmann, r.tests
        out.print(escape(f"speedup {r.speedup['estimate']:.4g}  "
                         f"[{int(ci['level'] * 100)}% CI {ci['low']:.4g}–{ci['high']:.4g}]  ({ci['method']})"))
        if hl["low"] is not None:
            out.print(escape(f"Hodges–Lehmann speedup {hl['speedup']:.4g}  [{hl['low']:.4g}–{hl['high']:.4g}]"))
        bm = tests["brunner_munzel"]["p_value"]
        out.print(f"launch-level p = {r.p_value:.3g}, minimum detectable effect "
                  f"{r.minimum_detectable_effect * 100:.1f} %; within these launches only: Mann–Whitney p = "
                  f"{tests['mann_whitney']['p_value']:.3g}, Brunner–Munzel p = {'n/a' if bm is None else format(bm, '.3g')}, "
                  f"Cliff's δ = {tests['cliffs_delta']:+.2f}")
        mt = r.metrics or {}
        if mt:
            out.print(escape("by metric (each arm's launches combined; speedup = their ratio): " + "; ".join(
                f"{m} {fmt_ms(x.get('baseline_typical_ms'))} → {fmt_ms(x.get('candidate_typical_ms'))} ms "
                f"{x['speedup']:.4g} [{x['ci_low']:.4g}–{x['ci_high']:.4g}] {x['verdict']}" for m, x in mt.items())))
    if r.regime:
        al = r.launch_allowance or {}
        ln = r.launch_noise or {}
        out.print(escape(f"regime: {r.regime}" + (f" (allowance {100 * al['launch_cv']:.3g} % launch SD per arm, "
                                                      f"{ln.get('detail') or al['source']})" if al.get("applied") else "")
                         + (f"; launch SD estimated {100 * r.launch_sd_estimate:.1f} %"
                            if r.launch_sd_estimate not in (None, ABSENT) else "")))
    comp = r.comparability or {}
    if comp.get("recorded"):
        out.print(escape(f"comparability: {comp['statement']}"))
        for row in comp["rows"]:
            if row["differs"]:
                out.print(escape(f"  {row['aspect']}: {', '.join(row['baseline'])} vs {', '.join(row['candidate'])}"
                                 + (" (invalidates)" if row["critical"] else "")))
    if (r.plan or {}).get("statement"):
        out.print(escape(f"plan: {r.plan['statement']}"))
    if r.by_category:
        print_categories(r.by_category)
    for line in r.placement["statements"] if r.placement not in (None, ABSENT) else ():
        out.print(escape(f"placement: {line}"))
    if r.memory not in (None, ABSENT):
        out.print(escape(f"memory: {r.memory['statement']}"))
    for w in r.warnings:
        out.print(f"[yellow]warning:[/yellow] {escape(w)}")
    colour = {"faster": "green", "slower": "red", "equivalent": "cyan"}.get(r.verdict, "yellow")
    out.print(f"[bold {colour}]{escape(r.summary_line)}[/bold {colour}]")


def print_breakdown(bd) -> None:
    """A breakdown (:class:`~edgeprof.api.results.Breakdown`), read from its typed document and every operator
    it has beside it."""
    from rich.table import Table

    result = bd.doc
    rt = result.get("runtime")
    w = vocabulary(rt)
    out = console()
    out.print(escape(f"{result.name}: {result.runs} runs, end-to-end mean {fmt_ms(result.e2e_ms['mean'])} ms "
                     f"(median {fmt_ms(result.e2e_ms['median'])} ms); taxonomy {result.taxonomy_version}"))
    t = Table(title=f"where the time goes (per run; shares add up to 100 % of {w['run_event']})", title_justify="left")
    for col in ("category / overhead", "avg ms", "% of e2e", "executions", "operators"):
        t.add_column(col, justify="left" if col.startswith("cat") else "right")
    for c in result.categories:
        style = "dim" if c["kind"] == "overhead" else ""
        t.add_row(escape(c["line"].replace("_", " ")), f"{fmt_ms(c['avg_ms'])}", fmt_pct(c["pct_of_e2e"]),
                  f"{c['executions_per_run']:.3g}" if c["kind"] == "category" else "", str(c["operator_count"] or ""),
                  style=style)
    out.print(t)
    t = Table(title="top operators", title_justify="left")
    for col in ("operator", "backend", "category", "avg ms", "% of e2e", "per run"):
        t.add_column(col, justify="right" if col in ("avg ms", "% of e2e", "per run") else "left", overflow="fold")
    for o in result.operators:
        t.add_row(escape(o["operator"]), escape(host_name(o["backend"], rt)), escape(f"{o['category']}/{o['subtype']}"),
                  f"{fmt_ms(o['avg_ms'])}", fmt_pct(o["pct_of_e2e"]), f"{o['executions_per_run']:.3g}")
    out.print(t)
    if result.other_top:
        out.print("[yellow]top OTHER operators:[/yellow] " + escape(", ".join(
            f"{o['operator']} ({fmt_ms(o['avg_ms'], 3)} ms, {fmt_pct(o['pct_of_e2e'])} %)" for o in result.other_top[:5])))
    b = result.backends
    host, acc = w["host"], w["accelerated"]
    out.print("backends: " + ", ".join(f"{escape(host_name(k, rt))} {fmt_ms(v['avg_ms'])} ms ({fmt_pct(v['pct_of_e2e'])} %)"
                                       for k, v in b["leaf_time"].items())
              + f"; framework overhead {fmt_ms(b['framework_overhead_ms'], 3)} ms, {acc} overhead "
              + f"{fmt_ms(b['delegate_overhead_ms'], 3)} ms over {b['delegate_calls_per_run']:.3g} {acc} call(s) per run, "
              + f"unattributed {fmt_ms(b['unattributed_ms'], 3)} ms")
    if result.portable_hotspots and any(o["backend"] != HOST_BACKEND for o in bd.operators_all or result.operators):
        out.print(escape(f"{host} hotspots (the time left on {host}: candidates to hand to a {acc}): " + ", ".join(
            f"{o['operator']} {fmt_ms(o['avg_ms'], 3)} ms" for o in result.portable_hotspots[:6])))
    g = result.graph_breaks
    if g["segments"]:
        seq = " → ".join(("[green]" if s["kind"] == "delegated" else "[yellow]") + escape(
            f"{host_name(s['backend'], rt)}({s['calls']}) {fmt_ms(s['mean_ms'], 3)} ms")
            + ("[/green]" if s["kind"] == "delegated" else "[/yellow]") for s in g["segments"][:12])
        more = f" … ({len(g['segments'])} segments)" if len(g["segments"]) > 12 else ""
        out.print(escape(f"graph: {g['portable_islands']} {host} island(s), {g['transitions']} {acc}↔{host} "
                         f"switch(es): ") + seq + more)
    for n in result.notes:
        out.print(f"[yellow]note:[/yellow] {escape(n)}")


def print_categories(bc: dict) -> None:
    """The by-category part of a comparison."""
    from rich.table import Table

    out = console()
    if not bc.get("categories"):
        if bc.get("note"):
            out.print(escape(bc["note"]))
        return
    t = Table(title="by category (speedup = baseline / candidate of the typical ms/run; q: Benjamini–Hochberg)",
              title_justify="left")
    for col in ("category / overhead", "base mean ms/run", "cand mean ms/run", TYPICAL_HEADER, "speedup [95% CI]", "q",
                "share of the mean run", "status"):
        t.add_column(col, justify="left" if col in ("category / overhead", "status") else "right")
    for c in bc["categories"]:
        colour = {"faster": "green", "slower": "red"}.get(c["status"], "")
        t.add_row(escape(c["line"].replace("_", " ")), f"{fmt_ms(c['baseline_ms'])}", f"{fmt_ms(c['candidate_ms'])}",
                  typical_cell(c), escape(speedup_cell(c, 3)),
                  "—" if c.get("q_value") is None else f"{c['q_value']:.2g}",
                  f"{fmt_pct(c['baseline_share'])} → {fmt_pct(c['candidate_share'])} %",
                  f"[{colour}]{c['status']}[/{colour}]" if colour else c["status"])
    out.print(t)
    out.print(escape(TYPICAL_NOTE.replace("*", "")))
    out.print(f"[bold]{escape(bc['bottleneck']['statement'])}[/bold]")
    o = bc["operators"]
    rows = [m for m in o["matched"] if m.get("speedup") is not None][:10]
    if rows:
        t = Table(title=f"top operators (q: Benjamini–Hochberg across these {len(o['matched'])})", title_justify="left")
        for col in ("operator", "base mean ms/run", "cand mean ms/run", TYPICAL_HEADER, "speedup [95% CI]", "q", "status"):
            t.add_column(col, justify="left" if col in ("operator", "status") else "right")
        for m in rows:
            name = m["baseline_operator"] + (" → " + m["candidate_operator"] if m["match"] == "renamed" else "")
            t.add_row(escape(name), fmt_ms(m["baseline_ms"], 3), fmt_ms(m["candidate_ms"], 3), typical_cell(m, 3),
                      escape(speedup_cell(m, 3)), "—" if m.get("q_value") is None else f"{m['q_value']:.2g}",
                      m.get("status") or "—")
        out.print(t)
    if o["renamed"] or o["added_total"] or o["removed_total"]:
        out.print(escape(f"{len(o['renamed'])} renamed, {o['removed_total']} removed, {o['added_total']} added operators"
                         + (": " + ", ".join(f"{r['baseline']} → {r['candidate']}" for r in o["renamed"][:4])
                            if o["renamed"] else "")))


def print_kernels(result: dict, top: int = 40) -> None:
    """One kernel log: counts by ISA family and kind, the kernel list, executed operators."""
    from rich.table import Table

    out = console()
    s = result["summary"]
    fams = ", ".join(f"{f} {n}" for f, n in s["by_family"].items()) or "none"
    out.print(escape(f"{result['input']}: {s['kernels']} kernels registered ({s['registrations']} log lines) — {fams}"))
    t = Table(title="registered kernels (evidence: registered — set up, not necessarily run)", title_justify="left")
    t.add_column("kernel", no_wrap=True, overflow="ellipsis")
    for col in ("kind", "ISA", "family", "tile", "count"):
        t.add_column(col, justify="right" if col == "count" else "left")
    for r in result["kernels"][:top]:
        colour = {"SME2": "green", "SME": "cyan"}.get(r["isa_family"], "")
        fam = f"[{colour}]{escape(r['isa_family'])}[/{colour}]" if colour else escape(r["isa_family"])
        t.add_row(escape(r["kernel_name"]), escape(r["category"]), escape(r["isa"] or "?"), fam, escape(r["ukernel_shape"]),
                  str(r["count"]))
    out.print(t)
    if len(result["kernels"]) > top:
        out.print(f"… {len(result['kernels']) - top} more (all in the CSV / --json)")
    g = s["gemm_families"]
    if g:
        out.print("GEMM/IGEMM kernels: " + escape(", ".join(f"{f} ({' '.join(i)})" for f, i in g.items())))
    for e in result.get("executed", []):
        out.print(escape(f"executed: {e['op']} ran {e['times_run']}× → {e['implies']}"))
    if result.get("written"):
        out.print(f"wrote {escape(result['written'])}")


def print_evidence(result: dict) -> None:
    """Executed kernel evidence of one profile."""
    out = console()
    out.print(escape(f"{result['input']}: {result['statement']}"), soft_wrap=True)
    for o in result["operators"][:10]:
        out.print(escape(f"  {o['marker']:5} {o['op']}: {fmt_ms(o['ms_per_run'])} ms/run × {o['calls_per_run']:.3g} "
                         f"→ {o['implies']}"))
    others = result["other_gemm_conv_operators"]
    if others and result["kleidiai_executed"]:
        out.print(escape("  GEMM/CONV operators not on a KleidiAI path: " + ", ".join(
            f"{o['op']} {fmt_ms(o['ms_per_run'], 3)} ms" for o in others[:5])))


def print_validate(report: dict) -> None:
    out = console()
    marks = {"pass": "[green]✓[/green]", "fail": "[red]✗[/red]", "warn": "[yellow]![/yellow]", "info": "[dim]·[/dim]"}
    for c in report["checks"]:
        subject = f"{c['subject']}: " if c["subject"] else ""
        out.print(f"{marks[c['status']]} {escape(subject + c['message'])}", soft_wrap=True)
        for item in c["items"][:20]:
            out.print(f"    {escape(item)}")
        if len(c["items"]) > 20:
            out.print(f"    … {len(c['items']) - 20} more")
    n = report["counts"]
    colour = "green" if report["ok"] else "red"
    out.print(f"[bold {colour}]validate: {'OK' if report['ok'] else 'FAILED'}[/bold {colour}] — {n['pass']} passed, "
              f"{n['fail']} failed, {n['warn']} warning(s)")


_SEV = {"high": "[bold red]!![/bold red]", "medium": "[yellow]! [/yellow]", "warning": "[yellow]? [/yellow]",
        "info": "[dim]· [/dim]"}


def print_ane(result: dict) -> None:
    from rich.table import Table

    from .markdown import ISLAND_HEADERS, _island_rows

    out = console()
    out.print(f"[bold]{escape(result['model'])}[/bold]: {escape(result['headline'])}", soft_wrap=True)
    for f in result["findings"]:
        out.print(f"{_SEV.get(f['severity'], '· ')} [bold]{escape(f['title'])}[/bold] [dim]({escape(f['section'])})[/dim]",
                  soft_wrap=True)
        islands = f["evidence"].get("islands") if f["id"] == "graph_interruptions" else None
        for d in (f["detail"][:2] if islands else f["detail"]):
            out.print(f"     {escape(d)}", soft_wrap=True)
        if islands:
            t = Table(box=None, padding=(0, 1), show_edge=False)
            for h in ISLAND_HEADERS:
                t.add_column(h, overflow="fold", justify="right" if h.endswith(("ms", "ops", "#")) else "left")
            for row in _island_rows(islands):
                t.add_row(*[escape(str(x)) for x in row])
            out.print(t)
    for w in result.get("warnings", []):
        out.print(f"[yellow]warning:[/yellow] {escape(w)}")


def print_ane_folder(folder: dict) -> None:
    from rich.table import Table

    out = console()
    t = Table(title="Apple Neural Engine reports (one row per submodel; nothing is summed)", title_justify="left")
    for h in ("role", "model", "measured", "latency ms", "ANE cost %", "interruptions", "fallbacks", "top op type"):
        t.add_column(h, justify="right" if h in ("latency ms", "ANE cost %", "interruptions", "fallbacks") else "left")
    for s in folder["summary"]:
        def v(x, fmt):
            return "—" if x is None else fmt.format(x)
        t.add_row(escape(s.get("role") or "—"), escape(s["model"]), escape(s.get("status") or s["kind"]),
                  v(s.get("latency_ms"), "{:.4g}"), v(s.get("ane_cost_pct"), "{:.1f}"), str(s.get("interruptions", "—")),
                  str(s.get("fallback_ops", "—")), escape(s.get("top_type") or "—"))
    out.print(t)
    for s in folder["summary"]:
        out.print(f"· {escape(s['model'])}: {escape(s['headline'])}", soft_wrap=True)
    if folder["skipped"]:
        out.print(f"[dim]{len(folder['skipped'])} other JSON file(s) skipped[/dim]")


def print_ane_diff(d: dict) -> None:
    out = console()
    out.print(f"[bold]{escape(d['before'])} → {escape(d['after'])}[/bold] ({d['reports']})", soft_wrap=True)
    for s in d["statements"]:
        out.print(f"· {escape(s)}", soft_wrap=True)
    if d["reports"] == "profile":
        for x in d["interruptions"]["fixed"]:
            out.print(escape(f"  fixed: {x['function']} {x['first_type']}…{x['last_type']} ({x['reason']}) ×{x['count']}"))
        for x in d["interruptions"]["introduced"]:
            out.print(escape(f"  introduced: {x['function']} {x['first_type']}…{x['last_type']} ({x['reason']}) ×{x['count']}"))


def print_markdown(render):
    """A printer that shows what ``render(doc)`` writes as Markdown, laid out for the terminal."""
    def show(doc: dict) -> None:
        from rich.markdown import Markdown

        console().print(Markdown(render(doc)))
    return show
