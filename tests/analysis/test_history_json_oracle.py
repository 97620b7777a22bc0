"""Every key of `history` (the document, a series, a point, a change and its attribution) on a store of launches
whose runs are known — 14 commits, one launch each, a 1.4× step at the ninth — against numpy on those runs: a
point's estimate is its launch's median, its mean the runs' mean; the change's size is the difference of the mean
log medians either side of it, its attribution the difference of the mean run times. A key the document gains
without a check here fails the test."""

from __future__ import annotations

import math

import numpy as np
import pytest

from edgeprof import api

STEP = 8


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hist")
    rng = np.random.default_rng(1)
    runs = []
    for k in range(14):
        # whole nanoseconds, as every profile edgeprof reads holds them
        ms = np.round(10.0 * (1.4 if k >= STEP else 1.0) * np.exp(0.01 * rng.standard_normal(20)), 6)
        runs.append(ms)
        f = tmp / f"m_c{k:02d}_exec_all_runs_timeline.csv"
        f.write_text("name,duration_ms,run_index\n" + "".join(f"Method::execute,{float(v)!r},{i}\n"
                                                            for i, v in enumerate(ms)))
        api.ingest([f], store=tmp / "h.duckdb", commit=f"c{k:02d}", time=f"2026-11-01T00:{k:02d}:00", model="m")
    return api.history(tmp / "h.duckdb").data, runs, tmp / "h.duckdb"


def _points(s, runs):
    assert [p["commit"] for p in s["points"]] == [f"c{k:02d}" for k in range(14)] == s["commits"]
    for p, r in zip(s["points"], runs):
        assert set(p) == {"commit", "branch", "time", "launches", "estimate_ms", "ci_low_ms", "ci_high_ms",
                          "e2e_mean_ms", "shares_pct"}
        assert p["launches"] == 1 and p["branch"] is None and p["time"].startswith("2026-11-01T00:")
        assert p["estimate_ms"] == pytest.approx(float(np.median(r)), rel=1e-9)
        assert p["e2e_mean_ms"] == pytest.approx(float(r.mean()), rel=1e-9)
        assert p["ci_low_ms"] < p["estimate_ms"] < p["ci_high_ms"]  # its width: test_history.py (coverage)
        assert p["shares_pct"] == {"unattributed": pytest.approx(100.0)}  # Method::execute rows only: no category below


def _change(c, runs):
    before, after = [math.log(np.median(r)) for r in runs[:STEP]], [math.log(np.median(r)) for r in runs[STEP:]]
    size = math.exp(np.mean(after) - np.mean(before))
    assert c["index"] == STEP and (c["commit_before"], c["commit_after"]) == ("c07", "c08")
    assert c["time_after"] == "2026-11-01T00:08:00" and c["before_points"] == [0, STEP] and c["after_points"] == [STEP, 14]
    assert c["change_pct"] == pytest.approx(100 * (size - 1), rel=1e-6)
    assert c["speedup"] == pytest.approx(1 / size, rel=1e-6)
    assert c["ci_pct"][0] < c["change_pct"] < c["ci_pct"][1] and c["p_value"] < 1e-6
    assert (c["direction"], c["status"], c["commits_after"], c["commits_needed"]) == ("regression", "confirmed", 5, None)
    a = c["attribution"]
    mb, ma = np.mean([r.mean() for r in runs[:STEP]]), np.mean([r.mean() for r in runs[STEP:]])
    assert (a["e2e_mean_before_ms"], a["e2e_mean_after_ms"]) == (pytest.approx(mb), pytest.approx(ma))
    assert a["e2e_mean_delta_ms"] == pytest.approx(ma - mb)
    (cat,) = a["categories"]
    assert cat["name"] == "unattributed" and cat["delta_ms"] == pytest.approx(ma - mb) and cat["share_of_change_pct"] == 100
    assert cat["presence"] == "both" and cat["significant"] and cat["low_ms"] < cat["delta_ms"] < cat["high_ms"]
    assert a["operators"] == a["operators_appeared"] == a["operators_disappeared"] == []
    assert a["categories_appeared"] == a["categories_disappeared"] == []
    assert a["kind"] is None and c["kind"] is None  # one line holds all the time: proportional or not cannot be told
    assert a["kind_evidence"] == c["kind_evidence"] and "unattributed holds 100 %" in a["kind_evidence"]
    assert abs(a["kind_deviation"]) < 1e-9
    assert c["statement"].startswith(f"median_ms +{c['change_pct']:.1f} % [+{c['ci_pct'][0]:.1f}, +{c['ci_pct'][1]:.1f}]"
                                     " at c08 (after c07)")


def test_every_key_of_the_history(case):
    doc, runs, store = case
    assert set(doc) == {"eager", "method", "metric", "regressions", "fallbacks", "series", "since", "store", "threshold"}
    assert (doc["eager"], doc["metric"], doc["since"], doc["threshold"]) == (False, "median_ms", None, 0.02)
    assert doc["store"] == str(store) and "binseg" in doc["method"]
    (s,) = doc["series"]
    assert set(s) == {"model", "experiment", "device", "threads", "label", "points", "changes", "commits", "tau",
                      "tau_source", "excluded_launches", "placement_changes"}
    # these launches hold Method::execute rows only: no operator to place, so no placement change (a fallback named
    # at its commit: tests/analysis/test_placement_history.py)
    assert s["placement_changes"] == [] and doc["fallbacks"] == []
    assert (s["model"], s["experiment"], s["device"], s["threads"]) == ("m", None, "unknown", None)
    assert s["label"] == "model=m · device=unknown" and s["excluded_launches"] == 0
    # the launch-to-launch spread of 14 single-launch commits with 1 % run noise and no launch effect: ~0
    assert s["tau"] == pytest.approx(0.0, abs=0.01) and "14 consecutive single-launch commits" in s["tau_source"]
    _points(s, runs)
    (c,) = s["changes"]
    assert set(c) == {"index", "commit_before", "commit_after", "time_after", "direction", "status", "commits_after",
                      "commits_needed", "change_pct", "ci_pct", "p_value", "speedup", "before_points", "after_points",
                      "attribution", "kind", "kind_evidence", "statement"}
    assert set(c["attribution"]) == {"e2e_mean_delta_ms", "e2e_mean_before_ms", "e2e_mean_after_ms", "categories",
                                     "categories_appeared", "categories_disappeared", "operators", "operators_appeared",
                                     "operators_disappeared", "kind", "kind_deviation", "kind_evidence"}
    _change(c, runs)
    assert doc["regressions"] == [f"{s['label']}: {c['statement']}"]
