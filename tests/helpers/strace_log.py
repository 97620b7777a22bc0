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
_ARG = re.compile(r'(?:(?:AT_FDCWD|\d+)<([^>]*)>, )?"((?:[^"\\]|\\.)*)"')  # [dirfd<its path>, ]"name"
_FD_RESULT = re.compile(r"\)\s+=\s+(\d+)<([^>]*)>")  # strace -y: "= 4</real/path>" (an O_TMPFILE's: /dir/#ino)
_MAGIC = re.compile(r"^/(?:proc/(?:self|thread-self|\d+)/fd|dev/fd)/(\d+)$")  # a path naming an open descriptor
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
    fds: dict[int, dict[int, str]] = {}  # pid → its descriptors' paths (threads share one table)
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
        table = fds.setdefault(pid, {})
        if name in ("clone", "clone3", "fork", "vfork") and result and result > 0:
            cwds[result] = here
            fds[result] = table if "CLONE_FILES" in body else dict(table)
            continue
        fr = _FD_RESULT.search(body)
        if fr:
            table[int(fr.group(1))] = _unescape(fr.group(2))
        strings = [_unescape(s) for s in _STR.findall(body)]
        if name == "chdir" and result == 0 and strings:
            cwds[pid] = os.path.normpath(os.path.join(here, strings[0]))
            continue
        n_paths = 2 if name in ("rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat") else 1
        base = here
        d = _DIRFD.match(body)
        if d and name.endswith(("at", "at2")):  # strace -y: "3</real/dir>, \"name\""
            base = _unescape(d.group(1))
        args = [(_unescape(b) if b else None, _unescape(x)) for b, x in _ARG.findall(body)][:n_paths]
        paths = [_real(table, b or base, x, _nofollow(name, body)) for b, x in args]
        calls.append(Call(pid, name, paths, body, result))
    return calls


def _nofollow(name: str, body: str) -> bool:
    """Whether the call acts on a last component that is a link itself (never what it points to)."""
    if name in ("link", "linkat"):
        return "AT_SYMLINK_FOLLOW" not in body
    return "O_NOFOLLOW" in body or name in ("rename", "renameat", "renameat2", "unlink", "unlinkat", "rmdir", "mkdir",
                                            "mkdirat", "symlink", "symlinkat", "lchown", "mknod", "mknodat")


def _real(table: dict[int, str], base: str, s: str, nofollow: bool) -> str:
    """The real path a path argument touched: ``/proc/self/fd/N`` is descriptor N's file (as strace showed it when
    it was opened); a last component the call does not follow is kept as it is."""
    m = _MAGIC.match(s)
    if m and int(m.group(1)) in table:
        return os.path.realpath(table[int(m.group(1))])
    p = os.path.join(base, s)
    head, tail = os.path.split(p)
    if nofollow and tail not in ("", ".", ".."):
        return os.path.join(os.path.realpath(head), tail)
    return os.path.realpath(p)


def under(path: str, folders: list[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)
