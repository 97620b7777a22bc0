"""Apple Neural Engine reports: readers with every quirk, island ranking, signals, cross-check, diff, folders."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from ane_builder import (
    costplan,
    dumps_like_the_tool,
    fallback,
    island,
    op_type,
    placement,
    profile,
)
from click.testing import CliRunner
from testdata import DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edgeprof import api
from edgeprof.analysis.ane import analyze_profile, rank_islands, signals
from edgeprof.analysis.ane_plan import cross_check
from edgeprof.cli import main
from edgeprof.errors import InputError
from edgeprof.io.anemll import profile_from_doc, read_report
from edgeprof.ane_model import AneCostPlan, AneProfile

A = DATA / "anemll"
FIXTURE = A / "anemll_profile_0.4.1.illustrative.json"
PLAN = A / "ane_costplan.illustrative.json"


def _write(tmp_path, name, doc, **kw) -> str:
    p = tmp_path / name
    p.write_text(dumps_like_the_tool(doc, **kw) if isinstance(doc, dict) else doc)
    return str(p)


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


# --------------------------------------------------------------------------------------------------
# readers
# --------------------------------------------------------------------------------------------------

def test_illustrative_fixtures_read():
    p = read_report(FIXTURE)
    assert isinstance(p, AneProfile) and p.version == "0.4.1" and p.name == "llama_FFN_chunk_01of02.mlpackage"
    assert p.compute["interrupt_boundary_ms"] == 300 and p.compute["compute_units_all"] is False
    assert p.status == {"no_costmodel_entries": False, "log_data_masked": False, "static_estimate": False}
    assert len(p.interruptions) == 1 and p.interruptions[0].is_interruption and p.interruptions[0].switches == 2
    assert p.edge_runs[0].edge_kind == "lead" and p.edge_runs[0].switches == 1
    assert p.placements[0].ane_supported is True and p.placements[0].short_type == "cast"
    assert p.model["input_path"] == "/Users/dev/models/llama_FFN_chunk_01of02.mlpackage"  # \/ unescaped
    assert p.missing == [] and p.unsupported_reasons == {"ios18.slice_update": ["Cannot support standalone slice_update"]}
    c = read_report(PLAN)
    assert isinstance(c, AneCostPlan) and c.operations[0]["short_type"] == "conv" and c.with_device == 105


@pytest.mark.parametrize("bools_as_int", [False, True])
@pytest.mark.parametrize("seed", [1, 2])
def test_tool_quirks_read_the_same(tmp_path, bools_as_int, seed):
    doc = json.loads(FIXTURE.read_text())
    doc["an_unknown_key"] = {"nested": [1, 2]}
    doc["ordered_placements"][0]["extra_field"] = "x"
    path = _write(tmp_path, "p.json", doc, seed=seed, bools_as_int=bools_as_int)
    written = Path(path).read_text()
    assert "\\/Users\\/dev" in written and '" : ' in written
    a, b = read_report(path), read_report(FIXTURE)
    assert a.placements == b.placements and a.interruptions == b.interruptions and a.status == b.status
    assert a.compute == b.compute and a.summary == b.summary
    assert analyze_profile(a)["findings"] == analyze_profile(b)["findings"]


def test_json_written_after_a_failed_analysis(tmp_path):
    """No CostModel entries: the tool still writes placements and islands, with zeroed runtimes and not_run."""
    doc = profile(interruptions=[island(1, "main", 10, 11, 0.0, missing=2)], measured={"status": "not_run"},
                  status={"no_costmodel_entries": True, "log_data_masked": False})
    doc["op_type_breakdown"] = []
    del doc["top_operations"], doc["conv_detail"]
    r = analyze_profile(read_report(_write(tmp_path, "failed.json", doc)))
    ids = [f["id"] for f in r["findings"]]
    assert ids[0] == "status" and r["findings"][0]["severity"] == "high"
    assert "no [CostModelFeature] entries" in r["headline"]
    m = next(f for f in r["findings"] if f["id"] == "measured_prediction")
    assert m["evidence"]["status"] == "not_run" and "not measured" in m["detail"][0]
    # a minimal document (only tool and version) is read, everything listed as missing
    r = analyze_profile(read_report(_write(tmp_path, "bare.json", '{"tool":"anemll-profile","version":"0.4.1"}')))
    assert r["findings"][0]["id"] == "status" and "graph_interruptions" in r["findings"][0]["evidence"]["missing"]


def test_neither_report_and_bad_values(tmp_path):
    with pytest.raises(InputError,
                       match=r"x.json: neither an anemll-profile nor an ane-costplan JSON report: the document is an array"):
        read_report(_write(tmp_path, "x.json", "[1, 2]"))
    with pytest.raises(InputError, match=r"its tool is 'something-else'"):
        read_report(_write(tmp_path, "y.json", '{"tool": "something-else"}'))
    doc = json.loads(FIXTURE.read_text())
    doc["graph_interruptions"]["interruptions"][0]["runtime_ms"] = {"a": 1}
    with pytest.raises(InputError, match=r"graph_interruptions.interruptions\[0\].runtime_ms: expected a number, got an object"):
        read_report(_write(tmp_path, "z.json", doc))
    for text, msg in (("{\"tool\": \"anemll-profile\", \"summary\": {\"total_ops\": NaN}}", "NaN is not a JSON number"),
                      ("{\"tool\": \"anemll-profile\", \"summary\": {\"grand_runtime_ms\": 1e999}}", "out of range"),
                      ("{\"tool\": \"anemll-profile\", \"summary\": {\"total_ops\": " + "9" * 400 + "}}", "out of range"),
                      ("[" * 100000 + "]" * 100000, "nested too deeply"),
                      ("{\"tool\": \"anemll-profile\",", "not valid JSON"),
                      ("{\"tool\": \"anemll-profile\", \"status\": {\"log_data_masked\": 7}}", "expected true/false or 0/1")):
        with pytest.raises(InputError, match=msg) as e:
            read_report(_write(tmp_path, "bad.json", text))
        assert "\n" not in str(e.value) and "bad.json" in str(e.value)
    res = _run("ane", _write(tmp_path, "bad.json", "[1]"))
    assert res.exit_code == 2 and res.output.startswith("edgeprof: error:") and "bad.json" in res.output
    res = _run("ane", FIXTURE, "--costplan", FIXTURE)
    assert res.exit_code == 2 and "expected an ane-costplan report here" in res.output


# --------------------------------------------------------------------------------------------------
# islands
# --------------------------------------------------------------------------------------------------

def _islands_profile():
    return profile(
        interruptions=[island(1, "main", 40, 41, 0.05, reason="Cannot support standalone slice_update"),
                       island(2, "main", 100, 104, 0.5, reason="Unsupported tensor data type: int32",
                              first_type="ios18.gather", last_type="ios18.cast")],
        edge_runs=[island(0, "main", 490, 499, 3.0, kind="trail", first_type="ios18.softmax", soft=10, hard=0,
                          reason="ANE supported but not preferred"),
                   island(0, "main", 0, 0, 0.01, kind="lead", first_type="ios18.cast", soft=1, hard=0),
                   island(0, "aux", 0, 3, 1.0, kind="all", first_type="ios18.topk")],
        op_types=[op_type("conv", 80, 8.0), op_type("softmax", 20, 2.0)])


def test_island_ranking_under_both_boundary_costs(tmp_path):
    p = profile_from_doc(_islands_profile(), "islands.json")
    real = rank_islands(p, 0.2)
    assert [(r["label"], r["rank"], r["tool_rank"]) for r in real] == [
        ("trailing run main:490-499 (softmax)", 1, 3),
        ("whole-function run aux:0-3 (topk)", 2, 5),
        ("interruption #2 main:100-104 (gather…cast)", 3, 1),
        ("interruption #1 main:40-41 (slice_update)", 4, 2),
        ("leading run main:0 (cast)", 5, 4)]
    assert [r["cost_ms"] for r in real] == pytest.approx([3.2, 1.0, 0.9, 0.45, 0.21])
    assert [r["tool_cost_ms"] for r in real] == pytest.approx([303.0, 1.0, 600.5, 600.05, 300.01])
    f = analyze_profile(p)["findings"][0]
    assert f["id"] == "graph_interruptions" and f["evidence"]["ranking_changed"]
    assert f["title"] == "2 ANE graph interruption(s); fix first: trailing run main:490-499 (softmax)"
    assert any("the ranking changes with a 0.2 ms boundary: trailing run main:490-499 (softmax)" in d and
               "interruption #2 main:100-104 (gather…cast) ranked first" in d for d in f["detail"])
    assert f["evidence"]["realistic_tax_ms"] == pytest.approx(1.35) and f["evidence"]["tool_tax_ms"] == pytest.approx(1200.55)
    assert "exceeds the whole measured prediction" in f["detail"][0]
    # at the tool's own boundary the ranking is the tool's
    same = analyze_profile(p, boundary_ms=300)["findings"][0]
    assert not same["evidence"]["ranking_changed"]
    assert [r["tool_rank"] for r in same["evidence"]["islands"]] == [1, 2, 3, 4, 5]
    res = _run("ane", _write(tmp_path, "i.json", _islands_profile()), "--boundary-ms", "300", "--json")
    assert json.loads(res.stdout)["findings"][0]["evidence"]["ranking_changed"] is False


def test_no_interruptions_leads_to_fallbacks_and_hotspots():
    doc = profile(op_types=[op_type("conv", 70, 7.0, count=10, bound="Comp"), op_type("add", 30, 3.0, count=20)],
                  fallback_ops=[fallback("main", 3, "a", "cast", "ANE supported but not preferred"),
                                fallback("main", 9, "b", "cast", "ANE supported but not preferred"),
                                fallback("main", 20, "c", "topk", "ane: Unsupported op", cost=0.03)],
                  top=[{"name": "conv_1", "type": "ios18.conv", "short_type": "conv", "runtime_ms": 1.2,
                        "total_mb": 3.0, "gbps": 2.5, "bound": "Compute"}])
    r = analyze_profile(profile_from_doc(doc, "m.json"))
    ids = [f["id"] for f in r["findings"]]
    assert ids[:4] == ["graph_interruptions", "fallback_ops", "hotspots", "top_operations"]
    assert r["headline"] == "No graph interruptions; Hotspot: conv 70 % of runtime (compute-bound)"
    fb = r["findings"][1]["evidence"]["groups"]
    assert [(g["reason"], g["type"], g["ops"]) for g in fb] == [("ane: Unsupported op", "topk", 1),
                                                                 ("ANE supported but not preferred", "cast", 2)]
    assert r["findings"][2]["evidence"]["memory_bound_share_pct"] == pytest.approx(30)


# --------------------------------------------------------------------------------------------------
# signals
# --------------------------------------------------------------------------------------------------

def _signal_ids(doc) -> list[str]:
    return [s["id"] for s in signals(profile_from_doc(doc, "s.json"))]


def test_signals_fire_on_evidence_and_stay_silent_otherwise():
    base = {"op_types": [op_type("conv", 90, 9.0), op_type("constexpr_lut_to_dense", 5, 0.5)],
            "interruptions": [island(1, "main", 5, 5, 0.1)]}
    assert _signal_ids(profile(**base)) == []
    # int32 in a reason
    assert _signal_ids(profile(**base, reasons={"ios18.gather": ["Unsupported tensor data type: int32"]})) == ["signal_int32"]
    # repeated KV-cache ops (in placements)
    kv = [placement("main", i, f"k{i}", "slice_update", device="CPU" if i % 2 else "ANE") for i in range(6)]
    assert _signal_ids(profile(**base, placements=kv)) == ["signal_kv_cache"]
    assert _signal_ids(profile(**base, placements=kv[:3])) == []
    # LUT expansion
    lut = dict(base, op_types=[op_type("conv", 70, 7.0), op_type("constexpr_lut_to_dense", 30, 3.0, weight_mb=50)])
    s = signals(profile_from_doc(profile(**lut), "l.json"))
    assert [x["id"] for x in s] == ["signal_lut"] and s[0]["evidence"]["share_pct"] == 30
    # mostly on ANE: no interruption and few fallbacks
    quiet = {"op_types": base["op_types"]}
    assert _signal_ids(profile(**quiet, fallback_ops=[fallback("m", 1, "a", "cast", "x")] * 2)) == ["signal_mostly_ane"]
    assert _signal_ids(profile(**quiet, fallback_ops=[fallback("m", 1, "a", "cast", "x")] * 5)) == []


def test_measured_status_is_loud():
    doc = profile(op_types=[op_type("conv", 100, 1.0)],
                  measured={"status": "ane_compile_fallback_detected", "steady_ms": 40.0, "average_ms": 0,
                            "iter_per_sec": 0, "runs": 0, "gflops_per_sec": 0, "tops": 0, "weight_bw_gbps": 0,
                            "speedup_vs_sequential": 0})
    r = analyze_profile(profile_from_doc(doc, "f.json"))
    m = next(f for f in r["findings"] if f["id"] == "measured_prediction")
    assert m["severity"] == "high" and "ANE compilation likely failed" in m["detail"][0]
    assert "one prediction took 40 ms vs 1 ms estimated on the ANE" in m["detail"][1]
    assert r["headline"].startswith("MEASUREMENT ANE_COMPILE_FALLBACK_DETECTED")


# --------------------------------------------------------------------------------------------------
# cross-check
# --------------------------------------------------------------------------------------------------

def test_cross_check_classifies_constructed_disagreements():
    doc = profile(op_types=[op_type("conv", 55, 5.5), op_type("softmax", 30, 3.0), op_type("matmul", 5, 0.5),
                            op_type("add", 10, 1.0), op_type("constexpr_lut_to_dense", 0.0, 0.0)],
                  placements=[placement("main", 1, "c1", "conv", cost=0.5), placement("main", 2, "s1", "softmax", cost=0.05),
                              placement("main", 3, "m1", "matmul", cost=0.35), placement("main", 4, "a1", "add", cost=0.05),
                              placement("main", 5, "a2", "add", device="CPU", cost=0.05, ane_supported=1),
                              placement("aux", 1, "x1", "add", device="CPU", cost=0.0, ane_supported=0)],
                  top=[{"name": n, "type": f"ios18.{t}", "short_type": t, "runtime_ms": ms, "total_mb": 1.0, "gbps": 1.0,
                        "bound": "Memory"} for n, t, ms in (("c1", "conv", 5.5), ("s1", "softmax", 3.0), ("a1", "add", 0.5))])
    doc["summary"]["unique_costmodel_ops"] = 10  # the top list is not complete: unlisted ops are ≤ 0.5 ms
    plan = costplan([(1, "conv", 0.5, {"function": "main"}), (2, "softmax", 0.05), (3, "matmul", 0.35),
                     (4, "add", 0.05), (5, "add", 0.05, {"device": "ANE"}), (9, "add", 0.0)])
    p = profile_from_doc(doc, "p.json")
    cc = cross_check(p, read_plan(plan))
    types = {t["type"]: t["verdict"] for t in cc["types"]}
    assert types == {"conv": "agree", "softmax": "plan_low_runtime_high", "matmul": "plan_high_runtime_low",
                     "add": "agree"}
    assert cc["types_only_in_profile"] == ["constexpr_lut_to_dense"]
    ops = {(o["name"], o["verdict"], o["runtime_is_upper_bound"]) for o in cc["ops"]}
    assert ops == {("s1", "plan_low_runtime_high", False), ("m1", "plan_high_runtime_low", True)}
    assert cc["match_methods"] == {"function+index+type": 1, "index+type": 4, "type+order": 1}
    assert [(x["name"], x["basis"]) for x in cc["placement"]] == [("a2", "plan device")]
    assert any("softmax" in s and "memory/bandwidth stalls" in s for s in cc["statements"])
    assert any("matmul" in s and "the ANE pipelines it" in s for s in cc["statements"])
    assert any("a2" in s and "preferred on the ANE in the plan but placed on the CPU" in s for s in cc["statements"])
    # without device columns in the plan, the profile's ANE-supported ops placed on the CPU are the check
    plan2 = costplan([(1, "conv", 0.5), (2, "softmax", 0.05), (3, "matmul", 0.35), (4, "add", 0.05), (5, "add", 0.05)])
    assert [(x["name"], x["basis"]) for x in cross_check(p, read_plan(plan2))["placement"]] == [("a2", "ANE supported")]
    # agreeing reports: no statements
    calm = costplan([(1, "conv", 0.55), (2, "softmax", 0.3), (3, "matmul", 0.05), (4, "add", 0.1)])
    assert [t["verdict"] for t in cross_check(p, read_plan(calm))["types"]] == ["agree"] * 4


def read_plan(doc) -> AneCostPlan:
    from edgeprof.io.anemll import costplan_from_doc

    return costplan_from_doc(doc, "plan.json")


def test_cross_check_falls_back_to_type_and_order():
    doc = profile(op_types=[op_type("conv", 100, 1.0)],
                  placements=[placement("f1", 7, "a", "conv"), placement("f2", 7, "b", "conv"), placement("f2", 9, "c", "conv")])
    plan = read_plan(costplan([(7, "conv", 0.3), (8, "conv", 0.3), (30, "conv", 0.3), (31, "conv", 0.1)]))
    from edgeprof.analysis.ane_plan import match_ops

    got = [(o["index"], pl.name if pl else None, m) for o, pl, m in match_ops(profile_from_doc(doc, "p"), plan)]
    assert got == [(7, "a", "type+order"), (8, "b", "type+order"), (30, "c", "type+order"), (31, None, "unmatched")]


# --------------------------------------------------------------------------------------------------
# diff and folders
# --------------------------------------------------------------------------------------------------

def test_diff_of_cost_plans_total_cost_devices_and_shares(tmp_path):
    before = costplan([(1, "conv", 0.6), (2, "matmul", 0.3), (3, "add", 0.1)])
    after = costplan([(1, "conv", 0.3), (2, "matmul", 0.3), (3, "add", 0.1), (4, "add", 0.1)], no_device=1)  # total 0.8
    d = api.ane_diff(_write(tmp_path, "b.json", before), _write(tmp_path, "a.json", after))
    rows = {r["type"]: r for r in d["op_types"]}
    assert rows["conv"]["plan_share_before_pct"] == pytest.approx(60)
    assert rows["conv"]["plan_share_after_pct"] == pytest.approx(37.5)
    assert rows["add"]["count_before"] == 1 and rows["add"]["count_after"] == 2
    assert rows["add"]["delta_pp"] == pytest.approx(25 - 10)
    # the seed diffs total_cost ("drops indicate the compiler agrees with your change"), with its caveat
    assert d["total_cost"]["before"] == pytest.approx(1.0) and d["total_cost"]["after"] == pytest.approx(0.8)
    assert d["total_cost"]["change_percent"] == pytest.approx(-20)
    assert d["statements"][0] == "total_cost 1 → 0.8 (-20.0 %): a drop — the compiler agrees with the change"
    assert any("total_cost is dimensionless" in s and "never as time" in s for s in d["statements"])
    assert d["no_device"] == {"before": 0, "after": 1} and d["with_device"] == {"before": 3, "after": 3}
    assert any("with no device 0 → 1" in s for s in d["statements"])
    assert d["ops"][0]["type"] == "conv" and d["ops"][0]["delta_pp"] == pytest.approx(-22.5)
    res = _run("ane", "diff", tmp_path / "b.json", tmp_path / "a.json", "--markdown", "-")
    assert res.exit_code == 0 and "plan share before %" in res.output
    res = _run("ane", "diff", tmp_path / "b.json", FIXTURE)
    assert res.exit_code == 2 and "same kind" in res.output


def test_diff_of_profiles(tmp_path):
    ops = [op_type("conv", 80, 8.0), op_type("slice_update", 20, 2.0)]
    why = "Cannot support standalone slice_update"
    before = profile(op_types=ops, interruptions=[island(1, "main", 40, 41, 0.05, reason=why),
                                                 island(2, "main", 80, 81, 0.05, reason=why)])
    after = profile(op_types=[op_type("conv", 95, 8.0), op_type("slice_update", 5, 0.4)],
                    interruptions=[island(1, "main", 120, 120, 0.02, first_type="ios18.cast", reason="int32")],
                    measured={"status": "ok", "average_ms": 3.0, "iter_per_sec": 333.0, "runs": 10})
    d = api.ane_diff(_write(tmp_path, "b.json", before), _write(tmp_path, "a.json", after))
    assert d["latency"]["speedup"] == pytest.approx(4.0 / 3.0)
    assert d["interruptions"]["before"] == 2 and d["interruptions"]["after"] == 1
    assert d["interruptions"]["fixed"] == [{"function": "main", "first_type": "slice_update", "last_type": "slice_update",
                                            "reason": "Cannot support standalone slice_update", "count": 2}]
    assert [x["first_type"] for x in d["interruptions"]["introduced"]] == ["cast"]
    assert {r["type"]: round(r["delta_pp"], 6) for r in d["op_types"]} == {"conv": 15, "slice_update": -15}
    assert "2 island(s) fixed, 1 introduced" in " ".join(d["statements"])


def test_model_folder_one_row_per_submodel(tmp_path):
    folder = tmp_path / "llama"
    folder.mkdir()
    for name, ms, n_int in (("llama_embeddings", 0.3, 0), ("llama_prefill", 40.0, 1), ("llama_FFN_chunk_01of02", 4.0, 2),
                            ("llama_lm_head", 2.0, 0)):
        doc = profile(name=f"{name}.mlpackage", op_types=[op_type("conv", 100, ms)],
                      interruptions=[island(i + 1, "main", 10 * i + 5, 10 * i + 5, 0.01) for i in range(n_int)],
                      measured={"status": "ok", "average_ms": ms, "iter_per_sec": 1000 / ms, "runs": 3})
        _write(folder, f"{name}.json", doc)
    _write(folder, "llama_FFN_chunk_01of02.costplan.json", costplan([(1, "conv", 1.0)], model="llama_FFN_chunk_01of02.mlmodelc"))
    (folder / "analysis_summary.json").write_text('{"per_etdump": []}')
    f = api.ane_folder([folder])
    assert [s["role"] for s in f["summary"]] == ["embeddings", "prefill", "decode/FFN", "lm_head"]
    assert [s["latency_ms"] for s in f["summary"]] == [0.3, 40.0, 4.0, 2.0]
    assert [s["interruptions"] for s in f["summary"]] == [0, 1, 2, 0]
    ffn = next(r for r in f["reports"] if "FFN" in r["model"])
    assert ffn["costplan"].endswith("llama_FFN_chunk_01of02.costplan.json")
    assert any(x["id"] == "cross_check" for x in ffn["findings"])
    assert len(f["skipped"]) == 1 and "nothing is summed" in f["note"]
    res = _run("ane", folder, "--markdown", tmp_path / "ane.md")
    assert res.exit_code == 0 and "one row per submodel" in res.output
    md = (tmp_path / "ane.md").read_text()
    assert md.count("#### Apple Neural Engine:") == 4 and "| role | model |" in md
    # a broken report is named and the others are still analysed (exit 2)
    (folder / "llama_broken.json").write_text('{"tool": "anemll-profile", "summary": {"total_ops": "many"}}')
    res = _run("ane", folder)
    assert res.exit_code == 2 and "llama_broken.json: summary.total_ops: expected a number" in res.output
    assert "llama_lm_head" in res.output


def test_cli_single_report_json_and_markdown(tmp_path):
    res = _run("ane", FIXTURE, "--costplan", PLAN, "--json")
    doc = json.loads(res.stdout)
    assert res.exit_code == 0 and doc["findings"][0]["id"] == "graph_interruptions"
    assert [f["id"] for f in doc["findings"]][-1] == "cross_check"
    assert all(f["section"] for f in doc["findings"])
    res = _run("ane", FIXTURE, "--markdown", "-")
    assert res.stdout.startswith("### Apple Neural Engine: llama_FFN_chunk_01of02.mlpackage")
    assert "| # | tool # | island |" in res.stdout and "_from `graph_interruptions`_" in res.stdout
    res = _run("ane", PLAN)
    assert res.exit_code == 0 and "costliest op" in res.output
    assert _run("ane", "diff", FIXTURE).exit_code == 2


# --------------------------------------------------------------------------------------------------
# fuzzing
# --------------------------------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10 ** 30), max_value=10 ** 30)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12)
BASE = json.loads(FIXTURE.read_text())


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, (*prefix, i))


PATHS = [p for p in _paths(BASE) if p]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(PATHS), JSON_VALUES), min_size=1, max_size=4),
       st.sampled_from(["", "NaN", "Infinity", "-Infinity", "1e400", "9" * 330]))
def test_fuzzed_documents_give_clean_errors(tmp_path, edits, special):
    doc = json.loads(json.dumps(BASE))
    for path, value in edits:
        node = doc
        try:
            for k in path[:-1]:
                node = node[k]
            node[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    text = json.dumps(doc)
    inserted = bool(special) and '"steady_ms": 4.301' in text
    if inserted:
        text = text.replace('"steady_ms": 4.301', f'"steady_ms": {special}', 1)
    p = tmp_path / "fz.json"
    p.write_text(text)
    try:
        rep = read_report(p)
    except InputError as e:
        assert str(e).startswith(str(p)) and "\n" not in str(e)
        return
    assert not inserted  # non-finite or absurd numbers never get through
    r = analyze_profile(rep) if isinstance(rep, AneProfile) else None
    if r:
        json.dumps(r)  # the result is plain JSON
        for f in r["findings"]:
            for v in f["evidence"].values():
                assert not (isinstance(v, float) and math.isnan(v))
