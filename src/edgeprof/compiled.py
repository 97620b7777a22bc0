"""Which implementation runs: edgeprof's compiled core (``edgeprof._core``: the ETDump walk, the CSV and trace text
writers), built by ``pip install`` where a C compiler is found, or the Python path (the numpy reader, Polars'
writers), which is its oracle and the fallback. The environment variable ``EDGEPROF_CORE`` forces either (``c`` /
``python``; unset or ``auto``: the compiled one when it is there)."""

from __future__ import annotations

import importlib
import os

from .conventions import CORE_ENV

_CHOICES = ("auto", "c", "python")


def module():
    """The compiled core, or None where the Python path runs (forced, or the extension is not built)."""
    choice = (os.environ.get(CORE_ENV) or "auto").strip().lower()
    if choice not in _CHOICES:
        from .errors import UsageError

        raise UsageError(f"{CORE_ENV}={choice!r}: expected one of {', '.join(_CHOICES)}")
    if choice == "python":
        return None
    try:
        _core = importlib.import_module("edgeprof._core")
    except ImportError:
        if choice == "c":
            from .errors import UsageError

            raise UsageError(f"{CORE_ENV}=c but edgeprof's compiled core is not built in this install (it needs a C "
                             "compiler at `pip install` time); unset it to run the Python path") from None
        return None
    return _core


def which() -> str:
    """``"c"`` or ``"python"``: what reads and writes in this process."""
    return "python" if module() is None else "c"
