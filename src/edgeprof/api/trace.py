"""``edgeprof trace``: a profile as a Chrome trace-event JSON file for ui.perfetto.dev / trace_processor."""

from __future__ import annotations

from pathlib import Path

from ..conventions import OP_TYPES_MODES, OP_TYPES_REF, fit_name
from ..errors import UsageError
from ..files import command
from ..io.workspace import Workspace
from ..model import ReadWhole
from ._common import KeptStream, workspace
from .results import TraceResult


@command
def trace(etdump, *, runs: str | None = None, include_init: bool = True, out=None, etrecord=None,
          op_types: str = OP_TYPES_REF, ws: Workspace | None = None, block_events: int | None = None) -> TraceResult:
    """Write the trace of an ETDump (or timeline CSV) — every run, or those ``runs`` names (``N``, ``A:B``, a
    comma list) — to ``out`` (default ``<ETDump name without its suffix>.trace.json`` beside it); returns what was exported.
    ``op_types``: a slice's op-type list as an ``op_types_id`` into ``otherData.op_types`` (``ref``), or in
    every slice's args (``inline``). Every run of an ETDump is read block by block of runs (``block_events`` events
    at a time; 0: the whole file at once), the same document as from the whole file."""
    from ..render.trace import select_runs, write_trace

    if op_types not in OP_TYPES_MODES:
        raise UsageError(f"unknown op-types form '{op_types}' (choose from {', '.join(OP_TYPES_MODES)})")
    ws = workspace(ws, None, etrecord=etrecord)
    p = Path(etdump)
    target = Path(out) if out else p.with_name(fit_name(trace_stem(p), ".trace.json"))
    if block_events != 0 and (runs is None or runs.strip() in ("", ":", "all")):
        from ..io.readers import input_format

        if input_format(p).streams:
            try:
                stats = _stream(ws, p, target, include_init, op_types, block_events)
                return TraceResult({"input": str(etdump), "written": str(target), **stats})
            except ReadWhole:
                pass  # read whole below
    prof = ws.profile(etdump)
    try:
        chosen = select_runs(prof, runs)
    except ValueError as e:
        raise UsageError(f"--runs {runs!r}: {str(e)[:200]}") from None
    stats = write_trace(target, prof, runs=chosen, include_init=include_init, op_types=op_types)
    return TraceResult({"input": str(etdump), "written": str(target), **stats})


def trace_stem(path: Path) -> str:
    """The default trace's name before ``.trace.json``: the input's whole name without its format's suffixes
    (``gpt_xnn.run2.etdp`` → ``gpt_xnn.run2``, ``m_t1.etdump.gz`` → ``m_t1``), so two recordings of one model
    get two traces."""
    from ..conventions import profile_stem

    stem = profile_stem(path.name.removesuffix(".gz")) if path.name.endswith(".gz") else profile_stem(path)
    return stem or path.name


def _stream(ws: Workspace, path: Path, target: Path, include_init: bool, op_types: str, block_events) -> dict:
    """Every run's trace written block by block (:func:`~edgeprof.render.trace.write_trace_blocks`); raises
    :class:`~edgeprof.model.ReadWhole` where the blocks cannot give the whole file's
    document (slices out of the file's order, an ETRecord that attaches to a later block differently)."""
    from ..render.trace import TraceParts, write_trace_blocks

    stream = KeptStream(ws, path, ("run_index",), block_events)  # one small column kept: the runs table matters

    def numbered():
        yield from stream
        stream.profile()  # what reading the whole file refuses, refused before the trace is put in place

    return write_trace_blocks(target, numbered(), TraceParts(include_init=include_init, op_types=op_types))
