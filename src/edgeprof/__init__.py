"""edgeprof: on-device inference profiles (ExecuTorch ETDump, XNNPACK logs, Apple Neural Engine reports) → answers.

The Python API is :mod:`edgeprof.api`; its functions are also here, imported on first use so that
``import edgeprof`` stays free of numpy and polars::

    import edgeprof
    cmp = edgeprof.compare("off.etdp", "on.etdp")
    cmp.speedup.estimate, cmp.speedup.ci.low, cmp.verdict
"""

from __future__ import annotations

import os as _os
from typing import TYPE_CHECKING

from .conventions import TOOL_VERSION as __version__

if TYPE_CHECKING:  # the names __getattr__ imports on first use, re-exported for type checkers
    from .api import (ReadOptions as ReadOptions, Workspace as Workspace, analyze as analyze, ane as ane,
                      ane_diff as ane_diff, ane_folder as ane_folder, breakdown as breakdown, breakdowns as breakdowns,
                      compare as compare, coreml as coreml, coreml_diff as coreml_diff, example as example,
                      executed_evidence as executed_evidence, export as export, history as history, ingest as ingest,
                      kernel_evidence as kernel_evidence, kernel_view as kernel_view, kernels as kernels,
                      latency as latency, load_etdump as load_etdump, load_profile as load_profile,
                      numerics as numerics, plan as plan, program as program, report as report, run as run,
                      trace as trace, validate as validate)
    from .model import Profile as Profile

# Polars' allocator (jemalloc) keeps freed pages for seconds by default, so every stage of reading a large profile
# added its temporaries to the process's peak memory (~85 MB at a million events). Freed pages go back at once
# instead — unless the user configured it, and only if Polars is not loaded yet (the setting is read at load).
_os.environ.setdefault("_RJEM_MALLOC_CONF", "dirty_decay_ms:0,muzzy_decay_ms:0")
_API = ("load_etdump", "load_profile", "analyze", "latency", "compare", "breakdown", "breakdowns", "kernels",
        "kernel_evidence", "executed_evidence", "kernel_view", "validate", "ane", "ane_diff", "ane_folder", "report",
        "trace", "example", "run", "plan", "ingest", "history", "export", "coreml", "coreml_diff", "program", "numerics",
        "Workspace", "ReadOptions")
__all__ = [*_API, "Profile", "__version__"]


def __getattr__(name):  # lazy: keep `import edgeprof` free of numpy/polars
    if name in _API:
        from . import api

        return getattr(api, name)
    if name == "Profile":
        from .model import Profile

        return Profile
    raise AttributeError(name)
