"""Every key of `ane --json` (an anemll-profile report, an ane-costplan report, a model folder) and of `ane diff
--json` (two profiles, two cost plans) against the input JSON read here with the standard library: counts,
shares and latencies recomputed by hand from the reports' own fields, islands costed at the stated boundary
time. A key the documents gain without a check here fails the test."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from ane_builder import costplan, dumps_like_the_tool, island, op_type, profile
from testdata import DATA

PROFILE = DATA / "anemll" / "anemll_profile_0.4.1.illustrative.json"
PLAN = DATA / "anemll" / "ane_costplan.illustrative.json"
BOUNDARY = 0.2  # ms per ANE↔CPU switch, edgeprof's default


def edgeprof(*args) -> dict:
    r = subprocess.run([sys.executable, "-m", "edgeprof", "ane", *map(str, args), "--json"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def check_all(doc: dict, keys: dict, *truth) -> None:
    assert sorted(doc) == sorted(keys), "a key of the document needs its check here"
    for key, check in keys.items():
        assert check(doc, *truth) is not False, key


# -- one anemll-profile report (with its cost plan) -----------------------------------------------------------------

def _summary(d, r):
    s, m = d["summary"], r["summary"]
    assert s["ane_ops_pct"] == pytest.approx(100 * m["ane_ops"] / (m["ane_ops"] + m["cpu_ops"] + m["gpu_ops"]))
    assert s["ane_cost_pct"] == pytest.approx(100 * m["ane_cost"] / m["total_cost"], rel=1e-6)
    assert (s["latency_ms"], s["iter_per_sec"]) == (r["measured_prediction"]["average_ms"],
                                                   r["measured_prediction"]["iter_per_sec"])
    assert s["interruptions"] == r["graph_interruptions"]["graph_interruptions"]
    assert s["fallback_ops"] == len(r["fallback_ops"]) and s["status"] == r["measured_prediction"]["status"]
    assert s["top_type"] == max(r["op_type_breakdown"], key=lambda t: t["share_pct"])["short_type"]
    assert s["model"] == r["model"]["display_name"] and s["kind"] == "profile"
    lut = sum(t["share_pct"] for t in r["op_type_breakdown"] if "lut" in t["short_type"])
    assert ("signal_lut" in s["signals"]) == (lut >= 10)


def _findings(d, r):
    by = {f["id"]: f for f in d["findings"]}
    gi = r["graph_interruptions"]
    isl = by["graph_interruptions"]["evidence"]["islands"]
    for i in isl:  # each island at the stated boundary: its own time plus a switch at each focus edge
        src = next(x for x in gi["interruptions"] + gi["edge_runs"] if x["start_index"] == i["start_index"])
        edges = (src["prev_focus_index"] >= 0) + (src["next_focus_index"] >= 0)
        assert i["cost_ms"] == pytest.approx(src["runtime_ms"] + edges * BOUNDARY, abs=1e-9)
    assert [i["cost_ms"] for i in isl] == sorted((i["cost_ms"] for i in isl), reverse=True)
    fb = by["fallback_ops"]["evidence"]
    assert fb["listed_fallback_ops"] == len(r["fallback_ops"])
    off_ane = {(x["function"], x["index"]) for x in r["ordered_placements"] + r["fallback_ops"] if x["device"] != "ANE"}
    off_ane |= {(x["function"], i) for x in gi["interruptions"] + gi["edge_runs"]
                for i in range(x["start_index"], x["end_index"] + 1)}
    assert fb["ops"] == len(off_ane)  # every op the report places off the ANE, counted once
    assert fb["plan_cost"] == pytest.approx(sum(f["cost"] for f in r["fallback_ops"]))
    hot = by["hotspots"]["evidence"]["hotspots"]
    assert [h["type"] for h in hot] == [t["short_type"] for t in sorted(r["op_type_breakdown"],
                                                                       key=lambda t: -t["share_pct"])][:len(hot)]
    top = by["top_operations"]["evidence"]["ops"][0]
    assert top["share_pct"] == pytest.approx(100 * r["top_operations"][0]["runtime_ms"] / r["measured_prediction"][
        "average_ms"] * r["measured_prediction"]["average_ms"] / r["summary"]["grand_runtime_ms"], rel=1e-6)
    assert by["measured_prediction"]["evidence"] == r["measured_prediction"]
    assert by["cross_check"]["source"] == "anemll_json+costplan_json"
    # the guide's order: interruptions, then fallbacks, then hotspots
    ids = [f["id"] for f in d["findings"]]
    assert ids.index("graph_interruptions") < ids.index("fallback_ops") < ids.index("hotspots")


PROFILE_KEYS = {
    "boundary_ms": lambda d, r: d["boundary_ms"] == BOUNDARY,
    "costplan": lambda d, r: d["costplan"] == str(PLAN),
    "findings": _findings,
    "headline": lambda d, r: d["headline"] == d["findings"][0]["title"],
    "kind": lambda d, r: d["kind"] == "ane_analysis",
    "model": lambda d, r: d["model"] == r["model"]["display_name"],
    "schema_version": lambda d, r: d["schema_version"] == 1,
    "source": lambda d, r: d["source"] == str(PROFILE),
    "summary": _summary,
    "version": lambda d, r: d["version"] == r["version"],
    "warnings": lambda d, r: isinstance(d["warnings"], list),
}


def test_every_key_of_a_profile_analysis_has_a_check():
    check_all(edgeprof(PROFILE, "--costplan", PLAN), PROFILE_KEYS, json.loads(PROFILE.read_text()))


def _plan_findings(d, p):
    (f,) = d["findings"]
    (top,) = f["evidence"]["top_ops"]
    op = max(p["operations"], key=lambda o: o["cost"])
    assert (top["index"], top["cost"]) == (op["index"], op["cost"])
    assert top["share_pct"] == pytest.approx(100 * op["cost"] / p["total_cost"], rel=1e-6)


PLAN_KEYS = {
    "costplan": lambda d, p: d["costplan"] == str(PLAN),
    "findings": _plan_findings,
    "headline": lambda d, p: d["headline"] == d["findings"][0]["title"],
    "kind": lambda d, p: d["kind"] == "ane_plan",
    "model": lambda d, p: d["model"] == p["model"].rsplit("/", 1)[-1],
    "schema_version": lambda d, p: d["schema_version"] == 1,
    "source": lambda d, p: d["source"] == str(PLAN),
    "summary": lambda d, p: d["summary"] == {"kind": "costplan", "model": d["model"], "ops": len(p["operations"])},
    # the report says 105 ops and lists 1: said, not hidden
    "warnings": lambda d, p: d["warnings"] == [f"total_ops says {p['total_ops']} but {len(p['operations'])} "
                                               "operations are listed"],
}


def test_every_key_of_a_cost_plan_analysis_has_a_check():
    check_all(edgeprof(PLAN), PLAN_KEYS, json.loads(PLAN.read_text()))


# -- before / after ---------------------------------------------------------------------------------------------------

def _write(path, doc) -> str:
    path.write_text(dumps_like_the_tool(doc) if doc.get("tool") else json.dumps(doc))
    return str(path)


@pytest.fixture
def profiles(tmp_path):
    before = profile(op_types=[op_type("conv", 80, 8.0), op_type("slice_update", 20, 2.0)],
                     interruptions=[island(1, "main", 40, 41, 0.05, reason="standalone slice_update"),
                                    island(2, "main", 80, 81, 0.05, reason="standalone slice_update")])
    after = profile(op_types=[op_type("conv", 95, 8.0), op_type("slice_update", 5, 0.4)],
                    interruptions=[island(1, "main", 120, 120, 0.02, first_type="ios18.cast", reason="int32")],
                    measured={"status": "ok", "average_ms": 3.0, "iter_per_sec": 333.0, "runs": 10})
    return _write(tmp_path / "b.json", before), _write(tmp_path / "a.json", after), before, after


def _op_types(d, b, a):
    share = lambda r: {t["short_type"]: t["share_pct"] for t in r["op_type_breakdown"]}  # noqa: E731
    sb, sa = share(b), share(a)
    assert {t["type"]: (t["runtime_share_before_pct"], t["runtime_share_after_pct"], t["delta_pp"]) for t in
            d["op_types"]} == {k: (sb[k], sa[k], pytest.approx(sa[k] - sb[k])) for k in sb}


DIFF_KEYS = {
    "after": lambda d, b, a: d["after"].endswith("a.json"),
    "before": lambda d, b, a: d["before"].endswith("b.json"),
    "fallback_ops": lambda d, b, a: d["fallback_ops"] == {"before": len(b["fallback_ops"]),
                                                          "after": len(a["fallback_ops"])},
    "interruptions": lambda d, b, a: (d["interruptions"]["before"], d["interruptions"]["after"]) == (2, 1)
    and d["interruptions"]["fixed"][0]["count"] == 2 and d["interruptions"]["introduced"][0]["first_type"] == "cast",
    "kind": lambda d, b, a: d["kind"] == "ane_diff",
    "latency": lambda d, b, a: d["latency"]["speedup"] == pytest.approx(
        b["measured_prediction"]["average_ms"] / a["measured_prediction"]["average_ms"], abs=1e-6),
    "op_counts": lambda d, b, a: d["op_counts"] == {k: [b["summary"][k], a["summary"][k]]
                                                    for k in ("ane_ops", "cpu_ops", "gpu_ops", "total_ops")},
    "op_types": _op_types,
    "reports": lambda d, b, a: d["reports"] == "profile",
    "schema_version": lambda d, b, a: d["schema_version"] == 1,
    "sequential_estimate_ms": lambda d, b, a: d["sequential_estimate_ms"] == {
        "before": pytest.approx(sum(t["total_ms"] for t in b["op_type_breakdown"])),
        "after": pytest.approx(sum(t["total_ms"] for t in a["op_type_breakdown"]))},
    "statements": lambda d, b, a: "graph interruptions 2 → 1: 2 island(s) fixed, 1 introduced" in d["statements"],
}


def test_every_key_of_a_profile_diff_has_a_check(profiles):
    bp, ap, b, a = profiles
    check_all(edgeprof("diff", bp, ap), DIFF_KEYS, b, a)


def _shares(p):
    out: dict = {}
    for o in p["operations"]:
        t = o["type"].split(".", 1)[1]
        out[t] = out.get(t, 0.0) + 100 * o["cost"] / p["total_cost"]
    return out


def _plan_ops(d, b, a):
    """One row per op index of either plan: its type, where it is in each, and its share of each plan's cost."""
    ib, ia = ({o["index"]: o for o in p["operations"]} for p in (b, a))
    want = {}
    for i in ib.keys() | ia.keys():
        o = ib.get(i) or ia[i]
        sb = 100 * ib[i]["cost"] / b["total_cost"] if i in ib else 0.0
        sa = 100 * ia[i]["cost"] / a["total_cost"] if i in ia else 0.0
        want[o["type"].split(".", 1)[1]] = (i if i in ib else None, i if i in ia else None, pytest.approx(sb),
                                            pytest.approx(sa), pytest.approx(sa - sb))
    assert {o["type"]: (o["index_before"], o["index_after"], o["share_before_pct"], o["share_after_pct"],
                        o["delta_pp"]) for o in d["ops"]} == want


PLAN_DIFF_KEYS = {
    "after": lambda d, b, a: d["after"].endswith("ca.json"),
    "before": lambda d, b, a: d["before"].endswith("cb.json"),
    "kind": lambda d, b, a: d["kind"] == "ane_diff",
    "no_device": lambda d, b, a: d["no_device"] == {"before": b["no_device"], "after": a["no_device"]},
    "op_count": lambda d, b, a: d["op_count"] == {"before": len(b["operations"]), "after": len(a["operations"])},
    "op_types": lambda d, b, a: {t["type"]: (t["plan_share_before_pct"], t["plan_share_after_pct"]) for t in
                                 d["op_types"]} == {k: (pytest.approx(_shares(b).get(k, 0.0)),
                                                        pytest.approx(_shares(a).get(k, 0.0)))
                                                    for k in _shares(b) | _shares(a)},
    "ops": _plan_ops,
    "reports": lambda d, b, a: d["reports"] == "costplan",
    "schema_version": lambda d, b, a: d["schema_version"] == 1,
    "statements": lambda d, b, a: d["statements"][0].startswith(
        f"total_cost {b['total_cost']:g} → {a['total_cost']:g} "
        f"({100 * (a['total_cost'] / b['total_cost'] - 1):+.1f} %)"),
    "total_cost": lambda d, b, a: d["total_cost"] == {"before": pytest.approx(b["total_cost"]),
                                                      "after": pytest.approx(a["total_cost"]),
                                                      "change_percent": pytest.approx(
                                                          100 * (a["total_cost"] / b["total_cost"] - 1))},
    "total_cost_note": lambda d, b, a: "dimensionless" in d["total_cost_note"],
    "with_device": lambda d, b, a: d["with_device"] == {"before": b["with_device"], "after": a["with_device"]},
}


def test_every_key_of_a_cost_plan_diff_has_a_check(tmp_path):
    b = costplan([(1, "conv", 0.5), (2, "cast", 0.1), (3, "add", 0.2)])
    a = costplan([(1, "conv", 0.4), (3, "add", 0.2)], no_device=1)
    check_all(edgeprof("diff", _write(tmp_path / "cb.json", b), _write(tmp_path / "ca.json", a)), PLAN_DIFF_KEYS, b, a)


# -- a model folder --------------------------------------------------------------------------------------------------

ROLES = {"llama_embeddings": ("embeddings", 0.3, 0), "llama_prefill": ("prefill", 40.0, 1),
         "llama_lm_head": ("lm_head", 2.0, 0)}


def _rows(d, folder):
    got = {r["model"].removesuffix(".mlpackage"): (r["role"], r["latency_ms"], r["interruptions"]) for r in d["summary"]}
    assert got == ROLES


FOLDER_KEYS = {
    "errors": lambda d, f: d["errors"] == [],
    "kind": lambda d, f: d["kind"] == "ane_folder",
    "note": lambda d, f: "nothing is summed" in d["note"],
    "reports": lambda d, f: sorted(r["source"] for r in d["reports"]) == sorted(str(p) for p in f.glob("llama_*.json")),
    "schema_version": lambda d, f: d["schema_version"] == 1,
    "skipped": lambda d, f: d["skipped"] == [str(f / "notes.json")],  # JSON that is neither report
    "summary": _rows,
}


def test_every_key_of_a_model_folder_has_a_check(tmp_path):
    folder = tmp_path / "llama"
    folder.mkdir()
    for name, (_, ms, n) in ROLES.items():
        _write(folder / f"{name}.json", profile(
            name=f"{name}.mlpackage", op_types=[op_type("conv", 100, ms)],
            interruptions=[island(i + 1, "main", 10 * i + 5, 10 * i + 5, 0.01) for i in range(n)],
            measured={"status": "ok", "average_ms": ms, "iter_per_sec": 1000 / ms, "runs": 3}))
    (folder / "notes.json").write_text('{"per_etdump": []}')
    check_all(edgeprof(folder), FOLDER_KEYS, folder)
