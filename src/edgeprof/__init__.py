"""edgeprof: on-device inference profiles (ExecuTorch ETDump, XNNPACK logs, Apple Neural Engine reports) → answers."""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["load_etdump", "Profile", "__version__"]


def __getattr__(name):  # lazy: keep `import edgeprof` free of numpy/polars
    if name == "load_etdump":
        from .api import load_etdump

        return load_etdump
    if name == "Profile":
        from .model import Profile

        return Profile
    raise AttributeError(name)
