"""Every shape a history store can hold (end-to-end timelines without an operator row, launches without any
line, one point, one commit of many launches), a damaged store refused before anything is written into it, a
Parquet store whose path holds glob characters, ``--threads`` with one meaning, and the Markdown trend."""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import numpy as np
import pytest
from click.testing import CliRunner

import edgeprof
from edgeprof.cli import main
from testdata import DATA


def _etdump(folder: Path, name: str, as_name: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / (as_name or f"{name}.etdp")
    p.write_bytes(gzip.decompress((DATA / "etdump" / f"{name}.etdp.gz").read_bytes()))
    return p


@pytest.fixture(scope="module")
def e2e_timelines(tmp_path_factory):
    """Arm-kit timeline CSVs holding only ``Method::execute`` rows (no operator), one per commit: the real runs of
    toycnn_xnn, 2× slower from commit c10 on, each file under the kit's name in its own folder."""
    tmp = tmp_path_factory.mktemp("e2e")
    src = _etdump(tmp / "src", "toycnn_xnn.N20")
    assert CliRunner().invoke(main, ["analyze", str(src)]).exit_code == 0
    with open(next((tmp / "src").glob("*_all_runs_timeline.csv"))) as f:
        rows = list(csv.reader(f))
    head, ex = rows[0], [r for r in rows[1:] if r[1] == "Method::execute"]
    dur = head.index("duration_ms")
    rng = np.random.default_rng(2)
    out = []
    for c in range(14):
        f = tmp / f"c{c:02d}" / "gpt_xnn_mac_sme2_on_t1_exec_all_runs_timeline.csv"
        f.parent.mkdir()
        with open(f, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(head)
            scale = (2.0 if c >= 10 else 1.0) * float(np.exp(rng.normal(0, 0.03)))
            for r in ex:
                r = list(r)
                r[dur] = f"{float(r[dur]) * scale:.6f}"
                w.writerow(r)
        out.append(f)
    return out


def test_a_store_of_end_to_end_timelines(e2e_timelines, tmp_path):
    """0 operator rows: history works (no traceback), the kit's names give model, experiment and threads, the
    step is found, and an operator metric is one clear error."""
    store = tmp_path / "h.duckdb"
    for c, f in enumerate(e2e_timelines):
        r = edgeprof.ingest([f], store=store, commit=f"c{c:02d}", time=f"2026-11-01T{c:02d}:00:00")
        assert len(r.added) == 1
    assert r.data["counts"]["operators"] == 0
    res = CliRunner().invoke(main, ["history", "--store", str(store), "--json"])
    assert res.exit_code == 0, res.stderr
    (s,) = json.loads(res.stdout)["series"]
    assert (s["model"], s["experiment"], s["threads"], len(s["points"])) == ("gpt_xnn", "mac_sme2_on", 1, 14)
    assert [(c["commit_after"], c["direction"], c["status"]) for c in s["changes"]] == [("c10", "regression", "confirmed")]
    assert s["changes"][0]["attribution"]["operators"] == []
    bad = CliRunner().invoke(main, ["history", "--store", str(store), "--metric", "op:native_call_addmm.out"])
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1 and "no launch has" in bad.stderr


def _summary_items(n_commits: int, launches: int, lines: bool):
    from edgeprof.analysis.launch_summary import LaunchSummary

    rng = np.random.default_rng(1)
    t0 = datetime(2026, 2, 1)
    out = []
    for c in range(n_commits):
        for k in range(launches):
            e2e = 10.0 * np.exp(rng.normal(0, 0.05)) * (1 + 0.01 * rng.standard_normal(30))
            ln = {"CONV": e2e * 0.7, "framework_overhead": e2e * 0.3} if lines else {}
            ops = {"native_call_convolution.out": e2e * 0.7} if lines else {}
            summ = LaunchSummary(e2e, list(range(30)), ln, ops, {"native_call_convolution.out": "CONV"} if lines else {})
            t = t0 + timedelta(hours=c, minutes=k)
            out.append(({"launch_id": f"l{c}-{k}", "model": "m", "device": "d", "date": t.date().isoformat(), "time": t,
                         "experiment": "e", "platform": None, "fingerprint": None, "threads": 1, "commit": f"c{c}",
                         "branch": "main", "labels": "{}", "source": f"s{c}{k}", "source_kind": "etdump",
                         "edgeprof_version": "t", "ingested_at": t}, summ))
    return out


@pytest.mark.parametrize("n_commits, launches, lines", [(1, 1, True), (1, 5, True), (6, 1, False), (1, 1, False)])
def test_small_and_bare_stores(tmp_path, n_commits, launches, lines):
    """One point, one commit of five launches, launches without any line: history answers each, with the points
    it has and no invented change."""
    import history_truth as ht

    store = tmp_path / "h.duckdb"
    ht.write_store(store, _summary_items(n_commits, launches, lines))
    res = edgeprof.history(store)
    (s,) = res.series
    assert len(s["points"]) == n_commits and s["points"][0]["launches"] == launches and s["changes"] == []
    if launches > 1:
        assert s["tau_source"].startswith("REML over 1 commits")
    if not lines:
        with pytest.raises(edgeprof.errors.UsageError, match="no launch has"):
            edgeprof.history(store, metric="category:CONV")
    else:
        md = edgeprof.history(store, metric="category:conv")
        assert len(md.series[0]["points"]) == n_commits


def _runs_block(store: Path) -> int:
    con = duckdb.connect(str(store), read_only=True)
    try:
        return con.execute("SELECT min(block_id) FROM pragma_storage_info('runs') WHERE block_id >= 0").fetchone()[0]
    finally:
        con.close()


def test_a_damaged_store_is_refused_before_anything_is_written(tmp_path):
    """A checksum-damaged block of the runs table (which neither ingest's bookkeeping nor history reads): ingest
    used to add its launch and say so; now it is refused, one line naming the store, and the file is unchanged."""
    store = tmp_path / "h.duckdb"
    edgeprof.ingest([_etdump(tmp_path / "r", "toycnn_xnn.N20"), _etdump(tmp_path / "r", "tel_xnn.N20")], store=store,
                    commit="a")
    block = _runs_block(store)
    with open(store, "r+b") as fh:  # the block's payload, past its 8-byte checksum (DuckDB: 3 × 4 KiB headers)
        fh.seek(3 * 4096 + block * 262144 + 64)
        fh.write(b"\xff" * 32)
    before = hashlib.sha256(store.read_bytes()).hexdigest()
    res = CliRunner().invoke(main, ["ingest", str(_etdump(tmp_path / "r2", "toycnn_portable.N20")), "--store", str(store),
                                    "--commit", "b"])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1
    assert str(store) in res.stderr and "damaged" in res.stderr and "nothing was stored" in res.stderr
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before
    # the same for an export into it
    other = tmp_path / "other.duckdb"
    edgeprof.ingest([_etdump(tmp_path / "r3", "tel_portable.N20")], store=other, commit="c")
    res = CliRunner().invoke(main, ["export", "--store", str(other), "--to", str(store)])
    assert res.exit_code == 2 and "damaged" in res.stderr
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before


def test_a_parquet_store_path_with_glob_characters_is_a_name(tmp_path):
    """``p*q/`` beside ``pXq/``: the launches in ``pXq`` are neither read nor taken as already stored."""
    sibling, odd = tmp_path / "pXq", tmp_path / "p*q"
    three = [_etdump(tmp_path / "r", n) for n in ("toycnn_xnn.N20", "tel_xnn.N20", "toycnn_portable.N20")]
    edgeprof.ingest(three, store=str(sibling) + "/", commit="a")
    r = edgeprof.ingest(three[:2], store=str(odd) + "/", commit="a")
    assert len(r.added) == 2 and not r.skipped and r.data["counts"]["launches"] == 2
    assert len(edgeprof.history(str(odd) + "/").series) == 2
    assert edgeprof.ingest(three, store=str(sibling) + "/", commit="a").data["counts"]["launches"] == 3


def test_threads_has_one_meaning(tmp_path):
    """--threads N: the thread count the launches were measured with — a folder's files named with another count
    are left out, files naming none are taken as N, a file named with another count is an error."""
    runs = tmp_path / "runs"
    one = _etdump(runs, "toycnn_xnn.N20", "m_t1.etdump")
    _etdump(runs, "tel_xnn.N20", "m_t4.etdump")
    plain = _etdump(runs, "toycnn_portable.N20", "plain.etdump")
    store = tmp_path / "h.duckdb"
    r = edgeprof.ingest([runs], store=store, threads=1, commit="a")
    assert sorted(Path(a["source"]).name for a in r.added) == [one.name, plain.name]
    con = duckdb.connect(str(store), read_only=True)
    assert sorted(con.execute("SELECT threads FROM launches").fetchall()) == [(1,), (1,)]
    con.close()
    res = CliRunner().invoke(main, ["ingest", str(runs / "m_t4.etdump"), "--store", str(store), "--threads", "1"])
    assert res.exit_code == 2 and "records 4 thread(s), not --threads 1" in res.stderr


def test_markdown_trend_reads_as_written(e2e_timelines, tmp_path):
    store = tmp_path / "h.duckdb"
    for c, f in enumerate(e2e_timelines):
        edgeprof.ingest([f], store=store, commit=f"c{c:02d}", time=f"2026-11-01T{c:02d}:00:00")
    out = tmp_path / "t.md"
    assert CliRunner().invoke(main, ["history", "--store", str(store), "--markdown", str(out)]).exit_code == 0
    md = out.read_text()
    assert "p < 0.001" in md and "&lt;" not in md
    lines = md.splitlines()
    heads = [i for i, ln in enumerate(lines) if ln.startswith("#")]
    for i, j in zip(heads, [*heads[1:], len(lines)]):  # every section says something
        assert any(ln.strip() for ln in lines[i + 1:j]) or lines[j].startswith("### "), lines[i]
    assert "## Trend" not in md and "## Changes" in md
