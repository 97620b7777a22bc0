"""What the hostile-input tests of tests/security share: running the CLI in this process, the one-line refusal
they expect, a fixture ETDump, and the rule that a missing extra skips only outside CI."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import importlib
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from testdata import DATA


def need(module: str, flag: str) -> None:
    """Skip when ``module`` (an extra) is missing, unless ``flag`` (EDGEPROF_REQUIRE_*) says it must be there."""
    try:
        importlib.import_module(module)
    except ImportError:
        if os.environ.get(flag):
            raise
        extra = flag.removeprefix("EDGEPROF_REQUIRE_").lower()
        pytest.skip(f"{module} is not installed: the {extra} extra (pip install 'edgeprof[{extra}]') runs this test")


def etdump(name: str = "toycnn_xnn") -> bytes:
    """The bytes of a recorded fixture ETDump (20 runs)."""
    return gzip.decompress((DATA / "etdump" / f"{name}.N20.etdp.gz").read_bytes())


def cli(*args, cwd=None):
    """One command in this process (click's runner), from ``cwd`` when given."""
    from edgeprof.cli import main

    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(main, [str(a) for a in args])
    finally:
        os.chdir(old)


def refused(res, *why: str) -> str:
    """A one-line refusal through the CLI: exit 2, no traceback, each of ``why`` in the error line."""
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code == 2, (res.exit_code, res.output[-800:])
    errors = [line for line in res.output.splitlines() if line.startswith("edgeprof: error:")]
    assert len(errors) == 1 and all(w in errors[0] for w in why) and "Traceback" not in res.output, res.output[-800:]
    return errors[0]


def sha(p: Path) -> str:
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def worker_environments(root: Path) -> list[dict]:
    """The environment of each live tool-call worker of ``edgeprof mcp`` serving ``root`` (read from /proc), with
    the mode of its scratch folder under ``(mode of EDGEPROF_SCRATCH)``."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
            if b"edgeprof.server.worker" not in argv or str(root).encode() not in argv:
                continue
            raw = (d / "environ").read_bytes()
        except OSError:
            continue
        env = dict(kv.split("=", 1) for kv in raw.decode("utf-8", "replace").split("\0") if "=" in kv)
        with contextlib.suppress(KeyError, OSError):  # the worker's own folder, read while it lives (it goes with it)
            env["(mode of EDGEPROF_SCRATCH)"] = oct(os.stat(env["EDGEPROF_SCRATCH"]).st_mode & 0o777)
        out.append(env)
    return out
