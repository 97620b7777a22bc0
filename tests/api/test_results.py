"""The typed results of the Python API, checked against ExecuTorch Inspector's numbers, and the one JSON
header (``schema_version``, ``kind``) of every command's output."""

from __future__ import annotations

import gzip
import json

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from testdata import DATA

import edgeprof
from edgeprof.api import Breakdown, Comparison, Interval, LatencyReport
from edgeprof.cli import main
from edgeprof.conventions import KINDS, SCHEMA_VERSION, verdict


def _inspector_execute_ms(name: str) -> np.ndarray:
    df = pl.read_csv(gzip.decompress((DATA / "ground_truth" / f"{name}.N20.inspector.csv.gz").read_bytes()))
    return (df.filter((pl.col("event_name") == "Method::execute") & (pl.col("block_name") == "Execute"))
            .sort("run_index")["duration_ms"].to_numpy())


def test_a_notebook_comparison_reads_like_the_readme(etdump):
    cmp = edgeprof.compare(etdump("toycnn_portable.N20"), etdump("toycnn_xnn.N20"), warmup=0)
    assert isinstance(cmp, Comparison)
    # the point estimate is the ratio of the medians of Inspector's per-run Method::execute
    expect = np.median(_inspector_execute_ms("toycnn_portable")) / np.median(_inspector_execute_ms("toycnn_xnn"))
    assert cmp.speedup.estimate == pytest.approx(expect, rel=1e-9)
    assert isinstance(cmp.speedup.ci, Interval) and cmp.speedup.ci.level == 0.95
    assert cmp.speedup.estimate in cmp.speedup.ci
    assert cmp.verdict == verdict(cmp.speedup.ci.low, cmp.speedup.ci.high, cmp["threshold"]) == "faster"
    assert cmp.significant and cmp.summary_line.startswith("toycnn_xnn")
    cats = cmp.categories
    assert isinstance(cats, pl.DataFrame) and {"line", "baseline_ms", "candidate_ms", "speedup", "status"} <= set(cats.columns)
    # the categories of each arm add up to its mean end-to-end time
    assert cats["baseline_ms"].sum() == pytest.approx(np.mean(_inspector_execute_ms("toycnn_portable")), rel=1e-6)
    pdf = cats.to_pandas()
    assert list(pdf.columns) == cats.columns and len(pdf) == cats.height


def test_latency_reports_are_typed_and_match_inspector(etdump):
    reports = edgeprof.latency(etdump("tel_xnn.N20"))
    assert len(reports) == 1 and isinstance(reports[0], LatencyReport)
    r = reports[0]
    insp = _inspector_execute_ms("tel_xnn")
    assert r.count == 20 and r.median_ms == pytest.approx(float(np.median(insp)), abs=1e-9)
    np.testing.assert_allclose(r.latencies_ms, insp, atol=1e-9)
    assert r.median_ms in r.ci and r.ci.level == 0.95
    assert r.series is not None and r.series.values_ms.size == 20


def test_a_breakdown_has_frames_and_its_profile(etdump):
    bd = edgeprof.breakdown(etdump("tel_xnn.N20"))
    assert isinstance(bd, Breakdown) and bd.profile.n_runs == 20
    cats = bd.categories
    assert cats["avg_ms"].sum() == pytest.approx(np.mean(_inspector_execute_ms("tel_xnn")), rel=1e-6)
    assert bd.operators.height >= 10 and "operators_all" not in bd.to_json()


def test_results_are_also_their_documents(etdump):
    cmp = edgeprof.compare(etdump("toycnn_portable.N20"), etdump("toycnn_xnn.N20"))
    doc = cmp.to_json()
    assert cmp.to_dict() == doc  # the earlier name of the same method
    assert list(doc)[:2] == ["schema_version", "kind"] and doc["schema_version"] == SCHEMA_VERSION
    assert doc["kind"] == "comparison" and cmp["verdict"] == doc["verdict"] and "speedup" in cmp
    assert "schema_version" not in cmp.body() and cmp.body()["kind"] == "comparison"


def _headers(doc, path="$") -> list[str]:
    """Paths of every schema_version below the top level."""
    out = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == "schema_version" and path != "$":
                out.append(path)
            out += _headers(v, f"{path}.{k}")
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _headers(v, f"{path}[{i}]")
    return out


def test_every_command_prints_one_header(etdump, tmp_path):
    ex = tmp_path / "ex"
    r = CliRunner().invoke(main, ["example", str(ex), "--json"])
    assert r.exit_code == 0, r.output
    first = json.loads(r.output)
    run = ex / first["run_dir"] if "run_dir" in first else ex
    etd = sorted(run.rglob("*.etdump"))
    logs = [DATA / "xnnpack" / "mac_sme2_on_xnntrace.log", DATA / "xnnpack" / "mac_sme2_off_xnntrace.log"]
    ane = DATA / "anemll"
    anes = sorted(ane.glob("*.json"))
    commands = {
        "example": None,
        "latency": ["latency", str(etd[0]), "--json", "--no-write"],
        "comparison": ["compare", str(etdump("toycnn_portable.N20")), str(etdump("toycnn_xnn.N20")), "--json", "--no-write"],
        "breakdown": ["breakdown", str(etd[0]), "--json", "--no-write"],
        "kernels": ["kernels", *map(str, logs), "--json", "--no-write"],
        "validation": ["validate", str(run), "--json"],
        "analysis_summary": ["analyze", str(run), "--json", "--no-progress"],
        "report": ["report", str(run), "--json", "--out", str(tmp_path / "r.md")],
        "trace": ["trace", str(etd[0]), "--json", "--out", str(tmp_path / "t.json")],
        "kernel_view": ["kernel-view", "-b", str(logs[1]), "-c", str(logs[0]), "--json"],
        "ane_analysis": ["ane", str(anes[1]), "--json"],
        "ane_plan": ["ane", str(anes[0]), "--json"],
        "ane_diff": ["ane", "diff", str(anes[1]), str(anes[1]), "--json"],
    }
    seen = {"example": first}
    for kind, cmd in commands.items():
        if cmd is None:
            continue
        res = CliRunner().invoke(main, cmd)
        assert res.exit_code in (0, 1), (cmd, res.output)
        seen[kind] = json.loads(res.stdout)
    for kind, doc in seen.items():
        assert doc["schema_version"] == SCHEMA_VERSION and doc["kind"] in KINDS, (kind, doc.get("kind"))
        assert _headers(doc) == [], (kind, _headers(doc)[:3])
    assert {k: d["kind"] for k, d in seen.items() if k != "kernels"} == {k: k for k in seen if k != "kernels"}
    assert seen["kernels"]["kind"] == "kernels" and seen["kernels"]["logs"][0]["kind"] == "kernels"
    assert all(x["kind"] == "latency" for x in seen["latency"]["reports"])
