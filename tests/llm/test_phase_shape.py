"""Prefill/decode inferred from run times: the spike ratios against a run-by-run computation, the rule's boundaries,
and its false-positive rate on the real launch recordings of tests/data (no LLM among them)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from edgeprof.analysis.phases import SPIKE, SPIKE_NEAR, shape_labels, spike_ratios
from edgeprof.io.etdump_read import read_etdump

DATA = Path(__file__).resolve().parent.parent / "data"


def ratios_one_by_one(v):
    """The definition, a run at a time: over the median of the 5 runs after, and (the smaller) of the 5 before."""
    out = []
    for i in range(len(v)):
        after, before = v[i + 1:i + 6], v[max(0, i - 5):i]
        if not len(after):
            out.append(np.nan)
            continue
        r = v[i] / np.median(after)
        out.append(min(r, v[i] / np.median(before)) if len(before) else r)
    return np.array(out)


def _launches():
    """Every launch's latency series of the real noise and multi-launch recordings (360 launches)."""
    for f in sorted((DATA / "noise").glob("*.csv.gz")) + sorted((DATA / "multilaunch").glob("*.csv.gz")):
        df = pl.read_csv(f)
        keys = [c for c in ("session", "program", "launch") if c in df.columns]
        for _, g in df.sort("run").group_by(keys, maintain_order=True):
            yield g["latency_ms"].to_numpy()


@pytest.mark.parametrize("n", [0, 1, 2, 5, 6, 7, 11, 12, 40])
def test_spike_ratios_equal_the_run_by_run_definition(n):
    v = np.random.default_rng(n).lognormal(0, 0.6, n)
    np.testing.assert_array_equal(spike_ratios(v), ratios_one_by_one(v))


def test_spike_ratios_on_real_launches_equal_the_definition():
    series = list(_launches())
    assert len(series) == 360
    for v in series[::7]:
        np.testing.assert_array_equal(spike_ratios(v), ratios_one_by_one(v))


def test_real_launches_of_one_method_are_almost_never_split_into_phases():
    """False positives: 1 of 360 real launches (a 60-run launch with three spikes and one near run); the rule without
    the near-run check split 2."""
    flagged = [v.size for v in _launches() if shape_labels(v) is not None]
    assert flagged == [60]


@pytest.mark.parametrize("name", ["llm_kv_portable", "llm_kv_xnn"])
def test_the_recorded_decoders_spikes_stand_apart(name, tmp_path):
    f = tmp_path / "x.etdp"
    f.write_bytes(gzip.decompress((DATA / "llm" / f"{name}.G2S64.etdp.gz").read_bytes()))
    r = spike_ratios(read_etdump(f).latency_ms())
    assert np.flatnonzero(r >= SPIKE).tolist() == [0, 65]
    assert not ((r >= SPIKE * SPIKE_NEAR) & (r < SPIKE)).any()


def _series(second_spike: float, near: float | None):
    """Two generations of 40 flat decode steps (1 ms), prefills at run 0 (5 ms) and 40; one other run at ``near``."""
    v = np.ones(80)
    v[0], v[40] = 5.0, second_spike
    if near is not None:
        v[60] = near
    return v


def test_boundaries_of_the_spike_and_the_near_runs():
    assert shape_labels(_series(SPIKE, None))[0].count("prefill") == 2  # exactly SPIKE× its neighbours: a prefill
    assert shape_labels(_series(SPIKE * 0.999, None)) is None  # just below: one prefill only (a warm-up)
    # one near run with two spikes: still two phases; a second near run (as many as spikes): noise
    assert shape_labels(_series(SPIKE, SPIKE * SPIKE_NEAR * 0.999)) is not None
    v = _series(SPIKE, SPIKE * SPIKE_NEAR)
    assert shape_labels(v) is not None
    v[70] = SPIKE * SPIKE_NEAR
    assert shape_labels(v) is None
    v[70] = SPIKE * SPIKE_NEAR * 0.999
    assert shape_labels(v) is not None


def test_tokens_per_second_interval_is_the_bootstrap_of_the_median_then_order_statistics():
    """Up to 5,000 steps the interval is the percentile bootstrap of the median (2,000 resamples, recomputed here with
    numpy's own choice); beyond, the binomial order-statistic interval (recomputed from scipy's binomial quantiles)."""
    from scipy.stats import binom

    from edgeprof.analysis.phases import tokens_per_second

    steps = np.concatenate(list(_launches()))
    small = steps[:3000]
    boots = np.median(np.random.default_rng(7).choice(small, size=(2000, small.size), replace=True), axis=1)
    lo, hi = np.quantile(boots, [0.025, 0.975])
    t = tokens_per_second(small, seed=7)
    assert t["tokens_per_s"] == pytest.approx(1000 / np.median(small), rel=1e-12)
    assert (t["low"], t["high"]) == pytest.approx((1000 / hi, 1000 / lo), rel=1e-12)
    big = steps[:12000]
    s = np.sort(big)
    t = tokens_per_second(big, seed=7)
    # the order statistics around n/2 that binomial(n, ½) puts 95 % between (normal approximation: within one rank)
    k_lo, k_hi = binom.ppf([0.025, 0.975], big.size, 0.5)
    assert np.isclose(s[int(k_lo) - 2:int(k_lo) + 1], 1000 / t["high"], rtol=1e-12).any()
    assert np.isclose(s[int(k_hi) - 1:int(k_hi) + 2], 1000 / t["low"], rtol=1e-12).any()
