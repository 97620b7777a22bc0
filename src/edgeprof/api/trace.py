"""``edgeprof trace``: a profile as a Chrome trace-event JSON file for ui.perfetto.dev / trace_processor."""

from __future__ import annotations

from pathlib import Path

from ..conventions import fit_name
from ..errors import UsageError
from ..io.workspace import Workspace
from ._common import workspace
from .results import TraceResult


def trace(etdump, *, runs: str | None = None, include_init: bool = True, out=None, etrecord=None,
          ws: Workspace | None = None) -> TraceResult:
    """Write the trace of an ETDump (or timeline CSV) — every run, or those ``runs`` names (``N``, ``A:B``, a
    comma list) — to ``out`` (default ``<ETDump stem>.trace.json`` beside it); returns what was exported."""
    from ..render.trace import select_runs, write_trace

    ws = workspace(ws, None, etrecord=etrecord)
    prof = ws.profile(etdump)
    try:
        chosen = select_runs(prof, runs)
    except ValueError as e:
        raise UsageError(f"--runs {runs!r}: {str(e)[:200]}") from None
    p = Path(etdump)
    target = Path(out) if out else p.with_name(fit_name(p.name.split(".")[0], ".trace.json"))
    stats = write_trace(target, prof, runs=chosen, include_init=include_init)
    return TraceResult({"input": str(etdump), "written": str(target), **stats})
