"""Running commands: each started by the one rule for children (:mod:`edgeprof.child`: allow-listed environment,
a private working folder unless the caller names one), in a process group of its own, its output to a file or
captured, with a timeout that stops the whole group (a runner's children too). :class:`DryRun` prints what would
run instead."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .. import child

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
        fh = open(out, "ab" if append else "wb") if out is not None else subprocess.PIPE
        try:
            proc = child.start(argv, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=cwd,
                               start_new_session=True)
        except OSError as e:
            if out is not None:
                fh.close()
            return Outcome(argv, 127, time.perf_counter() - t0, output=f"cannot start {argv[0]}: {e.strerror or e}")
        try:
            captured, _ = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            _stop(proc)
            captured, timed_out = b"", True
            if out is None:
                try:
                    captured = proc.stdout.read() if proc.stdout else b""
                except (OSError, ValueError):
                    pass
        except BaseException:  # Ctrl-C: the command's whole group goes with us
            _stop(proc, 1.0)
            raise
        finally:
            if out is not None:
                fh.close()
            proc.release()
        seconds = time.perf_counter() - t0
        if out is not None:
            text = _file_tail(out)
        else:
            text = (captured or b"").decode("utf-8", "replace")
        return Outcome(argv, None if timed_out else proc.returncode, seconds, timed_out, text)


def _file_tail(p: Path, n: int = TAIL) -> str:
    try:
        with open(p, "rb") as f:
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
