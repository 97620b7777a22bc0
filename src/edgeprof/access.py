"""Where this process may read and write: the one place that decides.

Unconfined (the CLI, the Python API), every path the user names may be read, and discovery stays inside the
folder the user named (see :mod:`edgeprof.io.runfolder`). Confined (``edgeprof mcp --root DIR``: every tool
call runs in a worker process that calls :func:`confine` first), a path is allowed only when its real path —
symlinks followed — lies inside one of the roots. Every opener of outside bytes goes through
:func:`edgeprof.files.open_regular`, every probe (``is_file``, ``is_dir``, folder listings of discovery)
through :func:`inside`, and every output through :mod:`edgeprof.render.atomic`, all of which ask here; so a
symlink found inside a folder, a manifest naming ``../../secret``, a trace folder beside the root or an
ETRecord above it are refused or not seen, exactly like an argument that points outside.
"""

from __future__ import annotations

import os

from .errors import InputError

_roots: tuple[str, ...] | None = None


def confine(roots) -> None:
    """From now on, this process reads and writes only inside ``roots`` (real paths; symlinks followed)."""
    global _roots
    _roots = tuple(os.path.realpath(r) for r in roots)


def release() -> None:
    """Back to unconfined (tests)."""
    global _roots
    _roots = None


def roots() -> tuple[str, ...] | None:
    """The roots this process is confined to, or None when it is not confined."""
    return _roots


def within(real: str, root: str) -> bool:
    """Whether the real path ``real`` is ``root`` or lies below it."""
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def inside(path) -> bool:
    """True when ``path`` may be touched: always when unconfined; else when its real path lies in a root."""
    if _roots is None:
        return True
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return False
    return any(within(real, r) for r in _roots)


def outside_message() -> str:
    return f"lies outside the allowed roots ({', '.join(_roots or ())}): refused"


def check(path, error=InputError) -> None:
    """Raise ``error(path, …)`` when ``path`` lies outside the roots (nothing is opened to find out)."""
    if not inside(path):
        raise error(path, outside_message())


def check_fd(fd: int, path, error=InputError) -> None:
    """After opening: the file really opened (``/proc/self/fd``) lies inside the roots — a symlink swapped
    between the check and the open is caught here."""
    if _roots is None:
        return
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:  # no /proc (macOS): the check before the open stands
        return
    if not any(within(real, r) for r in _roots):
        raise error(path, outside_message())


def bound(folder) -> str | None:
    """The root that holds ``folder`` (discovery climbs no higher), None when unconfined."""
    if _roots is None:
        return None
    real = os.path.realpath(folder)
    for r in _roots:
        if within(real, r):
            return r
    return None
