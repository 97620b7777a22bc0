"""``edgeprof`` command line: parses arguments, calls :mod:`edgeprof.api`, picks a renderer.

Exit codes come from one place, :func:`run_guarded`: 0 success · 1 a check or gate failed
(:class:`~edgeprof.errors.CheckFailed`) · 2 bad input or usage (one line per problem on stderr; ``--debug``
shows the traceback). Commands raise; nothing here calls ``sys.exit`` elsewhere.
"""

from __future__ import annotations

from . import ane, collect, compare, coreml, history, kernels, misc, numerics, phases, profiles, program, skills  # noqa: F401,E402 - each registers its commands on `main`
from ._base import main  # noqa: F401 - the console script

__all__ = ["main"]
