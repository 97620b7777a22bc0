"""A worker's memory per phase, from the kernel's own accounting of its process (Linux ``/proc/self``).

For each phase a worker goes through — ``start`` (the interpreter and the runtime's import), ``load`` (the program or
model read), ``init`` (the method or session made ready), ``inputs`` (the harness's own copies of the inputs: not the
model's), ``warmup`` and ``runs`` (the timed runs) — :class:`Phases` records

* ``peak_rss_bytes``: the resident set's high-water mark *during that phase* (``VmHWM``, reset to the current
  resident set at the phase's start by writing ``5`` to ``/proc/self/clear_refs``; the ``start`` phase's peak is
  the process's since it began);
* ``rss_bytes`` and ``pss_bytes`` at the phase's end (``VmRSS``; ``Pss`` of ``/proc/self/smaps_rollup``: shared pages
  counted by the share this process maps). The kernel keeps no peak of the proportional set.

Nothing is read inside the timed loop: the high-water mark is reset before the first timed run and read after the
last, so the runs themselves carry no measuring cost; the time the readings took is reported (``cost_ms``).
Where ``/proc/self/clear_refs`` cannot be written (another kernel, a sandbox), phase peaks are not separable:
each phase's peak is then the process's peak so far and ``peak_scope`` says ``process``.
"""

from __future__ import annotations

import os
import time


def _status() -> dict[str, int]:
    out = {}
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith((b"VmHWM:", b"VmRSS:")):
                    k, v = line.split(b":", 1)
                    out[k.decode()] = int(v.split()[0]) * 1024  # kB
    except OSError:
        pass
    return out


def _pss() -> int | None:
    try:
        with open("/proc/self/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class Phases:
    """Start a phase with :meth:`begin`, end it with :meth:`end`; :meth:`report` is what the worker writes."""

    def __init__(self):
        self.available = os.path.exists("/proc/self/status")
        self.rows: list[dict] = []
        self.cost_s = 0.0
        self.separable = True
        self._name: str | None = "start"  # the process began: its first phase is open

    def begin(self, name: str) -> None:
        if not self.available:
            return
        t = time.perf_counter()
        self.separable &= _reset_peak()
        self._name = name
        self.cost_s += time.perf_counter() - t

    def end(self) -> None:
        if not self.available or self._name is None:
            return
        t = time.perf_counter()
        st = _status()
        self.rows.append({"phase": self._name, "peak_rss_bytes": st.get("VmHWM"), "rss_bytes": st.get("VmRSS"),
                          "pss_bytes": _pss()})
        self._name = None
        self.cost_s += time.perf_counter() - t

    def report(self, options: dict | None = None) -> dict | None:
        if not self.available:
            return None
        return {"source": "/proc/self (VmHWM reset per phase by clear_refs; VmRSS; smaps_rollup Pss)",
                "peak_scope": "phase" if self.separable else "process", "phases": self.rows,
                "cost_ms": self.cost_s * 1e3, "options": options or {}}
