"""Each command loads what it needs, not the whole package: the API is imported function by function
(edgeprof.api binds a function on first use), so ``analyze`` never loads the store, collection, Core ML or ANE
modules. Counted in a fresh process per command (modules are the unit; times live in bench/bench_startup.py)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest
from testdata import DATA

SCRIPT = """
import json, sys
from edgeprof.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.startswith("edgeprof"))))
"""

# never needed by a command that reads ETDumps and writes tables or a report
FOREIGN = ("edgeprof.store", "edgeprof.collect.", "edgeprof.api.coreml", "edgeprof.api.ane", "edgeprof.api.history",
           "edgeprof.api.ingest", "edgeprof.api.run", "edgeprof.api.numerics", "edgeprof.api.placement",
           "edgeprof.api.program", "edgeprof.api.plan", "edgeprof.api.example", "edgeprof.server", "edgeprof.mil_model",
           "edgeprof.ane_model", "edgeprof.io.coreml", "edgeprof.io.ort_profile")


def _loaded(tmp_path, *args) -> list[str]:
    r = subprocess.run([sys.executable, "-c", SCRIPT, *map(str, args)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture()
def dumps(tmp_path):
    out = []
    for name in ("toycnn_portable.N20", "toycnn_xnn.N20"):
        p = tmp_path / f"{name}.etdp"
        p.write_bytes(gzip.decompress((DATA / "etdump" / f"{name}.etdp.gz").read_bytes()))
        out.append(p)
    return out


@pytest.mark.parametrize("command, api, at_most", [
    ("analyze", "edgeprof.api.analyze", 73),  # 68, then the core's CSV writer (render.csv_text), its chooser, plain columns
    ("breakdown", "edgeprof.api.breakdown", 64),
    ("trace", "edgeprof.api.trace", 60),
    ("compare", "edgeprof.api.compare", 82),
])
def test_a_command_loads_its_own_modules_only(tmp_path, dumps, command, api, at_most):
    args = {"analyze": [dumps[1], "--output-dir", tmp_path / "o", "--quiet"],
            "breakdown": [dumps[1], "--no-write"],
            "trace": [dumps[1], "--out", tmp_path / "t.json"],
            "compare": [dumps[0], dumps[1]]}[command]
    mods = _loaded(tmp_path, command, *args)
    assert api in mods  # the command ran
    foreign = [m for m in mods if m.startswith(FOREIGN)]
    assert foreign == []
    api_modules = {m for m in mods if m.startswith("edgeprof.api.") and not m.startswith(
        ("edgeprof.api.result", "edgeprof.api._common"))}
    assert len(api_modules) <= 3, api_modules  # the command's own (compare also reads memory)
    assert len(mods) <= at_most, len(mods)  # before per-function imports: 98 for analyze


def test_help_loads_no_api_module(tmp_path):
    mods = _loaded(tmp_path, "--help")
    assert not [m for m in mods if m.startswith("edgeprof.api")]


PROGRAM = """
import os, runpy, sys
sys.argv = ["edgeprof", "--version"]
try:
    runpy.run_module("edgeprof", run_name="__main__", alter_sys=True)  # as `python -m edgeprof --version`
except SystemExit:
    pass
import numpy
print(os.environ.get("OPENBLAS_NUM_THREADS"), len(os.listdir("/proc/self/task")))
"""
LIBRARY = "import os, edgeprof.cli, numpy; print(os.environ.get('OPENBLAS_NUM_THREADS'), len(os.listdir('/proc/self/task')))"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="threads are counted in /proc")
def test_the_program_runs_numpy_without_a_blas_thread_pool(tmp_path):
    """The edgeprof program asks OpenBLAS for one thread before numpy loads (its pool of spinning threads costs CPU
    and no edgeprof array needs it); a value the user set is kept, and a program that imports edgeprof is left as
    it is. Counted as the process's threads: the pool adds one per further core."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}

    def run(code, **extra):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                           env={**env, **extra})
        assert r.returncode == 0, r.stderr[-2000:]
        value, threads = r.stdout.split()[-2:]
        return value, int(threads)

    program, library = run(PROGRAM), run(LIBRARY)
    assert program[0] == "1" and library[0] == "None"
    if (os.cpu_count() or 1) > 1:
        assert program[1] < library[1]
    assert run(PROGRAM, OPENBLAS_NUM_THREADS="2")[0] == "2"
