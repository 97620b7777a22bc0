"""Warm-up and drift decisions at their exact switches: the 2 % median gain, the one-sided Mann–Whitney p against
scipy's, the modified z-score of 3.5, the 30-run drift minimum and a median at or below zero."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss

from edgeprof.analysis.latency import _warmup_significant, detect_drift


def test_the_gain_must_exceed_two_percent():
    rest = np.full(20, 50.0)
    assert 50.0 * 1.02 == 51.0                                  # exact in binary floating point
    assert _warmup_significant(np.r_[[51.0] * 3, rest], 3, 5) == (False, "")       # exactly 2 %: not a warm-up
    ok, ev = _warmup_significant(np.r_[[51.0000001] * 3, rest], 3, 5)
    assert ok and ev.startswith("one-sided Mann–Whitney p = ")


@pytest.mark.parametrize("lead,rest", [
    ([12.0, 11.0, 13.0], [10.0, 10.2, 9.9, 10.1, 9.8, 10.3, 10.0, 9.7, 10.4, 10.05]),
    ([12.0, 9.5, 13.0, 11.0], [10.0, 10.2, 9.9, 10.1, 9.8, 10.3, 10.0, 9.7]),
    ([10.5, 10.6, 10.4], [10.0, 10.7, 9.9, 10.1, 10.8, 10.3, 10.0, 9.7, 10.45, 10.05, 9.6, 10.9]),
])
def test_one_sided_p_is_scipys(lead, rest):
    v = np.array(lead + rest)
    k = len(lead)
    ok, ev = _warmup_significant(v, k, 4)
    want = ss.mannwhitneyu(lead, rest, alternative="greater", method="asymptotic").pvalue   # ties: the normal form
    got = float(ev.split("p = ")[1].split(" <")[0])
    assert got == pytest.approx(float(f"{want:.3g}"), rel=1e-9)
    assert ok == (want < 0.05 / 4)
    assert ev.endswith(f"< {0.05 / 4:.3g}")


def test_a_lead_faster_in_rank_terms_is_not_significant():
    # the lead's median is > 2 % above the rest's, but in rank terms the lead is below the rest: p is large
    lead, rest = [10.3, 10.3, 10.3, 9.0, 9.0], [10.0] * 6 + [20.0] * 5
    ok, ev = _warmup_significant(np.array(lead + rest), 5, 3)
    want = ss.mannwhitneyu(lead, rest, alternative="greater", method="asymptotic").pvalue
    assert float(ev.split("p = ")[1].split(" <")[0]) == pytest.approx(float(f"{want:.3g}"))
    assert want > 0.5 and not ok


def test_modified_z_of_exactly_three_and_a_half_is_not_enough():
    # rest: median 0, median absolute deviation 0.5 (both exact), so z = 0.6745 · x / 0.5
    rest = np.array([-0.5, 0.0, 0.5] * 5 + [0.0])
    x = 2.5945144551519643
    assert 0.6745 * x / 0.5 == 3.5
    ok, ev = _warmup_significant(np.r_[x, rest], 1, 2)
    assert not ok and ev == "modified z-score vs the rest 3.5"
    assert _warmup_significant(np.r_[x + 1e-9, rest], 1, 2)[0]
    ok, ev = _warmup_significant(np.r_[x + 0.1, x, rest], 2, 2)              # every lead run must pass
    assert not ok and ev == "modified z-score vs the rest 3.6, 3.5"


def test_drift_needs_thirty_runs():
    v = 10.0 + 0.01 * np.arange(30)
    d = detect_drift(v)
    assert d["testable"] and d["significant"] and d["direction"] == "slower over time"
    assert detect_drift(v[:29])["testable"] is False


def test_drift_percent_needs_a_positive_median():
    v = 0.5 + 0.001 * np.arange(40)                       # a sub-millisecond median still gives a percentage
    d = detect_drift(v)
    assert d["slope_percent_per_100_runs"] == pytest.approx(0.001 / np.median(v) * 100 * 100)
    z = np.r_[np.zeros(21), 0.001 * np.arange(1, 20)]    # median 0: no percentage, and no crash
    d = detect_drift(z)
    assert d["slope_percent_per_100_runs"] is None and d["theil_sen_slope_ms_per_run"] is not None


@pytest.mark.parametrize("seed", range(6))
def test_one_sided_mann_whitney_against_scipy(seed):
    from edgeprof.analysis.rank_tests import mann_whitney

    rng = np.random.default_rng(seed)
    for n1, n2 in ((3, 12), (5, 7), (8, 30), (20, 25)):
        x = rng.normal(0.3 * (seed % 3 - 1), 1, n1)
        y = rng.normal(0, 1, n2)
        r = mann_whitney(x, y, alternative="greater")
        method = "exact" if r["method"] == "exact" else "asymptotic"
        assert r["p_value"] == pytest.approx(ss.mannwhitneyu(x, y, alternative="greater", method=method).pvalue,
                                             rel=1e-9, abs=1e-12), (n1, n2)
        t = mann_whitney(x, y)
        assert t["p_value"] == pytest.approx(ss.mannwhitneyu(x, y, method=method).pvalue, rel=1e-9, abs=1e-12)
@pytest.mark.parametrize("n, asked, kept_out", [(20, 0, 0), (20, 19, 19), (20, 20, 19), (20, 500, 19), (1, 3, 0),
                                                 (0, 2, 0)])
def test_warmup_given_never_takes_every_run(n, asked, kept_out):
    from edgeprof.analysis.selection import warmup_count

    assert warmup_count(np.ones(n), asked) == kept_out


def test_plan_and_compare_resolve_warmup_alike(tmp_path):
    """`--warmup N` beyond a launch's runs: compare and plan both keep its last run (plan used to keep none)."""
    import edgeprof
    from edgeprof.examples import example_root

    runs = example_root() / "runs" / "linux"
    plan = edgeprof.plan([runs], effect="50%", warmup=500)
    cmp = edgeprof.compare(["portable"], ["xnnpack_fp32"], run_dir=runs, warmup=500)
    assert [c["runs"] for c in plan["configurations"]] == [[1], [1], [1]]
    assert cmp["baseline"]["count"] == 1 == cmp["candidate"]["count"]
