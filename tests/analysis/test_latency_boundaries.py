"""Latency statistics at their thresholds (just below, at, just above) with hand-built series, and the load/init
times against ExecuTorch Inspector's table. The expected numbers are worked out here, not read from the module."""

from __future__ import annotations

import csv
import gzip
import numpy as np
import pytest
import scipy.stats as ss

from testdata import DATA
from edgeprof import load_etdump
from edgeprof.analysis.latency import detect_drift, detect_warmup, framework_times_ms, robust_latency


def test_load_and_init_times_equal_inspectors(etdump):
    for name in ("toycnn_xnn.N20", "tel_portable.N20"):
        with gzip.open(DATA / "ground_truth" / f"{name}.inspector.csv.gz", "rt") as f:
            rows = list(csv.DictReader(f))
        want = {r["event_name"]: float(r["duration_ms"]) for r in rows if r["block_name"] == "Default"}
        got = framework_times_ms(load_etdump(etdump(name)))
        assert got["load_method_ms"] == pytest.approx(want["Program::load_method"], abs=1e-9)
        assert got["method_init_ms"] == pytest.approx(want["Method::init"], abs=1e-9)


def _steady(n: int, seed: int = 0) -> np.ndarray:
    """Runs around 10 ms with 0.5 % noise."""
    return 10.0 * np.exp(np.random.default_rng(seed).normal(0, 0.005, n))


@pytest.mark.parametrize("n,lead,found", [(40, 10, 10), (40, 11, 10), (43, 11, 10), (44, 11, 11)])
def test_warmup_is_at_most_a_quarter_of_the_runs(n, lead, found):
    v = _steady(n)
    v[:lead] *= 1.5
    assert detect_warmup(v)["count"] == found   # ⌊n/4⌋ = 10, 10, 10, 11


@pytest.mark.parametrize("lead,found", [(50, 50), (51, 50)])
def test_warmup_is_at_most_fifty_runs(lead, found):
    v = _steady(400)
    v[:lead] *= 1.5
    assert detect_warmup(v)["count"] == found


@pytest.mark.parametrize("gain,found", [(0.019, 0), (0.0205, 5), (0.03, 5)])
def test_warmup_must_be_two_percent_slower(gain, found):
    v = np.full(100, 10.0) + np.tile([-1e-4, 1e-4], 50)   # steady median 10.0
    v[:5] = 10.0 * (1 + gain)
    assert detect_warmup(v)["count"] == found


def test_one_slow_first_run_against_the_modified_z_threshold():
    rest = np.array([9.9] * 49 + [10.0] + [10.1] * 49)     # median 10.0, MAD 0.1
    np.random.default_rng(3).shuffle(rest)
    # z = 0.6745 (x − 10) / 0.1 > 3.5  ⇔  x > 10.5189
    for x, found in ((10.51, 0), (10.53, 1)):
        assert detect_warmup(np.concatenate([[x], rest]))["count"] == found, x
    # identical steady runs: the scale is 1 % of the median (0.1 ms), so the same threshold holds
    flat = np.full(60, 10.0)
    for x, found in ((10.51, 0), (10.53, 1)):
        assert detect_warmup(np.concatenate([[x], flat]))["count"] == found, x


@pytest.mark.parametrize("n,testable", [(9, False), (10, True)])
def test_warmup_needs_ten_runs(n, testable):
    v = _steady(n)
    v[0] *= 3
    w = detect_warmup(v)
    assert w["testable"] is testable and w["count"] == (1 if testable else 0)


@pytest.mark.parametrize("n,testable", [(29, False), (30, True)])
def test_drift_needs_thirty_runs(n, testable):
    d = detect_drift(10 + 0.01 * np.arange(n))
    assert d["testable"] is testable and d["significant"] is testable


def test_drift_slope_in_percent_per_hundred_runs_against_scipy():
    rng = np.random.default_rng(5)
    v = 10 + 0.01 * np.arange(100) + rng.normal(0, 0.02, 100)
    d = detect_drift(v)
    slope = ss.theilslopes(v).slope
    assert d["theil_sen_slope_ms_per_run"] == pytest.approx(slope, rel=1e-9)
    assert d["slope_percent_per_100_runs"] == pytest.approx(slope / np.median(v) * 1e4, rel=1e-9)
    assert d["direction"] == "slower over time" and d["significant"]
    d = detect_drift(v[::-1].copy())
    assert d["direction"] == "faster over time" and d["slope_percent_per_100_runs"] < 0


def _mk_p(v: np.ndarray) -> float:
    """Two-sided Mann–Kendall p (no ties): Kendall's tau of (index, value), normal approximation, by scipy."""
    return float(ss.kendalltau(np.arange(v.size), v, method="asymptotic").pvalue)


def test_drift_is_significant_exactly_below_five_percent():
    rng = np.random.default_rng(11)
    seen = {True: False, False: False}
    for _ in range(3000):
        v = rng.normal(10, 0.1, 40) + 0.0025 * np.arange(40)
        p = _mk_p(v)
        if 0.035 < p < 0.065:
            d = detect_drift(v)
            assert d["mann_kendall"]["p_value"] == pytest.approx(p, rel=1e-6)
            assert d["significant"] is bool(p < 0.05), p
            seen[p < 0.05] = True
        if all(seen.values()):
            break
    assert all(seen.values())


def test_outliers_are_flagged_but_kept_in_the_headline():
    v = np.concatenate([_steady(50), [30.0]])
    r = robust_latency(v, resamples=200)
    assert r["count"] == 51 and r["outliers"]["count"] == 1 and r["outliers"]["indices"] == [50]
    assert r["mean_ms"] == pytest.approx(v.mean())
    assert r["robust_stats"]["count"] == 50 and r["robust_stats"]["mean_ms"] == pytest.approx(v[:50].mean())


def test_default_bootstrap_is_seeded_and_uses_2000_resamples():
    v = _steady(40, seed=9)
    assert robust_latency(v)["ci"] == robust_latency(v, seed=0, resamples=2000)["ci"]
    assert robust_latency(v)["ci"] != robust_latency(v, seed=1, resamples=2000)["ci"]
    assert robust_latency(v)["ci"] != robust_latency(v, seed=0, resamples=2001)["ci"]


def test_a_lead_exactly_two_percent_slower_is_not_warmup():
    v = np.full(100, 50.0) + np.tile([-1e-4, 1e-4], 50)
    v[:5] = 51.0                                    # 50 × 1.02 exactly
    assert detect_warmup(v)["count"] == 0
    v[:5] = 51.001
    assert detect_warmup(v)["count"] == 5


def test_drift_of_sub_millisecond_runs_is_in_percent_too():
    v = 0.5 + 0.0005 * np.arange(60)                # +0.1 % of 0.5 ms per run
    d = detect_drift(v)
    assert d["slope_percent_per_100_runs"] == pytest.approx(0.0005 / np.median(v) * 1e4)


def test_load_time_of_an_invalid_load_event_is_unknown(tmp_path):
    from etdump_builder import PE, Run, build
    runs = [Run("Default", [PE("Method::init", 10, 20, 0, -1), PE("Program::load_method", 2**40, 2**40 - 5, 0, -1)]),
            Run("Execute", [PE("Method::execute", 0, 10, -1, -1)])]
    p = tmp_path / "l.etdp"
    p.write_bytes(build(runs))
    got = framework_times_ms(load_etdump(p))
    assert got == {"load_method_ms": None, "method_init_ms": pytest.approx(1e-5)}


def test_per_launch_answers_are_cached_on_the_values_not_the_array():
    """detect_warmup, detect_drift and modes are answered from a cache for values met before: an array changed in
    place is a new launch, a caller's changes to its answer do not reach the next caller, a list and an int array
    of the same values get the float answer, and options are part of the key."""
    from edgeprof.analysis.stats import modes

    v = _steady(60)
    before = detect_warmup(v)
    assert before["count"] == 0
    v[:8] *= 1.5                                       # the same array object, other values
    assert detect_warmup(v)["count"] == 8
    got = detect_warmup(v)
    got["count"] = 99
    assert detect_warmup(v)["count"] == 8              # the cached answer was not the caller's dict
    assert detect_warmup(list(v)) == detect_warmup(v)
    ints = np.array([10] * 20 + [11] * 20 + [30] * 20)
    assert detect_drift(ints) == detect_drift(ints.astype(float)) and detect_drift(ints)["significant"]
    two = np.concatenate([np.full(40, 10.0), np.full(40, 12.0)]) * np.exp(np.random.default_rng(1).normal(0, 0.01, 80))
    m = modes(two)
    m["masses"].append(1.0)
    assert modes(two)["multimodal"] and len(modes(two)["masses"]) == 2
    assert not modes(two, mass=0.6)["multimodal"]      # the options are part of the key


def test_load_time_in_a_default_block_that_also_executes(tmp_path):
    """A runtime that writes load, init and the first execute into one Default block: that block is run 0, and its
    load and init times are still the load and init times (not unknown)."""
    from etdump_builder import PE, Run, build

    runs = [Run("Default", [PE("Program::load_method", 0, 5_000_000, -1, -1), PE("Method::init", 100, 2_000_100, 0, -1),
                            PE("Method::execute", 6_000_000, 9_000_000, -1, -1)]),
            Run("Execute", [PE("Method::execute", 10_000_000, 13_000_000, -1, -1)])]
    p = tmp_path / "d.etdp"
    p.write_bytes(build(runs))
    prof = load_etdump(p)
    assert prof.n_runs == 2 and prof.latency_ms().tolist() == [3.0, 3.0]
    assert framework_times_ms(prof) == {"load_method_ms": 5.0, "method_init_ms": 2.0}
    # and with no load/init event at all, nothing is made up
    q = tmp_path / "e.etdp"
    q.write_bytes(build([Run("Execute", [PE("Method::execute", 0, 10, -1, -1)])]))
    assert framework_times_ms(load_etdump(q)) == {"load_method_ms": None, "method_init_ms": None}
