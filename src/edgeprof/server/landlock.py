"""Linux Landlock: the kernel's own confinement of a process's file access, as a second wall behind
:mod:`edgeprof.access`.

edgeprof's readers check every path they open, but DuckDB, Polars and the other native libraries open files
in C and Rust where no Python check runs. In a tool-call worker, :func:`restrict` asks the kernel (Landlock,
Linux 5.13+, unprivileged) to allow reading and writing only inside the roots and the call's scratch folder,
and reading only the interpreter's own code and system libraries; any other open fails with EACCES whatever
code tries it. Where the kernel has no Landlock (older kernels, macOS), :func:`restrict` says so and the
Python checks stand alone.
"""

from __future__ import annotations

import ctypes
import os
import sys

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same numbers on x86_64 and arm64
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_MAKE_AND_REMOVE = sum(1 << b for b in range(4, 13))  # remove dir/file, make char/dir/reg/sock/fifo/block/sym
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV

READ = EXECUTE | READ_FILE | READ_DIR


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _handled(abi: int) -> int:
    rights = EXECUTE | WRITE_FILE | READ_FILE | READ_DIR | _MAKE_AND_REMOVE
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def abi_version() -> int:
    """The kernel's Landlock ABI version, 0 when it has none (or this is not Linux on x86_64/arm64)."""
    if not sys.platform.startswith("linux") or os.uname().machine not in ("x86_64", "aarch64", "arm64"):
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    v = libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(int(v), 0)


def code_paths() -> list[str]:
    """What an interpreter needs to go on importing: its own folders, its packages, the system libraries."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    here = os.getcwd()  # the root the worker moved to: no code of ours, even should it be on sys.path
    paths.update(p for p in sys.path if p and os.path.realpath(p) != here)
    paths.update(("/usr", "/lib", "/lib64", "/lib32", "/etc/ld.so.cache", "/etc/localtime", "/proc/self", "/proc/cpuinfo",
                  "/proc/meminfo", "/proc/stat", "/sys/fs/cgroup", "/sys/devices/system/cpu", "/dev/null", "/dev/urandom"))
    return sorted(os.path.realpath(p) for p in paths)


def restrict(read: list[str], write: list[str]) -> str:
    """Allow this process (and its children) to read only below ``read`` and ``write``, and to write only below
    ``write``. Returns how: ``landlock ABI N``, or why it was not possible (the Python checks then stand alone)."""
    abi = abi_version()
    if abi < 1:
        return "not available (no Landlock in this kernel)"
    libc = ctypes.CDLL(None, use_errno=True)
    handled = _handled(abi)
    attr = ctypes.c_uint64(handled)
    fd = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(8), ctypes.c_uint32(0))
    if fd < 0:
        return f"not available ({os.strerror(ctypes.get_errno())})"
    try:
        for paths, rights in ((read, READ), (write, handled)):
            for p in paths:
                try:
                    pfd = os.open(p, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue  # absent here
                try:
                    allowed = rights if os.path.isdir(p) else rights & _FILE_ONLY
                    rule = _PathBeneath(allowed & handled, pfd)
                    if libc.syscall(_ADD_RULE, fd, _RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)) < 0:
                        return f"not applied (rule for {p}: {os.strerror(ctypes.get_errno())})"
                finally:
                    os.close(pfd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0:
            return f"not applied (no_new_privs: {os.strerror(ctypes.get_errno())})"
        if libc.syscall(_RESTRICT_SELF, fd, ctypes.c_uint32(0)) < 0:
            return f"not applied ({os.strerror(ctypes.get_errno())})"
    finally:
        os.close(fd)
    return f"landlock ABI {abi}"
