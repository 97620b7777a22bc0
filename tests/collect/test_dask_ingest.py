"""Scale-out ingest on real Dask: a scheduler and two worker processes on 127.0.0.1 (real TCP), and a local
cluster (``--workers 2``). The rows stored are the ones a one-process ingest stores; the Parquet dataset is
written by the workers. Without the extra, one line says what to install."""

from __future__ import annotations

import gzip
import json
import os
import sys

import pytest
from click.testing import CliRunner

import edgeprof
from edgeprof.cli import main
from testdata import DATA

NO_DASK = "the dask extra is not installed (pip install 'edgeprof[dask]' runs this test)"
distributed = (pytest.importorskip("distributed", reason=NO_DASK) if not os.environ.get("EDGEPROF_REQUIRE_DASK")
               else __import__("distributed"))

NAMES = ("toycnn_xnn.N20", "tel_xnnq8.N20", "mobilenet_v3_small_xnn.N20", "toycnn_portable.N20")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("runs")
    out = []
    for n in NAMES:
        p = d / f"{n}.etdp"
        p.write_bytes(gzip.decompress((DATA / "etdump" / f"{n}.etdp.gz").read_bytes()))
        out.append(p)
    bad = d / "truncated.etdp"
    bad.write_bytes(out[0].read_bytes()[:900])
    return out, bad


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    from dask_cluster import local_scheduler

    with local_scheduler(tmp_path_factory.mktemp("dask"), workers=2) as addr:
        assert addr.startswith("tcp://127.0.0.1:")
        with distributed.Client(addr, timeout=60) as c:
            pids = set(c.run(os.getpid).values())
        assert len(pids) == 2 and os.getpid() not in pids  # two separate worker processes
        yield addr


def _rows(store) -> dict:
    from edgeprof.store.backends import open_store

    with open_store(store) as st:
        return {"launches": sorted(st.query('SELECT launch_id, model, median_ms, p90_ms, n_runs, "commit" FROM launches').rows()),
                "runs": sorted(st.query("SELECT launch_id, run_index, latency_ms FROM runs").rows()),
                "operators": sorted(st.query("SELECT launch_id, operator, mean_ms FROM operators").rows())}


def test_scheduler_path_stores_what_one_process_stores(files, scheduler, tmp_path):
    good, bad = files
    local = tmp_path / "local.duckdb"
    edgeprof.ingest(good, store=local, commit="c1", time="2026-01-01T00:00:00")
    res = CliRunner().invoke(main, ["ingest", *map(str, good), str(bad), "--store", str(tmp_path / "d.duckdb"),
                                    "--commit", "c1", "--time", "2026-01-01T00:00:00", "--scheduler", scheduler, "--json"])
    assert res.exit_code == 2  # the truncated file: reported, the rest stored
    d = json.loads(res.stdout)
    assert d["engine"].startswith(f"dask scheduler {scheduler}") and len(d["added"]) == len(good)
    assert [e["input"] for e in d["errors"]] == [str(bad)]
    assert _rows(tmp_path / "d.duckdb") == _rows(local)


def test_workers_write_the_parquet_dataset(files, scheduler, tmp_path):
    good, _ = files
    ds = f"{tmp_path / 'ds'}/"
    r = edgeprof.ingest(good, store=ds, commit="c1", time="2026-01-01T00:00:00", scheduler=scheduler)
    assert len(r.added) == len(good)
    parts = sorted((tmp_path / "ds" / "launches").rglob("*.parquet"))
    assert len(parts) == len(good)  # one part per launch, each written by the worker that read it
    assert not list((tmp_path / "ds").rglob("*.tmp"))
    local = tmp_path / "local.duckdb"
    edgeprof.ingest(good, store=local, commit="c1", time="2026-01-01T00:00:00")
    assert _rows(ds) == _rows(local)
    # again through the cluster: nothing new, no stray temporaries
    r = edgeprof.ingest(good, store=ds, commit="c1", time="2026-01-01T00:00:00", scheduler=scheduler)
    assert not r.added and len(r.skipped) == len(good)
    assert sorted((tmp_path / "ds" / "launches").rglob("*.parquet")) == parts
    # the same files under another commit: refused, nothing written, nothing staged left behind
    from edgeprof.errors import UsageError

    with pytest.raises(UsageError, match="commit c1 → c2"):
        edgeprof.ingest(good, store=ds, commit="c2", time="2026-01-01T00:00:00", scheduler=scheduler)
    assert sorted((tmp_path / "ds" / "launches").rglob("*.parquet")) == parts
    assert not list((tmp_path / "ds").rglob("*.tmp")) and not list((tmp_path / "ds").rglob(".*.tmp"))


def test_local_cluster(files, tmp_path):
    good, _ = files
    r = edgeprof.ingest(good[:2], store=tmp_path / "w.duckdb", commit="c", workers=2)
    assert r.data["engine"] == "dask local cluster (2 worker processes)" and len(r.added) == 2
    local = tmp_path / "l.duckdb"
    edgeprof.ingest(good[:2], store=local, commit="c")
    a, b = _rows(tmp_path / "w.duckdb"), _rows(local)
    assert a["runs"] == b["runs"] and a["operators"] == b["operators"]


def test_unreachable_scheduler_is_one_line(files, tmp_path):
    """Within Dask's configured connect timeout (shortened here, as a user can with
    DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT)."""
    import dask

    good, _ = files
    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        res = CliRunner().invoke(main, ["ingest", str(good[0]), "--store", str(tmp_path / "x.duckdb"),
                                        "--scheduler", "tcp://127.0.0.1:9"])
    assert res.exit_code == 2 and "cannot reach the Dask scheduler" in res.stderr
    assert res.stderr.count("\n") == 1 and not (tmp_path / "x.duckdb").exists()


@pytest.mark.missing_extra_expected
def test_missing_extra_names_it(files, tmp_path, monkeypatch):
    good, _ = files
    monkeypatch.setitem(sys.modules, "distributed", None)
    res = CliRunner().invoke(main, ["ingest", str(good[0]), "--store", str(tmp_path / "x.duckdb"), "--workers", "2"])
    assert res.exit_code == 2 and "install edgeprof[dask]" in res.stderr
    assert res.stderr.count("\n") == 1


def test_analyze_on_the_workers_writes_what_one_process_writes(files, scheduler, tmp_path, monkeypatch):
    """``analyze --scheduler`` / ``--workers``: each file read and its CSVs written by a worker process (analysing
    in this process is made to fail for those runs); every file and the summary equal a one-process run's, byte
    for byte, the truncated file reported as an error there too."""
    import importlib

    aa = importlib.import_module("edgeprof.api.analyze")

    good, bad = files
    inputs = [*map(str, good), str(bad)]
    real = aa._analyze_one
    for name, extra in (("local", []), ("dask", ["--scheduler", scheduler]), ("cluster", ["--workers", "2"])):
        if extra:
            monkeypatch.setattr(aa, "_analyze_one", lambda *a, **k: pytest.fail("analysed in the client process"))
        else:
            monkeypatch.setattr(aa, "_analyze_one", real)
        r = CliRunner().invoke(main, ["analyze", *inputs, "--output-dir", str(tmp_path / name), "--no-progress",
                                      "--quiet", *extra])
        assert r.exit_code == 2 and "truncated.etdp" in r.output, r.output  # one input failed, the rest written
    local = {p.relative_to(tmp_path / "local"): p.read_bytes() for p in (tmp_path / "local").rglob("*") if p.is_file()}
    assert len(local) == 3 * len(good) + 1
    for name in ("dask", "cluster"):
        there = {p.relative_to(tmp_path / name): p.read_bytes() for p in (tmp_path / name).rglob("*") if p.is_file()}
        assert set(there) == set(local)
        for k, v in local.items():
            if k.name == "analysis_summary.json":  # names its own output folder
                a = json.loads(v.decode().replace(str(tmp_path / "local"), "OUT"))
                b = json.loads(there[k].decode().replace(str(tmp_path / name), "OUT"))
                assert a["per_etdump"] == b["per_etdump"] and a["errors"] == b["errors"] and len(a["errors"]) == 1
            else:
                assert there[k] == v, k
