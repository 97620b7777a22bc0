"""A real Dask scheduler and worker processes on 127.0.0.1 (for the scale-out ingest tests and benchmark)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path


@contextlib.contextmanager
def local_scheduler(tmp: Path, workers: int = 2):
    """Start ``dask scheduler`` (a free port) and ``workers`` single-threaded ``dask worker`` processes; yield the
    scheduler's address once every worker has joined; stop them all on exit."""
    from distributed import Client

    sf = Path(tmp) / "scheduler.json"
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", "0", "--no-dashboard", "--scheduler-file", str(sf)], **quiet)]
    try:
        for _ in range(600):
            if sf.exists() and sf.stat().st_size:
                break
            time.sleep(0.1)
        addr = json.loads(sf.read_text())["address"]
        for _ in range(workers):
            procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", addr, "--nthreads", "1",
                                           "--nworkers", "1", "--no-dashboard", "--host", "127.0.0.1"], **quiet))
        with Client(addr, timeout=60) as c:
            c.wait_for_workers(workers, timeout=120)
        yield addr
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(30)
