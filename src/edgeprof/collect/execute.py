"""Running commands: each started by the one rule for children (:mod:`edgeprof.child`: allow-listed environment,
a private working folder unless the caller names one), in a process group of its own, its output to a file (made
here, in the launch's staging folder, never through a link) or captured, with a timeout that stops the whole group
(a runner's children too). :class:`DryRun` prints what would run instead."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .. import child
from ..errors import OutputError, output_error
from .staging import open_staged

TAIL = 2000  # characters of stderr/stdout kept for the manifest


@dataclass
class Outcome:
    argv: tuple[str, ...]
    rc: int | None          # None: did not finish (timed out)
    seconds: float
    timed_out: bool = False
    output: str = ""        # captured output (when not written to a file), or the tail of the file

    @property
    def ok(self) -> bool:
        return self.rc == 0 and not self.timed_out


def tail(text: str, n: int = TAIL) -> str:
    return text if len(text) <= n else "…" + text[-n:]


def _stop(proc: subprocess.Popen, grace: float = 2.0) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(grace)
            return
        except subprocess.TimeoutExpired:
            continue


class Shell:
    """Runs commands for real."""

    dry = False

    def __init__(self, echo=None):
        self.echo = echo  # called with each command line (``--verbose``)

    def run(self, argv, *, env: dict | None = None, out: Path | None = None, append: bool = False,
            timeout: float = 600.0, cwd: Path | None = None) -> Outcome:
        """Run ``argv`` with the allow-listed environment plus ``env``, in ``cwd`` (an external runner's launch
        folder) or else a private folder of its own."""
        argv = tuple(str(a) for a in argv)
        if self.echo:
            self.echo(command_line(argv, env))
        t0 = time.perf_counter()
        fh = _open_output(out, append) if out is not None else None
        try:
            proc = child.start(argv, stdout=subprocess.PIPE if fh is None else fh, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, env=env, cwd=cwd, start_new_session=True)
        except OSError as e:
            if fh is not None:
                fh.close()
            return Outcome(argv, 127, time.perf_counter() - t0, output=f"cannot start {argv[0]}: {e.strerror or e}")
        try:
            captured, _ = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            _stop(proc)
            captured, timed_out = b"", True
            if out is None:
                with contextlib.suppress(OSError, ValueError):
                    captured = proc.stdout.read() if proc.stdout else b""
        except BaseException:  # Ctrl-C: the command's whole group goes with us
            _stop(proc, 1.0)
            raise
        finally:
            if fh is not None:
                fh.close()
            proc.release()
        seconds = time.perf_counter() - t0
        text = _file_tail(out) if out is not None else (captured or b"").decode("utf-8", "replace")
        return Outcome(argv, None if timed_out else proc.returncode, seconds, timed_out, text)


def _open_output(out: Path, append: bool):
    """The file a command's output goes to (in a launch's staging folder): made here — or, ``append``, a regular
    file there already — never a link followed; one :class:`~edgeprof.errors.OutputError` otherwise."""
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | os.O_NONBLOCK
    try:
        fd = os.open(out, flags | (os.O_APPEND if append else os.O_EXCL), 0o666)
    except OSError as e:
        raise output_error(out, e) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OutputError(out, "cannot write: not a regular file (a FIFO, device or socket): refused")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "ab")


def _file_tail(p: Path, n: int = TAIL) -> str:
    try:
        with open_staged(p) as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 4 * n))
            return tail(f.read().decode("utf-8", "replace"), n)
    except OSError:
        return ""


class DryRun:
    """Prints every command instead of running it; every command 'succeeds' with no output."""

    dry = True

    def __init__(self, echo):
        self.echo = echo

    def run(self, argv, *, env: dict | None = None, out: Path | None = None, append: bool = False,
            timeout: float = 600.0, cwd: Path | None = None) -> Outcome:
        argv = tuple(str(a) for a in argv)
        line = command_line(argv, env)
        if out is not None:
            line += f" {'>>' if append else '>'} {shlex.quote(str(out))} 2>&1"
        self.echo(line)
        return Outcome(argv, 0, 0.0)


def command_line(argv, env: dict | None = None) -> str:
    pre = " ".join(f"{k}={shlex.quote(str(v))}" for k, v in (env or {}).items())
    return (pre + " " if pre else "") + " ".join(shlex.quote(str(a)) for a in argv)
