"""The launch schedule: interleaved rounds, seeded, balanced; the kit's file names with the launch index."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from edgeprof.collect.config import CollectionConfig, Experiment
from edgeprof.collect.fingerprint import cpuinfo_facts, describe_machine
from edgeprof.collect.plan import OVERHEAD_LAUNCHES, schedule, stem_of
from edgeprof.io.runfolder import describe


def _cfg(seed=0, **kw) -> CollectionConfig:
    return CollectionConfig(experiments=[
        Experiment("portable", Path("/m/toycnn_portable.pte"), threads=(1, 2), launches=kw.get("a", 3)),
        Experiment("xnn", Path("/m/toycnn_xnn.pte"), threads=(1,), launches=kw.get("b", 3)),
        Experiment("q8", Path("/m/q8.pte"), threads=(1,), launches=kw.get("c", 3), mode=kw.get("mode", "timing")),
    ], seed=seed)


def test_every_round_runs_each_configuration_once_in_a_seeded_order():
    plan = schedule(_cfg(seed=3), Path("/r"))
    assert len(plan) == 4 * 3 and [p.position for p in plan] == list(range(1, 13))
    keys = {"portable_t1", "portable_t2", "xnn_t1", "q8_t1"}
    for r in (1, 2, 3):
        rnd = [p for p in plan if p.round == r]
        assert {p.config_key for p in rnd} == keys and all(p.launch == r for p in rnd)
    # after any number of whole rounds every configuration has run equally often: drift hits all alike
    for n in (4, 8, 12):
        assert set(Counter(p.config_key for p in plan[:n]).values()) == {n // 4}
    orders = [tuple(p.config_key for p in plan if p.round == r) for r in (1, 2, 3)]
    assert len(set(orders)) > 1  # shuffled per round, not A B C D A B C D
    again = schedule(_cfg(seed=3), Path("/r"))
    assert [(p.config_key, p.launch) for p in again] == [(p.config_key, p.launch) for p in plan]
    other = schedule(_cfg(seed=4), Path("/r"))
    assert [p.config_key for p in other] != [p.config_key for p in plan]


def test_configurations_with_fewer_launches_drop_out_of_later_rounds():
    plan = schedule(_cfg(a=1, b=2, c=4), Path("/r"))
    c = Counter(p.config_key for p in plan)
    assert c == {"portable_t1": 1, "portable_t2": 1, "xnn_t1": 2, "q8_t1": 4}
    assert max(p.round for p in plan) == 4


def test_overhead_launches_join_the_first_rounds_only_for_timing():
    plan = schedule(_cfg(mode="xnntrace"), Path("/r"), overhead_check=True)
    off = [p for p in plan if not p.etdump_on]
    assert Counter(p.config_key for p in off) == {"portable_t1": 2, "portable_t2": 2, "xnn_t1": 2}
    assert {p.round for p in off} == set(range(1, OVERHEAD_LAUNCHES + 1))
    assert all(p.etdump is None and p.log.name.endswith("_noetdump_latency.log") for p in off)
    q8 = next(p for p in plan if p.experiment.name == "q8")
    assert q8.etdump is None and q8.xnntrace.name == "q8_t1_l1_xnntrace.log"


@pytest.mark.parametrize("exp, model, expect", [
    ("mac_sme2_on", "mnv3_q8.pte", "mnv3_q8_mac_sme2_on_t4_l2"),
    ("toycnn_xnn", "toycnn_xnn.pte", "toycnn_xnn_t4_l2"),
])
def test_file_names_read_back_through_the_kit_grammar(exp, model, expect):
    e = Experiment(exp, Path("/m") / model)
    stem = stem_of(e, 4, 2)
    assert stem == expect
    rf = describe(Path("/o/out_x/runs/mac") / exp / f"{stem}.etdump")
    assert (rf.experiment, rf.threads, rf.launch, rf.platform) == (exp, 4, 2, "mac")
    assert rf.model == (None if model[:-4] == exp else model[:-4])


def test_cpu_facts_from_arm_and_x86_cpuinfo():
    arm = cpuinfo_facts("processor\t: 0\nFeatures\t: fp asimd asimddp sve2 i8mm bf16 sme sme2\nCPU part\t: 0xd87\n")
    assert arm == {"cpu_model": None, "cpu_flags": ["asimddp", "bf16", "i8mm", "sme", "sme2", "sve2"],
                   "cpu_parts": ["0xd87"]}
    x86 = cpuinfo_facts("processor\t: 0\nmodel name\t: Intel(R) Xeon(R)\nflags\t\t: fpu avx2 fma avx512f amx_tile\n")
    assert x86["cpu_model"] == "Intel(R) Xeon(R)" and x86["cpu_flags"] == ["amx_tile", "avx2", "avx512f", "fma"]
    assert describe_machine({"model": "Pixel 9 Pro", **arm}) == "Pixel 9 Pro — 0xd87 (bf16, i8mm, sme, sme2)"
