"""Opening what users hand us, safely: only regular files are read, reads are bounded, probing a path that
came from data (a manifest's model, a name in a log) never raises, and every input a command reads is noted
so that nothing it writes can replace it.

A FIFO would block a read forever and a symlink to ``/dev/zero`` would never end; both are refused before
anything is read, with the same one-line error every reader uses. Every reader of outside bytes opens through
:func:`open_regular` (or :func:`read_regular`), every probe through :func:`is_file`/:func:`is_dir`/
:func:`exists`, every folder listing through :func:`listdir`/:func:`glob`/:func:`rglob`:

* **Open once, then use that descriptor.** The file is opened (without blocking: a FIFO put in its place cannot
  hang the open), then ``fstat``-ed: what is checked is what is read. Confined (:mod:`edgeprof.access`, the
  agent server) the open walks from the root's descriptor, so a symlink swapped between two calls cannot
  redirect it. A library that needs a path reads the open file as ``/proc/self/fd/N`` (:func:`fd_path`).
* **The command's scope** (:func:`command`, :func:`command_scope`): every public API function and every CLI
  command runs in one; nested calls share the outermost. Each file opened is noted there by device and inode
  (:func:`note_input`), the history store with its ``.wal`` and a Parquet store's folder too
  (:func:`note_store`), and :mod:`edgeprof.writer` refuses to write over any of them, or twice over
  its own output. Threads of a command (``analyze``'s pool) have no scope of their own: what they read is
  noted in every scope open at the time, what they write checked against all of them.
"""

from __future__ import annotations

import contextlib
import contextvars
import fnmatch
import functools
import os
import stat
import threading
from pathlib import Path

from .conventions import display  # noqa: F401 - re-exported: readers name files with it
from .errors import InputError
from . import access

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_PROBE = access.O_PATH or (os.O_RDONLY | os.O_NONBLOCK)  # a handle to look at, nothing read
_LISTING = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)


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


def open_fd(path, flags: int, error=InputError, mode: int = 0o666) -> int:
    """The one open: confined, walked from the root (:func:`edgeprof.access.open_beneath`; a path or link that
    leads outside is ``error(path, …)``); else ``os.open``. ``OSError`` is left to the caller."""
    if access.roots() is None:
        return os.open(path, flags | _CLOEXEC, mode)
    try:
        return access.open_beneath(path, flags, mode)
    except access.Outside:
        raise error(path, access.outside_message()) from None


def check_regular(path, error=InputError) -> os.stat_result:
    """The status of the regular file at ``path`` (symlinks followed; confined, only inside the roots), noted
    as an input of the command; else ``error(path, why)``."""
    try:
        fd = open_fd(path, _PROBE, error)
    except (OSError, ValueError) as e:
        raise _stat_error(path, e, error) from None
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    if not stat.S_ISREG(st.st_mode):
        raise _kind_error(path, st, error)
    note_input(path, st)
    return st


def open_regular(path, error=InputError):
    """A binary file object of the regular file at ``path``, opened once without blocking (a FIFO put in its
    place cannot hang the open) and checked on the open file; confined, walked from the root. Noted as an input
    of the command."""
    try:
        fd = open_fd(path, os.O_RDONLY | os.O_NONBLOCK, error)
    except (OSError, ValueError) as e:
        raise _stat_error(path, e, error) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _kind_error(path, st, error)
        note_input(path, st)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def fd_path(f) -> str:
    """A path naming the open file ``f`` (a file object or descriptor) for a library that opens by path:
    ``/proc/self/fd/N`` (``/dev/fd/N`` without ``/proc``) — the same file, whatever its name points to now."""
    fd = f if isinstance(f, int) else f.fileno()
    return f"/proc/self/fd/{fd}" if os.path.isdir("/proc/self/fd") else f"/dev/fd/{fd}"


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


def probe(path) -> os.stat_result | None:
    """The status of ``path`` (symlinks followed), None for anything that is not there or may not be touched —
    confined, found by the same walk an open takes; never raises."""
    try:
        if access.roots() is None:
            return os.stat(path)
        fd = access.open_beneath(path, _PROBE)
    except (OSError, ValueError, access.Outside):
        return None
    try:
        return os.fstat(fd)
    except OSError:
        return None
    finally:
        os.close(fd)


def is_file(path) -> bool:
    """``Path.is_file`` that answers False instead of raising (too-long names, NUL bytes, loops, permissions),
    and for anything outside the allowed roots."""
    st = probe(path)
    return st is not None and stat.S_ISREG(st.st_mode)


def is_dir(path) -> bool:
    st = probe(path)
    return st is not None and stat.S_ISDIR(st.st_mode)


def exists(path) -> bool:
    return probe(path) is not None


def listdir(folder) -> list[str]:
    """The names in ``folder`` (confined: the folder opened by the walk from the root); [] when it cannot be
    listed."""
    try:
        if access.roots() is None:
            return os.listdir(folder)
        fd = access.open_beneath(folder, _LISTING)
    except (OSError, ValueError, access.Outside):
        return []
    try:
        return os.listdir(fd)
    except OSError:
        return []
    finally:
        os.close(fd)


def subfolders(folder) -> list[str]:
    """The names of the real folders in ``folder`` (links not followed), as :func:`listdir` lists it."""
    try:
        fd = open_fd(folder, _LISTING) if access.roots() is not None else None
    except (OSError, ValueError, InputError):
        return []
    try:
        with os.scandir(folder if fd is None else fd) as it:
            return sorted(e.name for e in it if e.is_dir(follow_symlinks=False))
    except OSError:
        return []
    finally:
        if fd is not None:
            os.close(fd)


def glob(folder, pattern: str) -> list[Path]:
    """``Path(folder).glob(pattern)`` for a pattern without folders, through :func:`listdir` (sorted)."""
    folder = Path(folder)
    return [folder / n for n in sorted(listdir(folder)) if fnmatch.fnmatchcase(n, pattern)]


def rglob(folder, pattern: str = "*") -> list[Path]:
    """``Path(folder).rglob(pattern)``: every entry below ``folder`` whose name matches, descending into real
    folders only (never through a link, as pathlib does); confined, each folder opened from the one above it
    without following links. Sorted."""
    folder = Path(folder)
    out: list[Path] = []
    if access.roots() is None:
        todo = [folder]
        while todo:
            d = todo.pop()
            try:
                with os.scandir(d) as it:
                    entries = list(it)
            except OSError:
                continue
            for e in entries:
                p = d / e.name
                if fnmatch.fnmatchcase(e.name, pattern):
                    out.append(p)
                with contextlib.suppress(OSError):
                    if e.is_dir(follow_symlinks=False):
                        todo.append(p)
        return sorted(out)
    try:
        top = access.open_beneath(folder, _LISTING)
    except (OSError, ValueError, access.Outside):
        return []
    todo2: list[tuple[int, Path]] = [(top, folder)]
    while todo2:
        fd, d = todo2.pop()
        try:
            with os.scandir(fd) as it:
                entries = list(it)
        except OSError:
            entries = []
        try:
            for e in entries:
                p = d / e.name
                if fnmatch.fnmatchcase(e.name, pattern):
                    out.append(p)
                try:
                    if e.is_dir(follow_symlinks=False):
                        sub = os.open(e.name, _LISTING | getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC, dir_fd=fd)
                        todo2.append((sub, p))
                except OSError:
                    continue
        finally:
            os.close(fd)
    return sorted(out)


# ---- the command's scope: what it read (never to be written over) and what it wrote (never twice) ----------

class Scope:
    """What one command read and wrote, by device and inode (a hard link, ``./x``, ``../d/x`` and a symlink
    are all the same file here)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.inputs: dict[tuple[int, int], str] = {}  # (st_dev, st_ino) → the input as named
        self.names: dict[tuple[int, int, str], str] = {}  # (folder's st_dev, st_ino, name) → whose side file
        self.trees: dict[tuple[int, int], str] = {}  # a folder nothing may be written into → the store it is
        self.written: dict[tuple[int, int], str] = {}  # (st_dev, st_ino) → the output it was written as
        self.parents: list[Scope] = []  # the commands running when this one began in a thread of none of them


_current: contextvars.ContextVar[Scope | None] = contextvars.ContextVar("edgeprof_scope", default=None)
_active: list[Scope] = []
_active_lock = threading.Lock()


@contextlib.contextmanager
def command_scope():
    """The scope of one command: a new one, or the one already open in this context (nested calls share it)."""
    cur = _current.get()
    if cur is not None:
        yield cur
        return
    scope = Scope()
    token = _current.set(scope)
    with _active_lock:
        scope.parents = list(_active)  # (a command called from a thread of another: its rules hold here too)
        _active.append(scope)
    try:
        yield scope
    finally:
        _current.reset(token)
        with _active_lock:
            _active.remove(scope)


def command(fn):
    """Run ``fn`` (a public API function) in a :func:`command_scope`."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with command_scope():
            return fn(*args, **kwargs)

    return wrapper


def scopes() -> list[Scope]:
    """The scope of this context (with those it began under); in a thread without one (a pool's worker), every
    scope open now."""
    cur = _current.get()
    if cur is not None:
        return [cur, *cur.parents]
    with _active_lock:
        return list(_active)


def note_input(path, st: os.stat_result) -> None:
    """``path`` (of status ``st``) is an input of the running command."""
    key = (st.st_dev, st.st_ino)
    for s in scopes():
        with s.lock:
            s.inputs.setdefault(key, os.fsdecode(os.fspath(path)))


def note_store(path, st: os.stat_result, *, folder: bool = False, sidecars=()) -> None:
    """The history store at ``path`` is read or written by the running command: nothing may be written over it
    (a DuckDB file, and its side files by name: ``sidecars``, e.g. ``.wal``) or into it (a Parquet folder)."""
    shown = os.fsdecode(os.fspath(path))
    parent = probe(os.path.dirname(os.path.abspath(shown))) if sidecars else None
    for s in scopes():
        with s.lock:
            if folder:
                s.trees[(st.st_dev, st.st_ino)] = shown
            else:
                s.inputs[(st.st_dev, st.st_ino)] = shown
            if parent is not None:
                for tail in sidecars:
                    s.names[(parent.st_dev, parent.st_ino, os.path.basename(shown) + tail)] = shown
