"""edgeprof: on-device inference profiles (ExecuTorch ETDump, XNNPACK logs, Apple Neural Engine reports) → answers.

The Python API is :mod:`edgeprof.api`; its functions are also here, imported on first use so that
``import edgeprof`` stays free of numpy and polars::

    import edgeprof
    cmp = edgeprof.compare("off.etdp", "on.etdp")
    cmp.speedup.estimate, cmp.speedup.ci.low, cmp.verdict
"""

from __future__ import annotations

from .conventions import TOOL_VERSION as __version__
_API = ("load_etdump", "load_profile", "analyze", "latency", "compare", "breakdown", "breakdowns", "kernels",
        "kernel_evidence", "executed_evidence", "kernel_view", "validate", "ane", "ane_diff", "ane_folder", "report",
        "trace", "example", "run", "plan", "ingest", "history", "export", "coreml", "coreml_diff", "program", "Workspace",
        "ReadOptions")
__all__ = [*_API, "Profile", "__version__"]


def __getattr__(name):  # lazy: keep `import edgeprof` free of numpy/polars
    if name in _API:
        from . import api

        return getattr(api, name)
    if name == "Profile":
        from .model import Profile

        return Profile
    raise AttributeError(name)
