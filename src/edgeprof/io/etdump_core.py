"""The compiled ETDump walk (``edgeprof._core``, built by ``pip install`` where a C compiler is found), called the
way the numpy reader (:mod:`edgeprof.io.flatbuf`, its oracle and the fallback) is; :mod:`edgeprof.compiled` says
which of the two reads (``EDGEPROF_CORE``).

The walk fills numpy arrays allocated here; its errors (``_core.Corrupt(offset, message)``) become the reader's one
:class:`~edgeprof.errors.CorruptETDumpError`, naming the file and the byte offset."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ..compiled import module, which  # noqa: F401  (the walk this process reads with)

@contextmanager
def _refusals(fb):
    from .. import _core

    try:
        yield
    except _core.Corrupt as e:
        offset, message = e.args
        fb.fail(offset, message)


def walk_events(core, fb, vec_refs: np.ndarray, n_events: int):
    """The Event tables of the vectors at ``vec_refs``: (table positions, owning vector, payload kind — 0 profile,
    1 allocation, 2 debug, −1 none — payload position, events without payload, events with more than one)."""
    pos = np.empty(n_events, np.int64)
    run = np.empty(n_events, np.int64)
    kind = np.empty(n_events, np.int8)
    payload = np.empty(n_events, np.int64)
    with _refusals(fb):
        got, empty, ambiguous = core.walk_events(fb.u8, fb.base, np.ascontiguousarray(vec_refs, np.int64), pos, run,
                                                 kind, payload)
    if got != n_events:
        fb.fail(0, f"RunData.events hold {got} events where {n_events} were counted")
    return pos, run, kind, payload, empty, ambiguous


def profile_events(core, fb, pe_pos: np.ndarray) -> dict:
    """The fields of the ProfileEvent tables at ``pe_pos`` (string and vector fields as positions, −1 absent)."""
    n = pe_pos.size
    c = {"name_ref": np.empty(n, np.int64), "pe_chain": np.empty(n, np.int32), "pe_instruction": np.empty(n, np.int32),
         "pe_dd_int": np.empty(n, np.int32), "dd_str_ref": np.empty(n, np.int64), "meta_refs": np.empty(n, np.int64),
         "pe_start": np.empty(n, np.uint64), "pe_end": np.empty(n, np.uint64)}
    with _refusals(fb):
        core.profile_events(fb.u8, fb.base, np.ascontiguousarray(pe_pos, np.int64), *c.values())
    return c


def strings(core, fb, refs: np.ndarray, interner) -> np.ndarray:
    """Codes (in ``interner``'s code space; −1 absent) of the strings at ``refs`` — the codes and the interner's
    order are those :meth:`~edgeprof.io.flatbuf.FlatBuffer.strings` gives."""
    local = np.empty(refs.size, np.int32)
    with _refusals(fb):
        distinct = core.intern(fb.u8, fb.base, np.ascontiguousarray(refs, np.int64), local)
    codes = np.array([interner(b) for b in distinct] + [-1], dtype=np.int32)
    return codes[local]  # −1 (absent) picks the −1 at the end
