"""Races against the open rule (tests/security/test_open_race.py): a process that keeps swapping a symlink between a
target inside the root and one outside it, and a kernel watch (inotify) on the outside folder that counts every
open, read, create and write there — whoever does it and however (Python, DuckDB's C++, Polars' Rust).

Run as a script, ``open_race.py LINK INSIDE OUTSIDE FD IN_US OUT_US`` swaps ``LINK`` (the name always exists:
two links exchanged by one ``renameat2``) until it gets SIGTERM, then prints how many swaps it made.
"""

from __future__ import annotations

import ctypes
import os
import signal
import struct
import subprocess
import sys
from pathlib import Path

IN_ACCESS, IN_MODIFY, IN_CLOSE_WRITE, IN_OPEN, IN_MOVED_TO, IN_CREATE = 0x1, 0x2, 0x8, 0x20, 0x80, 0x100
TOUCHED = IN_ACCESS | IN_MODIFY | IN_CLOSE_WRITE | IN_OPEN | IN_MOVED_TO | IN_CREATE
_EVENT = struct.Struct("iIII")


class Watch:
    """inotify on a folder (and the files in it): the events of ``mask`` seen since it was made."""

    def __init__(self, folder: Path, mask: int = TOUCHED):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        if self.libc.inotify_add_watch(self.fd, os.fsencode(folder), ctypes.c_uint32(mask)) < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {folder}")
        self.events: list[tuple[int, str]] = []

    def poll(self) -> list[tuple[int, str]]:
        """Every event so far: (mask, name in the folder; '' for the folder itself)."""
        while True:
            try:
                buf = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return self.events
            i = 0
            while i < len(buf):
                _, mask, _, n = _EVENT.unpack_from(buf, i)
                name = buf[i + _EVENT.size: i + _EVENT.size + n].rstrip(b"\0").decode(errors="replace")
                self.events.append((mask, name))
                i += _EVENT.size + n

    def close(self) -> None:
        os.close(self.fd)


class Swapper:
    """The swapping process (this file run as a script); :meth:`count` is how many swaps it has made so far (it
    keeps the number in a shared page), :meth:`stop` ends it and returns the final count."""

    def __init__(self, link: Path, inside: str, outside: str, dwell_us: tuple[int, int] = (0, 0)):
        import mmap
        import tempfile

        self._page = tempfile.TemporaryFile()  # noqa: SIM115 - held for the object's life
        self._page.write(b"\0" * 8)
        self._page.flush()
        self._map = mmap.mmap(self._page.fileno(), 8)
        self.proc = subprocess.Popen([sys.executable, __file__, str(link), inside, outside,
                                      str(self._page.fileno()), *map(str, dwell_us)], stdout=subprocess.PIPE, text=True,
                                     pass_fds=(self._page.fileno(),))
        while not os.path.lexists(f"{link}.swap") or not os.path.islink(link):  # it has begun
            if self.proc.poll() is not None:
                raise RuntimeError("the swapping process ended")
            os.sched_yield()

    def count(self) -> int:
        return struct.unpack_from("q", self._map)[0]

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=60)
        self._map.close()
        self._page.close()
        return int(out.strip())


def _swap(link: str, inside: str, outside: str, page: str, in_us: str = "0", out_us: str = "0") -> None:
    """Swap ``link`` between ``inside`` and ``outside`` until SIGTERM: one ``renameat2(RENAME_EXCHANGE)`` of two
    links per swap where the kernel has it (the name always exists), else a new link renamed over it; the link
    stays inside for ``in_us`` µs and outside for ``out_us`` µs each time (a check made inside passes, the use that
    follows may meet the outside target). The count so far is kept in the shared page (descriptor ``page``)."""
    import mmap
    import time

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    shared = mmap.mmap(int(page), 8)
    dwell = {outside: int(in_us) / 1e6, inside: int(out_us) / 1e6}  # before swapping to the other one
    other = f"{link}.swap"
    os.symlink(outside, other)
    os.symlink(inside, other + "~")
    os.replace(other + "~", link)
    libc = ctypes.CDLL(None, use_errno=True)
    exchange = getattr(libc, "renameat2", None)
    a, b = os.fsencode(link), os.fsencode(other)
    fast = exchange is not None and exchange(-100, a, -100, b, 2) == 0  # AT_FDCWD, RENAME_EXCHANGE
    if fast:
        exchange(-100, a, -100, b, 2)  # back inside
    n = 0
    while not stop:
        for _ in range(32):
            for target in (outside, inside):
                if dwell[target]:
                    until = time.perf_counter() + dwell[target]
                    while time.perf_counter() < until:
                        pass
                if fast:
                    exchange(-100, a, -100, b, 2)
                else:
                    os.symlink(target, other)
                    os.replace(other, link)
        n += 64
        struct.pack_into("q", shared, 0, n)
    print(n, flush=True)


if __name__ == "__main__":
    _swap(*sys.argv[1:7])
