"""The breakdown's accounting on small ETDumps written with the reference FlatBuffers runtime, every figure worked
out by hand from the event times below (ns):

    Method::execute                 0 … 10000                         self 2000 → unattributed
      OPERATOR_CALL               100 … 2100   self 100 → framework overhead
        native_call_convolution   150 … 2050   1900 → CONV (portable)
      DELEGATE_CALL              2200 … 7200   self 5000 − FC − 1000 → delegate overhead
        Fully Connected GEMM     2300 … 2300+FC      → GEMM (XNNPACK); FC = 2000 in run 0, 3000 in run 1
        Add (ND)                 4400 … 5400   1000 → ELEMENTWISE (XNNPACK)
      OPERATOR_CALL              7300 … 8300   self 100 → framework overhead
        native_call_relu         7350 … 8250    900 → ACTIVATION (portable)
    marker (outside execute)    10500 … 10600         → no line
"""

from __future__ import annotations

import pytest
from etdump_builder import PE, Run, build

from edgeprof import load_etdump
from edgeprof.analysis.breakdown import (
    LINES,
    EventLines,
    breakdown,
    graph_breaks,
    per_run_lines,
    per_run_operators,
    summary_split,
)
from edgeprof.taxonomy import FC_NOTE


def mixed(t0: int, fc: int = 2000, extra=()) -> Run:
    return Run("Execute", [
        PE("native_call_convolution.out", t0 + 150, t0 + 2050, 0),
        PE("OPERATOR_CALL", t0 + 100, t0 + 2100, 0),
        PE(None, t0 + 2300, t0 + 2300 + fc, 1, dd_str="Fully Connected (NC, F32) GEMM #1"),
        PE(None, t0 + 4400, t0 + 5400, 1, dd_str="Add (ND) #1"),
        PE("DELEGATE_CALL", t0 + 2200, t0 + 7200, 1),
        PE("native_call_relu.out", t0 + 7350, t0 + 8250, 2),
        PE("OPERATOR_CALL", t0 + 7300, t0 + 8300, 2),
        *extra,
        PE("Method::execute", t0, t0 + 10000, -1, chain_index=-1),
        PE("marker", t0 + 10500, t0 + 10600, -1),
    ])


@pytest.fixture(scope="module")
def prof(tmp_path_factory):
    p = tmp_path_factory.mktemp("bd") / "mixed.etdp"
    p.write_bytes(build([mixed(0), mixed(20_000, fc=3000)]))
    return load_etdump(p, warn=False)


def test_lines_per_run_add_up_to_the_end_to_end_time(prof):
    mat, e2e, runs = per_run_lines(prof, EventLines(prof))
    assert runs == [0, 1] and e2e.tolist() == [10_000, 10_000]
    col = {ln: mat[:, LINES.index(ln)].tolist() for ln in LINES}
    assert col["CONV"] == [1900, 1900] and col["GEMM"] == [2000, 3000] and col["ELEMENTWISE"] == [1000, 1000]
    assert col["ACTIVATION"] == [900, 900] and col["framework_overhead"] == [200, 200]
    assert col["delegate_overhead"] == [2000, 1000] and col["unattributed"] == [2000, 2000]
    assert (mat.sum(axis=1) == e2e).all()
    assert sum(v for ln, v in col.items() if ln not in ("CONV", "GEMM", "ELEMENTWISE", "ACTIVATION", "framework_overhead",
                                                          "delegate_overhead", "unattributed") for v in v) == 0


def test_category_table(prof):
    b = breakdown(prof)
    rows = [(r["line"], r["kind"], r["avg_ms"], r["pct_of_e2e"], r["operator_count"], r["executions_per_run"])
            for r in b["categories"]]
    assert rows == [
        ("GEMM", "category", 0.0025, 25.0, 1, 1.0), ("CONV", "category", 0.0019, 19.0, 1, 1.0),
        ("ELEMENTWISE", "category", 0.001, 10.0, 1, 1.0), ("ACTIVATION", "category", 0.0009, 9.0, 1, 1.0),
        ("unattributed", "overhead", 0.002, 20.0, 0, 0.0), ("delegate_overhead", "overhead", 0.0015, 15.0, 0, 0.0),
        ("framework_overhead", "overhead", 0.0002, 2.0, 0, 0.0)]
    assert [r["total_ms"] for r in b["categories"]] == [0.005, 0.0038, 0.002, 0.0018, 0.004, 0.003, 0.0004]
    assert b["runs"] == 2 and b["e2e_ms"] == {"mean": 0.01, "median": 0.01} and b["accounting_check_max_abs_ns"] == 0


def test_operators_backends_and_notes(prof):
    b = breakdown(prof)
    ops = [(o["operator"], o["backend"], o["category"], o["avg_ms"], o["pct_of_e2e"], o["event_count"],
            o["executions_per_run"]) for o in b["operators_all"]]
    assert ops == [("Fully Connected (NC, F32) GEMM", "XnnpackBackend", "GEMM", 0.0025, 25.0, 2, 1.0),
                   ("native_call_convolution.out", "portable", "CONV", 0.0019, 19.0, 2, 1.0),
                   ("Add (ND)", "XnnpackBackend", "ELEMENTWISE", 0.001, 10.0, 2, 1.0),
                   ("native_call_relu.out", "portable", "ACTIVATION", 0.0009, 9.0, 2, 1.0)]
    assert b["backends"]["leaf_time"] == {"XnnpackBackend": {"avg_ms": 0.0035, "pct_of_e2e": 35.0},
                                          "portable": {"avg_ms": 0.0028, "pct_of_e2e": 28.0}}
    assert (b["backends"]["framework_overhead_ms"], b["backends"]["delegate_overhead_ms"],
            b["backends"]["unattributed_ms"], b["backends"]["delegate_calls_per_run"]) == (0.0002, 0.0015, 0.002, 1.0)
    assert [o["operator"] for o in b["portable_hotspots"]] == ["native_call_convolution.out", "native_call_relu.out"]
    assert b["notes"] == [FC_NOTE]                                   # Fully Connected beside a convolution
    top = breakdown(prof, top=1)
    assert [o["operator"] for o in top["operators"]] == ["Fully Connected (NC, F32) GEMM"]
    assert len(top["operators_all"]) == 4
    assert [o["operator"] for o in top["portable_hotspots"]] == ["native_call_convolution.out"]


def test_summary_split(prof):
    s = summary_split(prof)
    assert s["categories_ms"] == {"CONV": 0.0019, "GEMM": 0.0025, "ELEMENTWISE": 0.001, "ACTIVATION": 0.0009,
                                  "framework_overhead": 0.0002, "delegate_overhead": 0.0015, "unattributed": 0.002}
    assert s["backends_ms"] == {"portable": 0.0028, "XnnpackBackend": 0.0035, "framework_overhead": 0.0002,
                                "delegate_overhead": 0.0015, "unattributed": 0.002}


def test_per_run_operators_after_warmup(prof):
    lines = EventLines(prof)
    per = per_run_operators(prof, lines)
    assert {k: v.tolist() for k, v in per.items()} == {
        "native_call_convolution.out": [1900.0, 1900.0], "Fully Connected (NC, F32) GEMM": [2000.0, 3000.0],
        "Add (ND)": [1000.0, 1000.0], "native_call_relu.out": [900.0, 900.0]}
    assert {k: v.tolist() for k, v in per_run_operators(prof, lines, skip=1).items()}["Fully Connected (NC, F32) GEMM"] \
        == [3000.0]
    assert per_run_operators(prof, lines, skip=2) == {}


def test_graph_breaks_of_the_mixed_run(prof):
    g = graph_breaks(prof)
    assert [(s["index"], s["kind"], s["backend"], s["calls"], s["ops"], s["mean_ms"], s["run0_ms"])
            for s in g["segments"]] == [
        (0, "portable", "portable", 1, ["native_call_convolution.out"], 0.002, 0.002),
        (1, "delegated", "XnnpackBackend", 1, ["2 delegate ops"], 0.005, 0.005),
        (2, "portable", "portable", 1, ["native_call_relu.out"], 0.001, 0.001)]
    assert g["segments"][1]["op_names"] == ["Fully Connected (NC, F32) GEMM #1", "Add (ND) #1"]
    assert (g["portable_islands"], g["portable_islands_between_delegates"], g["transitions"],
            g["runs_with_run0_structure"], g["runs"]) == (2, 0, 2, 2, 2)


def island_run(t0: int, second_delegate: bool = True) -> Run:
    """delegate, two portable calls (one island), delegate: an island between delegates."""
    ev = [PE(None, t0 + 110, t0 + 190, 0, dd_str="Add (ND) #1"), PE("DELEGATE_CALL", t0 + 100, t0 + 200, 0),
          PE("native_call_relu.out", t0 + 310, t0 + 390, 1), PE("OPERATOR_CALL", t0 + 300, t0 + 400, 1),
          PE("OPERATOR_CALL", t0 + 500, t0 + 600, 2)]
    if second_delegate:
        ev += [PE(None, t0 + 710, t0 + 790, 3, dd_str="Add (ND) #2"), PE("DELEGATE_CALL", t0 + 700, t0 + 800, 3)]
    ev.append(PE("Method::execute", t0, t0 + 1000, -1, chain_index=-1))
    return Run("Execute", ev)


def test_graph_breaks_island_between_delegates_and_runs_of_another_shape(tmp_path):
    p = tmp_path / "i.etdp"
    p.write_bytes(build([island_run(0), island_run(10_000), island_run(20_000, second_delegate=False)]))
    g = graph_breaks(load_etdump(p, warn=False))
    assert [(s["kind"], s["calls"], s["ops"]) for s in g["segments"]] == [
        ("delegated", 1, ["1 delegate ops"]), ("portable", 2, ["native_call_relu.out", "OPERATOR_CALL"]),
        ("delegated", 1, ["1 delegate ops"])]
    assert g["segments"][1]["mean_ms"] == 0.0002 and g["segments"][1]["run0_ms"] == 0.0002
    assert (g["portable_islands"], g["portable_islands_between_delegates"], g["transitions"]) == (1, 1, 2)
    assert (g["runs_with_run0_structure"], g["runs"]) == (2, 3)
    # consecutive delegate calls stay separate segments
    q = tmp_path / "d.etdp"
    q.write_bytes(build([Run("Execute", [PE("DELEGATE_CALL", 100, 200, 0), PE("DELEGATE_CALL", 300, 400, 1),
                                         PE("Method::execute", 0, 500, -1, chain_index=-1)])]))
    g = graph_breaks(load_etdump(q, warn=False))
    assert [s["kind"] for s in g["segments"]] == ["delegated", "delegated"] and g["transitions"] == 0
    assert g["portable_islands"] == 0


def test_events_outside_the_operator_nesting_are_leaves_of_execute(tmp_path):
    # a kernel without its OPERATOR_CALL and two user scopes: each is a leaf under Method::execute
    run = Run("Execute", [PE("native_call_relu.out", 150, 250, 0), PE("my_scope", 100, 400, 0),
                          PE("my_leaf", 500, 600, 1), PE("Method::execute", 0, 1000, -1, chain_index=-1)])
    p = tmp_path / "s.etdp"
    p.write_bytes(build([run]))
    pr = load_etdump(p, warn=False)
    mat, _e2e, _ = per_run_lines(pr, EventLines(pr))
    col = {ln: int(mat[0, LINES.index(ln)]) for ln in LINES if mat[0, LINES.index(ln)]}
    assert col == {"ACTIVATION": 100, "OTHER": 400, "unattributed": 500}
    b = breakdown(pr)
    assert [o["operator"] for o in b["other_top"]] == ["my_scope", "my_leaf"]
    assert b["notes"] == []                                          # OTHER is 40 %: not dominant
    g = graph_breaks(pr)
    assert [(s["kind"], s["calls"], s["ops"]) for s in g["segments"]] == [("portable", 2, ["my_scope", "my_leaf"])]


def test_other_dominates_note(tmp_path):
    run = Run("Execute", [PE("mystery_op", 100, 800, 0), PE("native_call_relu.out", 850, 900, 1),
                          PE("OPERATOR_CALL", 820, 950, 1), PE("Method::execute", 0, 1000, -1, chain_index=-1)])
    p = tmp_path / "o.etdp"
    p.write_bytes(build([run]))
    b = breakdown(load_etdump(p, warn=False))
    assert b["notes"] == ["OTHER dominates: inspect mystery_op before recommending backend work"]
    run = Run("Execute", [PE("mystery_op", 100, 600, 0), PE("Method::execute", 0, 1000, -1, chain_index=-1)])
    p.write_bytes(build([run]))
    assert breakdown(load_etdump(p, warn=False))["notes"] == []          # exactly half: not more than half


def _load(tmp_path, runs, name="x.etdp"):
    p = tmp_path / name
    p.write_bytes(build(runs))
    return load_etdump(p, warn=False)


def test_an_event_without_a_valid_duration_counts_zero(tmp_path):
    # a kernel timestamp at 2^62 is out of range: no duration; its operator call keeps the whole 300 ns
    pr = _load(tmp_path, [Run("Execute", [PE("native_call_relu.out", 2 ** 62 + 10, 2 ** 62 + 20, 0),
                                          PE("OPERATOR_CALL", 100, 400, 0),
                                          PE("Method::execute", 0, 1000, -1, chain_index=-1)])])
    assert pr.events["duration_ns"].to_list()[0] is None
    b = breakdown(pr)
    assert [(o["operator"], o["avg_ms"], o["event_count"]) for o in b["operators_all"]] == [("native_call_relu.out", 0.0, 1)]
    assert per_run_operators(pr, EventLines(pr))["native_call_relu.out"].tolist() == [0.0]
    assert summary_split(pr)["backends_ms"]["portable"] == 0.0
    assert graph_breaks(pr)["segments"][0]["run0_ms"] == 0.0003


def test_a_profile_without_execute_runs(tmp_path, prof):
    none = prof.select_runs([False, False])
    b = breakdown(none)
    assert (b["runs"], b["e2e_ms"], b["accounting_check_max_abs_ns"]) == (0, {"mean": 0.0, "median": None}, 0)
    assert (b["backends"]["framework_overhead_ms"], b["backends"]["delegate_overhead_ms"],
            b["backends"]["unattributed_ms"]) == (0.0, 0.0, 0.0)
    assert b["operators_all"] == [] and b["categories"] == [
        {"line": ln, "kind": "overhead", "total_ms": 0.0, "avg_ms": 0.0, "pct_of_e2e": None, "operator_count": 0,
         "executions_per_run": 0.0} for ln in ("framework_overhead", "delegate_overhead", "unattributed")]
    assert graph_breaks(none) == {"segments": [], "portable_islands": 0, "transitions": 0}
    assert summary_split(none) == {"categories_ms": {}, "backends_ms": {}}


def test_a_run_with_nothing_inside_execute(tmp_path):
    pr = _load(tmp_path, [Run("Execute", [PE("Method::execute", 0, 1000, -1, chain_index=-1)])])
    assert graph_breaks(pr) == {"segments": [], "portable_islands": 0, "transitions": 0}
    b = breakdown(pr)
    assert b["operators_all"] == [] and (b["categories"][0]["line"], b["categories"][0]["avg_ms"]) == ("unattributed", 0.001)
    one = _load(tmp_path, [Run("Execute", [PE("my_leaf", 100, 200, 0),
                                           PE("Method::execute", 0, 1000, -1, chain_index=-1)])], "one.etdp")
    assert [o["operator"] for o in breakdown(one)["operators_all"]] == ["my_leaf"]     # a single leaf is a table


def test_default_top_is_fifteen_operators(tmp_path):
    ev = [PE(f"op_{k:02d}", 100 + 50 * k, 120 + 50 * k, k) for k in range(16)]
    pr = _load(tmp_path, [Run("Execute", [*ev, PE("Method::execute", 0, 2000, -1, chain_index=-1)])])
    b = breakdown(pr)
    assert len(b["operators"]) == 15 and len(b["operators_all"]) == 16 and len(b["other_top"]) == 15
    assert b["notes"] == []                                          # 16 × 20 ns of 2000: OTHER is 16 %


def test_other_note_names_three_and_fc_note_needs_both(tmp_path):
    ev = [PE(f"mystery_{k}", 100 + 200 * k, 280 - 10 * k + 200 * k, k) for k in range(4)]   # 180, 170, 160, 150 ns
    pr = _load(tmp_path, [Run("Execute", [*ev, PE("Method::execute", 0, 1000, -1, chain_index=-1)])])
    assert breakdown(pr)["notes"] == ["OTHER dominates: inspect mystery_0, mystery_1, mystery_2 before recommending "
                                      "backend work"]
    conv = _load(tmp_path, [Run("Execute", [PE("native_call_convolution.out", 150, 250, 0), PE("OPERATOR_CALL", 100, 300, 0),
                                            PE(None, 410, 490, 1, dd_str="Add (ND) #1"), PE("DELEGATE_CALL", 400, 500, 1),
                                            PE("Method::execute", 0, 1000, -1, chain_index=-1)])], "c.etdp")
    assert breakdown(conv)["notes"] == []                            # a convolution but no Fully Connected
    fc = _load(tmp_path, [Run("Execute", [PE(None, 410, 490, 1, dd_str="Fully Connected (NC, F32) GEMM #1"),
                                          PE(None, 510, 590, 1, dd_str="Add (ND) #1"), PE("DELEGATE_CALL", 400, 600, 1),
                                          PE("Method::execute", 0, 1000, -1, chain_index=-1)])], "f.etdp")
    assert breakdown(fc)["notes"] == []                              # Fully Connected but no convolution


def test_a_top_level_call_without_a_valid_duration(tmp_path):
    pr = _load(tmp_path, [Run("Execute", [PE("native_call_relu.out", 150, 250, 0),
                                          PE("OPERATOR_CALL", 2 ** 62 + 100, 2 ** 62 + 400, 0),
                                          PE("Method::execute", 0, 1000, -1, chain_index=-1)])])
    g = graph_breaks(pr)
    assert g["segments"][0]["run0_ms"] == 0.0 and g["segments"][0]["mean_ms"] == 0.0
