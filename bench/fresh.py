"""One command in a fresh process: its whole-process time (imports included, interpreter start excluded) and
peak RSS (the process's own high-water mark, ``VmHWM``). ``inspector PATH`` runs ExecuTorch's Inspector on an ETDump instead of an edgeprof command, and
``et-deserialize PATH`` ExecuTorch's own .pte deserializer."""

from __future__ import annotations

import json
import subprocess
import sys

# the peak a driver reports: its own high-water mark (Linux's ru_maxrss also counts the parent's resident memory
# at fork — it survives exec — so a large benchmark parent would floor every figure at its own size)
PEAK = r"""
import resource


def peak_mb():
    try:
        with open("/proc/self/status") as f:
            return next(int(ln.split()[1]) for ln in f if ln.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""

DRIVER = PEAK + r"""
import contextlib, io, json, resource, sys, time
t = time.perf_counter()
u0 = resource.getrusage(resource.RUSAGE_SELF)
if sys.argv[1] == "inspector":
    from executorch.devtools import Inspector
    df = Inspector(etdump_path=sys.argv[2]).to_dataframe()
elif sys.argv[1] == "et-deserialize":
    from executorch.exir._serialize._program import deserialize_pte_binary
    with open(sys.argv[2], "rb") as f:
        pte = deserialize_pte_binary(f.read())
else:
    import os
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the edgeprof program sets it (edgeprof.cli) before numpy loads
    import edgeprof.cli as cli
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            cli.main(sys.argv[1:], standalone_mode=False)
        except SystemExit as e:
            if e.code:
                raise
u1 = resource.getrusage(resource.RUSAGE_SELF)  # every thread's CPU time (Polars', the extension's)
cpu = (u1.ru_utime - u0.ru_utime) + (u1.ru_stime - u0.ru_stime)
print(json.dumps({"seconds": time.perf_counter() - t, "cpu": cpu, "rss_mb": peak_mb()}))
"""


def measure(*args: str, env: dict | None = None) -> dict:
    """``{"seconds", "cpu", "rss_mb"}`` of ``edgeprof ARGS…`` (or ``inspector ETDUMP``) run in a new interpreter
    (``env``: variables added to this process's environment). Modules' bytecode is cached as an installed package
    has it (``pip install`` compiles it; an editable install writes it on first import): PYTHONDONTWRITEBYTECODE is
    dropped, else every process would compile edgeprof's modules again (0.17 s of an ``analyze``)."""
    import os

    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    r = subprocess.run([sys.executable, "-c", DRIVER, *args], capture_output=True, text=True, env={**base, **(env or {})})
    if r.returncode:
        raise RuntimeError(f"{list(args[:2])} failed: {r.stderr.strip().splitlines()[-1:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])
