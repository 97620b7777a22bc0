"""The recorded LLM decoder (tests/data/llm), decompressed once per module with its run-order file beside it, and
its truth read independently — with the reference FlatBuffers runtime (tests/helpers/etdump_rewrite.py), not
edgeprof's reader: each run's Method::execute time (ms, run order), the run order, the load + init time."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from etdump_rewrite import read

DATA = Path(__file__).resolve().parent.parent / "data" / "llm"


@pytest.fixture(scope="module")
def llm_recording(tmp_path_factory):
    d = tmp_path_factory.mktemp("llm")
    et = d / "llm_kv_xnn.G2S64.etdp"
    et.write_bytes(gzip.decompress((DATA / "llm_kv_xnn.G2S64.etdp.gz").read_bytes()))
    (d / "llm_kv_xnn.G2S64.runs.json").write_text((DATA / "llm_kv_xnn.G2S64.runs.json").read_text())
    order = json.loads((d / "llm_kv_xnn.G2S64.runs.json").read_text())
    blocks, _ = read(et.read_bytes())
    dur = [[(e.end - e.start) / 1e6 for e in b.events if getattr(e, "name", None) in names] for b in blocks
           for names in [{"Method::execute"} if b.name == "Execute" else {"Program::load_method", "Method::init"}]]
    ms = np.array([x for b, t in zip(blocks, dur) if b.name == "Execute" for x in t])
    init = sum(x for b, t in zip(blocks, dur) if b.name != "Execute" for x in t)
    return et, ms, order, init
