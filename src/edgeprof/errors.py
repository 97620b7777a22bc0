"""Typed errors and warnings. Every error names the file it is about; the CLI maps them to exit codes."""

from __future__ import annotations

import os
import re

_SHORT = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _visible(m: re.Match) -> str:
    """One character as a Python string literal writes it: the escapes of :func:`edgeprof.conventions.shown`."""
    c = m.group(0)
    return _SHORT.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


_LINE_BREAKS = re.compile("[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")  # what str.splitlines() breaks at


def one_line(text: str) -> str:
    """``text`` with every character that would break it into lines written as :func:`edgeprof.conventions.shown`
    writes it (``\\n``, ``\\x0b``, ``\\u2028``): an error's own text stays one line wherever it is printed (the
    terminal then shows it through ``shown``)."""
    return _LINE_BREAKS.sub(_visible, text)


class EdgeprofError(Exception):
    """Base class. ``exit_code`` is what the CLI exits with."""

    exit_code = 2


class UsageError(EdgeprofError):
    """Bad command-line usage or API arguments."""


class InputError(EdgeprofError):
    """An input file is missing, unreadable or malformed.

    ``str(err)`` is a one-line message: ``<path>: <what> [at byte offset N | line N]``.
    """

    def __init__(self, path, message: str, *, offset: int | None = None, line: int | None = None):
        self.path = os.fspath(path) if path is not None else "<memory>"
        self.message = message
        self.offset = offset
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ""
        if self.offset is not None:
            where = f" (at byte offset {self.offset})"
        elif self.line is not None:
            where = f" (line {self.line})"
        return one_line(f"{self.path}: {self.message}{where}")  # (a value quoted from the file may hold a line break)


class OutputError(InputError):
    """An output cannot be written (permissions, a folder in the way, no space, a name too long): exit 2,
    one line naming the path and the reason."""


def _reason(e: BaseException) -> str:
    """Why an output failed, in words: the OS error's (Polars and DuckDB report theirs as "… (os error 28)")."""
    import errno
    import re

    code = getattr(e, "errno", None)
    if code is None:
        m = re.search(r"os error (\d+)", str(e))
        code = int(m.group(1)) if m else None
    if code == errno.ENOSPC or "No space left on device" in str(e):
        return "no space left on the device"
    if code == errno.ENAMETOOLONG:
        return "file name too long"
    if code is not None:
        return os.strerror(code).lower()
    text = getattr(e, "strerror", None) or str(e)
    return text.splitlines()[0][:200].lower() if text else type(e).__name__


def output_error(path, e: BaseException) -> OutputError:
    """The one-line :class:`OutputError` for an exception met while writing ``path``."""
    return OutputError(path, f"cannot write ({_reason(e)})")


class NotAnETDumpError(InputError):
    """The bytes are not an ETDump at all (wrong identifier, empty, another format)."""


class CorruptETDumpError(InputError):
    """The file claims to be an ETDump but an offset or length points outside the buffer."""


class DebugBufferError(InputError):
    """An ETDump's debug buffer cannot give the tensors its DebugEvents describe (truncated, another recording's,
    an unknown scalar type, a name that does not match the ETDump)."""


class NoRunsError(InputError):
    """The ETDump holds no Execute run, so there is nothing to analyse."""


class ETRecordError(InputError):
    """The ETRecord is unreadable, unsafe to read, or does not match the ETDump."""


class MissingExtraError(UsageError):
    """An optional capability whose extra is not installed: one line saying which extra to install."""

    def __init__(self, extra: str, what: str):
        self.extra = extra
        super().__init__(f"{what} needs the {extra!r} extra: install edgeprof[{extra}] (pip install 'edgeprof[{extra}]')")


class InputErrors(EdgeprofError):
    """Some inputs could not be used (the others were): one line per input, exit 2."""

    def __init__(self, messages: list[str]):
        self.messages = list(messages)
        super().__init__("\n".join(self.messages))


class CheckFailed(EdgeprofError):
    """A gate or validation failed (exit code 1)."""

    exit_code = 1


class EdgeprofWarning(UserWarning):
    """Something was off but analysis continued (for example an ETRecord that does not match)."""
