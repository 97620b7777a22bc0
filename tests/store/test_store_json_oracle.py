"""Every key of `ingest --json` and `export --json` on two real ONNX Runtime launches against independent readings:
the launch id as the SHA-256 of the file's (decompressed) bytes computed here, the counts from the runtime's JSON
(runs = `model_run` events, operators = distinct op types, categories = the hand labels of those op types in
`tests/data/taxonomy_labels.tsv` plus the unattributed time), the store read back with DuckDB's own client and the
exported dataset with pyarrow. A key the documents gain without a check here fails the test."""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
from testdata import DATA

FILES = ["cnn_cpu_t1_l1.ort.json", "cnn_cpu_t1_l2.ort.json.gz"]
TABLES = ("categories", "kernels", "launches", "memory", "operators", "placements", "runs")


def labels() -> dict[str, str]:
    rows = csv.reader((x for x in (DATA / "taxonomy_labels.tsv").open() if not x.startswith("#")), delimiter="\t")
    return {r[0]: r[2].split("/")[0] for r in rows if r[1] == "onnx"}


def launch(path) -> dict:
    raw = path.read_bytes()
    raw = gzip.decompress(raw) if path.suffix == ".gz" else raw
    ev = json.loads(raw)
    ops = {e["args"]["op_name"] for e in ev if e.get("cat") == "Node"}
    runs = [e["dur"] / 1000 for e in ev if e["name"] == "model_run"]
    nodes = {e["name"] for e in ev if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")}
    return {"id": hashlib.sha256(raw).hexdigest(), "runs": runs, "ops": ops, "nodes": nodes,
            "categories": {labels()[o] for o in ops} | {"unattributed"}}


def edgeprof(*args, cwd) -> dict:
    r = subprocess.run([sys.executable, "-m", "edgeprof", *map(str, args), "--json"], capture_output=True, text=True,
                       cwd=cwd)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    d = tmp_path_factory.mktemp("store")
    (d / "in").mkdir()
    for f in FILES:
        shutil.copy(DATA / "ort" / f, d / "in" / f)
    doc = edgeprof("ingest", "in", "--store", "h.duckdb", "--commit", "c0ffee", "--branch", "main", cwd=d)
    return doc, [launch(d / "in" / f) for f in FILES], d


def _counts_from_json(truth) -> dict:
    return {"launches": len(truth), "runs": sum(len(t["runs"]) for t in truth),
            "operators": sum(len(t["ops"]) for t in truth), "categories": sum(len(t["categories"]) for t in truth),
            "kernels": 0, "placements": sum(len(t["nodes"]) for t in truth),  # one row per node a run times
            "memory": 0}  # profiles not collected by edgeprof run: no memory recorded


def _store_counts(path) -> dict:
    import duckdb

    con = duckdb.connect(str(path), read_only=True)
    try:
        return {t: con.execute(f"select count(*) from {t}").fetchone()[0] for t in TABLES}
    finally:
        con.close()


def _added(d, truth, root):
    assert [a["launch_id"] for a in d["added"]] == [t["id"] for t in truth]
    assert all(a["commit"] == "c0ffee" and a["model"] == "cnn_cpu" for a in d["added"])
    assert [a["source"] for a in d["added"]] == [f"in/{f}" for f in FILES]
    import duckdb

    con = duckdb.connect(str(root / "h.duckdb"), read_only=True)
    stored = dict(con.execute("select launch_id, median_ms from launches").fetchall())
    con.close()
    for t in truth:  # the stored launch statistic against numpy on the runtime's own durations
        assert stored[t["id"]] == pytest.approx(float(np.median(t["runs"])), rel=1e-9)


INGEST_KEYS = {
    "added": _added,
    "counts": lambda d, t, root: d["counts"] == _counts_from_json(t) == _store_counts(root / "h.duckdb"),
    "engine": lambda d, t, root: d["engine"] == "local (1 process)",
    "errors": lambda d, t, root: d["errors"] == [],
    "kind": lambda d, t, root: d["kind"] == "ingest",
    "relabeled": lambda d, t, root: d["relabeled"] == [],
    "schema_version": lambda d, t, root: d["schema_version"] == 1,
    "seconds": lambda d, t, root: d["seconds"] >= 0,
    "skipped": lambda d, t, root: d["skipped"] == [],
    "store": lambda d, t, root: d["store"] == "h.duckdb",
    "store_kind": lambda d, t, root: d["store_kind"] == "duckdb",
    "warnings": lambda d, t, root: d["warnings"] == [],
}


def test_every_key_of_ingest_has_a_check(case):
    d, truth, root = case
    assert sorted(d) == sorted(INGEST_KEYS), "a key of the ingest document needs its check here"
    for key, check in INGEST_KEYS.items():
        assert check(d, truth, root) is not False, key
    again = edgeprof("ingest", "in", "--store", "h.duckdb", "--commit", "c0ffee", "--branch", "main", cwd=root)
    assert again["added"] == [] and [s["launch_id"] for s in again["skipped"]] == [t["id"] for t in truth]


def _dataset_counts(path) -> dict:
    import pyarrow.dataset as ds

    return {t: ds.dataset(path / t, format="parquet", partitioning="hive").count_rows() if (path / t).exists() else 0
            for t in TABLES}


EXPORT_KEYS = {
    "counts": lambda d, t, root: d["counts"] == _counts_from_json(t) == _dataset_counts(root / "pq"),
    "kind": lambda d, t, root: d["kind"] == "export",
    "launches_already_there": lambda d, t, root: d["launches_already_there"] == 0,
    "launches_copied": lambda d, t, root: d["launches_copied"] == len(t),
    "schema_version": lambda d, t, root: d["schema_version"] == 1,
    "store": lambda d, t, root: d["store"] == "h.duckdb",
    "target": lambda d, t, root: d["target"] == "pq/",
    "target_kind": lambda d, t, root: d["target_kind"] == "parquet",
}


def test_every_key_of_export_has_a_check(case):
    _, truth, root = case
    d = edgeprof("export", "--store", "h.duckdb", "--to", "pq/", cwd=root)
    assert sorted(d) == sorted(EXPORT_KEYS), "a key of the export document needs its check here"
    for key, check in EXPORT_KEYS.items():
        assert check(d, truth, root) is not False, key
    again = edgeprof("export", "--store", "h.duckdb", "--to", "pq/", cwd=root)
    assert (again["launches_copied"], again["launches_already_there"]) == (0, len(truth))
