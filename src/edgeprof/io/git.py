"""The revision a folder's git checkout is at (``git`` run as a process, started as every child is —
:mod:`edgeprof.child`; nothing else here knows git)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .. import child
from ..errors import UsageError


def git_revision(folder) -> dict:
    """``{"commit", "branch", "time"}`` of the checkout at ``folder`` (HEAD; branch None when detached; time
    the commit's ISO committer date). A usage error when ``folder`` is not in a git checkout or git is missing."""
    folder = Path(folder)

    def git(*args: str) -> str:
        try:
            r = child.run(["git", "-C", str(folder.absolute()), *args], timeout=30)
        except FileNotFoundError:
            raise UsageError("--git needs the git program on PATH") from None
        except subprocess.TimeoutExpired:
            raise UsageError(f"{folder}: git did not answer within 30 s") from None
        if r.returncode != 0:
            raise UsageError(f"{folder}: not a git checkout ({(r.stderr.strip().splitlines() or ['git failed'])[-1]})")
        return r.stdout.strip()

    commit = git("rev-parse", "HEAD")
    branch = git("rev-parse", "--abbrev-ref", "HEAD")
    time = git("show", "-s", "--format=%cI", "HEAD")
    return {"commit": commit, "branch": None if branch == "HEAD" else branch, "time": time}
