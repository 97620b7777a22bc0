"""The recorded LLM fixture (tools/recipes/llm_kv_decoder.py: a tiny decoder with a static KV cache, methods
prefill and decode in one program, two generations of an 8-token prompt and 64 decode steps, recorded by the
ExecuTorch runtime) read without torch: what the recording holds, as the later phase analysis will rely on."""

from __future__ import annotations

import gzip
import json
import statistics
from pathlib import Path

import pytest

from edgeprof.io.etdump_read import read_etdump
from edgeprof.io.pte import read_pte

DATA = Path(__file__).resolve().parent.parent / "data" / "llm"


@pytest.mark.parametrize("build", ["portable", "xnn"])
def test_recording_has_both_phases_in_run_order(build, tmp_path):
    et = tmp_path / "x.etdp"
    et.write_bytes(gzip.decompress((DATA / f"llm_kv_{build}.G2S64.etdp.gz").read_bytes()))
    order = json.loads((DATA / f"llm_kv_{build}.G2S64.runs.json").read_text())
    prof = read_etdump(et)
    assert prof.n_runs == len(order) == 2 * (1 + 64)
    lat = prof.latency_ms().tolist()
    prefill = [ms for ms, o in zip(lat, order) if o["method"] == "prefill"]
    decode = [ms for ms, o in zip(lat, order) if o["method"] == "decode" and o["position"] > 9]
    # an 8-token prefill does more work than a 1-token decode step, in both generations
    assert min(prefill) > statistics.median(decode)
    assert [o["position"] for o in order if o["method"] == "decode"][:3] == [8, 9, 10]
    pte = tmp_path / "p.pte"
    pte.write_bytes(gzip.decompress((DATA / f"llm_kv_{build}.pte.gz").read_bytes()))
    assert sorted(pl.name for pl in read_pte(pte).plans) == ["decode", "prefill"]
