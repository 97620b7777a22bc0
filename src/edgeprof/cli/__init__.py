"""``edgeprof`` command line: parses arguments, calls :mod:`edgeprof.api`, picks a renderer.

Exit codes come from one place, :func:`run_guarded`: 0 success · 1 a check or gate failed
(:class:`~edgeprof.errors.CheckFailed`) · 2 bad input or usage (one line per problem on stderr; ``--debug``
shows the traceback). Commands raise; nothing here calls ``sys.exit`` elsewhere.

Started as the ``edgeprof`` program with a library search path that names the working folder (an empty or
relative entry of ``LD_LIBRARY_PATH``), the program first starts again without it, before any module that loads
a shared library is imported (:func:`edgeprof.child.restart_without_relative_libraries`).
"""

from __future__ import annotations

import os as _os
import sys as _sys


def _is_the_program() -> bool:
    """This process is the ``edgeprof`` program (the console script, or ``python -m edgeprof``), not a Python
    program that imported the CLI (tests, a wrapper)."""
    main = _sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None:
        return spec.name in ("edgeprof", "edgeprof.__main__")
    name = _os.path.basename(getattr(main, "__file__", None) or "").lower()
    return name.split(".")[0].removesuffix("-script") == "edgeprof"


# first: the command modules below load shared libraries (zlib, uuid, …); (edgeprof.child, which has the rule, is
# imported only when a loader variable is set at all: `edgeprof --help` stays cheap)
if any(k.startswith(("LD_", "DYLD_")) for k in _os.environ) and _is_the_program():
    from ..child import restart_without_relative_libraries

    restart_without_relative_libraries()

# numpy's OpenBLAS starts a thread per core that spins, waiting for work, for about 0.1 s of CPU after loading;
# edgeprof's arrays never need a threaded BLAS, so the program asks for one thread (before numpy is imported; a
# value the user set is kept; children do not inherit it: edgeprof.child passes an allow-list)
if "numpy" not in _sys.modules and _is_the_program():
    _os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# each registers its commands on `main`
from . import ane, collect, compare, coreml, history, kernels, memory, misc  # noqa: F401, E402
from . import numerics, phases, placement, profiles, program, skills  # noqa: F401, E402
from ._base import main  # noqa: E402 - the console script

__all__ = ["main"]
