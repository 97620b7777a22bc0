"""ANE profile findings at their thresholds, with every figure worked out by hand from the document written here."""

from __future__ import annotations

import dataclasses

import pytest
from ane_builder import costplan, fallback, island, op_type, placement, profile

from edgeprof.analysis.ane import (
    FEW_FALLBACKS,
    HOTSPOT_SHARE_PCT,
    KV_OPS_MIN,
    LUT_SHARE_PCT,
    analyze_plan,
    analyze_profile,
    rank_islands,
    signals,
)
from edgeprof.io.anemll import costplan_from_doc, profile_from_doc


def P(**kw):
    return profile_from_doc(profile(**kw), "p.json")


def F(result, fid):
    return next((f for f in result["findings"] if f["id"] == fid), None)


def sig(p):
    return {s["id"]: s for s in signals(p)}


# --- the thresholds are the documented ones ------------------------------------------------------------------------

def test_documented_thresholds():
    assert (HOTSPOT_SHARE_PCT, LUT_SHARE_PCT, KV_OPS_MIN, FEW_FALLBACKS) == (5.0, 10.0, 4, 3)


def test_mostly_on_ane_needs_no_interruption_and_at_most_three_fallbacks():
    fb = [fallback("main", k, f"f{k}", "cast", "r") for k in range(4)]
    assert "signal_mostly_ane" in sig(P(fallback_ops=fb[:3]))
    assert "signal_mostly_ane" not in sig(P(fallback_ops=fb))
    assert "signal_mostly_ane" not in sig(P(interruptions=[island(1, "main", 3, 3, 0.1)]))
    # and some evidence that ops ran on the ANE at all
    empty = {"total_ops": 0, "ane_ops": 0, "total_cost": 0}
    assert "signal_mostly_ane" not in sig(P(summary=empty))
    assert "signal_mostly_ane" in sig(P(summary=empty, op_types=[op_type("conv", 100.0, 1.0)]))
    p = dataclasses.replace(P(summary=empty), ane_op_types={"conv": 1})
    assert "signal_mostly_ane" in sig(p)


def test_mostly_on_ane_figures():
    s = sig(P(summary={"ane_ops": 3, "total_cost": 0.8, "ane_cost": 0.6},
              op_types=[op_type("conv", 70.0, 7.0, bound="Comp"), op_type("add", 20.0, 2.0), op_type("mul", 10.0, 1.0)]))
    m = s["signal_mostly_ane"]
    assert m["evidence"]["ane_cost_share_pct"] == pytest.approx(75.0)
    assert m["evidence"]["memory_bound_share_pct"] == pytest.approx(30.0)
    assert m["detail"][1:] == ["75.0 % of the plan's cost is on the ANE", "memory-bound op types take 30 % of the summed runtime",
                               "weights stream at 40 GB/s"]
    m = sig(P(summary={"ane_ops": 3, "total_cost": 0}, measured={"status": "ok", "average_ms": 1.0}))["signal_mostly_ane"]
    assert m["evidence"]["ane_cost_share_pct"] is None and len(m["detail"]) == 1


def test_lut_signal_at_ten_percent():
    def lut(share):
        return sig(P(op_types=[op_type("constexpr_lut_to_dense", share, 1.0, weight_mb=5.0),
                               op_type("conv", 100 - share, 9.0, weight_mb=15.0)]))
    assert "signal_lut" not in lut(9.999)
    s = lut(10.0)["signal_lut"]
    assert s["evidence"] == {"share_pct": 10.0, "weight_mb": 5.0}
    assert s["detail"][1] == "5 MB of LUT input per prediction (25 % of weight traffic)"


def test_kv_cache_signal_counts_every_source():
    ops = [placement("main", k, f"s{k}", "slice_update", device="CPU" if k < 2 else "ANE") for k in range(3)]
    p = P(placements=ops)
    assert "signal_kv_cache" not in sig(p)                                  # 3 < 4
    p = P(placements=[*ops, placement("main", 9, "r", "read_state", device="?")])
    k = sig(p)["signal_kv_cache"]
    assert k["evidence"]["ops"] == 4 and k["evidence"]["off_ane"] == 2      # "?" is not counted as off the ANE
    assert k["evidence"]["by_type"] == {
        "slice_update": {"ops": 3, "off_ane": 2, "sources": ["ordered_placements"]},
        "read_state": {"ops": 1, "off_ane": 0, "sources": ["ordered_placements"]}}
    # the op-type maps and the breakdown: each type takes the largest count any source gives
    p = dataclasses.replace(P(op_types=[op_type("slice_by_index", 12.5, 1.0, count=2)]),
                            ane_op_types={"ios18.slice_by_index": 1}, cpu_op_types={"ios18.slice_by_index": 3})
    k = sig(p)["signal_kv_cache"]
    assert k["evidence"]["by_type"] == {"slice_by_index": {"ops": 4, "off_ane": 3, "sources": [
        "ane_op_types/cpu_op_types", "op_type_breakdown"]}}
    assert k["evidence"]["runtime_share_pct"] == 12.5 and k["section"] == "ane_op_types/cpu_op_types/op_type_breakdown"


def test_int32_signal_lists_at_most_six_mentions():
    reasons = {f"ios18.t{k}": [f"Unsupported tensor data type: INT32 ({k})"] for k in range(5)}
    fb = [fallback("main", k, f"g{k}", "gather", "ane: int32 indices") for k in range(3)]
    s = sig(P(reasons=reasons, fallback_ops=fb))["signal_int32"]
    assert s["evidence"]["mentions"] == 8 and len(s["detail"]) == 1 + 6
    assert s["evidence"]["types"] == [f"t{k}" for k in range(5)]
    assert "signal_int32" not in sig(P(reasons={"ios18.t": ["Unsupported: int64"]}))


# --- interruptions --------------------------------------------------------------------------------------------------

def test_edge_runs_only():
    r = analyze_profile(P(edge_runs=[island(0, "main", 0, 1, 0.5, kind="lead"),
                                     island(0, "main", 90, 99, 2.0, kind="trail")]))
    g = F(r, "graph_interruptions")
    assert g["title"] == "No interruptions inside functions; 2 edge run(s), largest: trailing run main:90-99 (slice_update)"
    assert g["severity"] == "medium" and g["evidence"]["interruptions"] == 0


def test_counted_but_not_listed():
    doc = profile()
    doc["graph_interruptions"]["graph_interruptions"] = 2
    doc["graph_interruptions"]["estimated_total_tax_ms"] = 1200.5
    r = analyze_profile(profile_from_doc(doc, "p.json"))
    g = F(r, "graph_interruptions")
    assert g["title"] == "2 ANE graph interruption(s) counted but none listed" and g["severity"] == "high"
    assert "1,200 ms at 300 ms per boundary" in g["detail"][0]
    assert r["headline"] == g["title"]


def test_ten_islands_in_the_detail_and_the_exceeds_boundary():
    isl = [island(k + 1, "main", 10 * k, 10 * k, 0.001 * (k + 1)) for k in range(11)]
    r = analyze_profile(P(interruptions=isl, measured={"status": "ok", "average_ms": 4.0}))
    g = F(r, "graph_interruptions")
    assert sum(1 for d in g["detail"] if d.startswith("#")) == 10
    # the tool's tax equal to the measured time does not "exceed" it; above it does
    one = [island(1, "main", 5, 5, 0.5)]
    at = analyze_profile(P(interruptions=one, measured={"status": "ok", "average_ms": 600.5}))
    assert "exceeds" not in F(at, "graph_interruptions")["detail"][0]
    above = analyze_profile(P(interruptions=one, measured={"status": "ok", "average_ms": 600.4}))
    assert "exceeds the whole measured prediction (600 ms)" in F(above, "graph_interruptions")["detail"][0]
    assert "(0 % of the measured 600 ms)" in F(above, "graph_interruptions")["detail"][0]


def test_rank_ties_broken_by_runtime_under_both_boundaries():
    # a leading run (1 switch, 1.0 ms) and a whole-function run (0 switches, 1.2 ms): at a 0.2 ms boundary they tie
    # at 1.2 ms, so the larger runtime ranks first; at the tool's 300 ms the leading run is far ahead
    p = P(edge_runs=[island(0, "main", 0, 0, 1.0, kind="lead"), island(0, "aux", 0, 3, 1.2, kind="all")])
    rows = rank_islands(p, 0.2)
    assert [(r["function"], r["rank"], r["tool_rank"]) for r in rows] == [("aux", 1, 2), ("main", 2, 1)]
    assert rows[0]["cost_ms"] == pytest.approx(rows[1]["cost_ms"])
    # the tool's order breaks its own ties by runtime too (two leading runs at 300 ms + runtime)
    p = P(edge_runs=[island(0, "a", 0, 0, 1.0, kind="lead"), island(0, "b", 0, 0, 1.0, kind="lead")])
    p = dataclasses.replace(p, edge_runs=[dataclasses.replace(p.edge_runs[0], runtime_ms=1.0, switch_penalty_ms=300.0),
                                          dataclasses.replace(p.edge_runs[1], runtime_ms=2.0)])
    assert [r["function"] for r in sorted(rank_islands(p, 0.0), key=lambda r: r["tool_rank"])] == ["b", "a"]


def test_a_profile_without_a_boundary_uses_300_ms():
    p = P(interruptions=[island(1, "main", 5, 5, 0.5)])
    p = dataclasses.replace(p, compute={}, interruptions_summary={})
    (row,) = rank_islands(p, 0.2)
    assert row["tool_cost_ms"] == pytest.approx(600.5) and row["cost_ms"] == pytest.approx(0.9)
    g = F(analyze_profile(p), "graph_interruptions")
    assert g["evidence"]["tool_boundary_ms"] == 300.0 and g["evidence"]["tool_tax_ms"] == pytest.approx(600.5)


# --- fallbacks, hotspots, top operations ---------------------------------------------------------------------------

def test_fallback_groups_sums_and_order():
    fb = [fallback("main", 1, "a", "gather", "ane: int32", cost=0.004, device="CPU"),
          fallback("main", 2, "b", "gather", "ane: int32", cost=0.002, device="GPU"),
          fallback("main", 3, "c", "cast", "ane: int32", cost=0.003),
          fallback("main", 4, "d", "topk", "", cost=0.0005),
          fallback("main", 5, "e", "relu", "soft", cost=0.0005),
          fallback("main", 6, "f", "add", "soft", cost=0.0005)]
    f = F(analyze_profile(P(fallback_ops=fb)), "fallback_ops")
    assert [(g["reason"], g["type"], g["ops"], round(g["plan_cost"], 6), g["devices"]) for g in f["evidence"]["groups"]] == [
        ("ane: int32", "gather", 2, 0.006, ["CPU", "GPU"]), ("ane: int32", "cast", 1, 0.003, ["CPU"]),
        ("(no reason)", "topk", 1, 0.0005, ["CPU"]), ("soft", "add", 1, 0.0005, ["CPU"]),
        ("soft", "relu", 1, 0.0005, ["CPU"])]
    assert f["detail"] == ["ane: int32: 3 op(s), 0.90 % of the plan's cost — gather ×2, cast ×1",
                           "soft: 2 op(s), 0.10 % of the plan's cost — add ×1, relu ×1",
                           "(no reason): 1 op(s), 0.05 % of the plan's cost — topk ×1"]
    assert f["evidence"]["plan_cost"] == pytest.approx(0.0105) and f["severity"] == "medium"
    # more ops break a tie in cost
    fb2 = [fallback("main", 1, "a", "cast", "r", cost=0.002), fallback("main", 2, "b", "gather", "r", cost=0.001),
           fallback("main", 3, "c", "gather", "r", cost=0.001)]
    assert [g["type"] for g in F(analyze_profile(P(fallback_ops=fb2)), "fallback_ops")["evidence"]["groups"]] == \
        ["gather", "cast"]


@pytest.mark.parametrize("cost,sev", [(0.01, "info"), (0.0100001, "medium")])
def test_fallback_severity_at_one_percent_of_the_plan(cost, sev):
    f = F(analyze_profile(P(fallback_ops=[fallback("main", 1, "a", "cast", "r", cost=cost)])), "fallback_ops")
    assert f["severity"] == sev


def test_hotspots_at_most_eight_or_the_top_three():
    many = [op_type(f"t{k}", 5.0 + k, 1.0) for k in range(9)]
    h = F(analyze_profile(P(op_types=many)), "hotspots")
    assert [x["type"] for x in h["evidence"]["hotspots"]] == [f"t{k}" for k in range(8, 0, -1)]
    few = [op_type(f"t{k}", 4.999 - k, 1.0) for k in range(5)]
    h = F(analyze_profile(P(op_types=few)), "hotspots")
    assert [x["type"] for x in h["evidence"]["hotspots"]] == ["t0", "t1", "t2"]
    exact = [op_type("a", 5.0, 1.0), op_type("b", 4.999, 1.0)]
    assert [x["type"] for x in F(analyze_profile(P(op_types=exact)), "hotspots")["evidence"]["hotspots"]] == ["a"]


def test_top_operations_five_with_shares():
    top = [{"name": f"op{k}", "type": "ios18.conv", "short_type": "conv", "runtime_ms": 1.0 + k, "total_mb": 1.0,
            "gbps": 1.0, "bound": "Memory"} for k in range(6)]
    f = F(analyze_profile(P(top=top, grand_runtime_ms=20.0)), "top_operations")
    assert [r["share_pct"] for r in f["evidence"]["ops"]] == [5.0, 10.0, 15.0, 20.0, 25.0]
    p = P(top=top)
    p = dataclasses.replace(p, op_type_totals={}, summary={"grand_runtime_ms": 10.0})
    assert F(analyze_profile(p), "top_operations")["evidence"]["ops"][0]["share_pct"] == 10.0
    p = dataclasses.replace(p, summary={})
    f = F(analyze_profile(p), "top_operations")
    assert f["evidence"]["ops"][0]["share_pct"] is None and f["detail"][0] == "op0 (conv): 1 ms, 1 GB/s, Memory"


# --- measurement, status, headline, summary ------------------------------------------------------------------------

@pytest.mark.parametrize("sp,word", [(1.0, "slower than the estimate"), (1.0001, "ops overlap")])
def test_speedup_against_the_estimate_at_one(sp, word):
    m = F(analyze_profile(P(measured={"status": "ok", "average_ms": 2.0, "speedup_vs_sequential": sp})),
          "measured_prediction")
    assert word in m["detail"][-1]


def test_compile_fallback_detail():
    m = F(analyze_profile(P(measured={"status": "ane_compile_fallback_detected", "steady_ms": 12.0}, grand_runtime_ms=3.0)),
          "measured_prediction")
    assert m["detail"][-1] == "one prediction took 12 ms vs 3 ms estimated on the ANE" and m["severity"] == "high"
    m = F(analyze_profile(P(measured={"status": "ane_compile_fallback_detected"})), "measured_prediction")
    assert not any(d.startswith("one prediction took") for d in m["detail"])
    m = F(analyze_profile(P(measured={"status": "load_error", "steady_ms": 12.0})), "measured_prediction")
    assert not any(d.startswith("one prediction took") for d in m["detail"])


def test_status_names_the_important_missing_sections():
    doc = profile()
    for k in ("summary", "conv_detail", "measured_prediction"):
        del doc[k]
    s = F(analyze_profile(profile_from_doc(doc, "p.json")), "status")
    assert s["detail"] == ["sections missing from the report: summary, measured_prediction"] and s["severity"] == "warning"
    doc = profile()
    del doc["conv_detail"]
    assert F(analyze_profile(profile_from_doc(doc, "p.json")), "status") is None


def test_headline_order():
    one = [island(1, "main", 5, 5, 0.5)]
    # a measurement that failed outranks interruptions; one that merely was not run does not
    r = analyze_profile(P(interruptions=one, measured={"status": "load_error"}))
    assert r["headline"].startswith("MEASUREMENT LOAD_ERROR")
    r = analyze_profile(P(interruptions=one, measured={"status": "not_run"}))
    assert r["headline"] == F(r, "graph_interruptions")["title"]
    r = analyze_profile(P(op_types=[op_type("conv", 60.0, 1.0)]))
    assert r["headline"] == "No graph interruptions; Hotspot: conv 60 % of runtime (memory-bound)"
    assert analyze_profile(P())["headline"] == "No graph interruptions; no runtime breakdown in the report"


def test_plan_findings_ids():
    plan = costplan_from_doc(costplan([(0, "conv", 0.9), (1, "cast", 0.1, {"device": ""})], no_device=1), "c.json")
    r = analyze_profile(P(), plan)
    ids = [f["id"] for f in r["findings"]]
    assert ids.index("plan_top_ops") < ids.index("cross_check")
    assert ids.count("plan_top_ops") == 1 and ids.count("plan_no_device") == len(analyze_plan(plan)["findings"]) - 1
    a = analyze_plan(plan)
    assert a["findings"][0]["id"] == "plan_top_ops" and all(f["id"] == "plan_no_device" for f in a["findings"][1:])
    assert a["summary"] == {"model": plan.name, "kind": "costplan", "ops": 2}


def test_summary_row_percentages():
    p = P(summary={"ane_ops": 30, "cpu_ops": 8, "gpu_ops": 2, "total_cost": 0.5, "ane_cost": 0.4},
          measured={"status": "ok", "average_ms": 2.5, "iter_per_sec": 400.0})
    s = analyze_profile(p)["summary"]
    assert (s["ane_ops_pct"], s["ane_cost_pct"], s["latency_ms"], s["iter_per_sec"]) == (75.0, 80.0, 2.5, 400.0)
    s = analyze_profile(P(summary={"ane_ops": 0, "total_cost": 0}, measured={"status": "ok", "average_ms": 0}))["summary"]
    assert (s["ane_ops_pct"], s["ane_cost_pct"], s["latency_ms"], s["iter_per_sec"]) == (None, None, None, None)
    s = analyze_profile(P(summary={"cpu_ops": 4}, measured={"status": "failed", "average_ms": 3.0}))["summary"]
    assert (s["ane_ops_pct"], s["latency_ms"]) == (0.0, None)


def test_static_cross_check_detail():
    p = P(placements=[placement("main", 1, "a", "conv", device="ANE"), placement("main", 2, "b", "gather", device="ANE"),
                      placement("main", 3, "c", "cast", device="CPU"), placement("main", 4, "zz", "relu")],
          op_types=[op_type("conv", 80.0, 2.0), op_type("gather", 20.0, 0.5)])
    static = {"model": "m.mlpackage", "ops": [
        {"function": "main", "index": 1, "output": "a", "type": "ios18.conv", "predicted_device": "ANE", "rule": "r1"},
        {"function": "main", "index": 2, "output": "b", "type": "ios18.gather", "predicted_device": "CPU", "rule": "int32"},
        {"function": "main", "index": 3, "output": "c", "type": "ios18.cast", "predicted_device": "?", "rule": "?"}],
        "op_types": [
        {"short_type": "conv", "act_read": 1e6, "weight_read": 2e6, "written": 1e6, "count": 1, "flops": 4e9,
         "flops_known": True},
        {"short_type": "gather", "act_read": 5e5, "weight_read": 0, "written": 0, "count": 1, "flops": 0,
         "flops_known": False}]}
    f = F(analyze_profile(p, static=static), "static_crosscheck")
    assert f["detail"] == [
        "3 placed ops matched to the model (1 not found); the static estimate was right for 1 and wrong for 1, "
        "1 not known by the rules",
        "main[2] gather b: estimated CPU (int32), measured ANE",
        "conv: 2 ms measured → 2e+03 GFLOP/s, 2 GB/s from the static bytes",
        "gather: 0.5 ms measured → FLOPs not known, 1 GB/s from the static bytes"]
    assert f["severity"] == "medium" and f["title"] == "Static estimate vs measured placement: 1 op(s) placed differently"


def test_tool_rank_tie_broken_by_runtime():
    # at the tool's 300 ms: a leading run 300 + 1 ms and a whole-function run 0 + 301 ms tie; the longer runtime first
    p = P(edge_runs=[island(0, "main", 0, 0, 1.0, kind="lead"), island(0, "aux", 0, 3, 301.0, kind="all")])
    rows = sorted(rank_islands(p, 0.2), key=lambda r: r["tool_rank"])
    assert [r["function"] for r in rows] == ["aux", "main"] and rows[0]["tool_cost_ms"] == rows[1]["tool_cost_ms"]


def test_counted_but_not_listed_evidence():
    doc = profile()
    doc["graph_interruptions"]["graph_interruptions"] = 1
    g = F(analyze_profile(profile_from_doc(doc, "p.json")), "graph_interruptions")
    assert g["evidence"]["ranking_changed"] is False and g["evidence"]["islands"] == []
    assert g["evidence"]["realistic_tax_ms"] is None


def test_type_counts_from_one_source_keep_its_numbers():
    p = P(op_types=[op_type("slice_update", 10.0, 1.0, count=4), {**op_type("read_state", 1.0, 0.1), "count": 0}])
    k = sig(p)["signal_kv_cache"]["evidence"]
    assert k["by_type"] == {"slice_update": {"ops": 4, "off_ane": 0, "sources": ["op_type_breakdown"]},
                            "read_state": {"ops": 0, "off_ane": 0, "sources": ["op_type_breakdown"]}}
    assert (k["ops"], k["off_ane"]) == (4, 0)


def test_lut_without_weight_totals_and_ane_share_without_ane_cost():
    p = P(op_types=[op_type("constexpr_lut_to_dense", 50.0, 1.0, weight_mb=5.0), op_type("conv", 50.0, 1.0)])
    p = dataclasses.replace(p, op_type_totals={})
    assert sig(p)["signal_lut"]["detail"][1] == "5 MB of LUT input per prediction"
    m = sig(P(summary={"ane_ops": 2, "total_cost": 0.5}))["signal_mostly_ane"]
    assert m["evidence"]["ane_cost_share_pct"] == 0.0


def test_plan_finding_order_and_agreement_text():
    from edgeprof.analysis.ane_plan import plan_findings
    plan = costplan_from_doc(costplan([(0, "conv", 0.9), (1, "cast", 0.1, {"device": ""})], no_device=1), "c.json")
    pf = plan_findings(plan)
    assert len(pf) == 2
    r = analyze_profile(P(), plan)
    assert F(r, "plan_top_ops")["title"] == pf[0]["title"] and F(r, "plan_no_device")["title"] == pf[1]["title"]
    cc = F(r, "cross_check")
    if not cc["evidence"]["statements"]:
        assert cc["detail"] == ["no op type or op differs by 2× or more between plan share and runtime share"]
        assert cc["title"] == "Cross-check: plan and profile agree" and cc["severity"] == "info"
    else:
        assert cc["detail"] == cc["evidence"]["statements"] and cc["severity"] == "medium"


def test_summary_row_with_partial_counts():
    s = analyze_profile(P(summary={"ane_ops": 3}))["summary"]
    assert s["ane_ops_pct"] == 100.0 and s["ane_cost_pct"] is None
    s = analyze_profile(P(summary={"ane_ops": 3, "gpu_ops": 1, "total_cost": 2.0}))["summary"]
    assert s["ane_ops_pct"] == 75.0 and s["ane_cost_pct"] == 0.0
    s = analyze_profile(P(summary={"ane_ops": 3, "cpu_ops": 1}))["summary"]
    assert s["ane_ops_pct"] == 75.0


def test_static_detail_lists_ten_wrong_ops_and_eight_types():
    n = 12
    p = P(placements=[placement("main", k, f"o{k}", f"t{k}", device="CPU") for k in range(n)],
          op_types=[op_type(f"t{k}", 5.0, 1.0 + k) for k in range(n)])
    static = {"model": "m", "ops": [{"function": "main", "index": k, "output": f"o{k}", "type": f"ios18.t{k}",
                                     "predicted_device": "ANE", "rule": "r"} for k in range(n)],
              "op_types": [{"short_type": f"t{k}", "act_read": 1e6, "weight_read": 0, "written": 0, "count": 1,
                            "flops": 1e6, "flops_known": True} for k in range(n)]}
    f = F(analyze_profile(p, static=static), "static_crosscheck")
    assert sum(1 for d in f["detail"] if ": estimated ANE" in d) == 10
    assert sum(1 for d in f["detail"] if "ms measured" in d) == 8


def test_summary_row_without_any_op_counts():
    s = analyze_profile(dataclasses.replace(P(), summary={}))["summary"]
    assert (s["ane_ops_pct"], s["ane_cost_pct"]) == (None, None)
