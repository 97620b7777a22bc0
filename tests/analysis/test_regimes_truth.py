"""Every statistical regime of `compare` on constructed launches with a known truth — an A/A pair and a known 5 %
speedup — for one launch per arm without allowance (`--launch-cv 0`), with the allowance, one against two, two
against two and several launches: the verdict is rarely wrong when nothing changed, and the interval covers the true
speedup as often as it says. The arms differ in their run noise (2 % against 8 %), so an interval that resamples one
arm twice, or the wrong axis, or ignores the launch-to-launch spread, covers too seldom; the no-allowance interval is
also checked against SciPy's own bootstrap of the ratio of medians."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from edgeprof.analysis.compare import Arm, compare_latency


def _arm(rng, name: str, k: int, median: float, run_cv: float, launch_sd: float, n: int = 60) -> Arm:
    return Arm(name, [median * math.exp(launch_sd * rng.standard_normal()) * np.exp(run_cv * rng.standard_normal(n))
                      for _ in range(k)])


REGIMES = {  # name: (baseline launches, candidate launches, launch SD of the truth, launch_cv given, regime)
    "1v1 no allowance": (1, 1, 0.0, 0.0, "single-launch, no allowance"),
    "1v1 allowance": (1, 1, 0.03, 0.03, "single-launch"),
    "1v2": (1, 2, 0.03, 0.03, "single-launch"),
    "2v2": (2, 2, 0.03, 0.03, "multi-launch"),
    "multi-launch 4v4": (4, 4, 0.03, None, "multi-launch"),
}


@pytest.mark.parametrize("regime", list(REGIMES))
def test_aa_and_a_known_speedup(regime):
    kb, kc, tau, launch_cv, name = REGIMES[regime]
    rng = np.random.default_rng(sum(map(ord, regime)))
    sims, wrong, covered = 120, 0, 0
    kw = {} if launch_cv is None else {"launch_cv": launch_cv}
    for s in range(sims):
        aa = compare_latency(_arm(rng, "b", kb, 10.0, 0.02, tau), _arm(rng, "c", kc, 10.0, 0.08, tau), threshold=0.0,
                             warmup=0, seed=s, resamples=400, **kw)
        wrong += aa["verdict"] in ("faster", "slower")
        fx = compare_latency(_arm(rng, "b", kb, 10.0, 0.02, tau), _arm(rng, "c", kc, 10.0 / 1.05, 0.08, tau),
                             threshold=0.0, warmup=0, seed=s, resamples=400, **kw)
        covered += fx["ci"]["low"] <= 1.05 <= fx["ci"]["high"]
    assert aa["regime"] == fx["regime"] == name
    assert wrong / sims <= 0.08, (regime, wrong / sims)
    assert covered / sims >= 0.88, (regime, covered / sims)


def test_the_no_allowance_interval_is_scipys_bootstrap_of_the_ratio_of_medians():
    rng = np.random.default_rng(41)
    b = 10.0 * np.exp(0.02 * rng.standard_normal(80))
    c = 9.5 * np.exp(0.08 * rng.standard_normal(80))
    r = compare_latency(Arm("b", [b]), Arm("c", [c]), launch_cv=0, warmup=0, threshold=0.0, resamples=4000, seed=1)
    assert r["regime"] == "single-launch, no allowance"
    ref = stats.bootstrap((b, c), lambda x, y: np.log(np.median(x)) - np.log(np.median(y)), n_resamples=4000,
                          method="percentile", random_state=np.random.default_rng(2), vectorized=False)
    lo, hi = math.exp(ref.confidence_interval.low), math.exp(ref.confidence_interval.high)
    assert r["ci"]["low"] == pytest.approx(lo, rel=0.01) and r["ci"]["high"] == pytest.approx(hi, rel=0.01)
    width, ref_width = math.log(r["ci"]["high"] / r["ci"]["low"]), math.log(hi / lo)
    assert 0.85 <= width / ref_width <= 1.18
