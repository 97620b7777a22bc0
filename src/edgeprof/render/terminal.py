"""Terminal output (rich): tables for people, progress bars on stderr."""

from __future__ import annotations

import sys

from rich.markup import escape


class _NoBar:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, done, total, path):
        pass


class _RichBar:
    def __init__(self):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._progress = Progress(TextColumn("[bold]analyze"), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), TextColumn("{task.description}"),
                                  console=Console(stderr=True), transient=True)
        self._task = None

    def __enter__(self):
        self._progress.__enter__()
        return self

    def __exit__(self, *exc):
        return self._progress.__exit__(*exc)

    def update(self, done, total, path):
        if self._task is None:
            self._task = self._progress.add_task("", total=total)
        self._progress.update(self._task, completed=done, description=str(path)[-60:])


def progress_bar(enabled: bool | None):
    """A progress bar on stderr; by default only when stderr is a terminal."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    return _RichBar() if enabled else _NoBar()


def _fmt(v, digits=3):
    return "—" if v is None else f"{v:.{digits}f}"


def console(stderr: bool = False):
    """A rich Console; when not writing to a terminal, use a fixed width wide enough for our tables."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    return Console(file=stream, width=None if stream.isatty() else 120, highlight=False)


def print_analyze(result) -> None:
    from rich.table import Table

    out = console()
    s = result.summary
    t = Table(title=f"edgeprof analyze: {s['analysed_count']} of {s['etdump_count']} ETDumps", title_justify="left")
    for col, kw in (("experiment", {}), ("ETDump", {"overflow": "fold"}), ("runs", {"justify": "right"}),
                    ("events", {"justify": "right"}), ("median ms", {"justify": "right"}),
                    ("p90 ms", {"justify": "right"}), ("ETRecord", {})):
        t.add_column(col, **kw)
    for e in s["per_etdump"]:
        lat = e["latency_ms"]
        t.add_row(escape(e["experiment"] or "—"), escape(e["etdump"].rsplit("/", 1)[-1]), str(e["runs"]), str(e["events"]),
                  _fmt(lat["median_ms"]), _fmt(lat["p90_ms"]), e["etrecord_status"])
    for f in s["errors"]:
        t.add_row("[red]failed[/red]", escape(f["etdump"].rsplit("/", 1)[-1]), "", "", "", "", "")
    out.print(t)
    if result.summary_path is not None:
        out.print(f"wrote {len(result.outputs)} files; summary: {result.summary_path}")


def _ms(v) -> str:
    if v is None:
        return "—"
    return f"{v:.4g}" if abs(v) < 1000 else f"{v:,.0f}"


def print_latency(series_reports) -> None:
    """One table per launch: headline statistics, interval, warm-up, drift, outliers."""
    from rich.table import Table

    out = console()
    for _, r in series_reports:
        t = Table(title=escape(f"{r['name']}  ({r['count']} runs, latency from {r['source'].replace('_', ' ')})"),
                  title_justify="left", show_header=False, box=None, padding=(0, 2))
        t.add_column("what", style="bold")
        t.add_column("value")
        p = r["percentiles"] or {}
        ci = r["ci"]["median"]
        t.add_row("median", escape(f"{_ms(r['median_ms'])} ms" + (f"  [95% CI {_ms(ci['low_ms'])}–{_ms(ci['high_ms'])}]" if ci else "")))
        t.add_row("mean ± std", f"{_ms(r['mean_ms'])} ± {_ms(r['std_dev_ms'])} ms  (CV {_ms(r['cv_percent'])} %)")
        t.add_row("MAD / IQR", f"{_ms(r['mad_ms'])} / {_ms(r['iqr_ms'])} ms")
        t.add_row("min / max", f"{_ms(r['min_ms'])} / {_ms(r['max_ms'])} ms")
        t.add_row("p50 p75 p90 p95 p99", "  ".join(_ms(p.get(k)) for k in ("p50", "p75", "p90", "p95", "p99")) + " ms")
        t.add_row("trimmed mean 5 % / 10 %", f"{_ms(r['trimmed_mean_5_ms'])} / {_ms(r['trimmed_mean_10_ms'])} ms")
        o = r["outliers"]
        t.add_row("outliers (kept)", f"{o['count']} ({o['percentage']:.1f} %) outside Tukey fences" if o["bounds"] else o["method"])
        w = r["warmup"]
        if w["count"]:
            wo = w["without_warmup"]
            t.add_row("warm-up", f"[yellow]first {w['count']} run(s) slower[/yellow] ({escape(w['evidence'])}); without them: "
                                 f"median {_ms(wo['median_ms'])} ms, mean {_ms(wo['mean_ms'])} ms")
        else:
            t.add_row("warm-up", "none detected" if w["testable"] else w.get("note", "not testable"))
        d = r["drift"]
        slope = d["slope_percent_per_100_runs"]
        mk = d["mann_kendall"]
        if mk.get("p_value") is None:
            t.add_row("drift", mk.get("note", "not testable"))
        else:
            t.add_row("drift", (f"[yellow]{d['direction']}[/yellow]: " if d["significant"] else "none: ")
                      + f"{slope:+.1f} % per 100 runs (Theil–Sen), Mann–Kendall p = {mk['p_value']:.3g}")
        m = r["multimodality"]
        if m["hint"]:
            t.add_row("shape", f"[yellow]{m['note']}[/yellow] ({m['modes']} modes)")
        out.print(t)
        for wmsg in r.get("warnings", []):
            out.print(f"[yellow]warning:[/yellow] {escape(wmsg)}")
        out.print()


def print_compare(r: dict) -> None:
    from rich.table import Table

    out = console()
    t = Table(title="baseline vs candidate (speedup = baseline / candidate; > 1: candidate faster)", title_justify="left")
    for col in ("", escape(r["baseline"]["name"]) + " (baseline)", escape(r["candidate"]["name"]) + " (candidate)"):
        t.add_column(col, justify="right" if col else "left")
    b, c = r["baseline"], r["candidate"]
    t.add_row("launches", str(len(b["launches"])), str(len(c["launches"])))
    t.add_row("runs used", str(b["count"]), str(c["count"]))
    t.add_row("warm-up runs left out", str(sum(x["warmup_dropped"] for x in b["launches"])),
              str(sum(x["warmup_dropped"] for x in c["launches"])))
    for key, label in (("median_ms", "median ms"), ("mean_ms", "mean ms"), ("cv_percent", "CV %")):
        t.add_row(label, _ms(b.get(key)), _ms(c.get(key)))
    t.add_row("p90 ms", _ms((b.get("percentiles") or {}).get("p90")), _ms((c.get("percentiles") or {}).get("p90")))
    out.print(t)
    if r.get("ci"):
        ci, hl, tests = r["ci"], r["hodges_lehmann"], r["tests"]
        out.print(escape(f"speedup (ratio of medians) {r['speedup']['estimate']:.4g}  "
                         f"[{int(ci['level'] * 100)}% CI {ci['low']:.4g}–{ci['high']:.4g}]  ({ci['method']})"))
        if hl["low"] is not None:
            out.print(escape(f"Hodges–Lehmann speedup {hl['speedup']:.4g}  [{hl['low']:.4g}–{hl['high']:.4g}]"))
        bm = tests["brunner_munzel"]["p_value"]
        out.print(f"Mann–Whitney p = {tests['mann_whitney']['p_value']:.3g}, Brunner–Munzel p = "
                  f"{'n/a' if bm is None else format(bm, '.3g')}, Cliff's δ = {tests['cliffs_delta']:+.2f}, "
                  f"minimum detectable effect {r['minimum_detectable_effect'] * 100:.1f} %")
    for w in r["warnings"]:
        out.print(f"[yellow]warning:[/yellow] {escape(w)}")
    colour = {"faster": "green", "slower": "red", "equivalent": "cyan"}.get(r["verdict"], "yellow")
    out.print(f"[bold {colour}]{escape(r['summary_line'])}[/bold {colour}]")
