"""A Dask distributed client for scale-out ingest and analyze: a scheduler the user runs, or a local cluster of worker
processes on 127.0.0.1. The ``dask`` extra (``pip install 'edgeprof[dask]'``) provides it."""

from __future__ import annotations

import contextlib

from ..errors import UsageError


def _distributed():
    try:
        import distributed
    except ImportError:
        raise UsageError("scale-out (--workers, --scheduler) needs Dask: install edgeprof[dask]") from None
    return distributed


@contextlib.contextmanager
def dask_client(*, workers: int | None = None, scheduler: str | None = None, timeout: float | None = None):
    """``(client, description)``: connected to ``scheduler`` (``tcp://HOST:PORT``) within ``timeout`` seconds
    (default: Dask's own ``distributed.comm.timeouts.connect``, 30 s unless configured), else to a new local
    cluster of ``workers`` single-threaded worker processes (closed on exit)."""
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
    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=":0", silence_logs=40)
    try:
        client = distributed.Client(cluster)
        try:
            yield client, f"dask local cluster ({workers} worker processes)"
        finally:
            client.close()
    finally:
        cluster.close()
