"""Timeline CSVs read back into a profile, checked against ExecuTorch Inspector's own table of the same run.

The CSVs here are written from Inspector's ground-truth tables (not by edgeprof), in the Arm kit's column
spelling, so the oracle is independent of the reader and of the ETDump reader.
"""

from __future__ import annotations

import gzip

import numpy as np
import polars as pl
import pytest
from testdata import DATA

from edgeprof.errors import InputError
from edgeprof.io.timeline_csv import execute_latency_ms, read_timeline_csv


def _inspector(name: str) -> pl.DataFrame:
    raw = gzip.decompress((DATA / "ground_truth" / f"{name}.N20.inspector.csv.gz").read_bytes())
    return pl.read_csv(raw).filter(pl.col("block_name") == "Execute")


def _kit_csv(insp: pl.DataFrame, path, backend: str = "XnnpackBackend", **extra) -> pl.DataFrame:
    """Inspector's rows in the kit's columns: name, delegate_backend, duration_ms, node_id, run_index, block."""
    df = insp.select(
        pl.col("event_name").alias("name"),
        pl.when(pl.col("is_delegated_op")).then(pl.lit(backend)).otherwise(pl.lit("portable")).alias("delegate_backend"),
        pl.col("duration_ms"), pl.col("event_index").alias("node_id"), pl.col("run_index"),
        pl.col("block_name").alias("block"))
    for k, v in extra.items():
        df = df.with_columns(v.alias(k))
    df.write_csv(path)
    return df


def _execute_ms(insp: pl.DataFrame) -> np.ndarray:
    return (insp.filter(pl.col("event_name") == "Method::execute").sort("run_index")["duration_ms"].to_numpy())


@pytest.mark.parametrize("model", ["toycnn_xnn", "tel_xnn", "tel_portable", "mobilenet_v3_small_xnnq8"])
def test_latency_kinds_and_self_times_match_inspector(model, tmp_path):
    insp = _inspector(model)
    f = tmp_path / f"{model}_exec_all_runs_timeline.csv"
    _kit_csv(insp, f)
    prof = read_timeline_csv(f)
    assert prof.n_runs == insp["run_index"].n_unique() == 20
    assert prof.latency_source == "method_execute"
    np.testing.assert_allclose(prof.latency_ms(), _execute_ms(insp), rtol=0, atol=1e-9)
    ev = prof.execute_events()
    # every Inspector row is one event; delegated ops are delegate_op events
    assert ev.height == insp.height
    n_del = insp.filter(pl.col("is_delegated_op")).height
    assert (ev["kind"] == "delegate_op").sum() == n_del
    # a DELEGATE_CALL's self time is its duration minus the delegated ops before it in the same run
    for run in (0, 7, 19):
        r = insp.filter(pl.col("run_index") == run).sort("event_index")
        names, durs, dels = r["event_name"].to_list(), r["duration_ms"].to_list(), r["is_delegated_op"].to_list()
        expect, pending = [], 0.0
        for n, d, isd in zip(names, durs, dels):
            if isd:
                pending += d
            elif n == "DELEGATE_CALL":
                expect.append(d - pending)
                pending = 0.0
        got = ev.filter((pl.col("run_index") == run) & (pl.col("name") == "DELEGATE_CALL")).sort("event_index")
        np.testing.assert_allclose(got["self_ns"].to_numpy() / 1e6, expect, atol=1e-9)


def test_row_order_does_not_matter(tmp_path):
    insp = _inspector("tel_xnn")
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    df = _kit_csv(insp, a)
    df.sample(fraction=1.0, shuffle=True, seed=3).write_csv(b)
    pa, pb = read_timeline_csv(a), read_timeline_csv(b)
    cols = ["run_index", "event_index", "name", "kind", "duration_ns", "self_ns", "depth"]
    assert pa.events.select(cols).equals(pb.events.select(cols))


def test_invalid_durations_are_left_out_and_counted(tmp_path):
    insp = _inspector("toycnn_xnn")
    f = tmp_path / "t.csv"
    bad_runs = {3: float("nan"), 8: -1.0, 12: float("inf"), 15: 2.0**53 / 1e6}
    dur = pl.Series([bad_runs.get(r, d) if n == "Method::execute" else d
                     for n, r, d in zip(insp["event_name"], insp["run_index"], insp["duration_ms"])])
    _kit_csv(insp.with_columns(dur.alias("duration_ms")), f)
    prof = read_timeline_csv(f)
    valid = prof.valid_runs()
    assert prof.n_runs == 20 and valid.n_runs == 16 and valid.runs_invalid == 4
    keep = [r for r in range(20) if r not in bad_runs]
    np.testing.assert_allclose(valid.latency_ms(), _execute_ms(insp)[keep], atol=1e-9)


def test_run_numbers_and_op_types_cells_are_checked(tmp_path):
    insp = _inspector("toycnn_xnn").with_columns(pl.col("run_index") + 5)
    f = tmp_path / "t.csv"
    cells = pl.Series(['["aten.convolution.default"]', "not json", None, '[1, 2]'] * (insp.height // 4 + 1))[: insp.height]
    _kit_csv(insp, f, op_types=cells)
    prof = read_timeline_csv(f)
    assert prof.n_runs == 20
    assert any("renumbered 0..19" in w for w in prof.warnings)
    assert any("2 distinct op_types cell(s) are not JSON lists of strings" in w for w in prof.warnings)
    ops = prof.events["op_types"].to_list()
    assert ["aten.convolution.default"] in ops and [1, 2] not in ops


def test_execute_latency_reads_csv_and_parquet_alike(tmp_path):
    insp = _inspector("tel_xnn")
    f = tmp_path / "t.csv"
    df = _kit_csv(insp, f)
    df.write_parquet(tmp_path / "t.parquet")
    np.testing.assert_allclose(execute_latency_ms(f), _execute_ms(insp), atol=1e-9)
    np.testing.assert_allclose(execute_latency_ms(tmp_path / "t.parquet"), _execute_ms(insp), atol=1e-9)


@pytest.mark.parametrize("content, message", [
    ("a,b\n1,2\n", "not a timeline CSV: missing column(s) duration_ms, name"),
    ("name,duration_ms\n", "timeline CSV holds no rows with durations"),
    ("name,duration_ms\nMethod::execute,fast\n", "malformed timeline CSV"),
])
def test_bad_tables_are_one_line_errors_naming_the_file(tmp_path, content, message):
    f = tmp_path / "bad_timeline.csv"
    f.write_text(content)
    with pytest.raises(InputError) as e:
        read_timeline_csv(f)
    assert str(e.value).startswith(str(f)) and message in str(e.value) and "\n" not in str(e.value)


def test_a_folder_or_fifo_is_refused_unread(tmp_path):
    import os

    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    for p in (tmp_path, fifo):
        with pytest.raises(InputError):
            read_timeline_csv(p)
        with pytest.raises(InputError):
            execute_latency_ms(p)
