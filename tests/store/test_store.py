"""The history store: what ingest stores (checked against ExecuTorch Inspector's numbers), idempotency, atomicity,
two ingests at once, the Parquet dataset read without edgeprof, export, identity from manifest/flags/git."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

import edgeprof
from edgeprof.cli import main
from edgeprof.errors import InputError, UsageError
from testdata import DATA


def _etdump(tmp: Path, name: str, folder: str = "runs") -> Path:
    d = tmp / folder
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"{name}.etdp"
    p.write_bytes(gzip.decompress((DATA / "etdump" / f"{name}.etdp.gz").read_bytes()))
    return p


def _inspector_execute(name: str) -> np.ndarray:
    gt = pl.read_csv(gzip.decompress((DATA / "ground_truth" / f"{name}.inspector.csv.gz").read_bytes()))
    ex = gt.filter((pl.col("event_name") == "Method::execute") & (pl.col("block_name") != "Default")).sort("run_index")
    return ex["duration_ms"].to_numpy()


@pytest.fixture
def three(tmp_path):
    return [_etdump(tmp_path, n) for n in ("toycnn_xnn.N20", "tel_xnn.N20", "mobilenet_v3_small_xnnq8.N20")]


def _q(store, sql):
    con = duckdb.connect(str(store), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_ingest_stores_inspector_numbers(three, tmp_path):
    store = tmp_path / "h.duckdb"
    r = edgeprof.ingest(three, store=store, commit="abc123", branch="main", device="pixel", time="2026-03-01T10:00:00Z",
                        labels=["ci=nightly"])
    assert len(r.added) == 3 and not r.skipped and not r.data["errors"]
    for p in three:
        name = p.stem
        want = _inspector_execute(name)
        sha = __import__("hashlib").sha256(p.read_bytes()).hexdigest()
        (_lid, median, p90, mean, n, commit, branch, dev, t, labels), = _q(
            store, f"SELECT launch_id, median_ms, p90_ms, mean_ms, n_runs, \"commit\", branch, device, time, labels "
                   f"FROM launches WHERE launch_id = '{sha}'")
        assert n == want.size
        assert median == pytest.approx(np.median(want), rel=1e-12)
        assert p90 == pytest.approx(np.quantile(want, 0.9), rel=1e-12)
        assert mean == pytest.approx(want.mean(), rel=1e-12)
        assert (commit, branch, dev, str(t), json.loads(labels)) == ("abc123", "main", "pixel", "2026-03-01 10:00:00",
                                                                      {"ci": "nightly"})
        runs = np.array([v for (v,) in _q(store, f"SELECT latency_ms FROM runs WHERE launch_id = '{sha}' ORDER BY run_index")])
        np.testing.assert_allclose(runs, want, rtol=1e-12)
        # the categories and overhead lines of a launch add up to its mean end-to-end time
        (cat_sum,), = _q(store, f"SELECT sum(mean_ms) FROM categories WHERE launch_id = '{sha}'")
        assert cat_sum == pytest.approx(mean, rel=1e-9)


def test_same_content_is_stored_once(three, tmp_path):
    store = tmp_path / "h.duckdb"
    edgeprof.ingest(three[:2], store=store, commit="a")
    r = edgeprof.ingest(three, store=store, commit="a")
    assert [a["source"] for a in r.added] == [str(three[2])]
    assert {s["why"] for s in r.skipped} == {"already stored"} and len(r.skipped) == 2
    # the same bytes under another name, labelled as the model stored: the same launch, skipped
    copy = tmp_path / "elsewhere" / "renamed.etdp"
    copy.parent.mkdir()
    shutil.copy(three[0], copy)
    r = edgeprof.ingest([copy], store=store, commit="a", model=three[0].stem)
    assert not r.added and [s["why"] for s in r.skipped] == ["already stored"]
    assert _q(store, "SELECT count(*) FROM launches") == [(3,)]
    assert _q(store, "SELECT count(*) FROM runs") == [(60,)]


def test_the_same_launch_under_another_commit_is_a_conflict_unless_relabelled(three, tmp_path):
    """The history-regressions case: a file stored under c05 ingested again with --commit c06. Never a silent
    skip: exit 2 naming both commits and nothing stored; --relabel moves the launch (DuckDB and Parquet alike)."""
    for store in (tmp_path / "h.duckdb", tmp_path / "p" / ""):
        edgeprof.ingest(three[:1], store=store, commit="c05", time="2026-11-01T10:00:00")
        before = _counts(store)
        res = CliRunner().invoke(main, ["ingest", str(three[0]), str(three[1]), "--store", str(store), "--commit", "c06"])
        assert res.exit_code == 2 and res.stderr.count("\n") == 1
        assert "commit c05 → c06" in res.stderr and str(three[0]) in res.stderr and "--relabel" in res.stderr
        assert _counts(store) == before  # three[1] was not stored either: nothing half-done
        # another model name for the same bytes is the same kind of conflict
        with pytest.raises(UsageError, match=r"model toycnn_xnn\.N20 → other"):
            edgeprof.ingest(three[:1], store=store, commit="c05", model="other")
        r = edgeprof.ingest(three[:2], store=store, commit="c06", relabel=True)
        assert [x["fields"] for x in r.data["relabeled"]] == [["commit"]] and len(r.added) == 1
        with edgeprof_store(store) as st:
            rows = {s: (c, t) for s, c, t in st.rows('SELECT source, "commit", time FROM launches')}
            assert [c for c, _ in rows.values()] == ["c06", "c06"]
            assert str(rows[str(three[0])][1]) == "2026-11-01 10:00:00"  # no --time given: the stored time stays
            assert st.counts()["runs"] == 40
        assert edgeprof.history(store).series[0]["points"][-1]["commit"] == "c06"


def _counts(store):
    with edgeprof_store(store) as st:
        return st.counts()


def edgeprof_store(store):
    from edgeprof.store.backends import open_store

    return open_store(store)


def test_a_corrupt_file_is_reported_and_the_rest_stored(three, tmp_path):
    bad = tmp_path / "runs" / "broken.etdp"
    bad.write_bytes(three[0].read_bytes()[:700])
    store = tmp_path / "h.duckdb"
    res = CliRunner().invoke(main, ["ingest", str(tmp_path / "runs"), "--store", str(store), "--commit", "c"])
    assert res.exit_code == 2
    err = [ln for ln in res.stderr.splitlines() if "error" in ln]
    assert len(err) == 1 and "broken.etdp" in err[0]
    assert _q(store, "SELECT count(*) FROM launches") == [(3,)]


def test_a_failed_batch_leaves_the_store_as_it_was(three, tmp_path, monkeypatch):
    store = tmp_path / "h.duckdb"
    edgeprof.ingest(three[:1], store=store, commit="a")
    before = _q(store, "SELECT count(*) FROM runs")
    import edgeprof.store.duck as b

    real = b.DuckStore.write

    def failing(self, frames):
        frames = dict(frames)
        # launches and runs go in first; the operators' bad value then fails the insert mid-batch
        frames["operators"] = frames["operators"].with_columns(pl.lit("x").alias("mean_ms"))
        return real(self, frames)

    monkeypatch.setattr(b.DuckStore, "write", failing)
    with pytest.raises(InputError, match="nothing was"):
        edgeprof.ingest(three[1:], store=store, commit="b")
    assert _q(store, "SELECT count(*) FROM launches") == [(1,)]
    assert _q(store, "SELECT count(*) FROM runs") == before


def test_a_failed_parquet_batch_leaves_no_file(three, tmp_path, monkeypatch):
    ds = tmp_path / "ds"
    edgeprof.ingest(three[:1], store=f"{ds}/", commit="a")
    files = sorted(p for p in ds.rglob("*") if p.is_file())
    import polars

    real = polars.DataFrame.write_parquet
    calls = {"n": 0}

    def flaky(self, target, *a, **k):
        calls["n"] += 1
        if calls["n"] == 4:
            raise OSError(28, "No space left on device", str(target))
        return real(self, target, *a, **k)

    monkeypatch.setattr(polars.DataFrame, "write_parquet", flaky)
    with pytest.raises(InputError, match=r"(?i)no space left"):
        edgeprof.ingest(three[1:], store=f"{ds}/", commit="b")
    assert sorted(p for p in ds.rglob("*") if p.is_file()) == files


def _hold_lock(store: Path, seconds: float) -> subprocess.Popen:
    code = ("import sys, time\nfrom edgeprof.store.backends import open_store\n"
            f"s = open_store({str(store)!r}, write=True)\nprint('held', flush=True)\ntime.sleep({seconds})\ns.close()\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def test_two_ingests_at_once_one_waits(three, tmp_path):
    store = tmp_path / "h.duckdb"
    edgeprof.ingest(three[:1], store=store, commit="a")
    holder = _hold_lock(store, 2.0)  # returns once the other process holds the store's lock
    # the lock is held when the ingest starts: it can only succeed by waiting for it (without waiting it is the
    # one-line "locked by another edgeprof" error, tested below)
    r = edgeprof.ingest(three[1:], store=store, commit="b", lock_timeout=30)
    holder.wait(10)
    assert len(r.added) == 2
    assert _q(store, "SELECT count(*) FROM launches") == [(3,)]


def test_a_held_lock_past_the_timeout_is_one_clear_error(three, tmp_path):
    store = tmp_path / "h.duckdb"
    edgeprof.ingest(three[:1], store=store, commit="a")
    holder = _hold_lock(store, 4.0)
    try:
        res = CliRunner().invoke(main, ["ingest", str(three[1]), "--store", str(store), "--lock-timeout", "0.5"])
    finally:
        holder.wait(10)
    assert res.exit_code == 2
    assert "locked by another edgeprof" in res.stderr and str(store) in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert _q(store, "SELECT count(*) FROM launches") == [(1,)]


def test_concurrent_ingest_processes_store_everything_once(three, tmp_path):
    store = tmp_path / "h.duckdb"
    exe = [sys.executable, "-m", "edgeprof", "ingest", "--store", str(store), "--lock-timeout", "60"]
    procs = [subprocess.Popen(exe + [str(p) for p in three] + ["--commit", "x"], stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert _q(store, "SELECT count(*) FROM launches") == [(3,)]
    assert _q(store, "SELECT count(*) FROM runs") == [(60,)]


def test_parquet_dataset_is_hive_partitioned_and_readable_without_edgeprof(three, tmp_path):
    ds = tmp_path / "ds"
    edgeprof.ingest(three, store=f"{ds}/", commit="c1", device="dev/ice=1", model="m v3", time="2026-02-03T04:05:06")
    dirs = {p.relative_to(ds).as_posix() for p in ds.glob("*/*/*/*") if p.is_dir()}
    assert dirs == {f"{t}/model=m v3/device=dev%2Fice%3D1/date=2026-02-03" for t in
                    ("launches", "runs", "categories", "operators", "placements")}  # no kernel evidence in these profiles
    lp = pl.scan_parquet(ds / "launches", hive_partitioning=True).collect()
    assert set(lp["device"]) == {"dev/ice=1"} and set(lp["model"]) == {"m v3"} and lp.height == 3
    con = duckdb.connect()
    n = con.execute(f"SELECT count(*) FROM read_parquet('{ds}/runs/**/*.parquet', hive_partitioning = true) "
                    "WHERE device = 'dev/ice=1'").fetchone()[0]
    assert n == 60
    # the same numbers as the DuckDB store
    db = tmp_path / "h.duckdb"
    edgeprof.ingest(three, store=db, commit="c1", device="dev/ice=1", model="m v3", time="2026-02-03T04:05:06")
    a = sorted(_q(db, "SELECT launch_id, median_ms, n_runs FROM launches"))
    b = sorted(con.execute(f"SELECT launch_id, median_ms, n_runs FROM read_parquet('{ds}/launches/**/*.parquet')").fetchall())
    assert a == b


def test_export_round_trip(three, tmp_path):
    db = tmp_path / "h.duckdb"
    edgeprof.ingest(three, store=db, commit="c1")
    r = edgeprof.export(db, f"{tmp_path / 'ds'}/")
    assert r.data["launches_copied"] == 3
    assert edgeprof.export(db, f"{tmp_path / 'ds'}/").data["launches_copied"] == 0
    back = tmp_path / "back.duckdb"
    edgeprof.export(f"{tmp_path / 'ds'}/", back)
    for t in ("launches", "runs", "categories", "operators", "kernels", "placements"):
        cols = "*" if t != "launches" else "launch_id, model, device, date, median_ms, median_log_var, time, labels"
        assert sorted(_q(db, f"SELECT {cols} FROM {t}"), key=str) == sorted(_q(back, f"SELECT {cols} FROM {t}"), key=str), t


def test_history_reads_the_parquet_dataset_like_the_file(three, tmp_path):
    db = tmp_path / "h.duckdb"
    for i, c in enumerate(("c1", "c2", "c3")):
        edgeprof.ingest([three[i]], store=db, commit=c, model="m", device="d", experiment="e", threads=1,
                        time=f"2026-01-0{i + 1}T00:00:00")
    edgeprof.export(db, f"{tmp_path / 'ds'}/")
    a = edgeprof.history(db).to_json()
    b = edgeprof.history(f"{tmp_path / 'ds'}/").to_json()
    a.pop("store"), b.pop("store")
    assert a == b
    assert [p["commit"] for p in a["series"][0]["points"]] == ["c1", "c2", "c3"]


def test_identity_from_the_manifest(tmp_path):
    p = _etdump(tmp_path, "toycnn_xnn.N20", "out/runs/linux/xnn")
    (tmp_path / "out" / "runs" / "linux" / "manifest.json").write_text(json.dumps(
        {"model": "models/toycnn.pte", "generated_at": "2026-05-06T07:08:09+02:00", "results": [],
         "git": {"commit": "deadbeef", "branch": "feature/x"}, "device": "Pixel 8"}))
    r = edgeprof.ingest([p], store=tmp_path / "h.duckdb")
    a = r.added[0]
    assert (a["commit"], a["model"], a["device"], a["time"]) == ("deadbeef", "toycnn", "Pixel 8", "2026-05-06T05:08:09")
    # flags win over the manifest
    r = edgeprof.ingest([p], store=tmp_path / "h2.duckdb", commit="cafe", device="board")
    assert (r.added[0]["commit"], r.added[0]["device"]) == ("cafe", "board")


def test_identity_from_git(tmp_path, three):
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e", "GIT_COMMITTER_DATE": "2026-04-01T12:00:00+00:00"}
    for args in (["init", "-q", "-b", "trunk"], ["commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env)
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    r = edgeprof.ingest(three[:1], store=tmp_path / "h.duckdb", git=repo)
    assert (r.added[0]["commit"], r.added[0]["time"]) == (head, "2026-04-01T12:00:00")
    assert _q(tmp_path / "h.duckdb", "SELECT branch FROM launches") == [("trunk",)]
    with pytest.raises(UsageError, match="not a git checkout"):
        edgeprof.ingest(three[:1], store=tmp_path / "h3.duckdb", git=tmp_path / "runs")


def test_kit_timeline_csv_is_ingested(tmp_path):
    src = _etdump(tmp_path, "toycnn_xnn.N20", "src")
    res = CliRunner().invoke(main, ["analyze", str(src)])
    assert res.exit_code == 0, res.output
    csv = next(tmp_path.glob("src/*_all_runs_timeline.csv"))
    r = edgeprof.ingest([csv], store=tmp_path / "h.duckdb", commit="c")
    assert r.added[0]["launch_id"] == __import__("hashlib").sha256(csv.read_bytes()).hexdigest()
    (median,), = _q(tmp_path / "h.duckdb", "SELECT median_ms FROM launches")
    assert median == pytest.approx(np.median(_inspector_execute("toycnn_xnn.N20")), rel=1e-6)


@pytest.mark.parametrize("content", [b"", b"not a database at all, just text\n" * 40, b"\x00" * 4096])
def test_a_file_that_is_not_a_store_is_one_clear_error(tmp_path, content):
    f = tmp_path / "h.duckdb"
    f.write_bytes(content)
    res = CliRunner().invoke(main, ["history", "--store", str(f)])
    assert res.exit_code == 2
    assert res.stderr.count("\n") == 1 and str(f) in res.stderr


def test_bad_usage_is_one_line(three, tmp_path):
    r = CliRunner()
    res = r.invoke(main, ["ingest", str(three[0]), "--store", str(tmp_path / "h.duckdb"), "--time", "yesterday"])
    assert res.exit_code == 2 and "not an ISO 8601 time" in res.stderr
    res = r.invoke(main, ["ingest", str(three[0]), "--store", str(tmp_path / "h.duckdb"), "--label", "novalue"])
    assert res.exit_code == 2 and "KEY=VALUE" in res.stderr
    assert not (tmp_path / "h.duckdb").exists()
    edgeprof.ingest(three[:1], store=tmp_path / "h.duckdb")
    res = r.invoke(main, ["history", "--store", str(tmp_path / "h.duckdb"), "--metric", "latency"])
    assert res.exit_code == 2 and "--metric must be median, mean, p90, category:NAME, op:NAME, peak_rss" in res.stderr
    res = r.invoke(main, ["history", "--store", str(tmp_path / "h.duckdb"), "--model", "nope"])
    assert res.exit_code == 2 and "no launches match" in res.stderr
    # the next step: what the store does hold
    (model, device), = {(s["model"], s["device"]) for s in edgeprof.history(tmp_path / "h.duckdb").series}
    assert f"stored: model {model} on device {device}" in res.stderr


def test_a_device_is_selected_by_its_name(tmp_path):
    """A device is stored as "<name> — <cpu facts>"; `--device NAME` selects it (not a prefix of the name)."""
    store = tmp_path / "h.duckdb"
    edgeprof.ingest([_etdump(tmp_path, "toycnn_xnn.N20")], store=store, device="Pixel 8 — 0xd87 (sme2)")
    edgeprof.ingest([_etdump(tmp_path, "tel_xnn.N20")], store=store, device="Pixel 8a — 0xd4b")
    for asked, want in (("Pixel 8", {"Pixel 8 — 0xd87 (sme2)"}), ("Pixel 8a", {"Pixel 8a — 0xd4b"}),
                        ("Pixel 8 — 0xd87 (sme2)", {"Pixel 8 — 0xd87 (sme2)"})):
        assert {s["device"] for s in edgeprof.history(store, device=asked).series} == want, asked
    with pytest.raises(UsageError, match="no launches match"):
        edgeprof.history(store, device="Pixel")


def test_nothing_to_store_leaves_no_store_behind(tmp_path):
    bad = tmp_path / "runs" / "broken.etdp"
    bad.parent.mkdir()
    bad.write_bytes(b"\x00" * 64)
    for store in (tmp_path / "h.duckdb", f"{tmp_path / 'ds'}/"):
        res = CliRunner().invoke(main, ["ingest", str(bad), "--store", str(store)])
        assert res.exit_code == 2 and "broken.etdp" in res.stderr
        assert not Path(str(store)).exists()
