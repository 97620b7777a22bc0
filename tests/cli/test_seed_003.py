"""Seed 003 (anemll-profile + ane-costplan, its AGENTS.md guide): the fast workflows, walked step by step with
``edgeprof ane`` on the reports those tools write (``-j``), and the guide's interpretation rules.

Expected numbers are read from the JSON documents here (json.load), not from edgeprof's output.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ane_builder import costplan, dumps_like_the_tool, fallback, island, op_type, placement, profile
from testdata import DATA

BIN = Path(sys.executable).parent
PROFILE = DATA / "anemll" / "anemll_profile_0.4.1.illustrative.json"
PLAN = DATA / "anemll" / "ane_costplan.illustrative.json"


def _ep(*args, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(["edgeprof", *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def _write(folder: Path, name: str, doc: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_text(dumps_like_the_tool(doc))
    return p


def test_anemll_profile_fast_workflow_with_interruptions():
    """Steps 2 and 4: check graph_interruptions; when nonzero, rank the fixes by estimated_total_tax_ms."""
    doc = json.loads(PROFILE.read_text())
    r = _ep("ane", PROFILE, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    ids = [f["id"] for f in out["findings"]]
    assert ids[0] == "graph_interruptions" and ids[-1] == "measured_prediction"
    gi = out["findings"][0]
    n = doc["graph_interruptions"]["graph_interruptions"]
    assert n == 1 and gi["evidence"]["interruptions"] == n and gi["source"] == "anemll_json"
    # the tool's own ranking weight, as the report states it, and a realistic one beside it
    assert gi["evidence"]["tool_tax_ms"] == pytest.approx(doc["graph_interruptions"]["estimated_total_tax_ms"])
    only = doc["graph_interruptions"]["interruptions"][0]
    assert gi["evidence"]["realistic_tax_ms"] == pytest.approx(only["runtime_ms"] + 2 * 0.2)
    assert out["headline"].startswith("1 ANE graph interruption(s); fix first: interruption #1 infer:57-58")
    # the guide's signals read from this report: LUT expansion at 11.3 % of runtime (≥ 10 %); two slice_update ops
    # are not yet a repeated KV-cache pattern (≥ 4)
    lut = next(f for f in out["findings"] if f["id"] == "signal_lut")
    want = sum(t["share_pct"] for t in doc["op_type_breakdown"] if t["short_type"].startswith("constexpr_lut"))
    assert lut["evidence"]["share_pct"] == pytest.approx(want)
    assert "signal_kv_cache" not in ids


def test_anemll_profile_fast_workflow_without_interruptions(tmp_path):
    """Step 3: no interruptions → fallback_ops, op_type_breakdown and top_operations, in that order."""
    doc = profile(op_types=[op_type("conv", 70.0, 7.0, count=12), op_type("linear", 30.0, 3.0, count=4)],
                  fallback_ops=[fallback("main", 3, "gather_0", "gather", "Unsupported tensor data type: int32")],
                  reasons={"ios18.gather": ["Unsupported tensor data type: int32"]},
                  top=[{"name": "conv_3", "type": "ios18.conv", "short_type": "conv", "runtime_ms": 1.2,
                        "total_mb": 2.0, "gbps": 40.0, "bound": "Mem"}])
    r = _ep("ane", _write(tmp_path, "p.json", doc), "--json")
    out = json.loads(r.stdout)
    ids = [f["id"] for f in out["findings"]]
    assert ids[:4] == ["graph_interruptions", "fallback_ops", "hotspots", "top_operations"]
    assert out["findings"][0]["title"].startswith("No ANE graph interruptions")
    signals = {f["id"] for f in out["findings"]}
    assert {"signal_int32", "signal_mostly_ane"} <= signals  # int32 fallback; few fallbacks, no interruption


def test_kv_cache_signal_counts_the_op_type_breakdown():
    """A breakdown of 24 slice_update ops is a repeated-KV pattern even when no placement lists them."""
    from edgeprof.analysis.ane import signals
    from edgeprof.io.anemll import profile_from_doc

    quiet = profile(op_types=[op_type("conv", 90.0, 9.0, count=12), op_type("slice_update", 10.0, 1.0, count=3)])
    assert not [s for s in signals(profile_from_doc(quiet, "p")) if s["id"] == "signal_kv_cache"]
    kv = profile(op_types=[op_type("conv", 90.0, 9.0, count=12), op_type("slice_update", 10.0, 1.0, count=24)])
    s = next(s for s in signals(profile_from_doc(kv, "p")) if s["id"] == "signal_kv_cache")
    assert s["evidence"]["ops"] == 24 and s["section"] == "op_type_breakdown"
    # at the threshold (4) and just below it (3), from placements alone
    for n, fires in ((3, False), (4, True)):
        doc = profile(placements=[placement("main", i, f"s{i}", "slice_update") for i in range(n)])
        got = [x for x in signals(profile_from_doc(doc, "p")) if x["id"] == "signal_kv_cache"]
        assert bool(got) is fires, n


def test_ane_costplan_fast_workflow(tmp_path):
    """Steps 2–4: no_device, the top ops by cost (shares of total_cost), and a total_cost diff after a change."""
    doc = json.loads(PLAN.read_text())
    r = _ep("ane", PLAN, "--json")
    out = json.loads(r.stdout)
    top = out["findings"][0]
    op = doc["operations"][0]
    share = 100 * op["cost"] / doc["total_cost"]  # one listed op of 0.0412 out of 0.9412
    assert top["evidence"]["top_ops"][0]["share_pct"] == pytest.approx(share) and round(share, 1) == 4.4
    assert f"{share:.1f} % of the plan" in top["title"]
    assert any("4.4 % of total_cost" in d or "listed ops account for 4.4 %" in d for d in top["detail"])
    # no_device > 0 is reported (CPU-only ops: gathers, int32 work)
    plan = costplan([(1, "conv", 0.7), (2, "gather", 0.05), (3, "linear", 0.25)], no_device=1)
    out = json.loads(_ep("ane", _write(tmp_path, "plan.json", plan), "--json").stdout)
    nd = next(f for f in out["findings"] if f["id"] == "plan_no_device")
    assert nd["evidence"]["no_device"] == 1
    # step 4: after a graph change, diff total_cost — a drop means the compiler agrees; dimensionless, relative only
    after = costplan([(1, "conv", 0.5), (3, "linear", 0.25)], no_device=0)
    d = json.loads(_ep("ane", "diff", tmp_path / "plan.json", _write(tmp_path, "after.json", after), "--json").stdout)
    assert d["total_cost"]["before"] == pytest.approx(1.0) and d["total_cost"]["after"] == pytest.approx(0.75)
    assert d["statements"][0].startswith("total_cost 1 → 0.75 (-25.0 %): a drop — the compiler agrees")
    assert d["no_device"] == {"before": 1, "after": 0}
    md = _ep("ane", "diff", tmp_path / "plan.json", tmp_path / "after.json", "--markdown", "-").stdout
    assert "total_cost is dimensionless" in md


def test_measured_prediction_compares_real_impact(tmp_path):
    """Step 5: use measured_prediction to compare the real impact of a model change."""
    before = profile(op_types=[op_type("conv", 100, 4.0)], interruptions=[island(1, "main", 10, 11, 0.05)])
    after = profile(op_types=[op_type("conv", 100, 3.0)],
                    measured={"status": "ok", "average_ms": 3.0, "iter_per_sec": 333.3, "runs": 10})
    d = json.loads(_ep("ane", "diff", _write(tmp_path, "b.json", before), _write(tmp_path, "a.json", after),
                       "--json").stdout)
    assert d["latency"]["before_ms"] == before["measured_prediction"]["average_ms"]
    assert d["latency"]["speedup"] == pytest.approx(4.0 / 3.0)
    assert d["interruptions"] == {"before": 1, "after": 0, "fixed": d["interruptions"]["fixed"], "introduced": []}


def test_plan_and_profile_disagreement_without_artefacts(tmp_path):
    """The cross-check: a disagreement is a signal — but a plan listing only part of its total_cost is not one."""
    doc = json.loads(PROFILE.read_text())
    out = json.loads(_ep("ane", PROFILE, "--costplan", PLAN, "--json").stdout)
    cc = next(f for f in out["findings"] if f["id"] == "cross_check")
    assert cc["evidence"]["plan_unlisted_share_pct"] == pytest.approx(100 * (1 - 0.0412 / 0.9412))
    conv = next(t for t in cc["evidence"]["types"] if t["type"] == "conv")
    assert conv["plan_share_pct"] == pytest.approx(100 * 0.0412 / 0.9412) and conv["verdict"] == "agree"
    assert not any("conv" in s and "only" in s for s in cc["detail"])
    assert doc["op_type_breakdown"][0]["short_type"] == "conv"
    # a complete plan that really disagrees: matmul is 40 % of the plan but 5 % of the runtime, softmax the reverse
    prof = profile(op_types=[op_type("matmul", 5, 0.5), op_type("softmax", 40, 4.0), op_type("conv", 55, 5.5)])
    plan = costplan([(1, "matmul", 0.40), (2, "softmax", 0.05), (3, "conv", 0.55)])
    out = json.loads(_ep("ane", _write(tmp_path, "p.json", prof), "--costplan", _write(tmp_path, "c.json", plan),
                         "--json").stdout)
    v = {t["type"]: t["verdict"] for t in next(f for f in out["findings"] if f["id"] == "cross_check")["evidence"]["types"]}
    assert v == {"matmul": "plan_high_runtime_low", "softmax": "plan_low_runtime_high", "conv": "agree"}


def test_model_directory_tip(tmp_path):
    """One analysis per submodel, each named by its bundle and its role read from that same name."""
    folder = tmp_path / "llama"
    names = {"embeddings.json": "llama_embeddings.mlpackage", "prefill.json": "llama_prefill_chunk_01of02.mlpackage",
             "ffn.json": "llama_FFN_chunk_01of02.mlpackage", "head.json": "llama_lm_head.mlpackage",
             # a report file whose name says one role while its bundle says another
             "embeddings_copy.json": "llama_FFN_chunk_02of02.mlpackage"}
    for fname, bundle in names.items():
        _write(folder, fname, profile(name=bundle, op_types=[op_type("conv", 100, 1.0)]))
    out = json.loads(_ep("ane", folder, "--json").stdout)
    rows = {(s["role"], s["model"]) for s in out["summary"]}
    assert rows == {("embeddings", "llama_embeddings"), ("prefill", "llama_prefill_chunk_01of02"),
                    ("decode/FFN", "llama_FFN_chunk_01of02"), ("decode/FFN", "llama_FFN_chunk_02of02"),
                    ("lm_head", "llama_lm_head")}
    assert [s["role"] for s in out["summary"]][:2] == ["embeddings", "prefill"]


def test_a_model_bundle_says_what_to_run(tmp_path):
    bundle = tmp_path / "model.mlpackage"
    (bundle / "Data").mkdir(parents=True)
    (bundle / "Manifest.json").write_text("{}")
    r = _ep("ane", bundle)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "a Core ML model, not a report" in r.stderr and "anemll-profile -j profile.json model.mlpackage" in r.stderr
    assert "ane-costplan -j costplan.json model.mlmodelc" in r.stderr
    folder = tmp_path / "models"
    shutil.copytree(bundle, folder / "model.mlpackage")
    r = _ep("ane", folder)
    assert r.returncode == 2 and "holds 1 Core ML model(s) (model.mlpackage)" in r.stderr


def test_help_of_subcommands():
    assert "Usage: edgeprof ane diff [OPTIONS] BEFORE AFTER" in _ep("ane", "diff", "--help").stdout
    assert "2 %%" not in _ep("compare", "--help").stdout
