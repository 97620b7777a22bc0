"""History analyses: points per commit (coverage by simulation), change gating at its boundaries, the
confirmation rule, attribution, and the gate's t test against scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from edgeprof.analysis.history import (
    ALPHA,
    LAUNCH_SD_DEFAULT,
    CONFIRM_AFTER,
    attribute,
    commit_points,
    detect,
    level_change,
    trimmed_spread,
)


def test_point_interval_covers_the_commit_level():
    """Commits measured once or three times, launch SD 4 %, run-level noise per launch: the 95 % interval of a
    point covers the commit's true level 93–97 % of the time (τ measured from the series, not given)."""
    rng = np.random.default_rng(7)
    for launches in (1, 3):
        cover = total = 0
        for _ in range(150):
            n = 40
            level = np.log(10.0) + np.cumsum(rng.normal(0, 0.002, n))  # a slowly wandering truth
            keys, y, v = [], [], []
            for c in range(n):
                for _ in range(launches):
                    within = 0.01
                    keys.append(f"c{c}")
                    y.append(level[c] + rng.normal(0, 0.04) + rng.normal(0, within))
                    v.append(within ** 2)
            pts = commit_points(keys, np.array(y), np.array(v))
            se = np.sqrt(pts["var"])
            cover += int(np.sum(np.abs(pts["estimate"] - level) <= 1.959963984540054 * se))
            total += n
        assert 0.93 <= cover / total <= 0.975, (launches, cover / total)


def test_tau_sources():
    from edgeprof.analysis import noise as nz

    y = np.log([10, 10.2, 9.9, 10.1, 10.0, 10.3, 9.8])
    pts = commit_points([f"c{i}" for i in range(7)], y, np.full(7, 1e-4))
    assert pts["tau_source"].startswith("spread of 7 consecutive single-launch commits")
    pts = commit_points(["a", "a", "b", "b"], np.log([10, 11, 10, 11]), np.full(4, 1e-6))
    assert pts["tau_source"].startswith("REML over 2 commits")
    assert pts["tau"] == pytest.approx(math.log(11 / 10) / math.sqrt(2), rel=0.05)
    assert pts["launches"] == [2, 2]
    # the store's repeated launches come before the series' own spread, after its own repeated launches
    store = nz.measured(0.12, 30, 40, "history store", "history store h.duckdb (device pixel)")
    pts = commit_points([f"c{i}" for i in range(7)], y, np.full(7, 1e-4), prior=store)
    assert pts["tau"] == pytest.approx(store.sd) and "history store h.duckdb" in pts["tau_source"]
    pts = commit_points(["a", "a", "b", "b"], np.log([10, 11, 10, 11]), np.full(4, 1e-6), prior=store)
    assert pts["tau_source"].startswith("REML")
    pts = commit_points(["a", "b"], np.log([10, 11]), np.full(2, 1e-6), launch_cv=0.07)
    assert pts["tau"] == 0.07 and pts["tau_source"].startswith("given")
    pts = commit_points(["a", "b"], np.log([10, 11]), np.full(2, 1e-6))
    assert pts["tau"] == LAUNCH_SD_DEFAULT and pts["tau_source"].startswith("default")


def test_trimmed_spread_sees_a_machine_flipping_between_two_levels():
    """Normal launch noise: the trimmed spread estimates its SD (mean of 400 series within 3 %); launches flipping
    between two levels 35 % apart (a busy machine's modes, as recorded in the noise corpus): the trimmed spread
    sees their SD (within 25 %, on average) where a median-based scale of the differences mostly sees half or less."""
    rng = np.random.default_rng(4)
    est = [trimmed_spread(rng.normal(0, 0.1, 40))[0] for _ in range(400)]
    assert np.mean(est) == pytest.approx(0.1, rel=0.03)
    flips, mad = [], []
    for _ in range(400):
        y = np.where(rng.random(40) < 0.3, 0.35, 0.0) + rng.normal(0, 0.01, 40)
        flips.append(trimmed_spread(y)[0] / np.std(y, ddof=1))
        d = np.diff(y)
        mad.append(1.4826 * np.median(np.abs(d - np.median(d))) / math.sqrt(2) / np.std(y, ddof=1))
    assert 0.85 <= np.mean(flips) <= 1.25 and np.median(mad) < 0.5


def test_gate_t_test_equals_scipy():
    rng = np.random.default_rng(3)
    y = np.concatenate([rng.normal(0, 0.05, 15), rng.normal(0.1, 0.05, 12)])
    t = level_change(y, np.zeros_like(y), slice(0, 15), slice(15, 27))
    ref = stats.ttest_ind(y[15:], y[:15], equal_var=True)
    assert t["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
    ci = ref.confidence_interval(0.95)
    assert (t["low"], t["high"]) == (pytest.approx(ci.low, rel=1e-9), pytest.approx(ci.high, rel=1e-9))


def _stepped(n: int, at: int, size: float, noise: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = np.full(n, math.log(10.0)) + rng.normal(0, noise, n)
    y[at:] += math.log1p(size)
    return y


@pytest.mark.parametrize("size,found", [(0.0195, False), (0.0205, True), (-0.0195, False), (-0.0205, True)])
def test_threshold_boundary(size, found):
    """A clean step just under the 2 % threshold is not a change; just over it is (both directions)."""
    y = _stepped(60, 30, size, noise=0.0005)
    ch = detect(y, np.full(60, 1e-8), threshold=0.02)
    assert bool(ch) == found
    if found:
        assert ch[0]["index"] == 30 and ch[0]["direction"] == ("regression" if size > 0 else "improvement")


def test_confirmation_rule():
    n = 50
    for after, status in ((CONFIRM_AFTER, "confirmed"), (CONFIRM_AFTER - 1, "pending")):
        at = n - 1 - after
        y = _stepped(n, at, 0.2, noise=0.005, seed=1)
        ch = detect(y, np.full(n, 1e-6), threshold=0.02)
        if status == "pending" and not ch:  # a segment of fewer than 3 commits is no PELT candidate: eager finds it
            ch = detect(y, np.full(n, 1e-6), threshold=0.02, eager=True)
            assert ch and ch[-1]["index"] == at and ch[-1]["status"] == "eager"
            continue
        assert ch[-1]["index"] == at and ch[-1]["status"] == status
    y = _stepped(n, n - 1, 0.2, noise=0.005, seed=2)  # only the newest commit moved: pending until two more
    ch = detect(y, np.full(n, 1e-6), threshold=0.02)
    assert [(c["index"], c["status"], c["commits_after"]) for c in ch] == [(n - 1, "pending", 0)]
    ch = detect(y, np.full(n, 1e-6), threshold=0.02, eager=True)
    assert [c["index"] for c in ch] == [n - 1] and ch[0]["status"] == "eager"


def test_no_change_series_rarely_raise_a_change():
    """A/A: 200 series of 120 single-launch commits with real-like noise (5 %): at most 5 % of them show any
    confirmed change."""
    rng = np.random.default_rng(11)
    bad = 0
    for _ in range(200):
        y = math.log(10) + rng.normal(0, 0.05, 120)
        bad += any(c["status"] == "confirmed" for c in detect(y, np.full(120, 0.01 ** 2), threshold=0.02))
    assert bad / 200 <= 0.05
    assert ALPHA <= 0.001


def test_attribution_ranks_the_category_that_moved():
    rng = np.random.default_rng(5)
    n, at = 40, 20
    gemm = 5 + rng.normal(0, 0.1, n)
    gemm[at:] += 1.0
    conv = 3 + rng.normal(0, 0.1, n)
    other = 1 + rng.normal(0, 0.05, n)
    cats = np.stack([conv, gemm, other], axis=1)
    e2e = cats.sum(axis=1)
    change = {"before": (0, at), "after": (at, n)}
    att = attribute(change, e2e, (["CONV", "GEMM", "OTHER"], cats), (["fc"], gemm.reshape(-1, 1)))
    assert att["categories"][0]["name"] == "GEMM" and att["categories"][0]["significant"]
    assert sum(c["share_of_change_pct"] for c in att["categories"]) == pytest.approx(100.0, abs=1e-9)
    assert att["e2e_mean_delta_ms"] == pytest.approx(e2e[at:].mean() - e2e[:at].mean())
    assert att["operators"][0]["name"] == "fc"
