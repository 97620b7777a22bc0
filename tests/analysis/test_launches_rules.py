"""The launch model's pieces with independent recomputations: per-launch log-median and mean statistics, REML τ²
against scipy's optimizer on the restricted likelihood, each interval regime's standard error from its formula,
BH q-values, and the design table's rule (its `resolves` column from scipy's t quantiles)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from testdata import documentation
import scipy.optimize as so
import scipy.stats as ss

from edgeprof.analysis.launches import (
    LAUNCH_SD_DEFAULT,
    V_FLOOR,
    bh,
    contrast,
    design,
    log_median_stats,
    mean_stats,
    reml_tau2,
)

README = documentation()  # the README and docs/, in reading order


def test_documented_allowance_and_floor():
    assert LAUNCH_SD_DEFAULT == 0.25 and "the default **0.25** (25 %" in README
    assert V_FLOOR == 1e-12
    c = contrast(np.array([0.0]), np.array([0.0]), np.array([0.1]), np.array([0.0]))
    assert c["regime"] == "single-launch" and "allowance of 25 % launch-to-launch SD" in c["method"]
    assert c["se"] == pytest.approx(math.sqrt(2 * (0.0625 + 1e-12)), rel=1e-12)
    c = contrast(np.array([0.0]), np.array([0.0]), np.array([0.1]), np.array([0.0]), launch_cv=0)
    assert c["se"] == pytest.approx(math.sqrt(2e-12), rel=1e-9)        # identical runs still have a resolution


def test_log_median_stats_by_launch_size():
    x5 = np.array([10.0, 11.0, 9.0, 12.0, 10.5])
    s = np.sort(x5)
    half = ss.norm.ppf(0.975) * math.sqrt(5) / 2                       # ranks n/2 ∓ z·√n/2, clipped to the sample
    lo, hi = s[int(max(0, math.floor(2.5 - half) - 1))], s[int(min(4, math.ceil(2.5 + half)))]
    y, v = log_median_stats([x5, np.array([10.0, 12.0]), np.array([7.0]), np.array([0.0, 1.0, 2.0])])
    assert y[:3].tolist() == pytest.approx([math.log(10.5), math.log(11.0), math.log(7.0)])
    assert v[0] == pytest.approx(((math.log(hi) - math.log(lo)) / (2 * 1.959963984540054)) ** 2)
    assert v[1] == pytest.approx(np.var(np.log([10.0, 12.0]), ddof=1))
    assert v[2] == 0.0 and v[3] == 0.0                                 # one run; an interval reaching zero
    assert (lo, hi) == (9.0, 12.0)


def test_mean_stats_log_and_linear():
    a, b = np.array([2.0, 4.0, 6.0]), np.array([5.0])
    y, v = mean_stats([a, b])
    assert y.tolist() == pytest.approx([math.log(4.0), math.log(5.0)])
    assert v.tolist() == pytest.approx([4.0 / 3 / 16.0, 0.0])         # var(ddof=1)/n / mean²
    y, v = mean_stats([a, b], log=False)
    assert y.tolist() == [4.0, 5.0] and v.tolist() == pytest.approx([4.0 / 3, 0.0])


def _reml_oracle(groups):
    def nll(t2):
        tot = 0.0
        for y, v in groups:
            v = np.maximum(v, 1e-12)
            w = 1 / (t2 + v)
            mu = (w * y).sum() / w.sum()
            tot += np.log(t2 + v).sum() + np.log(w.sum()) + (w * (y - mu) ** 2).sum()
        return 0.5 * tot
    r = so.minimize_scalar(nll, bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-12})
    return r.x if nll(r.x) < nll(0.0) else 0.0


@pytest.mark.parametrize("seed", range(5))
def test_reml_tau2_against_scipys_optimizer(seed):
    rng = np.random.default_rng(seed)
    tau = [0.0, 0.02, 0.05, 0.1, 0.01][seed]
    groups = []
    for mu in (0.0, 0.1):
        k = 3 + seed % 3
        v = rng.uniform(1e-5, 4e-4, k)
        groups.append((mu + rng.normal(0, tau, k) + rng.normal(0, np.sqrt(v)), v))
    got, want = reml_tau2(groups), _reml_oracle(groups)
    assert got == pytest.approx(want, abs=2e-6)


def test_reml_tau2_with_single_launches_is_zero():
    assert reml_tau2([(np.array([0.1]), np.array([1e-4])), (np.array([0.3]), np.array([1e-4]))]) == 0.0
    # two launches in one group: their spread enters
    assert reml_tau2([(np.array([0.0, 0.2]), np.array([1e-6, 1e-6])), (np.array([0.5]), np.array([1e-6]))]) > 0.01


def test_interval_standard_errors_from_their_formulas():
    yb, vb = np.array([0.10, 0.12]), np.array([1e-4, 4e-4])
    yc, vc = np.array([0.0]), np.array([9e-4])
    c = contrast(yb, vb, yc, vc, launch_cv=0)                          # 3 launches: no allowance
    assert c["regime"] == "single-launch, no allowance"
    assert c["estimate"] == pytest.approx((0.10 / 1e-4 + 0.12 / 4e-4) / (1 / 1e-4 + 1 / 4e-4))
    assert c["se"] == pytest.approx(math.sqrt(vb.mean() / 2 + vc.mean() / 1))
    assert c["p_value"] == pytest.approx(2 * ss.norm.sf(abs(c["estimate"]) / c["se"]))
    c = contrast(yb, vb, yc, vc, launch_cv=0.05)
    t2 = 0.05 ** 2
    assert c["se"] == pytest.approx(math.sqrt(1 / (1 / (t2 + vb)).sum() + 1 / (1 / (t2 + vc)).sum()))
    draws = np.random.default_rng(0).normal(0.1, 0.01, 500)
    c = contrast(yb[:1], vb[:1], yc, vc, launch_cv=0, within_draws=draws)
    assert (c["low"], c["high"]) == pytest.approx(tuple(np.quantile(draws, [0.025, 0.975])))
    assert c["se"] == pytest.approx(np.std(draws, ddof=1))
    assert c["p_value"] == pytest.approx(2 * ss.norm.sf(abs(c["estimate"]) / c["se"]))


def test_multi_launch_knapp_hartung():
    yb, vb = np.array([0.10, 0.14, 0.12]), np.array([1e-4, 2e-4, 1e-4])
    yc, vc = np.array([0.0, 0.03, 0.01]), np.array([1e-4, 1e-4, 3e-4])
    c = contrast(yb, vb, yc, vc)
    t2 = c["tau"] ** 2
    wb, wc = 1 / (t2 + vb), 1 / (t2 + vc)
    mb, mc = (wb * yb).sum() / wb.sum(), (wc * yc).sum() / wc.sum()
    q = ((wb * (yb - mb) ** 2).sum() + (wc * (yc - mc) ** 2).sum()) / 4
    se = math.sqrt((1 / wb.sum() + 1 / wc.sum()) * q)
    assert c["estimate"] == pytest.approx(mb - mc) and c["se"] == pytest.approx(se) and c["df"] == 4
    crit = ss.t.ppf(0.975, 4)
    assert (c["low"], c["high"]) == pytest.approx((mb - mc - crit * se, mb - mc + crit * se))
    assert c["p_value"] == pytest.approx(2 * ss.t.sf(abs(mb - mc) / se, 4))
    # launches that agree exactly: no spread, so se 0 and p 0 (a difference) or 1 (none)
    # (2 vs 2 without the allowance: with it, the 2-df floor of tests/analysis/test_two_vs_two_floor.py applies)
    same = contrast(np.array([0.1, 0.1]), np.array([0.0, 0.0]), np.array([0.0, 0.0]), np.array([0.0, 0.0]), launch_cv=0)
    assert same["se"] == 0.0 and same["p_value"] == 0.0
    none = contrast(np.array([0.1, 0.1]), np.array([0.0, 0.0]), np.array([0.1, 0.1]), np.array([0.0, 0.0]), launch_cv=0)
    assert none["p_value"] == 1.0


def test_bh_against_scipy():
    p = [0.01, 0.04, 0.03, 0.2, 0.9, 0.95, 0.011]
    assert bh(p) == pytest.approx(ss.false_discovery_control(p, method="bh").tolist())
    assert bh([]) == [] and bh([1.0, 1.0]) == [1.0, 1.0]


def test_design_rule():
    d = design(0.05, 0.02, 0.05, threshold=0.01, floor_sd=0.0)  # the bare rule (the 2-launch floor: test_launches)
    target = math.log1p(0.05) - math.log1p(0.01)
    for r in d["options"]:
        k, n = r["launches_per_arm"], r["runs_per_launch"]
        se = math.sqrt(2 * (0.02 ** 2 + math.pi / 2 * 0.05 ** 2 / n) / k)
        need = (ss.t.ppf(0.975, 2 * k - 2) + ss.t.ppf(0.80, 2 * k - 2)) * se
        assert r["resolves"] == (need <= target), (k, n)
        assert r["half_width_percent"] == pytest.approx(100 * math.expm1(ss.t.ppf(0.975, 2 * k - 2) * se))
        assert r["total_runs"] == 2 * k * n
    ok = [r for r in d["options"] if r["resolves"]]
    best = min(ok, key=lambda r: (r["total_runs"] + 200 * r["launches_per_arm"], r["launches_per_arm"]))
    assert d["recommended"] == best
    assert d["launch_floor_half_width_percent"] == pytest.approx(
        100 * math.expm1(ss.t.ppf(0.975, 98) * math.sqrt(2 * 0.02 ** 2 / 50)))
    assert design(0.05, 0.0, 0.05)["launch_floor_half_width_percent"] == 0.0
    # no effect beyond the threshold: nothing resolves it
    assert design(0.05, 0.02, 0.01, threshold=0.01)["recommended"] is None


def test_design_note_switches_where_launch_variance_passes_a_100_run_median():
    w = 0.05
    edge = math.sqrt(math.pi / 2 * w * w / 100)
    assert design(w, edge * 1.0001, 0.05)["note"].startswith("launch-to-launch variation dominates")
    assert design(w, edge * 0.9999, 0.05)["note"].startswith("run-to-run noise dominates")


def test_log_median_stats_at_three_runs_and_below_a_millisecond():
    y, v = log_median_stats([np.array([9.0, 10.0, 12.0]), np.array([0.3, 0.4, 0.5])])
    # n = 3: ranks 1.5 ∓ 1.70 clip to the whole sample, so the interval is [min, max]
    assert v[0] == pytest.approx(((math.log(12.0) - math.log(9.0)) / (2 * 1.959963984540054)) ** 2)
    assert v[1] == pytest.approx(((math.log(0.5) - math.log(0.3)) / (2 * 1.959963984540054)) ** 2)
    assert y.tolist() == pytest.approx([math.log(10.0), math.log(0.4)])


def test_mean_stats_of_two_runs():
    y, v = mean_stats([np.array([2.0, 4.0])], log=False)
    assert y.tolist() == [3.0] and v.tolist() == pytest.approx([2.0 / 2])        # var(ddof=1) = 2, over n = 2


def test_no_allowance_fields_and_identical_draws():
    c = contrast(np.array([0.1]), np.array([1e-4]), np.array([0.0]), np.array([1e-4]), launch_cv=0,
                 within_draws=np.full(100, 0.1))
    assert (c["tau"], c["allowance"], c["df"], c["regime"]) == (0.0, 0.0, None, "single-launch, no allowance")
    assert c["critical"] == pytest.approx(ss.norm.ppf(0.975)) and c["se"] < 1e-12 and c["p_value"] == 0.0
    assert (c["low"], c["high"]) == pytest.approx((0.1, 0.1))
