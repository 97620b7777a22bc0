"""``edgeprof.load_etdump``: one ETDump as a :class:`~edgeprof.model.Profile`, for notebooks and scripts."""

from __future__ import annotations

import warnings as _warnings

from ..errors import EdgeprofWarning
from ..files import command
from ..io.workspace import Workspace
from ..model import Profile


@command
def load_etdump(path, etrecord=None, *, strict_etrecord: bool = False, method: str | None = None,
                allow_empty: bool = False, warn: bool = True, find_etrecord: bool = False,
                debug_buffer=None) -> Profile:
    """Read an ETDump (``.etdump``/``.etdp``) into a :class:`~edgeprof.model.Profile` (every run).

    ``etrecord``: a path to attach op types and backend names; ``find_etrecord=True`` looks for it as the
    commands do (beside the ETDump, in ``artifacts/``, from ``manifest.json``). A missing, unreadable or
    mismatched ETRecord gives a warning and the profile without it, unless ``strict_etrecord`` (then
    :class:`~edgeprof.errors.ETRecordError`). Problems with the ETDump itself raise
    :class:`~edgeprof.errors.InputError` subclasses naming the file and byte offset; ``allow_empty`` returns a
    profile even when it has no run to analyse.

    ``debug_buffer``: the debug buffer of a recording made with one (else ``<stem>.bin`` beside the ETDump is used
    when present; ``False``: not read). Its tensors are then ``prof.debug_data``: one list of numpy arrays per row
    of ``prof.debug_events`` (per run and debug event; ``prof.debug_data.path`` is the buffer), bounds-checked against the buffer
    (:class:`~edgeprof.errors.DebugBufferError` names the byte offset of a tensor the buffer cannot hold).
    """
    ws = Workspace(etrecord=etrecord, strict_etrecord=strict_etrecord, method=method,
                   discover_etrecord=find_etrecord, allow_empty=allow_empty)
    prof = ws.profile(path) if debug_buffer is False else ws.debug_profile(path, debug_buffer)
    if warn:
        for w in prof.warnings:
            _warnings.warn(f"{prof.source}: {w}", EdgeprofWarning, stacklevel=2)
    return prof
