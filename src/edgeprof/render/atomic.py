"""Atomic file output: write to a temporary file beside the target, then rename over it.

* A crash or an error never leaves a half-written file under a final name; :class:`Batch` extends that to
  several files — all of them are replaced, or none (targets already replaced are put back).
* Temporary files are named ``.<name>.edgeprof-<pid>-<random>.tmp``. Those a killed run left behind are
  removed by the next edgeprof that writes into the same folder: only files of that pattern, and only when
  their process is gone (or they are a day old).
* A target that exists and is not a regular file — ``/dev/null``, a FIFO, ``/dev/stdout`` — is written to
  directly, never renamed over; a folder is refused.
* Confined (:mod:`edgeprof.access`, the agent server): an output must lie inside the roots (its folder's
  real path), must not be a symlink, and must be a regular file or absent — links, FIFOs, devices and
  ``/proc/self/fd/N`` are refused, never written through.
* Every ``OSError`` becomes one :class:`~edgeprof.errors.OutputError` naming the path and the reason.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
import time
from contextlib import contextmanager
from pathlib import Path

from ..errors import OutputError, output_error
from .. import access


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_MODE = 0o666 & ~_umask()  # what a plain open() would give the file
_TMP = re.compile(r"^\..{0,40}\.edgeprof-(\d+)-[0-9a-f]{8}\.tmp$", re.DOTALL)
STALE_SECONDS = 24 * 3600
_swept: set[str] = set()


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, OverflowError, ValueError):
        return True
    return True


def sweep_stale(folder: Path) -> int:
    """Remove temporary files of edgeprof runs that died in ``folder`` (once per folder and process)."""
    key = os.fspath(folder)
    if key in _swept:
        return 0
    _swept.add(key)
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    now = time.time()
    for e in entries:
        m = _TMP.match(e.name)
        if not m:
            continue
        try:
            st = e.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode):
                continue
            if not _alive(int(m.group(1))) or now - st.st_mtime > STALE_SECONDS:
                os.unlink(e.path)
                removed += 1
        except (OSError, ValueError):
            continue
    return removed


def _confined_target(path: Path) -> None:
    """Under confinement: the output's folder lies inside the roots and the output is no link and no special
    file (checked without following it)."""
    if not access.inside(path.parent):
        raise OutputError(path, "cannot write: " + access.outside_message())
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise output_error(path, e) from None
    if stat.S_ISLNK(st.st_mode):
        raise OutputError(path, "cannot write: it is a symbolic link (outputs are not written through links here)")
    if stat.S_ISDIR(st.st_mode):
        raise OutputError(path, "cannot write: it is a folder")
    if not stat.S_ISREG(st.st_mode):
        raise OutputError(path, "cannot write: not a regular file (a FIFO, device or socket): refused")


def _direct(path: Path) -> bool:
    """True when ``path`` exists and is not a regular file: write to it directly. A folder is refused."""
    if access.roots() is not None:
        _confined_target(path)
        return False
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    except OSError as e:
        if e.errno in (errno.ENOTDIR, errno.ENAMETOOLONG, errno.ELOOP, errno.EACCES):
            raise output_error(path, e) from None
        return False
    if stat.S_ISDIR(st.st_mode):
        raise OutputError(path, "cannot write: it is a folder")
    return not stat.S_ISREG(st.st_mode)


def _tmp_for(path: Path) -> Path:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise output_error(path.parent, e) from None
    sweep_stale(path.parent)
    head = path.name[:40].encode("utf-8", "surrogateescape")[:40].decode("utf-8", "ignore")
    tmp = path.parent / f".{head}.edgeprof-{os.getpid()}-{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), _MODE)
        os.close(fd)
    except OSError as e:
        raise output_error(path, e) from None
    return tmp


@contextmanager
def atomic_path(path):
    """Yield a path to write; it replaces ``path`` only if the block succeeds. A non-regular target (a device,
    a FIFO) is yielded itself and written in place."""
    path = Path(path)
    if _direct(path):
        try:
            yield path
        except OSError as e:
            raise output_error(path, e) from None
        return
    tmp = _tmp_for(path)
    try:
        yield tmp
        os.replace(tmp, path)
    except OSError as e:
        _unlink(tmp)
        raise output_error(path, e) from None
    except BaseException:
        _unlink(tmp)
        raise


def _unlink(p: Path) -> None:
    try:
        p.unlink()
    except OSError:
        pass


def write_bytes(path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            f.write(data)


def write_text(path, text: str) -> None:
    write_bytes(path, text.encode("utf-8", "replace"))


class Batch:
    """Stage several outputs; ``commit()`` (or leaving the ``with`` block normally) puts them all in place —
    or none: a failure while renaming puts back the targets already replaced. ``discard()`` (or an
    exception) removes the staged files."""

    def __init__(self):
        self._staged: list[tuple[Path, Path]] = []
        self._direct: list[Path] = []

    def path(self, target) -> Path:
        target = Path(target)
        if _direct(target):
            self._direct.append(target)
            return target
        tmp = _tmp_for(target)
        self._staged.append((tmp, target))
        return tmp

    def commit(self) -> list[Path]:
        done: list[tuple[Path, Path, Path | None]] = []
        try:
            for tmp, target in self._staged:
                backup = None
                if os.path.lexists(target):
                    if os.path.isdir(target):
                        raise OutputError(target, "cannot write: it is a folder")
                    backup = _tmp_for(target)
                    os.replace(target, backup)
                try:
                    os.replace(tmp, target)
                except OSError:
                    if backup is not None:
                        os.replace(backup, target)
                    raise
                done.append((tmp, target, backup))
        except (OSError, OutputError) as e:
            for _, target, backup in reversed(done):  # put back what was already replaced
                try:
                    if backup is not None:
                        os.replace(backup, target)
                    else:
                        os.unlink(target)
                except OSError:
                    pass
            failed = next((t for tmp, t in self._staged if os.path.lexists(tmp)), self._staged[-1][1])
            self.discard()
            raise e if isinstance(e, OutputError) else output_error(failed, e) from None
        for _, _, backup in done:
            if backup is not None:
                _unlink(backup)
        written = [t for _, t in self._staged] + self._direct
        self._staged, self._direct = [], []
        return written

    def discard(self) -> None:
        for tmp, _ in self._staged:
            _unlink(tmp)
        self._staged, self._direct = [], []

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            targets = {os.fspath(tmp): target for tmp, target in self._staged}
            self.discard()
            if issubclass(exc_type, OSError):
                name = getattr(exc, "filename", None)
                last = list(targets.values())[-1] if targets else "output file"  # the one being written
                raise output_error(targets.get(os.fspath(name), name) if name else last, exc) from None
        else:
            self.commit()
        return False
