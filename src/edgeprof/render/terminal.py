"""Terminal output (rich): tables for people, progress bars on stderr."""

from __future__ import annotations

import sys


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
        t.add_row(e["experiment"] or "—", e["etdump"].rsplit("/", 1)[-1], str(e["runs"]), str(e["events"]),
                  _fmt(lat["median_ms"]), _fmt(lat["p90_ms"]), e["etrecord_status"])
    for f in s["errors"]:
        t.add_row("[red]failed[/red]", f["etdump"].rsplit("/", 1)[-1], "", "", "", "", "")
    out.print(t)
    if result.summary_path is not None:
        out.print(f"wrote {len(result.outputs)} files; summary: {result.summary_path}")
