"""Graph interruptions from op placements: a hand-worked plan checked field by field, and random plans against a
second, independent way of finding the runs (a regular expression over the device string)."""

from __future__ import annotations

import random
import re

import pytest

from edgeprof.analysis.ane_islands import SOFT_REASON, Placement, focus_device, islands, summary


def P(i, dev, *, fn="main", cost=0.0, soft=False, rt=None, reason="", const=False, type_=None):
    return Placement(fn, i, f"op{i}", type_ or f"ios18.t{i}", dev, cost, soft, rt, reason, const)


# main: 0 CPU | 1 ANE | 2 const-CPU 3 CPU 4 GPU 5 ? | 6 ANE | 7 CPU | 8 ANE | 9 CPU ; aux: 0 CPU 1 GPU
PLAN = [
    P(0, "CPU", cost=0.01, soft=True, rt=0.5),
    P(1, "ANE", cost=0.5),
    P(2, "CPU", const=True, cost=0.9),                       # const: transparent, counts nowhere
    P(3, "CPU", cost=0.02, reason="Unsupported tensor data type: int32", rt=1.25),
    P(4, "GPU", cost=0.03, soft=True, rt=0.75),
    P(5, "?", cost=0.04),                                     # device not known: transparent
    P(6, "ANE", cost=0.3),
    P(7, "CPU", cost=0.05, reason="Cannot support standalone slice_update"),   # no runtime
    P(8, "ANE", cost=0.1),
    P(9, "CPU", cost=0.06, soft=True, rt=2.0),
    P(0, "CPU", fn="aux", cost=0.07, rt=0.1),
    P(1, "GPU", fn="aux", cost=0.08, soft=True, rt=0.2),
]


def by_span(isl):
    return {(i.function, i.start_index, i.end_index): i for i in isl}


def test_hand_worked_plan():
    got = islands(list(reversed(PLAN)), boundary_ms=300.0)      # input order does not matter
    assert [(i.function, i.start_index, i.end_index, i.id) for i in got] == [
        ("main", 3, 4, 1),   # interruption: 600 + 2.0 ms
        ("main", 7, 7, 2),   # interruption: 600 + 0 ms
        ("main", 9, 9, 0),   # trail: 300 + 2.0
        ("main", 0, 0, 0),   # lead: 300 + 0.5
        ("aux", 0, 1, 0),    # all: 0 + 0.3
    ]
    s = by_span(got)
    a = s[("main", 3, 4)]
    assert (a.path, a.device, a.op_count, a.soft_ops, a.hard_ops, a.missing_runtime_ops) == \
        ("ANE->CPU+GPU->ANE", "CPU+GPU", 2, 1, 1, 0)
    assert a.total_cost == pytest.approx(0.05) and a.runtime_ms == pytest.approx(2.0)
    assert (a.switch_penalty_ms, a.total_penalty_ms) == (600.0, pytest.approx(602.0))
    assert (a.reason, a.first_type, a.last_type, a.is_interruption, a.edge_kind, a.switches) == \
        ("Unsupported tensor data type: int32", "ios18.t3", "ios18.t4", True, "", 2)
    assert a.center_percent == pytest.approx(((3 + 4) / 2 + 0.5) / 10 * 100)       # 40.0
    b = s[("main", 7, 7)]
    assert (b.path, b.device, b.op_count, b.hard_ops, b.missing_runtime_ops, b.runtime_ms) == \
        ("ANE->CPU->ANE", "CPU", 1, 1, 1, 0.0)
    assert (b.switch_penalty_ms, b.total_penalty_ms, b.center_percent) == (600.0, 600.0, pytest.approx(75.0))
    t = s[("main", 9, 9)]
    assert (t.path, t.edge_kind, t.switch_penalty_ms, t.total_penalty_ms, t.reason, t.switches) == \
        ("ANE->CPU", "trail", 300.0, 302.0, SOFT_REASON, 1)
    assert t.center_percent == pytest.approx(95.0)
    lead = s[("main", 0, 0)]
    assert (lead.path, lead.edge_kind, lead.switch_penalty_ms, lead.total_penalty_ms, lead.soft_ops) == \
        ("CPU->ANE", "lead", 300.0, 300.5, 1)
    assert lead.center_percent == pytest.approx(5.0)
    al = s[("aux", 0, 1)]
    assert (al.path, al.device, al.edge_kind, al.switch_penalty_ms, al.switches, al.soft_ops, al.hard_ops) == \
        ("CPU+GPU", "CPU+GPU", "all", 0.0, 0, 1, 1)
    assert al.total_penalty_ms == pytest.approx(0.3) and al.total_cost == pytest.approx(0.15)
    assert al.reason == "Not supported on ANE"                # a hard op without a logged reason
    assert al.center_percent == pytest.approx(((0 + 1) / 2 + 0.5) / 2 * 100)       # 50.0


def test_summary_of_the_hand_worked_plan():
    s = summary(islands(PLAN, boundary_ms=300.0))
    assert s == {
        "focus_device": "ANE", "non_focus_runs": 5, "graph_interruptions": 2, "edge_runs_ignored": 3,
        "interrupted_ops": 3, "total_non_focus_ops": 7, "interrupted_cost": pytest.approx(0.10),
        "total_non_focus_cost": pytest.approx(0.10 + 0.01 + 0.06 + 0.15), "estimated_switch_tax_ms": 1200.0,
        "estimated_island_time_ms": pytest.approx(2.0), "estimated_total_tax_ms": pytest.approx(1202.0),
        "interrupted_soft_ops": 1, "interrupted_hard_ops": 2, "interrupted_missing_runtime_ops": 1,
    }
    assert summary([], focus="GPU")["focus_device"] == "GPU"


def test_boundary_cost_is_per_switch():
    for b in (0.0, 0.2, 300.0):
        got = by_span(islands(PLAN, boundary_ms=b))
        assert got[("main", 7, 7)].switch_penalty_ms == 2 * b
        assert got[("main", 9, 9)].switch_penalty_ms == b and got[("main", 0, 0)].switch_penalty_ms == b
        assert got[("aux", 0, 1)].switch_penalty_ms == 0.0


def test_order_interruptions_by_penalty_then_runtime_then_start():
    plan = [P(0, "ANE"), P(1, "CPU", rt=1.0), P(2, "ANE"), P(3, "CPU", rt=1.0), P(4, "ANE"), P(5, "CPU", rt=3.0),
            P(6, "ANE"), P(7, "CPU", rt=3.0), P(8, "CPU"), P(9, "ANE")]
    got = islands(plan, boundary_ms=1.0)
    # penalties: 1→3.0, 3→3.0, 5→5.0, 7-8→5.0: equal penalty and runtime → earlier start first
    assert [(i.start_index, i.id) for i in got] == [(5, 1), (7, 2), (1, 3), (3, 4)]
    # runtime breaks a tie in penalty: a lead run (1 switch, 1.0 ms) and a whole-function run (0 switches, 2.0 ms)
    plan = [P(0, "CPU", rt=1.0), P(1, "ANE"), P(0, "CPU", fn="aux", rt=2.0)]
    got = islands(plan, boundary_ms=1.0)
    assert [(i.function, i.total_penalty_ms) for i in got] == [("aux", 2.0), ("main", 2.0)]
    # an edge run with a larger penalty still comes after every interruption
    plan = [P(0, "CPU", rt=100.0), P(1, "ANE"), P(2, "CPU", rt=0.1), P(3, "ANE")]
    assert [(i.start_index, i.is_interruption) for i in islands(plan, boundary_ms=0.0)] == [(2, True), (0, False)]


def test_reason_rules():
    def reason(*ops):
        plan = [P(0, "ANE"), *[P(k + 1, "CPU", soft=s, reason=r) for k, (s, r) in enumerate(ops)], P(len(ops) + 1, "ANE")]
        (i,) = islands(plan, boundary_ms=0.0)
        return i.reason

    assert reason((True, "")) == SOFT_REASON
    assert reason((True, ""), (False, "A")) == "A"                     # hard wins over soft
    assert reason((False, "A"), (True, "")) == "A"
    assert reason((False, "A"), (False, "A")) == "A"
    assert reason((False, "A"), (False, "B")) == "A (+mixed)"
    assert reason((False, "A"), (False, "B"), (False, "C")) == "A (+mixed)"   # marked once
    assert reason((False, ""),) == "Not supported on ANE"
    assert reason((False, ""), (False, "B")) == "Not supported on ANE (+mixed)"
    assert reason((True, "soft ops carry no reason of their own"), (True, "")) == SOFT_REASON


def test_placement_defaults_are_a_hard_op_of_no_cost():
    p = Placement("f", 1, "n", "t", "CPU")
    assert (p.cost, p.ane_supported, p.runtime_ms, p.reason, p.is_const) == (0.0, False, None, "", False)
    (i,) = islands([Placement("f", 0, "a", "t", "ANE"), p, Placement("f", 2, "b", "t", "ANE")], boundary_ms=1.0)
    assert (i.hard_ops, i.soft_ops, i.total_cost, i.missing_runtime_ops, i.reason) == (1, 0, 0.0, 1, "Not supported on ANE")


def test_device_labels():
    def label(*devs):
        plan = [P(0, "ANE"), *[P(k + 1, d) for k, d in enumerate(devs)], P(len(devs) + 1, "ANE")]
        (i,) = islands(plan, boundary_ms=0.0)
        return i.device, i.path

    assert label("CPU") == ("CPU", "ANE->CPU->ANE")
    assert label("GPU") == ("GPU", "ANE->GPU->ANE")
    assert label("GPU", "CPU") == ("CPU+GPU", "ANE->CPU+GPU->ANE")
    assert label("Other") == ("Other", "ANE->Other->ANE")
    assert label("Other", "CPU") == ("CPU", "ANE->CPU->ANE")


def test_gpu_focus():
    plan = [P(0, "GPU"), P(1, "ANE", reason="x"), P(2, "CPU"), P(3, "GPU")]
    got = islands(plan, boundary_ms=1.0, focus="GPU")
    # an ANE op is "other" under GPU focus; the label names CPU/GPU only, as anemll-profile's does
    assert [(i.start_index, i.end_index, i.path, i.device, i.hard_ops) for i in got] == [(1, 2, "GPU->CPU->GPU", "CPU", 2)]
    assert summary(got, focus="GPU")["focus_device"] == "GPU"


@pytest.mark.parametrize("all_units,ane,gpu,expected", [
    (False, [0.1], [0.9, 0.9], "ANE"),            # GPU can be focus only when every compute unit was allowed
    (True, [0.5], [], "ANE"),                     # no GPU op
    (True, [], [0.0], "GPU"),                     # no ANE op
    (True, [0.5], [0.5000001], "GPU"),            # GPU carries more
    (True, [0.5], [0.4999999], "ANE"),
    (True, [0.25, 0.25], [0.5], "ANE"),           # equal cost: the one with more ops (ANE 2 vs GPU 1)
    (True, [0.5], [0.25, 0.25], "GPU"),
    (True, [0.5], [0.5], "GPU"),                  # equal cost and count: GPU
])
def test_focus_device(all_units, ane, gpu, expected):
    plan = [P(k, "ANE", cost=c) for k, c in enumerate(ane)] + [P(100 + k, "GPU", cost=c) for k, c in enumerate(gpu)]
    plan.append(P(200, "CPU", cost=5.0))          # CPU never becomes the focus
    assert focus_device(plan, compute_units_all=all_units) == expected


def _oracle(devs: list[str], boundary: float):
    """Runs found with a regex over the focus/other string ('F' focus, 'N' other, '.' transparent)."""
    s = "".join("." if d in ("?", "const") else "F" if d == "ANE" else "N" for d in devs)
    out = []
    for m in re.finditer(r"N[N.]*N|N", s):
        before, after = s[:m.start()], s[m.end():]
        prev, nxt = "F" in before, "F" in after
        kind = "" if prev and nxt else "all" if not (prev or nxt) else "lead" if nxt else "trail"
        out.append((m.start(), m.end() - 1, m.group().count("N"), kind, boundary * (prev + nxt)))
    return sorted(out)


def test_random_plans_against_a_regex_oracle():
    rng = random.Random(7)
    for _ in range(400):
        n = rng.randint(1, 30)
        devs = [rng.choice(["ANE", "ANE", "CPU", "GPU", "?", "const"]) for _ in range(n)]
        plan = [P(i, "CPU" if d == "const" else d, const=d == "const", rt=0.0) for i, d in enumerate(devs)]
        got = sorted((i.start_index, i.end_index, i.op_count, i.edge_kind, i.switch_penalty_ms)
                     for i in islands(plan, boundary_ms=2.5))
        assert got == _oracle(devs, 2.5), devs
