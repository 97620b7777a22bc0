"""One threshold rule for every command that takes a verdict threshold δ — compare, plan, report (a fraction in
[0, 1)) and history (in [0, 10)) — through the API as through the CLI, tested at its boundaries."""

from __future__ import annotations

import pytest
from testdata import DATA

from edgeprof import api
from edgeprof.api._common import checked_threshold
from edgeprof.errors import UsageError

A = DATA / "ort" / "cnn_cpu_t1_l1.ort.json"
B = DATA / "ort" / "cnn_cpu_t2_l1.ort.json.gz"


@pytest.mark.parametrize("value,upper,ok", [(0, 1, True), (0.0, 1, True), (0.999999, 1, True), (1.0, 1, False),
                                            (-1e-12, 1, False), (9.99, 10, True), (10.0, 10, False),
                                            (float("nan"), 1, False), (True, 1, False), ("0.02", 1, False)])
def test_the_rule_at_its_boundaries(value, upper, ok):
    if ok:
        assert checked_threshold(value, upper) == float(value)
    else:
        with pytest.raises(UsageError, match=r"threshold must be a fraction in \[0, "):
            checked_threshold(value, upper)


@pytest.mark.parametrize("call", [
    lambda t: api.compare([A], [B], threshold=t),
    lambda t: api.plan([A], effect=0.03, threshold=t),
    lambda t: api.report([A, B], threshold=t),
], ids=["compare", "plan", "report"])
def test_every_command_refuses_a_negative_threshold_and_takes_zero(call, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="threshold must be a fraction"):
        call(-0.05)
    call(0.0)


def test_history_takes_its_wider_range(tmp_path):
    store = tmp_path / "h.duckdb"
    api.ingest([A], store=store, commit="c1")
    with pytest.raises(UsageError, match=r"\[0, 10\)"):
        api.history(store, threshold=-0.01)
    api.history(store, threshold=0.0)
