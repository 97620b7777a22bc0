"""The recorded LLM decoder (tests/data/llm), decompressed once per module with its run-order file beside it, and
its truth read independently: each run's Method::execute time (ms, run order), the run order, the load + init time."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import polars as pl
import pytest

DATA = Path(__file__).resolve().parent.parent / "data" / "llm"


@pytest.fixture(scope="module")
def llm_recording(tmp_path_factory):
    from edgeprof.io.etdump_read import read_etdump

    d = tmp_path_factory.mktemp("llm")
    et = d / "llm_kv_xnn.G2S64.etdp"
    et.write_bytes(gzip.decompress((DATA / "llm_kv_xnn.G2S64.etdp.gz").read_bytes()))
    (d / "llm_kv_xnn.G2S64.runs.json").write_text((DATA / "llm_kv_xnn.G2S64.runs.json").read_text())
    order = json.loads((d / "llm_kv_xnn.G2S64.runs.json").read_text())
    ev = read_etdump(et).events
    ms = ev.filter((pl.col("name") == "Method::execute") & (pl.col("run_index") >= 0)).sort("run_index")[
        "duration_ns"].to_numpy() / 1e6
    init = ev.filter((pl.col("run_index") < 0) & pl.col("name").is_in(["Program::load_method", "Method::init"]))
    return et, ms, order, float(init["duration_ns"].sum()) / 1e6
