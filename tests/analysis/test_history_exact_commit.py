"""A change is reported at the commit it happened — exactly, not a neighbour: the detector on constructed series
with a known step at every position it can confirm, and the whole path (timeline files → ingest → history) naming
the commit the step came with and the one before it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from edgeprof import api
from edgeprof.analysis.history import CONFIRM_AFTER, detect


@pytest.mark.parametrize("factor", [1.5, 0.7])
def test_the_detector_puts_a_clear_step_at_its_index_wherever_it_is(factor):
    rng = np.random.default_rng(29)
    n, sd = 20, 0.02
    for k in range(2, n - CONFIRM_AFTER):
        for _ in range(5):
            y = math.log(10.0) + sd * rng.standard_normal(n)
            y[k:] += math.log(factor)
            found = [c for c in detect(y, np.full(n, sd * sd), threshold=0.02) if c["status"] == "confirmed"]
            assert [c["index"] for c in found] == [k], (k, [c["index"] for c in found])
            assert found[0]["direction"] == ("regression" if factor > 1 else "improvement")


def _launch(path, median_ms: float, rng, runs: int = 30) -> None:
    ms = median_ms * np.exp(0.01 * rng.standard_normal(runs))
    path.write_text("name,duration_ms,run_index\n" + "".join(f"Method::execute,{float(v)!r},{i}\n" for i, v in enumerate(ms)))


@pytest.mark.parametrize("step_at", [3, 12])
def test_history_names_the_commit_of_the_step_and_the_one_before(tmp_path, step_at):
    rng = np.random.default_rng(step_at)
    store = tmp_path / "h.duckdb"
    commits = [f"c{k:02d}" for k in range(16)]
    for k, commit in enumerate(commits):
        f = tmp_path / f"m_{commit}_exec_all_runs_timeline.csv"
        _launch(f, 10.0 * (1.4 if k >= step_at else 1.0), rng)
        api.ingest([f], store=store, commit=commit, time=f"2026-11-01T00:{k:02d}:00", model="m")
    doc = api.history(store).data
    changes = [c for s in doc["series"] for c in s["changes"]]
    assert len(changes) == 1
    c = changes[0]
    assert (c["commit_after"], c["commit_before"]) == (commits[step_at], commits[step_at - 1])
    assert c["status"] == "confirmed" and f"at {commits[step_at]} (after {commits[step_at - 1]})" in c["statement"]
