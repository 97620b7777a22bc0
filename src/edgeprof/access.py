"""Where this process may read and write: the one place that decides, and the one way a confined process opens.

Unconfined (the CLI, the Python API), every path the user names may be read, and discovery stays inside the
folder the user named (see :mod:`edgeprof.io.runfolder`). Confined (``edgeprof mcp --root DIR``: every tool
call runs in a worker process that calls :func:`confine` first), a path is allowed only when it lies inside one
of the roots, and **the file checked is the file used**: :func:`open_beneath` opens it from the root's directory
descriptor (held since :func:`confine`), one component at a time without following links (``O_NOFOLLOW``); a
symbolic link met on the way is read and resolved here — a relative one from the folder it sits in, an absolute
one only when it names a path inside a root — and one that leads outside is refused (at most
:data:`MAX_LINKS` links per path). ``..`` goes back to the folder the walk came from, never above the root. A
symlink or folder swapped between a check and the open therefore cannot redirect anything: there is no check
apart from the open. Every opener of outside bytes (:func:`edgeprof.files.open_regular`), every probe and
folder listing (:mod:`edgeprof.files`) and every output (:mod:`edgeprof.writer`, through the output
folder's descriptor) goes through here.

:func:`inside` remains a check by name (the real path), for decisions that open nothing (which folders
discovery climbs to); it is never what makes a read or a write safe.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading

from .errors import InputError

_roots: tuple[str, ...] | None = None
_root_fds: dict[str, int] = {}
_lock = threading.Lock()

MAX_LINKS = 40  # symbolic links resolved for one path (the kernel's own limit)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_PATH = getattr(os, "O_PATH", 0)  # Linux: a handle to a place in the tree, no read permission needed
_DIR = (O_PATH or os.O_RDONLY) | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_LINK_ERRNOS = (errno.ELOOP, errno.EMLINK, errno.ENOTDIR)  # what O_NOFOLLOW gives on a link (ENOTDIR: O_DIRECTORY)


def confine(roots) -> None:
    """From now on, this process reads and writes only inside ``roots`` (real paths; symlinks followed), each
    opened once here: every later open starts from these descriptors."""
    global _roots
    real = tuple(os.path.realpath(r) for r in roots)
    fds = {}
    for r in real:
        fds[r] = os.open(r, (O_PATH or os.O_RDONLY) | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    with _lock:
        old = list(_root_fds.values())
        _root_fds.clear()
        _root_fds.update(fds)
        _roots = real
    for fd in old:
        _close(fd)


def release() -> None:
    """Back to unconfined (tests)."""
    global _roots
    with _lock:
        old = list(_root_fds.values())
        _root_fds.clear()
        _roots = None
    for fd in old:
        _close(fd)


def roots() -> tuple[str, ...] | None:
    """The roots this process is confined to, or None when it is not confined."""
    return _roots


def within(real: str, root: str) -> bool:
    """Whether the real path ``real`` is ``root`` or lies below it."""
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def inside(path) -> bool:
    """True when ``path`` may be touched: always when unconfined; else when its real path lies in a root (a
    check by name: opens go through :func:`open_beneath`)."""
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


def bound(folder) -> str | None:
    """The root that holds ``folder`` (discovery climbs no higher), None when unconfined."""
    if _roots is None:
        return None
    real = os.path.realpath(folder)
    for r in _roots:
        if within(real, r):
            return r
    return None


class Outside(Exception):
    """Raised by the walk: the path (or a link on it) leads outside the roots."""


def _close(fd) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


def _parts(rel: str) -> list[str]:
    return [p for p in rel.split("/") if p not in ("", ".")]


def _root_of(abspath: str) -> tuple[str, list[str]] | None:
    """(root, components below it) of an absolute, normalised path that lies lexically inside a root."""
    for r in sorted(_roots or (), key=len, reverse=True):
        if within(abspath, r):
            return r, _parts(abspath[len(r):])
    return None


def _start(path) -> tuple[str, list[str]]:
    """Where the walk for ``path`` starts: the root it names (lexically, after making it absolute), else — a
    path reaching a root through a link outside it (``/tmp/alias/x``) — the root its real path lies in."""
    p = os.fsdecode(os.fspath(path))
    if "\x00" in p:
        raise ValueError("embedded NUL in path")
    found = _root_of(os.path.abspath(p))
    if found is None:
        found = _root_of(os.path.realpath(p))
    if found is None:
        raise Outside
    return found


def open_beneath(path, flags: int = os.O_RDONLY, mode: int = 0o666, *, make_parents: bool = False) -> int:
    """A descriptor of ``path`` opened with ``flags`` by walking from its root's descriptor (see the module's
    text); only for a confined process. Raises :class:`Outside` for a path or link that leads outside the roots,
    ``OSError`` for what the open itself meets (no such file, a parent that is not a folder, too many links).
    ``make_parents``: missing folders on the way are made (for outputs; the last one too when ``flags`` ask for
    a folder, ``O_DIRECTORY``). ``flags`` apply to the last component
    (``O_NOFOLLOW`` is added; a link there is resolved like any other); ``O_PATH`` gives a handle for probes."""
    with _lock:
        if _roots is None:
            raise RuntimeError("open_beneath needs a confined process")
        root, pending = _start(path)
        base = os.dup(_root_fds[root])
    stack: list[int] = [base]  # the folders walked into, the root first (all owned here)
    pending.reverse()  # components still to walk, the next one last
    hops = 0
    err: OSError | None  # the open's own error, for a name that turns out to be no link
    try:
        if not pending:  # the root itself
            return os.open(".", flags | _CLOEXEC, mode, dir_fd=base)
        while pending:
            name = pending.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if len(stack) == 1:
                    raise Outside
                _close(stack.pop())
                continue
            cur, last = stack[-1], not pending
            try:  # a link is read, never opened (a look at the name first; the open below cannot follow either)
                link = stat.S_ISLNK(os.stat(name, dir_fd=cur, follow_symlinks=False).st_mode)
                fd = None if link else \
                    os.open(name, (flags | _NOFOLLOW | _CLOEXEC) if last else _DIR, mode, dir_fd=cur)
            except FileNotFoundError:
                if not (make_parents and (not last or flags & getattr(os, "O_DIRECTORY", 0))):
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=cur)
                pending.append(name)  # opened (no-follow) on the next turn, whatever is there now
                continue
            except OSError as e:
                if e.errno not in _LINK_ERRNOS:
                    raise
                fd, err = None, e  # it became a link since the look (or is no folder: _link_text says)
            else:
                err = None
            if fd is not None and last and flags & O_PATH and O_PATH and stat.S_ISLNK(os.fstat(fd).st_mode):
                _close(fd)  # an O_PATH|O_NOFOLLOW open gives the link itself: resolved here like any other
                fd = None
            if fd is None:
                hops += 1
                if hops > MAX_LINKS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
                _follow(_link_text(name, cur, err), pending, stack)
                continue
            if last:
                return fd
            stack.append(fd)
        # the path ended in ".." or "." after a folder: that folder, opened as asked
        return os.open(".", flags | _CLOEXEC, mode, dir_fd=stack[-1])
    finally:
        for fd in stack:
            _close(fd)


def _link_text(name: str, cur: int, err: OSError | None) -> str:
    """The text of the link ``name`` in folder ``cur``; the open's own error when ``name`` is no link (a file
    where a folder belongs)."""
    try:
        return os.readlink(name, dir_fd=cur)
    except OSError as e:
        if e.errno == errno.EINVAL and err is not None:  # not a link: the open's error stands (ENOTDIR …)
            raise err from None
        raise


def _follow(target: str, pending: list[str], stack: list[int]) -> None:
    """Continue the walk through a link: a relative one from the current folder, an absolute one from the root
    it names (refused when it names none)."""
    if target.startswith("/"):
        found = _root_of(os.path.normpath(target))
        if found is None:
            raise Outside
        root, parts = found
        with _lock:
            fd = os.dup(_root_fds[root])
        for old in stack:
            _close(old)
        stack[:] = [fd]
        pending.extend(reversed(parts))
    else:
        pending.extend(reversed(target.split("/")))
