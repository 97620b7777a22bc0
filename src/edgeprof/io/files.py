"""Opening what users hand us, safely: only regular files are read, reads are bounded, and probing a path
that came from data (a manifest's model, a name in a log) never raises.

A FIFO would block a read forever and a symlink to ``/dev/zero`` would never end; both are refused before
anything is opened, with the same one-line error every reader uses.
"""

from __future__ import annotations

import os
import stat

from ..conventions import display  # noqa: F401 - re-exported: readers name files with it
from ..errors import InputError

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def check_regular(path, error=InputError) -> os.stat_result:
    """``os.stat`` of ``path`` (symlinks followed) when it is a regular file; else ``error(path, why)``."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise error(path, "no such file") from None
    except NotADirectoryError:
        raise error(path, "no such file (a parent is not a folder)") from None
    except PermissionError:
        raise error(path, "permission denied") from None
    except (OSError, ValueError) as e:
        raise error(path, f"cannot open ({getattr(e, 'strerror', None) or e})") from None
    if stat.S_ISDIR(st.st_mode):
        raise error(path, "is a folder, expected a file")
    if not stat.S_ISREG(st.st_mode):
        what = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
        raise error(path, f"is {what}, not a regular file: refused")
    return st


def read_regular(path, limit: int, what: str = "file", error=InputError) -> bytes:
    """All bytes of a regular file of at most ``limit`` bytes (the read itself is bounded too)."""
    st = check_regular(path, error)
    if st.st_size > limit:
        raise error(path, f"{st.st_size} bytes is larger than any {what} ({limit >> 20} MB limit)")
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except PermissionError:
        raise error(path, "permission denied") from None
    except OSError as e:
        raise error(path, f"cannot read ({e.strerror or e})") from None
    if len(data) > limit:
        raise error(path, f"larger than any {what} ({limit >> 20} MB limit)")
    return data


def is_file(path) -> bool:
    """``Path.is_file`` that answers False instead of raising (too-long names, NUL bytes, loops, permissions)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def is_dir(path) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def exists(path) -> bool:
    try:
        os.stat(path)
        return True
    except (OSError, ValueError):
        return False
