"""Reading ``strace -f -y`` output (:data:`STRACE`): every open, path write and process call of a process tree,
with the real path it touched (relative paths resolved against the caller's current folder, which is followed through
``chdir`` and inherited across ``clone``/``fork``)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

_LINE = re.compile(r"^(\d+)\s+(?:<\.\.\. (\w+) resumed>(.*)|(\w+)\((.*))$")
_RESULT = re.compile(r"\)\s+=\s+(-?\d+|\?)")
_STR = re.compile(r'"((?:[^"\\]|\\.)*)"')
_DIRFD = re.compile(r"^\d+<([^>]*)>,")
OPENS = {"open", "openat", "openat2", "creat"}
WRITES = {"mkdir", "mkdirat", "unlink", "unlinkat", "rename", "renameat", "renameat2", "link", "linkat", "symlink",
          "symlinkat", "truncate", "chmod", "fchmodat", "chown", "fchownat", "lchown", "utimensat", "mknod", "mknodat",
          "rmdir"}
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")
# The calls the checks read — opens, path writes, process calls and chdir — and only those: the stat family (most
# of an interpreter's file calls, and a traced call costs a stop) is left out; "?" skips names this
# architecture lacks; the seccomp filter stops the process only at these calls.
STRACE = ["strace", "-f", "--seccomp-bpf", "-y", "-qq", "-e",
          "trace=%process," + ",".join(f"?{n}" for n in sorted(OPENS | WRITES | {"chdir"}))]


@dataclass
class Call:
    pid: int
    name: str
    paths: list[str]  # real paths of the path arguments
    args: str
    result: int | None

    @property
    def ok(self) -> bool:
        return self.result is not None and self.result >= 0

    @property
    def writes(self) -> bool:
        if self.name in OPENS:
            return any(f in self.args for f in _WRITE_FLAGS)
        return self.name in WRITES


def _unescape(s: str) -> str:
    return s.encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")


def parse(text: str, cwd: str) -> list[Call]:
    """Every call of the log; ``cwd`` is the traced program's starting folder."""
    cwds: dict[int, str] = {}
    pending: dict[int, tuple[str, str]] = {}
    calls = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        pid = int(m.group(1))
        if m.group(2):  # "<... openat resumed> …) = 3"
            name, head = pending.pop(pid, (m.group(2), ""))
            body = head + m.group(3)
        else:
            name, body = m.group(4), m.group(5)
            if body.endswith("<unfinished ...>"):
                pending[pid] = (name, body[: -len("<unfinished ...>")])
                continue
        here = cwds.setdefault(pid, cwd)
        r = _RESULT.search(body)
        result = int(r.group(1)) if r and r.group(1) != "?" else None
        if name in ("clone", "clone3", "fork", "vfork") and result and result > 0:
            cwds[result] = here
            continue
        strings = [_unescape(s) for s in _STR.findall(body)]
        if name == "chdir" and result == 0 and strings:
            cwds[pid] = os.path.normpath(os.path.join(here, strings[0]))
            continue
        n_paths = 2 if name in ("rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat") else 1
        base = here
        d = _DIRFD.match(body)
        if d and name.endswith(("at", "at2")):  # strace -y: "3</real/dir>, \"name\""
            base = _unescape(d.group(1))
        paths = [os.path.realpath(os.path.join(base, s)) for s in strings[:n_paths]]
        calls.append(Call(pid, name, paths, body, result))
    return calls


def under(path: str, folders: list[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)
