"""Where an output may go — the checks of the one writer (:mod:`edgeprof.writer`): the output's folder held by
a descriptor (confined: walked from the root, :mod:`edgeprof.access`), and the rule that an output is never an
input of the running command, the history store it uses, a path inside a store folder it reads, or a file it
already wrote for another input (:func:`conflict`, against the scopes :mod:`edgeprof.files` keeps)."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from pathlib import Path

from .errors import OutputError, output_error
from . import access, files


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


MODE = 0o666 & ~_umask()  # what a plain open() would give the file
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
TMPFILE = getattr(os, "O_TMPFILE", 0)
PROC = os.path.isdir("/proc/self/fd")
DIRFD = (access.O_PATH or os.O_RDONLY) | getattr(os, "O_DIRECTORY", 0) | CLOEXEC
NO_TMPFILE = (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOSYS)


def key_of(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def close_fd(fd) -> None:
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)


def open_folder(target: Path, made: list | None = None) -> int:
    """A descriptor of ``target``'s folder (made when missing); confined, walked from the root. ``made`` receives
    the folders that were missing, outermost first (made here, unless another process made one meanwhile)."""
    parent = target.parent
    if made is not None:
        missing = []
        p = Path(os.path.abspath(parent))
        while not os.path.lexists(p) and p != p.parent:
            missing.append(p)
            p = p.parent
        made.extend(reversed(missing))
    if access.roots() is not None:
        try:
            return access.open_beneath(parent, DIRFD, make_parents=True)
        except access.Outside:
            raise OutputError(target, "cannot write: " + access.outside_message()) from None
        except (OSError, ValueError) as e:
            raise output_error(parent, e) from None
    try:
        parent.mkdir(parents=True, exist_ok=True)
        return os.open(parent, DIRFD)
    except (OSError, ValueError) as e:
        raise output_error(parent, e) from None


def make_folder(path) -> tuple[int, int]:
    """Make the folder ``path`` (and its parents; confined, by the walk from the root): its device and inode.
    ``OSError`` as met."""
    if access.roots() is not None:
        try:
            fd = access.open_beneath(path, DIRFD, make_parents=True)
        except access.Outside:
            raise OutputError(path, "cannot write: " + access.outside_message()) from None
    else:
        Path(path).mkdir(parents=True)
        fd = os.open(path, DIRFD)
    try:
        return key_of(os.fstat(fd))
    finally:
        close_fd(fd)


def folder_beneath(top, folder, *, make: bool = True, refuse=None) -> tuple[int, int] | None:
    """The (dev, ino) of ``folder`` — ``top`` itself (as the user named it) or a folder inside it — walked from
    ``top`` one component at a time without following a link; missing folders are made (``make``; else None at the
    first missing one): what a caller hands the writer (``folder=``) to write only into a real folder of ``top`` — a
    different folder there by then is refused. A link or a file where a folder belongs is ``refuse(path)`` (default:
    :class:`OutputError`, one line). Unconfined only (confined, every output's folder is walked from the root)."""
    def refused(p: Path):
        if refuse is not None:
            return refuse(p)
        what = "a symbolic link" if os.path.islink(p) else "not a folder"
        return OutputError(p, f"cannot write: {what} where a folder is written (never followed): refused")

    top, folder = Path(top), Path(folder)
    rel = Path(os.path.abspath(folder)).relative_to(os.path.abspath(top)).parts  # ValueError: not inside (a bug)
    if ".." in rel:
        raise ValueError(f"{folder} is not inside {top}")
    walk = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | CLOEXEC
    try:
        if make:
            top.mkdir(parents=True, exist_ok=True)
        fd = os.open(top, walk & ~getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise refused(top) from None
    except (OSError, ValueError) as e:
        raise output_error(top, e) from None
    cur = top
    try:
        for part in rel:
            cur = cur / part
            nfd = None
            for _ in range(2):  # made here, then opened (whatever is there now, never followed)
                try:
                    nfd = os.open(part, walk, dir_fd=fd)
                    break
                except FileNotFoundError:
                    if not make:
                        return None
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o777, dir_fd=fd)
                except OSError as e:
                    if e.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                        raise output_error(cur, e) from None
                    break
            if nfd is None:
                raise refused(cur)
            close_fd(fd)
            fd = nfd
        return key_of(os.fstat(fd))
    except OSError as e:
        raise output_error(cur, e) from None
    finally:
        close_fd(fd)


def tmp_name(name: str) -> str:
    head = name[:40].encode("utf-8", "surrogateescape")[:40].decode("utf-8", "ignore")
    return f".{head}.edgeprof-{os.getpid()}-{secrets.token_hex(4)}.tmp"


def conflict(out, st: os.stat_result | None) -> str | None:
    """Why ``out`` may not be written by the running command (its target's status ``st``), or None."""
    scopes = files.scopes()
    if not scopes:
        return None
    own_store = out.store is not None and in_tree(out.dir_fd, {out.store: ""}) is not None
    if st is not None and not own_store:  # (a store rewriting its own files: the store's own rules hold)
        key = key_of(st)
        for s in scopes:
            with s.lock:
                if key in s.written and not out.again:
                    return ("cannot write: this command already wrote this file (for another input), so it would be "
                            "replaced: refused — give each output its own name")
                inp = s.inputs.get(key)
            if inp is not None and key not in s.written:
                same = "" if os.path.abspath(inp) == os.path.abspath(out.target) else f" ({inp})"
                return f"cannot write: it is an input of this command{same}: refused"
    folder = os.fstat(out.dir_fd)
    for s in scopes:
        with s.lock:
            owner = s.names.get((folder.st_dev, folder.st_ino, out.name))
            trees = dict(s.trees)
        if owner is not None:
            return f"cannot write: it belongs to the history store {owner} this command uses: refused"
        trees.pop(out.store, None)
        if trees:
            store = in_tree(out.dir_fd, trees)
            if store is not None:
                return f"cannot write: it lies inside the history store {store} this command reads: refused"
    return None


def in_tree(dir_fd: int, trees: dict) -> str | None:
    """The store among ``trees`` ((dev, ino) of folders) that holds the folder ``dir_fd``, or None."""
    fd = os.dup(dir_fd)
    try:
        for _ in range(4096):
            st = os.fstat(fd)
            if key_of(st) in trees:
                return trees[key_of(st)]
            up = os.open("..", DIRFD, dir_fd=fd)
            if key_of(os.fstat(up)) == key_of(st):  # the top of the tree
                close_fd(up)
                return None
            close_fd(fd)
            fd = up
    except OSError:
        return None
    finally:
        close_fd(fd)
    return None


def names_a_descriptor(target: Path) -> bool:
    """``/dev/stdout``, ``/dev/fd/3``, ``/proc/self/fd/1``: a name for an open descriptor (or a device), written in
    place even when what it stands for is a regular file (stdout redirected to one) — never renamed over."""
    try:
        folder = os.path.realpath(target.parent)
    except (OSError, ValueError):
        return False
    return folder == "/dev" or folder.startswith("/proc/")
