"""The kernel's wall behind the Python checks: a process restricted by :mod:`edgeprof.server.landlock` cannot
open a file outside its roots even from native code (DuckDB here, with its own file access left on), while
reading inside them and importing its own code still work."""

from __future__ import annotations

import subprocess
import sys

import pytest

from edgeprof.server import landlock

SCRIPT = r"""
import os, sys
from edgeprof.server import landlock
root, outside = sys.argv[1], sys.argv[2]
import duckdb
print(landlock.restrict(landlock.code_paths(), [root]))
con = duckdb.connect()  # external access on: only the kernel stands in the way
print(con.execute("SELECT content FROM read_text(?)", [os.path.join(root, "inside.txt")]).fetchone()[0].strip())
for how in ("duckdb", "python"):
    try:
        if how == "duckdb":
            con.execute("SELECT content FROM read_text(?)", [os.path.join(outside, "secret.txt")]).fetchone()
        else:
            open(os.path.join(outside, "secret.txt")).read()
        print(how, "READ THE SECRET")
    except Exception as e:
        print(how, "refused", type(e).__name__)
try:
    open(os.path.join(outside, "new.txt"), "w")
    print("WROTE OUTSIDE")
except OSError as e:
    print("write refused", e.errno)
import edgeprof.analysis.stats  # lazy imports still load
print("imports ok")
"""


def test_native_code_cannot_open_outside_the_roots(tmp_path):
    if landlock.abi_version() < 1:
        pytest.skip("this kernel has no Landlock: the server relies on its Python checks alone (docs/howto/mcp.md)")
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "inside.txt").write_text("inside ok\n")
    (outside / "secret.txt").write_text("TOPSECRET\n")
    r = subprocess.run([sys.executable, "-c", SCRIPT, str(root), str(outside)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-1500:]
    lines = r.stdout.splitlines()
    assert lines[0].startswith("landlock ABI ")
    assert lines[1] == "inside ok"
    assert lines[2].startswith("duckdb refused") and lines[3].startswith("python refused")
    assert lines[4] == "write refused 13" and lines[5] == "imports ok"
    assert "TOPSECRET" not in r.stdout and not (outside / "new.txt").exists()
