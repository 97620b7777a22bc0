"""``edgeprof trace``: a profile as a Chrome trace-event JSON file for ui.perfetto.dev / trace_processor."""

from __future__ import annotations

from pathlib import Path

from ..conventions import OP_TYPES_MODES, OP_TYPES_REF, fit_name
from ..errors import UsageError
from ..io.workspace import Workspace
from ._common import workspace
from .results import TraceResult


def trace(etdump, *, runs: str | None = None, include_init: bool = True, out=None, etrecord=None,
          op_types: str = OP_TYPES_REF, ws: Workspace | None = None, block_events: int | None = None) -> TraceResult:
    """Write the trace of an ETDump (or timeline CSV) — every run, or those ``runs`` names (``N``, ``A:B``, a
    comma list) — to ``out`` (default ``<ETDump stem>.trace.json`` beside it); returns what was exported.
    ``op_types``: a slice's op-type list as an ``op_types_id`` into ``otherData.op_types`` (``ref``), or in
    every slice's args (``inline``). Every run of an ETDump is read block by block of runs (``block_events`` events
    at a time; 0: the whole file at once), the same document as from the whole file."""
    from ..render.trace import select_runs, write_trace

    if op_types not in OP_TYPES_MODES:
        raise UsageError(f"unknown op-types form {op_types!r} (choose from {', '.join(OP_TYPES_MODES)})")
    ws = workspace(ws, None, etrecord=etrecord)
    p = Path(etdump)
    target = Path(out) if out else p.with_name(fit_name(p.name.split(".")[0], ".trace.json"))
    if block_events != 0 and (runs is None or runs.strip() in ("", ":", "all")):
        from ..conventions import FORMAT_ETDUMP
        from ..io.readers import profile_format
        from ..render.trace import OutOfOrder

        if profile_format(p) == FORMAT_ETDUMP:
            try:
                stats = _stream(ws, p, target, include_init, op_types, block_events)
                return TraceResult({"input": str(etdump), "written": str(target), **stats})
            except OutOfOrder:
                pass  # read whole below
    prof = ws.profile(etdump)
    try:
        chosen = select_runs(prof, runs)
    except ValueError as e:
        raise UsageError(f"--runs {runs!r}: {str(e)[:200]}") from None
    stats = write_trace(target, prof, runs=chosen, include_init=include_init, op_types=op_types)
    return TraceResult({"input": str(etdump), "written": str(target), **stats})


def _stream(ws: Workspace, path: Path, target: Path, include_init: bool, op_types: str, block_events) -> dict:
    """Every run's trace written block by block (:func:`~edgeprof.render.trace.write_trace_blocks`); raises
    :class:`~edgeprof.render.trace.OutOfOrder` where the blocks cannot give the whole file's document (slices out
    of the file's order, an ETRecord that attaches to a later block differently)."""
    import types

    import polars as pl

    from ..io.etdump_read import check_has_runs
    from ..render.trace import OutOfOrder, TraceParts, write_trace_blocks

    blocks, reader = ws.profile_blocks(path, block_events)
    parts = TraceParts(include_init=include_init, op_types=op_types)

    def numbered():
        state, runs, n_alloc, n_debug = None, [], 0, 0
        for block in blocks:
            now = (block.etrecord, block.warnings[len(reader.block_warnings):])
            if state is not None and now != state:
                raise OutOfOrder
            state = now
            runs.append(block.runs)
            n_alloc, n_debug = n_alloc + block.allocations.height, n_debug + block.debug_events.height
            yield block, reader.n_events - block.n_events
        if not ws.allow_empty:  # what reading the whole file refuses, before the trace is put in place
            check_has_runs(types.SimpleNamespace(n_runs=parts.n_runs, runs=pl.concat(runs),
                                                 allocations=types.SimpleNamespace(height=n_alloc),
                                                 debug_events=types.SimpleNamespace(height=n_debug)), path)

    return write_trace_blocks(target, numbered(), parts)
