"""`edgeprof analyze` end to end on a run folder shaped like the Arm kit's."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

from edgeprof import load_etdump
from edgeprof.analysis.inspector_order import inspector_order
from edgeprof.analysis.timeline import OPS_STATS_KIT_COLUMNS, TIMELINE_KIT_COLUMNS
from edgeprof.cli import main

EXPERIMENTS = ("linux_portable", "linux_xnn", "linux_xnnq8")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def digest(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_analyze_writes_the_kit_files_beside_each_etdump(arm_run_dir):
    before = digest(arm_run_dir.parent.parent)
    res = run("analyze", arm_run_dir, "--no-progress")
    assert res.exit_code == 0, res.output
    for exp in EXPERIMENTS:
        d = arm_run_dir / exp
        stem = f"tel_{exp}_t1"
        for suffix in ("_exec_all_runs_timeline.csv", "_exec_run0_timeline.csv", "_exec_ops_stats.csv"):
            assert (d / f"{stem}{suffix}").is_file()
        tl = pl.read_csv(d / f"{stem}_exec_all_runs_timeline.csv")
        assert tuple(tl.columns[: len(TIMELINE_KIT_COLUMNS)]) == TIMELINE_KIT_COLUMNS
        st = pl.read_csv(d / f"{stem}_exec_ops_stats.csv")
        assert tuple(st.columns[: len(OPS_STATS_KIT_COLUMNS)]) == OPS_STATS_KIT_COLUMNS
    # inputs untouched (only new files appeared)
    after = digest(arm_run_dir.parent.parent)
    assert all(after[k] == v for k, v in before.items())
    summary = json.loads((arm_run_dir / "analysis_summary.json").read_text())
    assert summary["schema_version"] == 1 and summary["etdump_count"] == 3 and summary["errors"] == []
    assert {"run_dir", "etrecord", "etdump_count", "per_etdump", "csv_files"} <= set(summary)
    by_exp = {e["experiment"]: e for e in summary["per_etdump"]}
    assert set(by_exp) == set(EXPERIMENTS)
    e = by_exp["linux_xnn"]
    assert (e["model"], e["platform"], e["threads"], e["runs"]) == ("tel", "linux", 1, 20)
    assert e["etrecord"].endswith("artifacts/tel_linux_xnn.etrecord")
    assert e["etrecord_status"] == "attached"
    lat = load_etdump(arm_run_dir / "linux_xnn" / "tel_linux_xnn_t1.etdump").latency_ms()
    assert e["latency_ms"]["median_ms"] == pytest.approx(float(np.median(lat)), abs=1e-6)
    assert e["latency_ms"]["count"] == 20 and e["rows"] == 20 * 81
    assert all((arm_run_dir / f).is_file() for f in summary["csv_files"])


def test_timeline_shares_and_ids(arm_run_dir):
    assert run("analyze", arm_run_dir, "--no-progress").exit_code == 0
    path = arm_run_dir / "linux_xnn" / "tel_linux_xnn_t1.etdump"
    tl = pl.read_csv(path.with_name("tel_linux_xnn_t1_exec_all_runs_timeline.csv"))
    ex = tl.filter(pl.col("name") == "Method::execute")
    assert np.allclose(ex["pct_total"].to_numpy(), 100.0)
    # self shares never overlap: they sum to 100 % of each run
    per_run = tl.group_by("run_index").agg(pl.col("self_pct").sum(), pl.col("self_ms").sum())
    assert np.allclose(per_run["self_pct"].to_numpy(), 100.0, atol=1e-3)
    e2e = load_etdump(path).latency_ms()
    assert np.allclose(per_run.sort("run_index")["self_ms"].to_numpy(), e2e, atol=1e-9)
    # the kit's node_id is Inspector's dataframe row
    prof = load_etdump(path)
    order = inspector_order(prof).filter(pl.Series(prof.events["run_index"] >= 0))
    assert tl["node_id"].to_list() == order["node_id"].to_list()
    run0 = pl.read_csv(path.with_name("tel_linux_xnn_t1_exec_run0_timeline.csv"))
    assert run0.equals(tl.filter(pl.col("run_index") == 0))
    # durations are exact (integer ns → ms)
    assert np.array_equal(np.round(tl["duration_ms"].to_numpy() * 1e6).astype(np.int64),
                          prof.execute_events()["duration_ns"].to_numpy())


def test_ops_stats_are_per_inference(arm_run_dir):
    assert run("analyze", arm_run_dir, "--no-progress").exit_code == 0
    path = arm_run_dir / "linux_portable" / "tel_linux_portable_t1.etdump"
    st = pl.read_csv(path.with_name("tel_linux_portable_t1_exec_ops_stats.csv"))
    prof = load_etdump(path)
    ev = prof.execute_events()
    mexec = st.filter(pl.col("name") == "Method::execute")
    assert mexec["count"].item() == 1 and mexec["pct_total"].item() == pytest.approx(100.0)
    assert mexec["total_ms"].item() == pytest.approx(float(prof.latency_ms().mean()), abs=1e-6)
    ln = st.filter(pl.col("name") == "native_call_native_layer_norm.out")
    assert ln["count"].item() == 2 and ln["occurrences"].item() == 40
    total = ev.filter(pl.col("name") == "native_call_native_layer_norm.out")["duration_ns"].sum() / 1e6 / 20
    assert ln["total_ms"].item() == pytest.approx(total, abs=1e-6)
    assert st["self_pct"].sum() == pytest.approx(100.0, abs=1e-3)
    assert st["total_ms"].to_list() == sorted(st["total_ms"].to_list(), reverse=True)
    assert "aten.native_layer_norm.default" in json.loads(ln["op_types"].item())


def test_a_corrupt_file_is_reported_and_skipped(arm_run_dir):
    bad = arm_run_dir / "linux_bad" / "tel_linux_bad_t1.etdump"
    bad.parent.mkdir()
    good = (arm_run_dir / "linux_xnn" / "tel_linux_xnn_t1.etdump").read_bytes()
    bad.write_bytes(good[:5000])
    res = run("analyze", arm_run_dir, "--no-progress")
    assert res.exit_code == 2
    assert "tel_linux_bad_t1.etdump" in res.output and "truncated" in res.output
    assert sorted(p.name for p in bad.parent.iterdir()) == ["tel_linux_bad_t1.etdump"]  # nothing half-written
    summary = json.loads((arm_run_dir / "analysis_summary.json").read_text())
    assert summary["analysed_count"] == 3 and len(summary["errors"]) == 1
    assert (arm_run_dir / "linux_xnn" / "tel_linux_xnn_t1_exec_ops_stats.csv").is_file()


def test_zero_execute_runs_is_bad_input(tmp_path):
    from etdump_builder import PE, Run, build

    p = tmp_path / "load_only.etdp"
    p.write_bytes(build([Run("Default", [PE("Method::init", 0, 5, 0)])]))
    res = run("analyze", p, "--no-progress")
    assert res.exit_code == 2 and "holds only a load/init block (Default, no Method::execute) and no execute run" in res.output
    assert sorted(x.name for x in tmp_path.iterdir()) == ["load_only.etdp"]


def test_parquet_and_output_dir(arm_run_dir, tmp_path):
    out = tmp_path / "out"
    before = sorted(p.name for p in arm_run_dir.rglob("*"))
    res = run("analyze", arm_run_dir, "--format", "parquet", "--output-dir", out, "--no-progress")
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in arm_run_dir.rglob("*")) == before  # nothing written beside the inputs
    pq = out / "linux_xnnq8" / "tel_linux_xnnq8_t1_exec_all_runs_timeline.parquet"
    df = pl.read_parquet(pq)
    assert df.height == 20 * load_etdump(arm_run_dir / "linux_xnnq8" / "tel_linux_xnnq8_t1.etdump").run(0).height
    assert (out / "analysis_summary.json").is_file()


def test_json_output_is_only_json(arm_run_dir):
    res = CliRunner().invoke(main, ["analyze", str(arm_run_dir), "--json", "--no-progress"])
    assert res.exit_code == 0
    doc = json.loads(res.stdout)
    assert doc["schema_version"] == 1 and len(doc["per_etdump"]) == 3


def test_strict_etrecord_mismatch_is_an_error(arm_run_dir, etrecord):
    res = run("analyze", arm_run_dir / "linux_xnn", "--etrecord", etrecord("toycnn_xnn"), "--strict-etrecord", "--no-progress")
    assert res.exit_code == 2 and "does not match" in res.output
    assert not list((arm_run_dir / "linux_xnn").glob("*.csv"))
    res = run("analyze", arm_run_dir / "linux_xnn", "--etrecord", etrecord("toycnn_xnn"), "--no-progress")
    assert res.exit_code == 0 and "ignored" in res.output


def test_failure_while_writing_leaves_nothing_half_written(arm_run_dir, monkeypatch):
    import edgeprof.render.tables as tables

    calls = {"n": 0}
    real = tables.write_table

    def flaky(table, path, fmt="csv"):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full")
        return real(table, path, fmt)

    monkeypatch.setattr(tables, "write_table", flaky)
    res = CliRunner().invoke(main, ["analyze", str(arm_run_dir / "linux_xnn"), "--no-progress", "-j", "1"],
                             catch_exceptions=False)
    assert res.exit_code == 2 and "cannot write (disk full)" in res.output and "Traceback" not in res.output
    left = sorted(p.name for p in (arm_run_dir / "linux_xnn").iterdir())
    assert left == ["tel_linux_xnn_t1.etdump"]


def test_missing_input_is_a_one_line_error(tmp_path):
    res = subprocess.run([sys.executable, "-m", "edgeprof", "analyze", str(tmp_path / "nope")], capture_output=True, text=True)
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0 and "nope" in res.stderr and "Traceback" not in res.stderr


def test_example_folder_round_trip(tmp_path):
    dest = tmp_path / "ex"
    assert run("example", dest).exit_code == 0
    assert (dest / "runs" / "linux" / "xnnpack_fp32" / "toycnn_xnnpack_fp32_t1.etdump").is_file()
    res = run("analyze", dest, "--no-progress", "--json")
    summary = json.loads(res.stdout)
    assert res.exit_code == 0 and {e["experiment"] for e in summary["per_etdump"]} == {"portable", "xnnpack_fp32", "xnnpack_int8"}
    assert {e["etrecord_status"] for e in summary["per_etdump"]} == {"attached"}
    assert run("example", dest).exit_code == 2  # refuses to overwrite


def test_help_is_fast_and_imports_no_data_libraries():
    code = ("import sys, edgeprof.cli; edgeprof.cli.main(['--help'], standalone_mode=False); "
            "print(sorted(m for m in ('polars', 'numpy', 'rich') if m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip().endswith("[]")
    res = subprocess.run([sys.executable, "-c", "import sys, edgeprof; print('polars' in sys.modules, 'numpy' in sys.modules)"],
                         capture_output=True, text=True)
    assert res.stdout.strip() == "False False"
