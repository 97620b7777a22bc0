"""``edgeprof trace``: a profile as a Chrome trace-event JSON file for ui.perfetto.dev / trace_processor."""

from __future__ import annotations

from pathlib import Path

from ..conventions import OP_TYPES_MODES, OP_TYPES_REF, fit_name
from ..errors import UsageError
from ..io.workspace import Workspace
from ._common import workspace
from .results import TraceResult


def trace(etdump, *, runs: str | None = None, include_init: bool = True, out=None, etrecord=None,
          op_types: str = OP_TYPES_REF, ws: Workspace | None = None) -> TraceResult:
    """Write the trace of an ETDump (or timeline CSV) — every run, or those ``runs`` names (``N``, ``A:B``, a
    comma list) — to ``out`` (default ``<ETDump stem>.trace.json`` beside it); returns what was exported.
    ``op_types``: a slice's op-type list as an ``op_types_id`` into ``otherData.op_types`` (``ref``), or in
    every slice's args (``inline``)."""
    from ..render.trace import select_runs, write_trace

    if op_types not in OP_TYPES_MODES:
        raise UsageError(f"unknown op-types form {op_types!r} (choose from {', '.join(OP_TYPES_MODES)})")
    ws = workspace(ws, None, etrecord=etrecord)
    prof = ws.profile(etdump)
    try:
        chosen = select_runs(prof, runs)
    except ValueError as e:
        raise UsageError(f"--runs {runs!r}: {str(e)[:200]}") from None
    p = Path(etdump)
    target = Path(out) if out else p.with_name(fit_name(p.name.split(".")[0], ".trace.json"))
    stats = write_trace(target, prof, runs=chosen, include_init=include_init, op_types=op_types)
    return TraceResult({"input": str(etdump), "written": str(target), **stats})
