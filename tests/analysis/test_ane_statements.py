"""ANE findings say only what their evidence holds: a cross-check over a plan whose listed ops hold 4.4 % of its
cost does not call plan and profile in agreement; ``no_device`` is stated when it is 0 (the ane-costplan
guide's step 2 asks for it); the KV-cache count names the op types it counts; a static estimate is not a
measurement that was skipped; the ranking at the tool's own boundary is not compared with itself."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import edgeprof
from edgeprof.cli import main
from testdata import DATA

PROFILE = DATA / "anemll" / "anemll_profile_0.4.1.illustrative.json"
PLAN = DATA / "anemll" / "ane_costplan.illustrative.json"


def _by_id(r):
    return {f["id"]: f for f in r.data["findings"]}


def test_cross_check_and_no_device():
    f = _by_id(edgeprof.ane(PROFILE, costplan=PLAN))
    plan = json.loads(PLAN.read_text())
    listed = sum(o["cost"] for o in plan["operations"]) / plan["total_cost"]  # hand count from the plan itself
    assert "plan and profile agree" not in f["cross_check"]["title"]
    assert f"hold only {100 * listed:.1f} % of its cost" in f["cross_check"]["title"]
    assert plan["no_device"] == 0
    assert any(d.startswith("no_device: 0") for d in f["plan_top_ops"]["detail"])


def test_ranking_at_the_tools_own_boundary():
    tool_b = json.loads(PROFILE.read_text())["compute"]["interrupt_boundary_ms"]
    f = _by_id(edgeprof.ane(PROFILE, boundary_ms=tool_b))
    assert any(f"ranked at the tool's own {tool_b:g} ms per boundary" in d for d in f["graph_interruptions"]["detail"])
    assert not any("the ranking is the same" in d for d in f["graph_interruptions"]["detail"])


@pytest.fixture(scope="module")
def estimate(tmp_path_factory):
    out = tmp_path_factory.mktemp("est") / "est.json"
    res = CliRunner().invoke(main, ["coreml", str(DATA / "coreml" / "int32_kvcache_state_ios18.mlpackage"),
                                    "--as-anemll", str(out)])
    assert res.exit_code == 0, res.stderr
    return out


def test_kv_count_names_what_it_counts_and_an_estimate_is_not_a_skipped_measurement(estimate):
    from edgeprof.analysis.ane import KV_TYPES

    doc = json.loads(estimate.read_text())
    f = _by_id(edgeprof.ane(estimate))
    hand = {r["short_type"]: r["count"] for r in doc["op_type_breakdown"] if r["short_type"] in KV_TYPES}
    kv = f["signal_kv_cache"]
    assert kv["title"] == f"Repeated KV-cache ops: {sum(hand.values())} ({'/'.join(t for t in kv['evidence']['by_type'])})"
    assert set(kv["evidence"]["by_type"]) == set(hand)
    m = f["measured_prediction"]
    assert m["title"] == "Not measured: a static estimate" and "skips it" not in " ".join(m["detail"])


def test_a_diff_says_what_moved_and_what_did_not(tmp_path):
    from edgeprof.analysis.ane_diff import counts_line

    assert counts_line([("ops", 3, 5), ("with a device", 105, 105), ("with no device", 0, 0)]) == \
        "ops 3 → 5; unchanged: with a device 105, with no device 0"
    assert counts_line([("ops", 1, 1)]) == "unchanged: ops 1"
    outs = []
    for name in ("conv_relu_linear_ios18", "conv_palettized4_ios18"):
        out = tmp_path / f"{name}.json"
        assert CliRunner().invoke(main, ["coreml", str(DATA / "coreml" / f"{name}.mlpackage"), "--as-anemll",
                                         str(out)]).exit_code == 0
        outs.append(out)
    from edgeprof import api

    d = api.ane_diff(*outs).data
    assert "no measured latency: both are static estimates" in " ".join(d["statements"])
    assert not any(" 0 → 0" in ln or "2 → 2" in ln for ln in d["statements"])


def test_ops_off_the_ane_agree_with_the_islands():
    """A 2-op CPU interruption and a 1-op CPU leading run are 3 ops off the ANE, not the fallback list's 1: the
    count is every op the report shows off the ANE (islands, placements, the fallback list), counted once."""
    f = _by_id(edgeprof.ane(PROFILE))
    doc = json.loads(PROFILE.read_text())
    gi = doc["graph_interruptions"]
    island_ops = {(i["function"], k) for i in gi["interruptions"] + gi["edge_runs"]
                  for k in range(i["start_index"], i["end_index"] + 1)}
    hand = island_ops | {(o["function"], o["index"]) for o in doc["fallback_ops"]}
    fb = f["fallback_ops"]
    assert fb["evidence"]["ops"] == len(hand) == 3
    assert fb["title"].startswith(f"3 op(s) not on the ANE ({len(doc['fallback_ops'])} in the tool's fallback list)")
