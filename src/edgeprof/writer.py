"""The one writer: every output edgeprof writes goes through here.

* **Never over an input, never twice.** A target that is — or aliases, by device and inode: a hard link,
  ``./x``, ``../d/x``, a symlink — a file the running command read (:mod:`edgeprof.files` notes each one in
  the command's scope), the history store it reads or writes (the DuckDB file and its ``.wal``), or that lies
  inside a Parquet history folder it reads, is refused in one line (exit 2) before anything is written. So is
  a target this command already wrote (two inputs that map to one output name): an output is never silently
  replaced by another input's — except a record the command rewrites as it goes (``again=True``: ``run``'s
  manifest).
* **Atomic.** The content goes to a file held only by its descriptor (``O_TMPFILE`` in the target's folder;
  where the file system has none, a ``.<name>.edgeprof-<pid>-<random>.tmp`` this process created and tracks),
  which is linked into place only when the block succeeds: a crash or an error never leaves a half-written
  file under a final name, and a killed process leaves no file at all. :class:`Batch` extends that to several
  files — all of them are replaced, or none (targets already replaced are put back).
* **Only what this process made is removed**: its own temporaries and set-aside targets, each checked by
  device and inode before it is unlinked; nothing is ever found by a name pattern.
* **Through the folder's descriptor.** The target's folder is opened once (confined — :mod:`edgeprof.access`,
  the agent server — by the walk from the root, without following links out) and the temporary file is
  created, linked and renamed relative to it: a symlink swapped into the path meanwhile cannot redirect the
  write. Confined, an output must not be a symlink and must be a regular file or absent.
* A target that exists and is not a regular file — ``/dev/null``, a FIFO, ``/dev/stdout`` — is written to
  directly (unconfined only), never renamed over; a FIFO with no reader is refused at once (it would block
  forever); a folder is refused. A name for a descriptor (``/dev/stdout``, ``/dev/fd/3``, ``/proc/self/fd/N``)
  that stands for a *regular* file is written in place too, but not before the command is done: the content is
  staged in an anonymous file and poured into the target only when the block succeeds, after the rules are
  applied again to the file held — by then the command has opened every input, so ``--out /dev/stdin <
  input`` or ``--out /dev/fd/3 3< input`` is refused however early the output was opened, and nothing is
  half-written. (A FIFO or a device can be no input: inputs are regular files.)
* Every ``OSError`` becomes one :class:`~edgeprof.errors.OutputError` naming the path and the reason.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import OutputError, output_error
from . import access, files
from .outputs import (CLOEXEC, MODE, NO_TMPFILE, PROC, TMPFILE, close_fd, conflict, key_of, names_a_descriptor,
                      open_folder, tmp_name)

if TYPE_CHECKING:
    from typing import IO


class _Out:
    """One output being written: its folder held by a descriptor, the new content in a file held by another."""

    def __init__(self, target, *, again: bool = False, store=None, folder=None, content: bool = True):
        self.target, self.again, self.store = Path(target), again, store
        self.folder = folder  # (dev, ino) the target's folder must be (checked by the caller, no link on the way)
        self.dir_fd: int | None = None  # the folder's descriptor, and the new content's (None once closed)
        self.fd: int | None = None
        self.tmp: str | None = None  # the new content's name in the folder, once it has one
        self.aside: tuple[str, tuple[int, int]] | None = None  # the old target set aside by a batch
        self.direct = False
        self.stage: IO[bytes] | None = None  # a direct target that is a regular file: its content, poured in at commit
        self.name = self.target.name
        if self.name in ("", ".", ".."):
            raise OutputError(self.target, "cannot write: it is a folder")
        self.made: list[Path] = []  # the folders made for it (a discarded batch removes them while empty)
        self.dir_fd = open_folder(self.target, self.made)
        try:
            if folder is not None and key_of(os.fstat(self.dir_fd)) != tuple(folder):
                raise OutputError(self.target, "cannot write: its folder is not the one checked (a link put in its "
                                               "place?): refused")
            st = self._status()
            if st is not None:
                self._kind(st)
            why = conflict(self, st)
            if why:
                raise OutputError(self.target, why)
            if content:  # (without: the target checked, its folder held, nothing opened yet — an append)
                self._open_direct() if self.direct else self._open_new()
        except BaseException:
            self.close()
            raise

    def _status(self) -> os.stat_result | None:
        """The target's status (confined: the name itself, no link followed), None when absent."""
        try:
            follow = access.roots() is None and self.folder is None
            return os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=follow)
        except FileNotFoundError:
            return None
        except OSError as e:
            if e.errno in (errno.ENOTDIR, errno.ENAMETOOLONG, errno.ELOOP, errno.EACCES):
                raise output_error(self.target, e) from None
            return None

    def _kind(self, st: os.stat_result) -> None:
        if stat.S_ISDIR(st.st_mode):
            raise OutputError(self.target, "cannot write: it is a folder")
        if access.roots() is not None or self.folder is not None:  # confined, or a folder checked: no link
            if stat.S_ISLNK(st.st_mode):
                raise OutputError(self.target, "cannot write: it is a symbolic link (outputs are not written "
                                               "through links here)")
            if not stat.S_ISREG(st.st_mode):
                raise OutputError(self.target, "cannot write: not a regular file (a FIFO, device or socket): refused")
        self.direct = not stat.S_ISREG(st.st_mode) or names_a_descriptor(self.target)


    def _open_direct(self) -> None:
        """A device, a FIFO, a terminal: opened for writing without blocking (a FIFO nobody reads is refused)."""
        try:
            self.fd = os.open(self.name, os.O_WRONLY | os.O_NONBLOCK | CLOEXEC, dir_fd=self.dir_fd)
            os.set_blocking(self.fd, True)
        except OSError as e:
            if e.errno == errno.ENXIO:
                raise OutputError(self.target, "cannot write: a FIFO nobody is reading from (no reader): "
                                               "refused") from None
            raise output_error(self.target, e) from None
        self.path = files.fd_path(self.fd) if PROC else str(self.target)
        if stat.S_ISREG(os.fstat(self.fd).st_mode):  # a descriptor's name standing for a regular file: staged
            self.stage = tempfile.TemporaryFile()  # noqa: SIM115 - held open until commit or discard
            self.path = files.fd_path(self.stage)

    def recheck_held(self) -> None:
        """(A target written in place) the rules once more on the file held, right before its first byte."""
        assert self.fd is not None  # held until closed
        why = conflict(self, os.fstat(self.fd))
        if why:
            raise OutputError(self.target, why)

    def pour(self) -> None:
        """The staged content into the held target, from its start (the target cut to it, as opening it for
        writing does)."""
        assert self.fd is not None and self.stage is not None  # a held target with its content staged
        src = self.stage.fileno()
        size, done = os.fstat(src).st_size, 0
        os.ftruncate(self.fd, 0)
        os.lseek(self.fd, 0, os.SEEK_SET)
        while done < size:
            view = memoryview(os.pread(src, min(1 << 20, size - done), done))
            if not view:
                break
            done += len(view)
            while view:
                view = view[os.write(self.fd, view):]

    def _open_new(self) -> None:
        if TMPFILE and PROC:
            try:
                self.fd = os.open(".", TMPFILE | os.O_WRONLY | CLOEXEC, MODE, dir_fd=self.dir_fd)
                self.path = files.fd_path(self.fd)
                return
            except OSError as e:
                if e.errno not in NO_TMPFILE:
                    raise output_error(self.target, e) from None
        name = tmp_name(self.name)
        try:
            self.fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | CLOEXEC,
                              MODE, dir_fd=self.dir_fd)
        except OSError as e:
            raise output_error(self.target, e) from None
        self.tmp = name
        self.path = files.fd_path(self.fd) if PROC else str(self.target.parent / name)

    def _named(self) -> str:
        """The new content under a temporary name in the folder (linked there from its descriptor)."""
        if self.tmp is None:
            name = tmp_name(self.name)
            os.link(self.path, name, dst_dir_fd=self.dir_fd, follow_symlinks=True)
            self.tmp = name
        return self.tmp

    def recheck(self) -> None:
        """The rules once more on what is at the target's name now (it may have changed while rendering)."""
        st = self._status()
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise OutputError(self.target, "cannot write: it is a folder")
        why = conflict(self, st)
        if why:
            raise OutputError(self.target, why)

    def put_in_place(self) -> None:
        """Link or rename the new content to the target's name (replacing what is there)."""
        if self.tmp is None:
            try:
                os.link(self.path, self.name, dst_dir_fd=self.dir_fd, follow_symlinks=True)
                return
            except FileExistsError:
                pass
        os.replace(self._named(), self.name, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
        self.tmp = None

    def set_aside(self) -> None:
        """(A batch) the target that is there now, renamed to a temporary name to be put back on failure."""
        try:
            st = os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode):
            raise OutputError(self.target, "cannot write: it is a folder")
        name = tmp_name(self.name)
        os.rename(self.name, name, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
        self.aside = (name, key_of(st))

    def put_back(self) -> None:
        """Undo :meth:`put_in_place` (and :meth:`set_aside`)."""
        if self.aside is not None:
            os.replace(self.aside[0], self.name, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
            self.aside = None
        else:
            assert self.fd is not None  # held until closed
            self._remove(self.name, key_of(os.fstat(self.fd)))

    def record(self) -> None:
        """What was put in place is this command's output (never written twice)."""
        if self.direct:
            return
        assert self.fd is not None  # held until closed
        key, shown = key_of(os.fstat(self.fd)), os.fspath(self.target)
        for s in files.scopes():
            with s.lock:
                s.written[key] = shown

    def _remove(self, name: str, key: tuple[int, int]) -> None:
        """Unlink ``name`` in the folder only while it is still the file this process made (``key``)."""
        try:
            if key_of(os.stat(name, dir_fd=self.dir_fd, follow_symlinks=False)) == key:
                os.unlink(name, dir_fd=self.dir_fd)
        except OSError:
            pass

    def drop_aside(self) -> None:
        if self.aside is not None:
            self._remove(*self.aside)
            self.aside = None

    def discard(self) -> None:
        """Forget the new content: an anonymous file vanishes with its descriptor; a named one is removed."""
        if self.tmp is not None and self.fd is not None:
            self._remove(self.tmp, key_of(os.fstat(self.fd)))
            self.tmp = None
        self.close()

    def close(self) -> None:
        close_fd(self.fd)
        close_fd(self.dir_fd)
        self.fd = self.dir_fd = None
        if self.stage is not None:
            self.stage.close()
            self.stage = None

    def commit(self) -> None:
        if not self.direct:
            self.recheck()
            self.put_in_place()
            self.record()
        elif self.stage is not None:
            self.recheck_held()
            self.pour()
        self.close()


@contextmanager
def atomic_path(path, *, again: bool = False, folder=None):
    """Yield a path to write; it replaces ``path`` only if the block succeeds. A non-regular target (a device,
    a FIFO with a reader) is written in place. ``again``: ``path`` is a record this command rewrites as it
    goes (it may replace this command's own earlier version). ``folder``: the (dev, ino) the caller found
    ``path``'s folder to be, walking to it without following a link — a different folder there now is
    refused, and so is a target that is a link or not a regular file (as when confined)."""
    out = _Out(path, again=again, folder=folder)
    try:
        yield Path(out.path)
        out.commit()
    except OSError as e:
        out.discard()
        raise output_error(path, e) from None
    except BaseException:
        out.discard()
        raise


def write_bytes(path, data: bytes, *, again: bool = False) -> None:
    with atomic_path(path, again=again) as tmp, open(tmp, "wb") as f:
        f.write(data)


def write_text(path, text: str, *, again: bool = False) -> None:
    write_bytes(path, text.encode("utf-8", "replace"), again=again)


def append_text(path, text: str) -> None:
    """Add ``text`` at the end of ``path`` (made when absent): a file another program keeps and reads after this
    command (GitHub's step summary). Checked as every output is (never an input of this command or a history store's,
    never a folder; confined, never a link), then one ``write`` through the folder's descriptor."""
    out = _Out(path, again=True, content=False)
    try:
        assert out.dir_fd is not None  # held from the checks to the write
        fd = os.open(out.name, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | CLOEXEC, MODE,
                     dir_fd=out.dir_fd)
        try:
            os.set_blocking(fd, True)
            data = memoryview(text.encode("utf-8", "replace"))
            while data:
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)
    except OSError as e:
        raise output_error(path, e) from None
    finally:
        out.close()


def scratch_beside(path):
    """An anonymous scratch file (``w+b``, gone when closed) in ``path``'s folder when the output is a regular
    file there (the same file system as the output), else in the temporary folder."""
    target = Path(path)
    st = files.probe(target)
    if TMPFILE and (st is None or stat.S_ISREG(st.st_mode)):
        try:
            fd = open_folder(target)
        except OutputError:
            fd = None
        if fd is not None:
            try:
                return os.fdopen(os.open(".", TMPFILE | os.O_RDWR | CLOEXEC, 0o600, dir_fd=fd), "w+b")
            except OSError:
                pass
            finally:
                close_fd(fd)
    return tempfile.TemporaryFile()


class Batch:
    """Stage several outputs; ``commit()`` (or leaving the ``with`` block normally) puts them all in place —
    or none: a failure while renaming puts back the targets already replaced. ``discard()`` (or an
    exception) drops the staged files. ``store``: the (dev, ino) of the Parquet history folder this batch
    writes into (its own store, which the other outputs of the command may not touch)."""

    def __init__(self, store=None):
        self._outs: list[_Out] = []
        self.store = store

    def path(self, target, *, again: bool = False) -> Path:
        out = _Out(target, again=again, store=self.store)
        if not out.direct:
            assert out.dir_fd is not None  # held from the start
            here = (*key_of(os.fstat(out.dir_fd)), out.name)
            if any(o.dir_fd is not None and (*key_of(os.fstat(o.dir_fd)), o.name) == here for o in self._outs):
                out.close()
                raise OutputError(target, "cannot write: this command already writes this file (for another input), "
                                          "so it would be replaced: refused — give each output its own name")
        self._outs.append(out)
        return Path(out.path)

    def commit(self) -> list[Path]:
        staged = [o for o in self._outs if not o.direct]
        poured = [o for o in self._outs if o.stage is not None]  # written in place, after the others
        done: list[_Out] = []
        current = None
        try:
            for out in poured:
                current = out
                out.recheck_held()
            for out in staged:
                current = out
                out.recheck()
            for out in staged:
                current = out
                out.set_aside()
                done.append(out)
                out.put_in_place()
        except (OSError, OutputError) as e:
            for out in reversed(done):  # put back what was already replaced
                with suppress(OSError):
                    out.put_back()
            self.discard()
            if isinstance(e, OutputError):
                raise
            raise output_error(current.target if current else "output file", e) from None
        for out in done:
            out.drop_aside()
            out.record()
        for out in poured:
            try:
                out.pour()
            except OSError as e:
                self.discard()
                raise output_error(out.target, e) from None
        written = [o.target for o in staged] + [o.target for o in self._outs if o.direct]
        for out in self._outs:
            out.close()
        self._outs = []
        return written

    def discard(self) -> None:
        """Drop every staged output, then the folders made for them that are still empty (innermost first): a
        command that fails leaves no trace. Unconfined only (confined, a folder is only ever walked from the root)."""
        made = [d for out in self._outs for d in out.made]
        for out in self._outs:
            out.discard()
        self._outs = []
        if access.roots() is None:
            for d in sorted(set(made), key=lambda d: len(d.parts), reverse=True):
                with suppress(OSError):
                    os.rmdir(d)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            targets = {out.path: out.target for out in self._outs}
            self.discard()
            if issubclass(exc_type, OSError):
                name = getattr(exc, "filename", None)
                last = list(targets.values())[-1] if targets else "output file"  # the one being written
                raise output_error(targets.get(os.fspath(name), name) if name else last, exc) from None
        else:
            self.commit()
        return False
