"""The intervals of the phase statistics are as wide as they should be, not only around their estimate: the decode
tokens/s interval and each phase's median interval against SciPy's own bootstrap of the median on the real LLM
recording, and their coverage of the true median on simulated decode steps. An interval computed over the wrong
axis (a collapse to a fraction of a percent) or from too few resamples fails here."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from edgeprof.analysis.phases import analyze_phases, tokens_per_second
from edgeprof.api import phases


def _scipy_median_ci(v: np.ndarray) -> tuple[float, float]:
    r = stats.bootstrap((v,), np.median, n_resamples=4000, confidence_level=0.95, method="percentile",
                        random_state=np.random.default_rng(5))
    return float(r.confidence_interval.low), float(r.confidence_interval.high)


@pytest.fixture(scope="module")
def recording(llm_recording):
    et, ms, order, _ = llm_recording
    return et, ms[[i for i, o in enumerate(order) if o["method"] == "decode"]]


def test_tokens_per_second_interval_is_scipys_on_the_real_decode_steps(recording):
    et, decode = recording
    dec = next(p for p in phases(et).data["phases"] if p["name"] == "decode")["decode"]
    lo, hi = _scipy_median_ci(decode[1:])  # the steady steps (the first decode step is left out as warm-up)
    assert dec["low"] == pytest.approx(1000 / hi, rel=0.03) and dec["high"] == pytest.approx(1000 / lo, rel=0.03)
    width, ref = dec["high"] - dec["low"], 1000 / lo - 1000 / hi
    assert 0.75 * ref <= width <= 1.33 * ref


def test_each_phase_median_interval_is_scipys(recording):
    et, decode = recording
    doc = phases(et).data
    lat = next(p for p in doc["phases"] if p["name"] == "decode")["latency"]
    assert lat["count"] == decode.size and lat["median_ms"] == pytest.approx(float(np.median(decode)))
    ci = lat["ci"]["median"]
    lo, hi = _scipy_median_ci(decode)  # the phase's median over all its runs, as the report states it
    assert ci["low_ms"] == pytest.approx(lo, rel=0.01) and ci["high_ms"] == pytest.approx(hi, rel=0.01)
    assert ci["high_ms"] - ci["low_ms"] == pytest.approx(hi - lo, rel=0.25)


def test_coverage_of_the_true_tokens_per_second_on_simulated_decodes():
    rng = np.random.default_rng(17)
    true_median_ms = 4.0
    covered, widths = 0, []
    sims = 200
    for k in range(sims):
        steps = true_median_ms * np.exp(0.08 * rng.standard_normal(64))  # lognormal: its median is 4.0 ms
        t = tokens_per_second(steps, seed=k, resamples=1000)
        covered += t["low"] <= 1000 / true_median_ms <= t["high"]
        widths.append((t["high"] - t["low"]) / t["tokens_per_s"])
    assert 0.88 <= covered / sims <= 0.99
    # the median of 64 lognormal(σ = 0.08) steps: a 95 % interval about ±2.5 % wide, not a fraction of it
    assert 0.025 <= float(np.median(widths)) <= 0.08


def test_the_decode_interval_reaches_the_report(recording):
    _, decode = recording
    labels = ["decode"] * decode.size
    out = analyze_phases(decode, labels, seed=3)
    d = out["phases"][0]["decode"]
    t = tokens_per_second(decode[1:], seed=3)
    assert (d["low"], d["high"]) == (t["low"], t["high"])
