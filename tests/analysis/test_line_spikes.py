"""A line whose spikes outnumber the 10 % trim is estimated by its median (edgeprof/analysis/launches.py
``line_stats``): the spike rule at its boundary, the estimator's per-arm values against numpy/scipy, and — on real
launches of one program (the real-noise corpus, tests/data/noise) with 40 % of one operator's runs made 12× slower
in one arm, as on a phone — a speedup near 1 whose status is not "slower", where the trimmed mean would follow the
spikes."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import noise_corpus as nc

from edgeprof import invariants
from edgeprof.analysis import noise as nz
from edgeprof.analysis.compare_ops import compare_lines
from edgeprof.analysis.launches import SPIKE_FACTOR, TRIM, line_stats, spiky


def runs(spikes: int, n: int = 40, at: float = SPIKE_FACTOR * 1.01) -> np.ndarray:
    x = np.full(n, 1.0) * np.exp(np.random.default_rng(spikes).normal(0, 0.01, n))
    x[:spikes] = at * np.median(x[spikes:])  # a spike: more than 3× the median
    return x


@pytest.mark.parametrize("spikes, expected", [(4, False), (5, True)])  # floor(0.1·40) = 4: the trim removes 4
def test_a_line_is_spiky_when_its_spikes_outnumber_the_trim(spikes, expected):
    assert TRIM == 0.10 and SPIKE_FACTOR == 3.0
    assert spiky([runs(0), runs(spikes)]) is expected
    assert spiky([runs(spikes)]) is expected


def test_a_run_at_exactly_three_times_the_median_is_not_a_spike():
    x = np.full(40, 1.0)
    x[:8] = 3.0
    assert spiky([x]) is False
    x[:8] = 3.0000001
    assert spiky([x]) is True


def test_the_estimators_per_arm_values_against_scipy_and_numpy():
    b, c = [runs(0), runs(2)], [runs(3), runs(4)]  # no arm spiky: 10 %-trimmed means
    name, (yb, _), (yc, _) = line_stats(b, c)
    assert name == "10 %-trimmed mean"
    assert np.exp(yb) == pytest.approx([stats.trim_mean(x, 0.1) for x in b], rel=1e-12)
    assert np.exp(yc) == pytest.approx([stats.trim_mean(x, 0.1) for x in c], rel=1e-12)
    c = [runs(3), runs(9)]  # 9 of 40 spikes in one launch of one arm: both arms by their medians
    name, (yb, _), (yc, _) = line_stats(b, c)
    assert name == "median"
    assert np.exp(yb) == pytest.approx([np.median(x) for x in b]) and np.exp(yc) == pytest.approx([np.median(x) for x in c])


def _spiked(share: float, seed: int = 3):
    rng = np.random.default_rng(seed)
    launches = nc.session("c_quiet")["toycnn_xnn"]
    tabs = [nc.line_tables(x) for x in launches[:6]]
    key = max(tabs[0][2], key=lambda k: tabs[0][2][k].mean())
    for _, _, ops in tabs[3:]:
        col = ops[key].copy()
        col[rng.choice(col.size, size=int(share * col.size), replace=False)] *= 12
        ops[key] = col
    r = compare_lines(tabs[:3], tabs[3:], b_name="b", c_name="c", noise=nz.default())
    return next(x for x in r["operators"]["matched"] if x["baseline_operator"] == key), tabs, key


def test_forty_percent_spikes_in_one_arm_of_one_program_do_not_make_it_slower():
    row, tabs, key = _spiked(0.4)
    assert row["estimator"] == "median"
    medians = [float(np.median(t[2][key])) for t in tabs]
    truth = np.exp(np.mean(np.log(medians[:3])) - np.mean(np.log(medians[3:])))
    assert row["ci_low"] <= row["speedup"] <= row["ci_high"] and row["status"] != "slower"
    assert row["speedup"] == pytest.approx(truth, rel=0.05) and 0.8 < row["speedup"] < 1.25
    assert row["baseline_typical_ms"] / row["candidate_typical_ms"] == pytest.approx(row["speedup"], rel=1e-12)
    # the trimmed mean would have followed the spikes: the candidate's trimmed means are several times its medians
    assert min(stats.trim_mean(t[2][key], 0.1) / np.median(t[2][key]) for t in tabs[3:]) > 2
    assert not invariants.violations(row)


def test_spikes_the_trim_removes_keep_the_trimmed_mean():
    row, _, _ = _spiked(0.05)
    assert row["estimator"] == "10 %-trimmed mean" and row["status"] != "slower"
