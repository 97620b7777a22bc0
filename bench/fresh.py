"""One command in a fresh process: its whole-process time (imports included, interpreter start excluded) and
peak RSS. ``inspector PATH`` runs ExecuTorch's Inspector on an ETDump instead of an edgeprof command, and
``et-deserialize PATH`` ExecuTorch's own .pte deserializer."""

from __future__ import annotations

import json
import subprocess
import sys

DRIVER = r"""
import contextlib, io, json, resource, sys, time
t = time.perf_counter()
if sys.argv[1] == "inspector":
    from executorch.devtools import Inspector
    df = Inspector(etdump_path=sys.argv[2]).to_dataframe()
elif sys.argv[1] == "et-deserialize":
    from executorch.exir._serialize._program import deserialize_pte_binary
    with open(sys.argv[2], "rb") as f:
        pte = deserialize_pte_binary(f.read())
else:
    import edgeprof.cli as cli
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            cli.main(sys.argv[1:], standalone_mode=False)
        except SystemExit as e:
            if e.code:
                raise
print(json.dumps({"seconds": time.perf_counter() - t, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(*args: str) -> dict:
    """``{"seconds", "rss_mb"}`` of ``edgeprof ARGS…`` (or ``inspector ETDUMP``) run in a new interpreter."""
    r = subprocess.run([sys.executable, "-c", DRIVER, *args], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{list(args[:2])} failed: {r.stderr.strip().splitlines()[-1:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])
