"""Opening what users hand us, safely: only regular files are read, reads are bounded, and probing a path
that came from data (a manifest's model, a name in a log) never raises.

A FIFO would block a read forever and a symlink to ``/dev/zero`` would never end; both are refused before
anything is read, with the same one-line error every reader uses. Every reader of outside bytes opens through
:func:`open_regular` (or :func:`read_regular`), so the process's confinement (:mod:`edgeprof.access`) and
the limits hold for all of them.
"""

from __future__ import annotations

import os
import stat

from .conventions import display  # noqa: F401 - re-exported: readers name files with it
from .errors import InputError
from . import access

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind_error(path, st: os.stat_result, error):
    if stat.S_ISDIR(st.st_mode):
        return error(path, "is a folder, expected a file")
    what = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
    return error(path, f"is {what}, not a regular file: refused")


def _stat_error(path, e: BaseException, error):
    if isinstance(e, FileNotFoundError):
        return error(path, "no such file")
    if isinstance(e, NotADirectoryError):
        return error(path, "no such file (a parent is not a folder)")
    if isinstance(e, PermissionError):
        return error(path, "permission denied")
    return error(path, f"cannot open ({getattr(e, 'strerror', None) or e})")


def check_regular(path, error=InputError) -> os.stat_result:
    """``os.stat`` of ``path`` (symlinks followed) when it is a regular file inside the allowed roots; else
    ``error(path, why)``."""
    access.check(path, error)
    try:
        st = os.stat(path)
    except (OSError, ValueError) as e:
        raise _stat_error(path, e, error) from None
    if not stat.S_ISREG(st.st_mode):
        raise _kind_error(path, st, error)
    return st


def open_regular(path, error=InputError):
    """A binary file object of the regular file at ``path``: refused unopened when it lies outside the roots;
    opened without blocking (a FIFO put in its place cannot hang the open) and checked again on the open file
    (a regular file, the one inside the roots)."""
    check_regular(path, error)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError) as e:
        raise _stat_error(path, e, error) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _kind_error(path, st, error)
        access.check_fd(fd, path, error)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path, limit: int, what: str = "file", error=InputError) -> bytes:
    """All bytes of a regular file of at most ``limit`` bytes: the size is checked first, then exactly that
    many bytes are read (nothing is reserved for a file that is not there)."""
    with open_regular(path, error) as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise error(path, f"{size} bytes is larger than any {what} ({limit >> 20} MB limit)")
        try:
            data = f.read(size)
            grew = f.read(1)
        except PermissionError:
            raise error(path, "permission denied") from None
        except OSError as e:
            raise error(path, f"cannot read ({e.strerror or e})") from None
    if grew:
        raise error(path, "changed while it was read (it grew)")
    return data


def read_text(path, limit: int, what: str = "file", error=InputError) -> str:
    """A UTF-8 text file through :func:`read_regular`; undecodable bytes are an error naming their offset."""
    raw = read_regular(path, limit, what, error)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise error(path, f"not UTF-8 text (is it a {what}?)", offset=e.start) from None


def is_file(path) -> bool:
    """``Path.is_file`` that answers False instead of raising (too-long names, NUL bytes, loops, permissions),
    and for anything outside the allowed roots."""
    try:
        return access.inside(path) and stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def is_dir(path) -> bool:
    try:
        return access.inside(path) and stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def exists(path) -> bool:
    try:
        if not access.inside(path):
            return False
        os.stat(path)
        return True
    except (OSError, ValueError):
        return False
