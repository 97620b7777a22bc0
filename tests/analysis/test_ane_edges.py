"""Edges of the ANE profile findings, each figure worked out by hand from the document built here: the boundary-cost
clause of the interruptions finding, the ops counted off the ANE, the plan's unlisted share at 50 %, and a static
estimate the rules cannot judge."""

from __future__ import annotations

import pytest
from ane_builder import costplan, fallback, island, placement, profile

from edgeprof.analysis.ane import analyze_profile
from edgeprof.io.anemll import costplan_from_doc, profile_from_doc


def P(**kw):
    return profile_from_doc(profile(**kw), "p.json")


def F(result, fid):
    return next(f for f in result["findings"] if f["id"] == fid)


def test_the_realistic_boundary_clause_appears_only_when_it_differs_from_the_tools():
    # one interruption of 0.5 ms with two switches: 2 × 300 + 0.5 = 600.5 ms (tool); 2 × 0.2 + 0.5 = 0.9 ms
    p = P(interruptions=[island(1, "main", 5, 5, 0.5)])
    own = F(analyze_profile(p, boundary_ms=0.2), "graph_interruptions")["detail"][0]
    assert "; at 0.2 ms per boundary it is 0.9 ms" in own
    same = F(analyze_profile(p, boundary_ms=300.0), "graph_interruptions")["detail"][0]
    assert same.startswith("1 interruption(s): the tool's estimate is 600.5 ms per prediction at 300 ms per boundary (")
    assert "; at" not in same


def test_ops_placed_off_the_ane_but_not_in_the_fallback_list_are_counted_once():
    # the listed fallback (main:1 on CPU) is also in ordered_placements; main:2 runs on the GPU without being listed;
    # main:4 is on the ANE → 2 ops off the ANE, 1 listed
    places = [placement("main", 1, "a", "cast", device="CPU"), placement("main", 2, "b", "gather", device="GPU"),
              placement("main", 4, "d", "conv")]
    f = F(analyze_profile(P(fallback_ops=[fallback("main", 1, "a", "cast", "r", cost=0.004)], placements=places)),
          "fallback_ops")
    assert (f["evidence"]["ops"], f["evidence"]["listed_fallback_ops"]) == (2, 1)
    assert f["title"].startswith("2 op(s) not on the ANE (1 in the tool's fallback list); ")
    assert f["detail"][0].startswith("2 op(s) run off the ANE (the islands and ordered_placements): 1 in the tool's "
                                     "fallback list")
    assert f["detail"][1] == "r: 1 op(s), 0.40 % of the plan's cost — cast ×1"


@pytest.mark.parametrize("const", [False, True])
def test_when_every_op_off_the_ane_is_listed_the_title_does_not_split_them(const):
    places = [placement("main", 1, "a", "cast", device="CPU")]
    if const:  # a const op (MIL type "const", no opset prefix) is no op of the plan: never counted off the ANE
        places.append({**placement("main", 3, "w", "const", device="CPU"), "type": "const"})
    f = F(analyze_profile(P(fallback_ops=[fallback("main", 1, "a", "cast", "r", cost=0.004)], placements=places)),
          "fallback_ops")
    assert f["title"] == "1 op(s) not on the ANE; the listed ones hold 0.40 % of the plan's cost, 1 reason(s)"
    assert f["detail"] == ["r: 1 op(s), 0.40 % of the plan's cost — cast ×1"]


@pytest.mark.parametrize("listed,title", [
    (0.5, "Cross-check: plan and profile agree"),       # 50 % of the plan's cost unlisted: still checkable
    (0.495, "Cross-check: no disagreement in the ops the plan lists, but they hold only 49.5 % of its cost — the "
            "rest cannot be checked"),               # 50.5 % unlisted
])
def test_cross_check_agreement_needs_at_least_half_of_the_plan_listed(listed, title):
    doc = costplan([(0, "conv", listed)])
    doc["total_cost"] = 1.0
    cc = F(analyze_profile(P(), costplan_from_doc(doc, "c.json")), "cross_check")
    assert cc["evidence"]["statements"] == []
    assert cc["title"] == title


def _static(predicted):
    return {"model": "m.mlpackage", "op_types": [], "ops": [
        {"function": "main", "index": 1, "output": "a", "type": "ios18.conv", "predicted_device": predicted, "rule": "r"}]}


def test_a_static_estimate_the_rules_cannot_judge_is_not_called_agreement():
    p = P(placements=[placement("main", 1, "a", "conv", device="ANE")])
    f = F(analyze_profile(p, static=_static("?")), "static_crosscheck")
    assert f["title"] == "Static estimate not compared: the rules know none of the 1 matched ops"
    assert f["severity"] == "info"
    f = F(analyze_profile(p, static=_static("ANE")), "static_crosscheck")
    assert f["title"] == "Static estimate agrees with the measured placement (1 of 1 matched ops)"
