"""Placement over commits, in a real history store (a DuckDB file and a Parquet dataset): ingest keeps where each
operator of a launch ran; history names the commit where an operator fell back, with the operator and its time;
`--fail-on fallback` gates on it from `--since`. A store made before placements were kept (schema 1) is read with
no placement history and gains the table when written."""

from __future__ import annotations

import csv
import gzip
import io
import json
import subprocess

import pytest
from testdata import DATA, edgeprof_cli

PLACE = DATA / "placement"
COMMITS = [("c1", "gate_xnn"), ("c2", "gate_nosigmoid"), ("c3", "gate_norelu")]


def cli(*args, code: int = 0) -> subprocess.CompletedProcess:
    return edgeprof_cli(*args, code=code)


def sigmoid_ms(name: str) -> float:
    """Inspector's mean time of the portable sigmoid kernel in one recording."""
    rows = csv.DictReader(io.StringIO(gzip.decompress((PLACE / f"{name}.N10.inspector.csv.gz").read_bytes()).decode()))
    ms = [float(r["duration_ms"]) for r in rows if r["event_name"] == "native_call_sigmoid.out"]
    return sum(ms) / len(ms)


def _ingest(tmp_path, store: str, commits=COMMITS):
    for commit, name in commits:
        i = COMMITS.index((commit, name))
        f = tmp_path / f"{commit}_{name}.etdp"
        f.write_bytes(gzip.decompress((PLACE / f"{name}.N10.etdp.gz").read_bytes()))
        cli("ingest", f, "--store", store, "--commit", commit, "--model", "gate", "--device", "board",
            "--time", f"2026-11-0{i + 1}T00:00:00")


@pytest.mark.parametrize("kind", ["duckdb", "parquet"])
def test_history_names_the_commit_where_the_sigmoid_fell_back(tmp_path, kind):
    store = str(tmp_path / ("h.duckdb" if kind == "duckdb" else "ds")) + ("" if kind == "duckdb" else "/")
    _ingest(tmp_path, store, COMMITS[:2])
    doc = json.loads(cli("history", "--store", store, "--json").stdout)
    (s,) = doc["series"]
    (c,) = s["placement_changes"]
    assert (c["commit_before"], c["commit_after"], c["fallbacks"]) == ("c1", "c2", 1)
    (m,) = c["moved"]
    assert (m["key"], m["name"], m["from"], m["to"], m["kind"]) == (
        "sigmoid#0", "native_call_sigmoid.out", "XnnpackBackend", "portable", "fallback")
    assert m["ms_per_run"] == pytest.approx(sigmoid_ms("gate_nosigmoid"), abs=1e-9)
    assert c["appeared"] == ["transpose#2", "transpose#3"] and c["disappeared"] == []
    assert c["statement"].startswith("fallback at c2 (after c1): native_call_sigmoid.out (sigmoid#0) XnnpackBackend "
                                     "→ portable")
    assert doc["fallbacks"] == [f"model=gate · device=board: {c['statement']}"]
    r = cli("history", "--store", store, "--fail-on", "fallback", code=1)
    assert r.stderr.strip().splitlines()[-1].startswith("edgeprof: error: fallback: model=gate · device=board: "
                                                         "fallback at c2 (after c1)")
    # c3 (the build without ReLU's config: the sigmoid back on XNNPACK) is a promotion: a gate from c3 on passes,
    # one from c2 on still fails
    _ingest(tmp_path, store, COMMITS[2:])
    doc = json.loads(cli("history", "--store", store, "--json").stdout)
    assert [(c["commit_after"], c["fallbacks"], [m["kind"] for m in c["moved"]])
            for c in doc["series"][0]["placement_changes"]] == [("c2", 1, ["fallback"]), ("c3", 0, ["promotion"])]
    cli("history", "--store", store, "--fail-on", "fallback", "--since", "c2", code=1)
    cli("history", "--store", store, "--fail-on", "fallback", "--since", "c3")


@pytest.mark.parametrize("version, lacking", [(1, ("placements", "memory")), (2, ("memory",))])
def test_a_store_made_before_placements_reads_and_upgrades(tmp_path, version, lacking):
    """A store of an older schema (schema 1: every table of today's but ``placements`` and ``memory``; schema 2: but
    ``memory``, as edgeprof made them then) is read as it is — history works, with no placement to report — and
    written to, it gains the tables and today's schema (3)."""
    import duckdb

    from edgeprof.store.schema import TABLES, create_sql

    store = tmp_path / "old.duckdb"
    _ingest(tmp_path, str(store), COMMITS[:1])
    con = duckdb.connect(str(store))
    for t in lacking:
        con.execute(f"DROP TABLE {t}")
    con.execute(f"UPDATE store_meta SET value = '{version}' WHERE key = 'schema_version'")
    con.close()
    before = store.read_bytes()
    doc = json.loads(cli("history", "--store", store, "--json").stdout)
    assert doc["series"][0]["placement_changes"] == [] and store.read_bytes() == before  # read: untouched
    _ingest(tmp_path, str(store), COMMITS[1:2])
    con = duckdb.connect(str(store), read_only=True)
    assert con.execute("SELECT value FROM store_meta").fetchall() == [("3",)]
    assert con.execute("SELECT count(DISTINCT launch_id) FROM placements").fetchall() == [(1 + (version > 1),)]
    assert con.execute("SELECT count(*) FROM memory").fetchall() == [(0,)]  # profiles not collected by edgeprof run
    con.close()
    for t in lacking:
        assert t in TABLES and f"CREATE TABLE IF NOT EXISTS \"{t}\"" in create_sql(t)
    # a store lacking another table is still refused
    con = duckdb.connect(str(store))
    con.execute("DROP TABLE kernels")
    con.close()
    r = cli("history", "--store", store, code=2)
    assert "not an edgeprof history store (it lacks kernels): refused" in r.stderr
