"""Give freed heap memory back to the operating system (glibc's ``malloc_trim``).

Decoding a large ETDump allocates and frees many large numpy temporaries; glibc keeps the freed pages
resident, and Polars (which has its own allocator) cannot reuse them, so the process's peak memory
grows stage by stage. Trimming between stages keeps the peak close to what is actually live. It
costs a few milliseconds and does nothing outside Linux/glibc.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Literal

_trim: Callable[[int], object] | Literal[False] | None = None


def release_free_memory() -> None:
    global _trim
    if _trim is None:
        _trim = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                _trim = ctypes.CDLL("libc.so.6").malloc_trim
            except (OSError, AttributeError):
                _trim = False
    if _trim:
        _trim(0)
