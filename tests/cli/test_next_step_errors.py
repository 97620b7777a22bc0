"""Errors that name the next step (what the file is and what reads it), and gzip-compressed profiles read as
they are (the test fixtures' own form) — bounded, truncation and trailing bytes refused with their offset."""

from __future__ import annotations

import gzip
import os

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

import edgeprof
from edgeprof.cli import main
from testdata import DATA


@pytest.fixture(scope="module")
def ex(tmp_path_factory):
    d = tmp_path_factory.mktemp("ex") / "example"
    edgeprof.example(d)
    return d


def _err(args, cwd=None):
    old = os.getcwd()
    try:
        if cwd:
            os.chdir(cwd)
        res = CliRunner().invoke(main, [str(a) for a in args])
    finally:
        os.chdir(old)
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    return res.stderr


def test_a_program_given_as_a_profile(ex):
    err = _err(["analyze", ex / "artifacts" / "toycnn_portable.pte"])
    assert "this is an ExecuTorch program (.pte" in err and "`edgeprof program FILE`" in err and "`edgeprof run FILE`" in err


def test_an_etdump_given_where_a_report_or_program_is_expected(ex):
    etd = next((ex / "runs").rglob("*.etdump"))
    for cmd in (["ane", etd], ["program", etd]):
        err = _err(cmd)
        assert "this is an ETDump (an ExecuTorch profile)" in err and "`edgeprof analyze FILE`" in err
        assert "expected b'ET12' (an ETDump)" not in err


def test_an_experiment_name_without_run_dir_says_where_it_is(ex):
    err = _err(["compare", "-b", "portable", "-c", "xnnpack_fp32", "--no-write"], cwd=ex.parent)
    assert "portable: no such file or folder" in err and "--run-dir" in err and "example/runs/linux" in err


def test_gzip_compressed_profiles_are_read(tmp_path):
    """``.etdp.gz`` and ``_all_runs_timeline.csv.gz``: the same numbers as the files they hold — checked against
    ExecuTorch Inspector's durations."""
    gz = tmp_path / "toycnn_xnn.N20.etdp.gz"
    gz.write_bytes((DATA / "etdump" / "toycnn_xnn.N20.etdp.gz").read_bytes())
    prof = edgeprof.load_etdump(gz, warn=False)
    gt = pl.read_csv(gzip.decompress((DATA / "ground_truth" / "toycnn_xnn.N20.inspector.csv.gz").read_bytes()))
    ex = gt.filter((pl.col("event_name") == "Method::execute") & (pl.col("block_name") != "Default")).sort("run_index")
    assert np.allclose(prof.latency_ms(), ex["duration_ms"].to_numpy(), rtol=1e-9)
    res = CliRunner().invoke(main, ["analyze", str(gz), "--output-dir", str(tmp_path / "out")])
    assert res.exit_code == 0, res.stderr
    csv = next((tmp_path / "out").rglob("*_all_runs_timeline.csv"))
    packed = tmp_path / "m_t1_exec_all_runs_timeline.csv.gz"
    packed.write_bytes(gzip.compress(csv.read_bytes()))
    from edgeprof.io.timeline_csv import read_timeline_csv

    assert np.allclose(read_timeline_csv(packed).latency_ms(), read_timeline_csv(csv).latency_ms())


def test_gzip_bombs_truncation_and_trailing_bytes(tmp_path, monkeypatch):
    from edgeprof.io import timeline_csv

    monkeypatch.setattr(timeline_csv, "MAX_CSV_BYTES", 10_000)
    bomb = tmp_path / "b_exec_all_runs_timeline.csv.gz"
    bomb.write_bytes(gzip.compress(b"a," * 20_000))
    with pytest.raises(edgeprof.errors.InputError, match=r"expands .*limit: the 10000 bytes any timeline CSV"):
        timeline_csv.read_timeline_csv(bomb)
    cut = tmp_path / "cut.etdp.gz"
    cut.write_bytes(gzip.compress(gzip.decompress((DATA / "etdump" / "toycnn_xnn.N20.etdp.gz").read_bytes()))[:-20])
    with pytest.raises(edgeprof.errors.InputError, match=r"truncated|damaged"):
        edgeprof.load_etdump(cut, warn=False)
    extra = tmp_path / "extra.etdp.gz"
    extra.write_bytes((DATA / "etdump" / "toycnn_xnn.N20.etdp.gz").read_bytes() + b"junk")
    with pytest.raises(edgeprof.errors.InputError, match="after the end of the gzip data"):
        edgeprof.load_etdump(extra, warn=False)
