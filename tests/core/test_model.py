"""The normalized profile's own operations on small hand-made tables: execute-run slicing, run selection with
parent links remapped, valid runs, cached name groups, pandas export; and the report models' names and defaults."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from edgeprof.ane_model import AneCostPlan, AneIsland, AneProfile
from edgeprof.model import KernelLog, Profile

EMPTY = pl.DataFrame({"run_index": pl.Series([], dtype=pl.Int32)})


def make(run_index, parent=None, runs=None, names=None):
    n = len(run_index)
    ev = pl.DataFrame({
        "run_index": pl.Series(run_index, dtype=pl.Int32),
        "parent": pl.Series(parent if parent is not None else [None] * n, dtype=pl.Int64),
        "name": pl.Series(names or [f"e{k}" for k in range(n)], dtype=pl.Categorical),
        "row": pl.Series(range(n), dtype=pl.Int64),
    })
    if runs is None:
        ids = sorted({r for r in run_index if r >= 0})
        runs = {"run_index": [-1, *ids], "e2e_ns": [None] + [1000 * (r + 1) for r in ids],
                "e2e_source": [None] + ["method_execute"] * len(ids)}
    return Profile("t", ev, pl.DataFrame(runs, schema_overrides={"run_index": pl.Int32, "e2e_ns": pl.Int64}),
                   EMPTY, EMPTY)


@pytest.mark.parametrize("run_index", [[-1, 0, 0, 1], [0, 0, 1, -1], [-1, 0, -1, 1], [0, -1, 1, -1, 2], [1, 0, -1, 0],
                                       [-1, -1], [0], [-1, 2, 2, -1]])
def test_execute_events_are_the_execute_rows_in_order(run_index):
    p = make(run_index)
    assert p.execute_events()["row"].to_list() == [k for k, r in enumerate(run_index) if r >= 0]


def test_latency_source_looks_at_every_execute_run():
    p = make([-1, 0, 1], runs={"run_index": [-1, 0, 1], "e2e_ns": [5, 10, 20],
                               "e2e_source": ["top_level_events", "top_level_events", "method_execute"]})
    assert p.latency_source == "top_level_events"             # run 0 has no Method::execute
    p = make([-1, 0, 1], runs={"run_index": [-1, 0, 1], "e2e_ns": [5, 10, 20],
                               "e2e_source": ["top_level_events", "method_execute", "method_execute"]})
    assert p.latency_source == "method_execute"               # the load block does not count
    assert list(p.latency_ns()) == [10.0, 20.0]


def test_select_runs_renumbers_and_remaps_parents():
    #        row: 0   1   2   3   4   5   6   7
    run_index = [-1, 0, 0, 1, 1, 1, 2, 2]
    parent = [None, None, 1, None, 3, 4, None, 6]
    p = make(run_index, parent)
    q = p.select_runs([True, False, True])
    assert q.events["row"].to_list() == [0, 1, 2, 6, 7]
    assert q.events["run_index"].to_list() == [-1, 0, 0, 1, 1]
    assert q.events["parent"].to_list() == [None, None, 1, None, 3]     # row 7's parent 6 is now row 3
    assert q.runs["run_index"].to_list() == [-1, 0, 1] and q.runs["e2e_ns"].to_list() == [None, 1000, 3000]
    assert q.n_runs == 2
    # dropping the first run shifts every later parent
    q = p.select_runs([False, True, True])
    assert q.events["row"].to_list() == [0, 3, 4, 5, 6, 7]
    assert q.events["parent"].to_list() == [None, None, 1, 2, None, 4]
    assert q.events["run_index"].to_list() == [-1, 0, 0, 0, 1, 1]
    q = p.select_runs([True, True, False])
    assert q.events["run_index"].to_list() == [-1, 0, 0, 1, 1, 1] and q.events["parent"].to_list() == [None, None, 1, None, 3, 4]
    one = make([0]).select_runs([False])
    assert one.events.height == 0 and one.n_runs == 0
    assert p.select_runs([True, True, True]) is p
    none = p.select_runs([False, False, False])
    assert none.events["row"].to_list() == [0] and none.n_runs == 0


def test_leading_and_invalid_runs_are_counted():
    p = make([-1, 0, 1, 2, 3], runs={"run_index": [-1, 0, 1, 2, 3], "e2e_ns": [None, 100, 0, None, 50],
                                     "e2e_source": [None] + ["method_execute"] * 4})
    v = p.valid_runs()
    assert v.events["row"].to_list() == [0, 1, 4] and v.runs_invalid == 2 and list(v.latency_ns()) == [100.0, 50.0]
    w = p.without_leading_runs(1)
    assert w.runs_dropped == 1 and w.events["row"].to_list() == [0, 2, 3, 4]
    assert w.without_leading_runs(1).runs_dropped == 2
    assert p.without_leading_runs(0) is p and p.without_leading_runs(-3) is p
    assert p.without_leading_runs(99).n_runs == 0
    ok = make([-1, 0, 1])
    assert ok.valid_runs() is ok and ok.runs_invalid == 0


def test_name_groups_follow_a_replaced_event_table():
    # the groups' order follows Polars' process-wide categorical codes (strings another table interned first come
    # first), so only the grouping itself is promised: each event's name through its id, each id's first row
    p = make([0, 0, 1], names=["a", "b", "a"])
    ids, first, names = p.name_groups()
    assert [names[i] for i in ids] == ["a", "b", "a"] and sorted(names) == ["a", "b"]
    assert sorted(first) == [0, 1] and all(ids[f] == k for k, f in enumerate(first))
    assert p.name_groups()[2] is names                           # cached
    p.events = p.events.with_columns(pl.Series("name", ["c", "c", "d"], dtype=pl.Categorical))
    ids, _, names = p.name_groups()
    assert [names[i] for i in ids] == ["c", "c", "d"]
    p.events = p.events.with_columns(pl.Series("op_types", [["x"], ["x"], ["y"]]))
    ids, _, lists = p.op_type_groups()
    assert [lists[i] for i in ids] == [["x"], ["x"], ["y"]]
    p.events = p.events.with_columns(pl.Series("op_types", [["z"], ["w"], ["z"]]))
    ids, first, lists = p.op_type_groups()
    assert [lists[i] for i in ids] == [["z"], ["w"], ["z"]] and sorted(first) == [0, 1]


def test_to_pandas_column_kinds():
    pd = pytest.importorskip("pandas")
    df = pl.DataFrame({
        "ls": pl.Series([["a"], [], None], dtype=pl.List(pl.String)), "li": pl.Series([[1], [2, 3], []]),
        "s": ["x", None, "z"], "c": pl.Series(["p", "q", "p"], dtype=pl.Categorical),
        "e": pl.Series(["u", "v", "u"], dtype=pl.Enum(["u", "v"])),
        "i": pl.Series([1, None, 3], dtype=pl.Int64), "u8": pl.Series([1, None, 2], dtype=pl.UInt8),
        "f": [1.5, None, 2.5], "n": pl.Series([4, 5, 6], dtype=pl.Int32)})
    out = Profile("t", df, df, df, df).to_pandas()
    assert out["ls"].tolist() == [["a"], [], None] and out["li"].tolist() == [[1], [2, 3], []]
    assert out["s"].tolist() == ["x", None, "z"] and out["c"].tolist() == ["p", "q", "p"] and out["e"].tolist() == ["u", "v", "u"]
    assert all(out[k].dtype == object for k in ("ls", "li", "s", "c", "e"))
    assert str(out["i"].dtype) == "Int64" and out["i"].isna().tolist() == [False, True, False]
    assert str(out["u8"].dtype) == "UInt8" and out["u8"].tolist()[2] == 2
    assert out["n"].dtype == np.int32 and np.isnan(out["f"][1])
    assert isinstance(out, pd.DataFrame)


def test_report_model_names_and_defaults():
    prof = AneProfile(source="runs/x/model.json", version="", model={}, compute={}, status={}, summary={}, measured={},
                      placements=[], interruptions_summary={}, interruptions=[], edge_runs=[], op_types=[],
                      op_type_totals={}, top_operations=[], conv_detail=[], high_cost_ops=[], ane_op_types={},
                      cpu_op_types={}, unsupported_reasons={}, fallback_ops=[])
    assert prof.name == "model.json"
    assert AneProfile(**{**prof.__dict__, "model": {"display_name": "m.mlpackage"}}).name == "m.mlpackage"
    plan = AneCostPlan(source="a/b/plan.json", model="", operations=[], total_cost=0, total_ops=0, with_device=0,
                       no_device=0)
    assert plan.name == "plan.json" and AneCostPlan(**{**plan.__dict__, "model": "x/y/m.mlmodelc"}).name == "m.mlmodelc"
    assert AneCostPlan(**{**plan.__dict__, "model": "m.mlmodelc"}).name == "m.mlmodelc"
    log = KernelLog("x")
    assert (log.lines, log.xnnpack_lines, log.truncated_last_line, log.formats) == (0, 0, False, {})
    isl = AneIsland(1, "f", 0, 0, "p", "CPU", 1, 0.0, 0.0, 0.0, 0.0, 0, 1, 0, "", "t", "t", True, "")
    assert isl.center_percent == 0.0
    p = Profile("t", EMPTY, EMPTY, EMPTY, EMPTY)
    assert (p.version, p.file_size, p.sha256, p.etrecord, p.allocators, p.warnings) == (0, 0, "", None, [], [])


def test_run_rows_validity_at_one_nanosecond_and_island_switches():
    p = make([-1, 0, 1, 1, 2])
    assert p.run(1)["row"].to_list() == [2, 3] and p.run(-1)["row"].to_list() == [0]
    p = make([-1, 0, 1], runs={"run_index": [-1, 0, 1], "e2e_ns": [None, 1, 0], "e2e_source": [None, "m", "m"]})
    assert p.valid_runs().n_runs == 1 and p.valid_runs().runs["e2e_ns"].to_list() == [None, 1]

    def isl(inter, edge):
        return AneIsland(0, "f", 0, 0, "p", "CPU", 1, 0.0, 0.0, 0.0, 0.0, 0, 1, 0, "", "t", "t", inter, edge)
    assert [isl(True, "").switches, isl(False, "lead").switches, isl(False, "trail").switches,
            isl(False, "all").switches, isl(False, "").switches] == [2, 1, 1, 0, 0]
    prof = AneProfile(source="model.json", version="", model={}, compute={}, status={}, summary={}, measured={},
                      placements=[], interruptions_summary={}, interruptions=[], edge_runs=[], op_types=[],
                      op_type_totals={}, top_operations=[], conv_detail=[], high_cost_ops=[], ane_op_types={},
                      cpu_op_types={}, unsupported_reasons={}, fallback_ops=[])
    assert prof.name == "model.json"                          # no folder in the path
    plan = AneCostPlan(source="plan.json", model="", operations=[], total_cost=0, total_ops=0, with_device=0,
                       no_device=0)
    assert plan.name == "plan.json" and AneCostPlan(**{**plan.__dict__, "model": "m.mlmodelc"}).name == "m.mlmodelc"


def test_op_type_groups_follow_a_run_selection_without_hashing_the_lists(monkeypatch):
    """Selecting runs keeps each kept event's op-type group (a group no kept event has: first row −1), checked
    against the kept events' own lists; the list column is not hashed again."""
    import edgeprof._ids as ids_mod

    p = make([-1, 0, 0, 1, 1, 2], names=["i", "a", "b", "a", "b", "a"])
    lists = [["init"], ["conv"], ["add", "relu"], ["conv"], ["add", "relu"], ["gemm"]]
    p.events = p.events.with_columns(pl.Series("op_types", lists))
    p.runs = p.runs.with_columns(pl.Series("e2e_ns", [None, 5, 0, 7]))
    p.op_type_groups()
    calls = []
    real = ids_mod.distinct_ids
    monkeypatch.setattr(ids_mod, "distinct_ids", lambda s: calls.append(s.name) or real(s))
    for sel in (p.valid_runs(), p.without_leading_runs(1), p.without_leading_runs(2)):
        ids, first, groups = sel.op_type_groups()
        kept = sel.events["op_types"].to_list()
        assert [groups[i] for i in ids] == kept
        assert all(f == -1 or (ids[f] == g and f == kept.index(groups[g])) for g, f in enumerate(first))
        assert sorted(groups[g] for g, f in enumerate(first) if f >= 0) == sorted(map(list, {tuple(x) for x in kept}))
    assert "op_types" not in calls
    assert p.without_leading_runs(2).op_type_groups()[1].tolist().count(-1) == 2  # conv and add/relu: none left
