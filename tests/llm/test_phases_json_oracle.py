"""Every key of `phases` on the real LLM recording (two generations of prefill + 64 decode steps) against an
independent computation from the ETDump's own events and the run-order file: numpy for the summaries and the
decode percentiles, `numpy.linalg.lstsq` with SciPy's t quantile for the position slope, the load/init events for
the time to first token. The intervals of the median and of tokens/s are checked against SciPy's bootstrap in
test_phase_intervals.py. A key the document gains without a check here fails the test."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from edgeprof.api import phases


@pytest.fixture(scope="module")
def case(llm_recording):
    et, ms, order, init_ms = llm_recording
    return phases(et).data, ms, order, init_ms, et


def _ols_slope(y, pos, run):
    """OLS of y on (1, position, run index): the position coefficient, its 95 % t interval, the drift's."""
    X = np.column_stack([np.ones_like(y), pos, run])
    coef, _res, *_ = np.linalg.lstsq(X, y, rcond=None)
    df = y.size - 3
    s2 = float(((y - X @ coef) ** 2).sum()) / df
    se = np.sqrt(np.diag(s2 * np.linalg.inv(X.T @ X)))
    t = stats.t.ppf(0.975, df)
    return coef, coef - t * se, coef + t * se, df


def test_every_key_of_the_phases_document(case):
    doc, ms, order, init_ms, et = case
    assert set(doc) == {"input", "labels_source", "phases", "pooled", "runs", "time_to_first_token"}
    assert doc["input"] == str(et) and doc["labels_source"] == et.with_suffix(".runs.json").name
    assert doc["pooled"] is False and doc["runs"] == ms.size == len(order)
    idx = {name: [i for i, o in enumerate(order) if o["method"] == name] for name in ("prefill", "decode")}
    for p in doc["phases"]:
        assert set(p) == {"name", "first_run", "count", "median_ms", "latency", "breakdown"} | (
            {"decode"} if p["name"] == "decode" else set())
        x = ms[idx[p["name"]]]
        assert (p["first_run"], p["count"]) == (idx[p["name"]][0], x.size)
        assert p["median_ms"] == pytest.approx(float(np.median(x)))
        lat = p["latency"]
        assert (lat["count"], lat["median_ms"], lat["mean_ms"]) == (x.size, pytest.approx(float(np.median(x))),
                                                                   pytest.approx(float(x.mean())))
        # the phase's breakdown accounts for its mean run: its lines add up to it
        assert sum(b["ms_per_run"] for b in p["breakdown"]) == pytest.approx(float(x.mean()), rel=1e-6)
        assert all(b["share_pct"] == pytest.approx(100 * b["ms_per_run"] / x.mean()) for b in p["breakdown"])
    dec = next(p for p in doc["phases"] if p["name"] == "decode")["decode"]
    assert set(dec) == {"per_token_ms", "tokens_per_s", "low", "high", "median_step_ms", "position_slope",
                        "growing_with_position"}
    steady_idx = idx["decode"][1:]  # the first decode step of the recording is left out as warm-up
    steady = ms[steady_idx]
    assert dec["per_token_ms"] == {f"p{q}": pytest.approx(float(np.percentile(steady, q))) for q in (50, 90, 99)} | {
        "max": pytest.approx(float(steady.max()))}
    assert dec["median_step_ms"] == pytest.approx(float(np.median(steady)))
    assert dec["tokens_per_s"] == pytest.approx(1000 / float(np.median(steady)))
    assert dec["low"] < dec["tokens_per_s"] < dec["high"]  # the width: test_phase_intervals.py
    pos = np.array([order[i]["position"] for i in steady_idx], dtype=float)
    coef, lo, hi, df = _ols_slope(steady, pos, np.array(steady_idx, dtype=float))
    ps = dec["position_slope"]
    assert ps["identifiable"] and ps["df"] == df
    assert (ps["ms_per_position"], ps["low"], ps["high"]) == (pytest.approx(coef[1], rel=1e-6, abs=1e-12),
                                                              pytest.approx(lo[1], rel=1e-6, abs=1e-12),
                                                              pytest.approx(hi[1], rel=1e-6, abs=1e-12))
    assert (ps["drift_ms_per_run"], ps["drift_low"], ps["drift_high"]) == (
        pytest.approx(coef[2], rel=1e-6), pytest.approx(lo[2], rel=1e-6), pytest.approx(hi[2], rel=1e-6))
    assert ps["significant"] == (lo[1] > 0 or hi[1] < 0)
    for g in dec["growing_with_position"]:  # each listed category's own slope clears zero (its test: test_phases.py)
        assert set(g) == {"category", "ms_per_position", "low", "high"} and g["low"] > 0
    t = doc["time_to_first_token"]
    assert set(t) == {"first_ms", "includes_load_and_init", "init_ms", "steady_prefill_ms", "note"}
    assert t["init_ms"] == pytest.approx(init_ms) and t["includes_load_and_init"] is True
    assert t["first_ms"] == pytest.approx(ms[idx["prefill"][0]] + init_ms)
    assert t["steady_prefill_ms"] == pytest.approx(float(np.median(ms[idx["prefill"][1:]])))
