"""Comparability: what both arms recorded; the variable under test; what invalidates a verdict."""

from __future__ import annotations

import pytest

from edgeprof.analysis.comparability import comparability

BASE = {"experiment": "a", "program": "p1", "runner": "r1", "device": "Pixel 9 Pro", "cpu_model": "0xd87",
        "cpu_flags": "sme2", "threads": 1, "threads_in_effect": 1, "core_mask": "0x80", "governor": "schedutil",
        "runtime": "executorch 1.5.1"}


def _with(**kw):
    return {**BASE, **kw}


@pytest.mark.parametrize("cand, comparable, variable, critical", [
    (_with(experiment="b", program="p2"), True, ["experiment", "program"], []),
    (_with(threads=4, threads_in_effect=4), True, ["threads"], []),             # threads alone: under test
    (_with(device="Galaxy S25", cpu_model="0xd85"), True, ["device"], []),      # device alone: under test
    (_with(experiment="b", threads=4), False, ["experiment"], ["threads"]),     # two things at once
    (_with(program="p2", device="Galaxy S25"), False, ["program"], ["device"]),
    (_with(runner="r2", cpu_model="0xd85"), False, ["runner"], ["cpu_model"]),
    (_with(device="Galaxy S25", threads=4), False, ["device", "threads"], ["device", "threads"]),
    (_with(experiment="b", governor="performance", runtime="executorch 1.6"), True, ["experiment"], []),
])
def test_variable_under_test_and_what_invalidates(cand, comparable, variable, critical):
    r = comparability([BASE, BASE], [cand])
    assert r["comparable"] is comparable and r["variable_under_test"] == variable
    assert r["critical_differences"] == critical
    if not comparable:
        assert r["statement"].startswith("not comparable: the arms also differ in")


def test_unknown_values_are_never_differences():
    r = comparability([{"experiment": "a", "threads": 1}], [{"experiment": "b", "threads": None, "device": "X"}])
    assert r["comparable"] and r["variable_under_test"] == ["experiment"]
    assert not any(row["differs"] for row in r["rows"] if row["aspect"] in ("threads", "device"))
    bare = comparability([{"experiment": "a", "threads": 1}], [{"experiment": "b", "threads": 1}])
    assert not bare["recorded"]  # nothing but names: no comparability table is shown


def test_other_differences_are_listed():
    r = comparability([BASE], [_with(experiment="b", governor="performance")])
    assert r["other_differences"] == ["governor"] and "also differ: governor" in r["statement"]
