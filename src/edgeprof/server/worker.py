"""Tool calls in worker processes, each with a time and a memory budget.

The server never runs a tool in its own process. Every call goes to a fresh worker (``python -m
edgeprof.server.worker``) that, before it reads anything: limits its address space (``RLIMIT_AS``), moves to
the first root, confines itself to the roots (:func:`edgeprof.access.confine`) and asks the kernel to hold it
there (:mod:`edgeprof.server.landlock`). The worker reads one request from its stdin, writes one answer to its
stdout — a pipe to the server, never the server's JSON-RPC stream — and exits. The server kills a worker that
runs past the time budget and answers with one line; a worker that runs out of memory answers (or dies) and the
server says which budget was spent. A stuck call holds one worker, never the server: other calls run beside it
(up to ``slots`` at once). One spare worker is kept started, so a call does not wait for the imports.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

DEFAULT_TIMEOUT = 60.0
DEFAULT_MEMORY = 4 << 30
START_TIMEOUT = 120.0  # a worker's start-up (imports), not counted in the call's budget


class CallFailed(Exception):
    """A tool call that ended without a result: one line for the agent."""


def _mb(n: int) -> str:
    return f"{n / (1 << 30):.3g} GB" if n >= 1 << 30 else f"{n >> 20} MB"


class Worker:
    def __init__(self, argv: list[str], env: dict, scratch: str, cwd: str):
        self.scratch = scratch
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=cwd,
                                     start_new_session=True, close_fds=True)
        self.landlock = None

    def wait_ready(self, deadline: float) -> None:
        line = self._readline(deadline)
        if line is None:
            raise CallFailed("the worker did not start in time")
        if not line:
            raise CallFailed(f"the worker could not start (exit {self.proc.wait()})")
        self.landlock = json.loads(line).get("landlock")

    def _readline(self, deadline: float) -> bytes | None:
        """One line from the worker, b'' at EOF, None when the deadline passed."""
        buf = b""
        fd = self.proc.stdout.fileno()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b""
            buf += chunk
            if buf.endswith(b"\n"):
                return buf

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.kill()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        shutil.rmtree(self.scratch, ignore_errors=True)


class Pool:
    """Runs tool calls in workers (see the module docstring)."""

    def __init__(self, roots: list[str], *, allow_write: bool = False, timeout: float = DEFAULT_TIMEOUT,
                 memory: int = DEFAULT_MEMORY, slots: int = 4):
        self.roots = [os.path.realpath(r) for r in roots]
        self.allow_write, self.timeout, self.memory = allow_write, float(timeout), int(memory)
        self._slots = threading.BoundedSemaphore(max(1, slots))
        self._lock = threading.Lock()
        self._spare: Worker | None = None
        self.landlock: str | None = None

    def _argv(self) -> list[str]:
        argv = [sys.executable, "-m", "edgeprof.server.worker", "--memory", str(self.memory),
                "--cpu", str(int(4 * self.timeout) + 10)]
        for r in self.roots:
            argv += ["--root", r]
        return argv + (["--allow-write"] if self.allow_write else [])

    def _start(self) -> Worker:
        base = os.environ.get("TMPDIR") or "/tmp"  # named, not probed: tempfile's probe would write a file there
        scratch = tempfile.mkdtemp(prefix="edgeprof-call-", dir=base if os.path.isdir(base) else None)
        env = dict(os.environ, TMPDIR=scratch, EDGEPROF_SCRATCH=scratch, PYTHONDONTWRITEBYTECODE="1")
        return Worker(self._argv(), env, scratch, cwd=self.roots[0])

    def warm(self) -> None:
        """Start the spare worker now (at server start), so the first call need not wait for it."""
        with self._lock:
            if self._spare is None:
                self._spare = self._start()

    def _take(self) -> Worker:
        with self._lock:
            w, self._spare = self._spare, None
            if w is None or w.proc.poll() is not None:
                if w is not None:
                    w.close()
                w = self._start()
            self._spare = self._start()
            return w

    def call(self, tool: str, args: dict) -> dict:
        """The tool's answer ({summary, result}); :class:`CallFailed` (one line) when it ended without one."""
        if not self._slots.acquire(timeout=self.timeout):
            raise CallFailed(f"the server is busy: no worker was free within {self.timeout:g} s")
        w = None
        try:
            w = self._take()
            w.wait_ready(time.monotonic() + START_TIMEOUT)
            if self.landlock is None:
                print(f"edgeprof mcp: calls run confined to {', '.join(self.roots)} (kernel: {w.landlock}); budget "
                      f"{self.timeout:g} s and {_mb(self.memory)} per call", file=sys.stderr)
            self.landlock = w.landlock
            try:
                w.proc.stdin.write(json.dumps({"tool": tool, "args": args}).encode() + b"\n")
                w.proc.stdin.flush()
            except OSError:
                pass  # it died: reported below
            line = w._readline(time.monotonic() + self.timeout)
            if line is None:
                w.kill()
                raise CallFailed(f"time budget of {self.timeout:g} s spent: the call was stopped (edgeprof mcp --timeout)")
            if not line:
                code = w.proc.wait()
                raise CallFailed(f"the call ended without a result (exit {code}): its memory budget of "
                                 f"{_mb(self.memory)} was probably spent (edgeprof mcp --memory-limit)")
            answer = json.loads(line)
            if "error" in answer:
                raise CallFailed(answer["error"])
            return answer["ok"]
        finally:
            if w is not None:
                w.close()
            self._slots.release()

    def close(self) -> None:
        with self._lock:
            if self._spare is not None:
                self._spare.close()
                self._spare = None


# --------------------------------------------------------------------------------------------------
# the worker process
# --------------------------------------------------------------------------------------------------

def _first_line(e: BaseException) -> str:
    s = str(e).strip()
    return s.splitlines()[0] if s else type(e).__name__


def _serve_one(out, roots: list[str], allow_write: bool, memory: int) -> None:
    from ..errors import EdgeprofError
    from . import tools

    line = sys.stdin.buffer.readline()
    if not line:
        return
    try:
        req = json.loads(line)
        name, args = req["tool"], req["args"]
        if name in tools.WRITE_TOOLS and not allow_write:
            raise EdgeprofError(f"{name} writes files: start the server with --allow-write")
        answer = {"ok": tools.call(name, args)}
    except EdgeprofError as e:
        answer = {"error": _first_line(e)}
    except MemoryError:
        answer = {"error": f"memory budget of {_mb(memory)} spent: the call was stopped (edgeprof mcp --memory-limit)"}
    except RecursionError:
        answer = {"error": "input nested too deeply: refused"}
    except OSError as e:
        answer = {"error": f"{e.filename or ''}: {e.strerror or e}".strip(": ")}
    except Exception as e:  # noqa: BLE001 - a bug: the agent gets one line, the traceback goes to stderr
        import traceback

        traceback.print_exc()
        answer = {"error": f"internal error ({type(e).__name__}); see the server's stderr"}
    out.write(json.dumps(answer).encode() + b"\n")
    out.flush()


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(prog="edgeprof-worker")
    ap.add_argument("--root", action="append", required=True)
    ap.add_argument("--memory", type=int, default=DEFAULT_MEMORY)
    ap.add_argument("--cpu", type=int, default=None, help="CPU seconds: a backstop should the server be gone")
    ap.add_argument("--allow-write", action="store_true")
    a = ap.parse_args(argv)
    out = os.fdopen(os.dup(1), "wb")  # the answer goes to the server through the original stdout ...
    os.dup2(2, 1)  # ... and anything a library prints goes to stderr
    sys.stdout = sys.stderr
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (a.memory, a.memory))
        if a.cpu:
            resource.setrlimit(resource.RLIMIT_CPU, (a.cpu, a.cpu + 5))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, ValueError, OSError):
        pass
    import numpy  # noqa: F401 - imported before the call (and its budget) starts
    import polars  # noqa: F401

    from .. import api  # noqa: F401
    from .. import access
    from ..render import jsonfmt  # noqa: F401
    from . import landlock, tools  # noqa: F401

    roots = [os.path.realpath(r) for r in a.root]
    os.chdir(roots[0])
    access.confine(roots)
    scratch = os.environ.get("EDGEPROF_SCRATCH")
    how = landlock.restrict(landlock.code_paths(), roots + ([scratch] if scratch else []))
    out.write(json.dumps({"ready": True, "landlock": how}).encode() + b"\n")
    out.flush()
    _serve_one(out, roots, a.allow_write, a.memory)


if __name__ == "__main__":
    main()
