"""Tool calls in worker processes, each with a time and a memory budget.

The server never runs a tool in its own process. Every call goes to a fresh worker, started by the one rule for
children (:mod:`edgeprof.child`: an isolated interpreter running this module, in its own scratch folder, with
an allow-listed environment), that, before it reads anything: imports what the tools use, limits its address
space (``RLIMIT_AS``) — refusing to start when the budget is below what it already holds after its imports —
moves to the first root, confines itself to the roots (:func:`edgeprof.access.confine`) and asks the kernel to
hold it there (:mod:`edgeprof.server.landlock`). The worker reads one request from its stdin, writes one answer
to its stdout — a pipe to the server, never the server's JSON-RPC stream — and exits. The server kills a worker
that runs past the time budget and answers with one line; a worker that runs out of memory answers (or dies)
and the server says which budget was spent; a worker that cannot start says why in one line. A stuck call
holds one worker, never the server: other calls run beside it (up to ``slots`` at once). One spare worker is
kept started, so a call does not wait for the imports; the first one is waited for when the server starts
(:meth:`Pool.warm`), so that a budget too small to start a worker is refused at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time

from .. import child

DEFAULT_TIMEOUT = 60.0
DEFAULT_MEMORY = 4 << 30
WORK_MARGIN = 256 << 20  # address space a small call needs beyond what the worker holds after its imports
# what a tool may load on first use (the history store's engine and change-point search); the first worker loads
# them before it measures itself, so that the minimum it names holds for every tool
LAZY = ("duckdb", "ruptures")
# a worker lives in its address space budget: glibc keeps at most two malloc arenas (not one of 64 MB or more per
# thread) and OpenBLAS one thread, so the address space after the imports stays near 0.7 GB on any core count
# (about 1.6 GB here without, and more with more cores)
LEAN = {"MALLOC_ARENA_MAX": "2", "OPENBLAS_NUM_THREADS": "1"}
START_TIMEOUT = 120.0  # a worker's start-up (imports), not counted in the call's budget


class CallFailed(Exception):
    """A tool call that ended without a result: one line for the agent."""


class CannotStart(CallFailed):
    """No worker can start under these settings (its memory budget is below what it needs after its imports)."""


def _mb(n: int) -> str:
    return f"{n / (1 << 30):.3g} GB" if n >= 1 << 30 else f"{n >> 20} MB"


class Worker:
    def __init__(self, argv: list[str], scratch: str):
        self.scratch = scratch  # its working folder and TMPDIR, removed by close()
        try:
            self.proc = child.start(argv, cwd=scratch, env={**LEAN, "TMPDIR": scratch, "EDGEPROF_SCRATCH": scratch},
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
        except BaseException:
            child.remove_folder(scratch)
            raise
        self.landlock = None
        self.ready = False
        self.failed: CallFailed | None = None

    def wait_ready(self, deadline: float) -> None:
        """Returns once the worker said it is ready; :class:`CallFailed` (one line) when it cannot start."""
        if self.ready:
            return
        if self.failed is None:
            try:
                self._wait_ready(deadline)
            except CallFailed as e:
                self.failed = e
        if self.failed is not None:
            raise self.failed

    def _wait_ready(self, deadline: float) -> None:
        line = self._readline(deadline)
        if line is None:
            raise CallFailed("the worker did not start in time")
        if not line:
            raise CallFailed(f"the worker could not start (exit {self.proc.wait()})")
        try:
            msg = json.loads(line)
        except ValueError:
            raise CallFailed("the worker could not start (its first line was not its ready message)") from None
        if not msg.get("ready"):
            failure = CannotStart if msg.get("need") else CallFailed
            raise failure(str(msg.get("error") or "the worker could not start"))
        self.landlock, self.ready = msg.get("landlock"), True

    def _readline(self, deadline: float) -> bytes | None:
        """One line from the worker, b'' at EOF, None when the deadline passed."""
        buf = b""
        assert self.proc.stdout is not None  # started with pipes
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
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.kill()
        for f in (self.proc.stdin, self.proc.stdout):
            assert f is not None  # started with pipes
            with contextlib.suppress(OSError):
                f.close()
        child.remove_folder(self.scratch)


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

    def _argv(self, measure: bool = False) -> list[str]:
        args = ["--memory", str(self.memory), "--cpu", str(int(4 * self.timeout) + 10)]
        for r in self.roots:
            args += ["--root", r]
        args += ["--allow-write"] if self.allow_write else []
        return child.python_argv("edgeprof.server.worker", *args, *(["--measure"] if measure else []))

    def _start(self, measure: bool = False) -> Worker:
        return Worker(self._argv(measure), child.private_folder("edgeprof-call-"))

    def warm(self) -> None:
        """Start the spare worker now (at server start) and wait until it is ready, so the first call need not
        wait for it; :class:`CannotStart` (one line) when no worker can start with this memory budget."""
        with self._lock:
            if self._spare is None:
                self._spare = self._start(measure=True)
            spare = self._spare
        try:
            spare.wait_ready(time.monotonic() + START_TIMEOUT)
        except CannotStart:
            self.close()
            raise
        except CallFailed:
            pass  # said again, in one line, by the first call

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
            assert w.proc.stdin is not None  # started with pipes
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
        answer: dict[str, object] = {"ok": tools.call(name, args)}
    except EdgeprofError as e:
        answer = {"error": _first_line(e)}
    except MemoryError:
        answer = {"error": f"memory budget of {_mb(memory)} spent: the call was stopped (edgeprof mcp --memory-limit)"}
    except RecursionError:
        answer = {"error": "input nested too deeply: refused"}
    except OSError as e:
        answer = {"error": f"{e.filename or ''}: {e.strerror or e}".strip(": ")}
    except Exception as e:  # a bug: the agent gets one line, the traceback goes to stderr
        import traceback

        traceback.print_exc()
        answer = {"error": f"internal error ({type(e).__name__}); see the server's stderr"}
    out.write(json.dumps(answer).encode() + b"\n")
    out.flush()


def address_space() -> int | None:
    """Bytes of address space this process holds (``VmSize``), None where the system does not say."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmSize:"):
                    return int(line.split()[1]) << 10
    except (OSError, ValueError, IndexError):
        pass
    return None


def _limit(kind: str, soft: int, hard: int) -> None:
    try:
        import resource

        resource.setrlimit(getattr(resource, kind), (soft, hard))
    except (ImportError, AttributeError, ValueError, OSError):
        pass  # a system without this limit: the other budgets still hold


def _start_up(a) -> tuple[list[str], str]:
    """Everything before the first request: imports, budgets, confinement. Returns (roots, how Landlock holds)."""
    if a.cpu:
        _limit("RLIMIT_CPU", a.cpu, a.cpu + 5)
    _limit("RLIMIT_CORE", 0, 0)
    import numpy  # noqa: F401 - imported before the call (and its budget) starts
    import polars

    from .. import api  # noqa: F401
    from .. import access
    from ..render import jsonfmt  # noqa: F401
    from . import landlock, tools  # noqa: F401

    polars.DataFrame({"a": [1]}).select(polars.col("a").sum())  # Polars' threads start now, not in the call
    if a.measure:
        _load_lazy()
    held = address_space()
    if held is not None and a.memory < minimum(held):
        raise _TooSmall(held)
    _limit("RLIMIT_AS", a.memory, a.memory)
    roots = [os.path.realpath(r) for r in a.root]
    os.chdir(roots[0])
    access.confine(roots)
    scratch = os.environ.get("EDGEPROF_SCRATCH")
    return roots, landlock.restrict(landlock.code_paths(), roots + ([scratch] if scratch else []))


def _load_lazy() -> None:
    import importlib

    for name in LAZY:
        try:
            mod = importlib.import_module(name)
            if name == "duckdb":
                con = mod.connect()  # its threads and buffers come with the first connection
                con.execute("SELECT 1").fetchall()
                con.close()
        except Exception:  # not installed, or broken: the tool that needs it says so itself
            continue


def minimum(held: int) -> int:
    """The smallest budget for a worker holding ``held`` bytes after its imports: that plus :data:`WORK_MARGIN`,
    rounded up to 64 MB."""
    step = 64 << 20
    return -(-(held + WORK_MARGIN) // step) * step


class _TooSmall(Exception):
    def __init__(self, held: int):
        super().__init__(held)
        self.held = held


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(prog="edgeprof-worker")
    ap.add_argument("--root", action="append", required=True)
    ap.add_argument("--memory", type=int, default=DEFAULT_MEMORY)
    ap.add_argument("--cpu", type=int, default=None, help="CPU seconds: a backstop should the server be gone")
    ap.add_argument("--allow-write", action="store_true")
    ap.add_argument("--measure", action="store_true", help="load what tools load on first use before measuring")
    a = ap.parse_args(argv)
    out = os.fdopen(os.dup(1), "wb")  # the answer goes to the server through the original stdout ...
    os.dup2(2, 1)  # ... and anything a library prints goes to stderr
    sys.stdout = sys.stderr
    try:
        roots, how = _start_up(a)
        ready = {"ready": True, "landlock": how}
    except _TooSmall as e:
        need = minimum(e.held)
        ready = {"ready": False, "need": need,
                 "error": f"--memory-limit {_mb(a.memory)} is below the minimum of {need >> 20}MB a tool-call worker "
                          f"needs here ({_mb(e.held)} of address space after its imports, plus {_mb(WORK_MARGIN)} to "
                          f"work)"}
    except BaseException as e:  # the server gets one line, never a traceback
        ready = {"ready": False, "error": f"the worker could not start: {type(e).__name__}: {_first_line(e)}"[:300]}
    out.write(json.dumps(ready).encode() + b"\n")
    out.flush()
    if ready["ready"]:
        _serve_one(out, roots, a.allow_write, a.memory)


if __name__ == "__main__":
    main()
