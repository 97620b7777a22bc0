"""The revision a folder's git checkout is at (``git`` run as a process, started as every child is —
:mod:`edgeprof.child`; nothing else here knows git).

The checkout may come from anywhere (an unpacked archive is owned by the user, so git's ``safe.directory`` lets
it pass), and its own ``.git/config`` can name programs git runs: ``gpg.program`` with ``log.showSignature``,
``core.fsmonitor``, a pager, hooks. So git is asked only what verifies and runs nothing — ``rev-parse`` for
the commit and branch, ``cat-file commit`` for the committer date (parsed here; ``show``/``log`` would check
a signature) — with those settings overridden on the command line (:data:`NO_PROGRAMS`, which beats any
configuration file), no pager, no prompt and no optional lock."""

from __future__ import annotations

import re
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

from .. import child
from ..errors import UsageError

# settings of the checkout's configuration that would run a program, overridden (command-line -c wins)
NO_PROGRAMS = ("--no-pager", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
               "-c", "log.showSignature=false", "-c", "gpg.program=false", "-c", "core.pager=cat")
QUIET = {"GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
_COMMITTER = re.compile(rb"^committer .*> (\d{1,12}) ([+-])(\d\d)(\d\d)$", re.M)


def git_revision(folder) -> dict:
    """``{"commit", "branch", "time"}`` of the checkout at ``folder`` (HEAD; branch None when detached; time
    the commit's ISO committer date). A usage error when ``folder`` is not in a git checkout or git is missing."""
    folder = Path(folder)

    def git(*args: str, text: bool = True):
        try:
            r = child.run(["git", *NO_PROGRAMS, "-C", str(folder.absolute()), *args], timeout=30, env=QUIET,
                          text=text)
        except FileNotFoundError:
            raise UsageError("--git needs the git program on PATH") from None
        except subprocess.TimeoutExpired:
            raise UsageError(f"{folder}: git did not answer within 30 s") from None
        if r.returncode != 0:
            err = r.stderr if text else r.stderr.decode("utf-8", "replace")
            raise UsageError(f"{folder}: not a git checkout ({(err.strip().splitlines() or ['git failed'])[-1]})")
        return r.stdout.strip() if text else r.stdout

    commit = git("rev-parse", "--verify", "HEAD^{commit}")
    branch = git("rev-parse", "--abbrev-ref", "HEAD")
    return {"commit": commit, "branch": None if branch == "HEAD" else branch,
            "time": _committer_time(git("cat-file", "commit", commit, text=False), folder)}


def _committer_time(raw: bytes, folder) -> str:
    """The committer date of a raw commit object, as ``git show --format=%cI`` writes it."""
    head = raw.split(b"\n\n", 1)[0]
    m = _COMMITTER.search(head)
    if m is None:
        raise UsageError(f"{folder}: HEAD's commit has no committer date git could give")
    seconds, sign, hours, minutes = int(m[1]), m[2], int(m[3]), int(m[4])
    offset = timedelta(hours=hours, minutes=minutes) * (-1 if sign == b"-" else 1)
    try:
        return datetime.fromtimestamp(seconds, timezone(offset)).isoformat()
    except (OverflowError, OSError, ValueError):
        raise UsageError(f"{folder}: HEAD's commit has a committer date out of range") from None
