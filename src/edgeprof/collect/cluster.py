"""A Dask distributed client for scale-out ingest and analyze: a scheduler the user runs, or a local cluster only
this process can use. The ``dask`` extra (``pip install 'edgeprof[dask]'``) provides it.

The local cluster (``--workers N``): the scheduler runs in this process, on 127.0.0.1, speaking TLS with a key and
certificate made for this cluster alone (:meth:`distributed.security.Security.temporary`; client, scheduler
and workers all present it, so a process without it can neither connect nor run code). The worker processes are
started as every child is (:mod:`edgeprof.child`: an isolated interpreter running this module, with an
allow-listed environment), in a private (0700) folder that holds their copy of the key and their Dask scratch
space, removed when the cluster closes; they leave when this process closes their stdin, or dies. Once its
interpreter has started (Dask and edgeprof imported), a worker moves to this process's working folder before it
joins, so that a task's relative paths mean what they mean here — as a tool-call worker moves to its root: nothing
is imported from there (no folder of the user's is on an isolated interpreter's path). No HTTP server listens —
not the scheduler's, not a worker's — unless a dashboard is asked for (``dashboard=True``), and then the
scheduler's alone, on 127.0.0.1. A scheduler the user names (``--scheduler``) is theirs: used as given."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time

from ..errors import UsageError

START_TIMEOUT = 120.0  # seconds for the local workers to start (their imports) and join


def _distributed():
    try:
        import distributed
    except ImportError:
        raise UsageError("scale-out (--workers, --scheduler) needs Dask: install edgeprof[dask]") from None
    return distributed


@contextlib.contextmanager
def dask_client(*, workers: int | None = None, scheduler: str | None = None, timeout: float | None = None,
                dashboard: bool = False):
    """``(client, description)``: connected to ``scheduler`` (``tcp://HOST:PORT``) within ``timeout`` seconds
    (default: Dask's own ``distributed.comm.timeouts.connect``, 30 s unless configured), else to a new local
    cluster of ``workers`` single-threaded worker processes (closed on exit; see the module docstring), with
    the scheduler's dashboard on 127.0.0.1 when ``dashboard``."""
    distributed = _distributed()
    if scheduler is not None:
        try:
            client = distributed.Client(scheduler, **({} if timeout is None else {"timeout": timeout}))
        except (OSError, TimeoutError) as e:
            raise UsageError(f"cannot reach the Dask scheduler at {scheduler} ({str(e).splitlines()[0][:120]})") from None
        try:
            n = len(client.scheduler_info().get("workers", {}))
            yield client, f"dask scheduler {scheduler} ({n} workers)"
        finally:
            client.close()
        return
    if workers is None or workers < 1:
        raise UsageError("--workers must be at least 1")
    with _local_cluster(distributed, workers, dashboard) as (client, link):
        yield client, f"dask local cluster ({workers} worker processes{f', dashboard {link}' if link else ''})"


def _security(distributed):
    try:
        return distributed.security.Security.temporary()
    except ImportError:
        raise UsageError("a local Dask cluster speaks TLS, which needs the cryptography package: "
                         "install edgeprof[dask]") from None


def _write_private(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


@contextlib.contextmanager
def _local_cluster(distributed, workers: int, dashboard: bool):
    from .. import child

    security = _security(distributed)
    folder = child.private_folder("edgeprof-dask-")
    procs: list = []
    cluster = client = None
    try:
        tls = os.path.join(folder, "tls")
        os.mkdir(tls, 0o700)
        _write_private(os.path.join(tls, "cert.pem"), security.tls_worker_cert)
        _write_private(os.path.join(tls, "key.pem"), security.tls_worker_key)
        import dask

        with dask.config.set({} if dashboard else {"distributed.scheduler.http.routes": []}):
            cluster = distributed.LocalCluster(
                n_workers=0, host="127.0.0.1", protocol="tls://", security=security, silence_logs=40,
                dashboard_address="127.0.0.1:8787" if dashboard else None,
                scheduler_kwargs=None if dashboard else {"dashboard": False, "dashboard_address": "127.0.0.1:0"})
        link = None
        if dashboard:
            link = f"http://127.0.0.1:{cluster.scheduler.http_server.port}/status"
            print(f"edgeprof: the Dask dashboard is at {link}", file=sys.stderr, flush=True)
        else:
            _stop_http(cluster.scheduler)
        try:
            here = os.getcwd()
        except OSError:
            here = folder
        for i in range(workers):
            with open(os.path.join(folder, f"worker-{i}.log"), "wb") as log:
                procs.append(child.start(
                    child.python_argv("edgeprof.collect.cluster", cluster.scheduler_address, "--tls", tls,
                                      "--name", f"edgeprof-{i}", "--local-directory", os.path.join(folder, f"w{i}"),
                                      "--cwd", here),
                    cwd=folder, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT))
        client = distributed.Client(cluster)
        _wait_for(client, procs, workers, folder)
        yield client, link
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()  # the scheduler closes its workers ...
        for p in procs:  # ... and a worker it could not reach leaves when its stdin closes
            with contextlib.suppress(OSError):
                p.stdin.close()
        deadline = time.monotonic() + 10
        for p in procs:
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        child.remove_folder(folder)


def _wait_for(client, procs, n: int, folder: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if len(client.scheduler_info(n_workers=-1).get("workers", {})) >= n:
            return
        for i, p in enumerate(procs):
            if p.poll() is not None:
                raise UsageError(f"a Dask worker could not start (exit {p.returncode}): {_last_line(folder, i)}")
        if time.monotonic() > deadline:
            raise UsageError(f"the Dask workers did not join within {START_TIMEOUT:g} s")
        time.sleep(0.05)


def _last_line(folder: str, i: int) -> str:
    try:
        with open(os.path.join(folder, f"worker-{i}.log"), "rb") as f:
            lines = f.read()[-4000:].decode("utf-8", "replace").strip().splitlines()
    except OSError:
        lines = []
    return (lines[-1] if lines else "no output")[:200]


def _stop_http(server) -> None:
    """Dask starts an HTTP server (metrics, health, information pages) in every scheduler and worker, whatever
    its options; here none listens unless a dashboard is asked for (and none serves a page meanwhile: it is
    started with no routes)."""
    http = getattr(server, "http_server", None)
    if http is not None:
        http.stop()


# --------------------------------------------------------------------------------------------------
# a local cluster's worker process
# --------------------------------------------------------------------------------------------------

def _worker_main(argv: list[str] | None = None) -> None:
    import argparse
    import asyncio
    import threading

    import dask
    import distributed

    ap = argparse.ArgumentParser(prog="edgeprof-dask-worker")
    ap.add_argument("scheduler")
    ap.add_argument("--tls", required=True, help="the private folder holding the cluster's key and certificate")
    ap.add_argument("--name", required=True)
    ap.add_argument("--local-directory", required=True)
    ap.add_argument("--cwd", required=True, help="the folder relative paths in tasks are relative to")
    a = ap.parse_args(argv)
    cert, key = os.path.join(a.tls, "cert.pem"), os.path.join(a.tls, "key.pem")
    security = distributed.Security(require_encryption=True, tls_ca_file=cert, tls_worker_cert=cert,
                                    tls_worker_key=key, tls_client_cert=cert, tls_client_key=key)

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        parent_gone = asyncio.Event()

        def watch_stdin() -> None:  # EOF: the parent closed the cluster, or died
            sys.stdin.buffer.read()
            loop.call_soon_threadsafe(parent_gone.set)

        threading.Thread(target=watch_stdin, daemon=True).start()
        with contextlib.suppress(OSError):
            os.chdir(a.cwd)
        async with distributed.Worker(a.scheduler, security=security, nthreads=1, name=a.name, host="127.0.0.1",
                                      local_directory=a.local_directory, dashboard=False,
                                      dashboard_address="127.0.0.1:0", death_timeout=60) as w:
            _stop_http(w)
            finished = asyncio.ensure_future(w.finished())
            gone = asyncio.ensure_future(parent_gone.wait())
            await asyncio.wait([finished, gone], return_when=asyncio.FIRST_COMPLETED)

    with dask.config.set({"distributed.worker.http.routes": []}):
        asyncio.run(serve())


if __name__ == "__main__":
    _worker_main()
