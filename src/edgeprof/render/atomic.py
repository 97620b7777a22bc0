"""Atomic file output: write to a temporary file beside the target, then rename over it.

A crash or an error never leaves a half-written file; :class:`Batch` extends that to several files
(all renamed at the end, or none).
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_MODE = 0o666 & ~_umask()  # what a plain open() would give the file


def _tmp_for(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.fchmod(fd, _MODE)
    os.close(fd)
    return Path(tmp)


@contextmanager
def atomic_path(path):
    """Yield a temporary path to write; it replaces ``path`` only if the block succeeds."""
    path = Path(path)
    tmp = _tmp_for(path)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes(path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_text(path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


class Batch:
    """Stage several outputs; ``commit()`` (or leaving the ``with`` block normally) renames them all,
    ``discard()`` (or an exception) removes them."""

    def __init__(self):
        self._staged: list[tuple[Path, Path]] = []

    def path(self, target) -> Path:
        target = Path(target)
        tmp = _tmp_for(target)
        self._staged.append((tmp, target))
        return tmp

    def commit(self) -> list[Path]:
        done = []
        for tmp, target in self._staged:
            os.replace(tmp, target)
            done.append(target)
        self._staged = []
        return done

    def discard(self) -> None:
        for tmp, _ in self._staged:
            tmp.unlink(missing_ok=True)
        self._staged = []

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.discard()
        else:
            self.commit()
        return False
