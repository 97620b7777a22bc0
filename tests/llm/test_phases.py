"""Phases of the recorded LLM fixture against a direct computation from its ETDump events, and the position
slope recovered (with its stated coverage) on simulated decode latencies with a known slope and known drift."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from edgeprof.analysis.phases import parse_phases, position_slope
from edgeprof.api import phases
from edgeprof.errors import UsageError
from edgeprof.io.etdump_read import read_etdump

DATA = Path(__file__).resolve().parent.parent / "data" / "llm"
BIN = Path(sys.executable).parent


@pytest.fixture
def fixture(tmp_path):
    et = tmp_path / "llm_kv_xnn.G2S64.etdp"
    et.write_bytes(gzip.decompress((DATA / "llm_kv_xnn.G2S64.etdp.gz").read_bytes()))
    (tmp_path / "llm_kv_xnn.G2S64.runs.json").write_text((DATA / "llm_kv_xnn.G2S64.runs.json").read_text())
    return et


def test_per_phase_numbers_equal_a_direct_computation(fixture):
    order = json.loads(fixture.with_suffix(".runs.json").read_text())
    ev = read_etdump(fixture).events
    ex = ev.filter((pl.col("name") == "Method::execute") & (pl.col("run_index") >= 0)).sort("run_index")
    ms = (ex["duration_ns"].to_numpy() / 1e6)
    init = ev.filter((pl.col("run_index") < 0) & pl.col("name").is_in(["Program::load_method", "Method::init"]))
    init_ms = init["duration_ns"].sum() / 1e6
    doc = phases(fixture).data
    assert doc["labels_source"] == fixture.with_suffix(".runs.json").name and not doc["pooled"]
    by = {p["name"]: p for p in doc["phases"]}
    for name in ("prefill", "decode"):
        mine = ms[[i for i, o in enumerate(order) if o["method"] == name]]
        assert by[name]["count"] == mine.size and by[name]["median_ms"] == pytest.approx(float(np.median(mine)))
    steady = ms[[i for i, o in enumerate(order) if o["method"] == "decode"][1:]]
    dec = by["decode"]["decode"]
    assert dec["tokens_per_s"] == pytest.approx(1000 / float(np.median(steady)))
    assert dec["low"] <= dec["tokens_per_s"] <= dec["high"]
    assert dec["position_slope"]["identifiable"]  # two generations: position and time are separable
    for p in doc["phases"]:  # each phase's own breakdown accounts for its whole end-to-end time
        assert sum(b["share_pct"] for b in p["breakdown"]) == pytest.approx(100.0, abs=0.01)
    assert by["prefill"]["breakdown"][0]["ms_per_run"] > by["decode"]["breakdown"][0]["ms_per_run"]
    t = doc["time_to_first_token"]
    assert t["first_ms"] == pytest.approx(ms[0] + init_ms) and t["init_ms"] == pytest.approx(init_ms)


def test_labels_from_the_command_line_and_their_errors(fixture):
    doc = phases(fixture, spec="0:1=prefill,1:65=decode,65:66=prefill,66:=decode").data
    assert [(p["name"], p["count"]) for p in doc["phases"]] == [("prefill", 2), ("decode", 128)]
    for bad in ("0:1=prefill", "0:200=x", "0:2=a,1:130=b", "x:1=a", "1:0=a"):
        with pytest.raises(UsageError):
            parse_phases(bad, 130)
    r = subprocess.run([str(BIN / "edgeprof"), "phases", fixture, "--phases", "0:5=a", "--json"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "have no phase" in r.stderr


def _simulate(rng, slope, drift, generations=2, steps=64, sd=0.01):
    pos = np.concatenate([np.arange(8, 8 + steps)] * generations).astype(float)
    t = np.arange(pos.size, dtype=float)
    return 0.1 + slope * pos + drift * t + rng.normal(0, sd, pos.size), pos, t


def test_position_slope_separated_from_drift_with_its_coverage():
    rng = np.random.default_rng(7)
    slope, drift = 0.0004, 0.0002
    covered = sum(
        (lambda s: s["low"] <= slope <= s["high"])(position_slope(*_simulate(rng, slope, drift)))
        for _ in range(400))
    assert 0.92 <= covered / 400 <= 0.98  # the 95 % interval covers the true slope about 95 % of the time
    y, pos, t = _simulate(np.random.default_rng(1), 0.0, drift)  # no position effect, strong drift
    s = position_slope(y, pos, t)
    assert not s["significant"] and s["drift_low"] > 0
    y, pos, t = _simulate(np.random.default_rng(2), slope, drift, generations=1)
    assert position_slope(y, pos, t)["identifiable"] is False


def test_compare_per_phase(tmp_path):
    files = {}
    for b in ("portable", "xnn"):
        et = tmp_path / f"llm_kv_{b}.G2S64.etdp"
        et.write_bytes(gzip.decompress((DATA / f"llm_kv_{b}.G2S64.etdp.gz").read_bytes()))
        (tmp_path / f"llm_kv_{b}.G2S64.runs.json").write_text((DATA / f"llm_kv_{b}.G2S64.runs.json").read_text())
        files[b] = et
    from edgeprof.api import compare_phases

    doc = compare_phases(files["portable"], files["xnn"]).data
    rows = {r["phase"]: r for r in doc["phases"]}
    assert set(rows) == {"prefill", "decode"} and doc["only_in"] == {"baseline": [], "candidate": []}
    assert rows["decode"]["baseline_runs"] == rows["decode"]["candidate_runs"] == 128

    def steady_decode(et):  # independent: Method::execute of the decode runs, first one dropped as warm-up
        order = json.loads(et.with_suffix(".runs.json").read_text())
        ev = read_etdump(et).events
        ms = ev.filter((pl.col("name") == "Method::execute") & (pl.col("run_index") >= 0)).sort("run_index")[
            "duration_ns"].to_numpy() / 1e6
        return ms[[i for i, o in enumerate(order) if o["method"] == "decode"]]

    ratio = np.median(steady_decode(files["portable"])) / np.median(steady_decode(files["xnn"]))
    assert rows["decode"]["ci_low"] <= ratio <= rows["decode"]["ci_high"]
    assert rows["decode"]["verdict"] == "faster" and doc["statements"][1].startswith("decode ")


def test_report_has_a_phase_section(tmp_path):
    from edgeprof.api import compare_phases, report

    files = []
    for b in ("portable", "xnn"):
        d = tmp_path / b
        d.mkdir()
        et = d / f"llm_kv_{b}.G2S64.etdp"
        et.write_bytes(gzip.decompress((DATA / f"llm_kv_{b}.G2S64.etdp.gz").read_bytes()))
        (d / f"llm_kv_{b}.G2S64.runs.json").write_text((DATA / f"llm_kv_{b}.G2S64.runs.json").read_text())
        files.append(et)
    rep = report([str(files[0]), str(files[1])], out=tmp_path / "r.md", write=True)
    assert all(c["phases"] and len(c["phases"]["phases"]) == 2 for c in rep["configs"])
    assert rep["phase_comparison"]["statements"] == compare_phases(*files).statements
    md = (tmp_path / "r.md").read_text()
    assert "## Phases (prefill, decode)" in md and "decode 2.5× faster" in md


@pytest.mark.parametrize("content", ["[1, 2]", "{}", '[{"method": "x", "position": "a"}]', "[[1]]", "not json", "[" * 5000,
                                     '[{"method": "decode"}]'])
def test_a_bad_run_order_file_is_one_line(fixture, content):
    from edgeprof.errors import InputError

    fixture.with_suffix(".runs.json").write_text(content)
    with pytest.raises(InputError) as e:
        phases(fixture)
    assert "runs.json" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("name", ["llm_kv_portable", "llm_kv_xnn"])
def test_prefill_and_decode_inferred_without_a_run_order_file(name, tmp_path):
    """The recorded decoder without its run-order file: prefill and decode are told apart by the run times (two
    generations: each prefill at least 2× the runs around it), exactly as the recorded order has them, and the
    report says it inferred them and how to name them for sure."""
    import gzip
    import json

    from edgeprof import api
    from testdata import DATA

    f = tmp_path / f"{name}.etdp"
    f.write_bytes(gzip.decompress((DATA / "llm" / f"{name}.G2S64.etdp.gz").read_bytes()))
    order = [o["method"] for o in json.loads((DATA / "llm" / f"{name}.G2S64.runs.json").read_text())]
    r = api.phases(f).data
    assert r["labels_source"].startswith("inferred from the run times") and "--phases" in r["labels_source"]
    assert {p["name"]: p["count"] for p in r["phases"]} == {"prefill": order.count("prefill"),
                                                            "decode": order.count("decode")}
    from edgeprof.api.phases import _labelled
    from edgeprof.io.workspace import Workspace

    labels = _labelled(f, None, Workspace())[2]
    assert labels == order


def test_a_warm_up_is_not_a_prefill(tmp_path):
    """A CNN whose first run is 5× the rest (warm-up): one phase, and the report says how to name phases."""
    import gzip

    from edgeprof import api
    from testdata import DATA

    f = tmp_path / "toycnn_xnn.etdp"
    f.write_bytes(gzip.decompress((DATA / "etdump" / "toycnn_xnn.N20.etdp.gz").read_bytes()))
    r = api.phases(f).data
    assert [p["name"] for p in r["phases"]] == ["all"]
    assert "--phases 0:1=prefill,1:=decode" in r["labels_source"]


def test_phase_shares_are_parts_of_a_whole_when_the_lines_overlap_past_end_to_end(tmp_path):
    """An execute event shortened to 77 % (as a rewritten or multi-threaded profile has it) leaves its children
    longer than the run: each phase's shares are then of the lines' sum — in [0, 100], adding up to 100 — as the
    comparison's are, and the negative residual counts as no time (before: shares of the shortened run, > 100 %)."""
    from etdump_rewrite import read, stretch, write

    from edgeprof.api import phases as run_phases

    src = gzip.decompress((Path(__file__).parents[1] / "data" / "etdump" / "toycnn_xnn.N20.etdp.gz").read_bytes())
    runs, version = read(src)
    out = stretch(runs, lambda e: e.name == "Method::execute", 0.77)
    p = tmp_path / "short.etdp"
    p.write_bytes(write(out, version))
    doc = run_phases(p).doc
    for ph in doc["phases"]:
        rows = ph["breakdown"]
        assert all(0 <= r["share_pct"] <= 100 for r in rows)
        positive = sum(max(r["ms_per_run"], 0) for r in rows)
        assert sum(r["share_pct"] for r in rows) == pytest.approx(100, abs=0.01)
        # an independent recomputation: each share is the line's mean over the lines' positive sum
        for r in rows:
            assert r["share_pct"] == pytest.approx(100 * max(r["ms_per_run"], 0) / positive, rel=1e-6)


def test_a_compressed_recording_finds_its_run_order_file(tmp_path):
    """``x.G2S64.etdp.gz`` with ``x.G2S64.runs.json`` beside it: the run order names the phases, as for the plain
    file (it was looked for as ``x.G2S64.etdp.runs.json`` and not found)."""
    from edgeprof.api import phases as run_phases

    gz = tmp_path / "llm_kv_xnn.G2S64.etdp.gz"
    gz.write_bytes((DATA / "llm_kv_xnn.G2S64.etdp.gz").read_bytes())
    (tmp_path / "llm_kv_xnn.G2S64.runs.json").write_text((DATA / "llm_kv_xnn.G2S64.runs.json").read_text())
    plain = tmp_path / "plain" / "llm_kv_xnn.G2S64.etdp"
    plain.parent.mkdir()
    plain.write_bytes(gzip.decompress(gz.read_bytes()))
    (plain.parent / "llm_kv_xnn.G2S64.runs.json").write_text((DATA / "llm_kv_xnn.G2S64.runs.json").read_text())
    a, b = run_phases(gz).doc, run_phases(plain).doc
    assert [p["name"] for p in a["phases"]] == ["prefill", "decode"]
    assert [(p["name"], p["count"]) for p in a["phases"]] == [(p["name"], p["count"]) for p in b["phases"]]
