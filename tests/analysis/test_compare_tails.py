"""`compare` where the median is not the whole story, on constructed launches whose truth is known exactly: a
share of slow runs (≥ 2× the launch's median) planted in the candidate — the tail check at its 5 % materiality
boundary, the tail-regression statement, the slow-run shares counted here by hand —, a second mode recurring in
enough launches (the multimodality warning at its 30-run and half-the-launches boundaries), identical constant
arms (an interval exactly at 1 is not significant), and the launch sources carried into the result."""

from __future__ import annotations

import numpy as np
import pytest

from edgeprof.analysis.compare import Arm, TAIL_MATERIAL, compare_latency
from edgeprof.conventions import fmt_ratio


def launch(median: float, n: int, slow: int, seed: int, cv: float = 0.01) -> np.ndarray:
    """n runs around ``median`` (lognormal, cv 1 %) of which ``slow`` are 2.5× the median, spread evenly."""
    rng = np.random.default_rng(seed)
    x = median * np.exp(rng.normal(0.0, cv, n))
    if slow:
        x[np.linspace(5, n - 1, slow).astype(int)] = 2.5 * median
    return x


def arms(slow_per_launch: int, n: int = 100, k: int = 3):
    b = Arm("b", [launch(10.0, n, 0, seed=s) for s in range(k)], [f"b_l{s + 1}.etdump" for s in range(k)])
    c = Arm("c", [launch(9.0, n, slow_per_launch, seed=10 + s) for s in range(k)], [f"c_l{s + 1}.etdump" for s in range(k)])
    return b, c


def slow_share(x: np.ndarray) -> float:
    return float(np.mean(x >= 2 * np.median(x)))


@pytest.mark.parametrize("slow, tail", [(5, True), (4, False)])  # 5 of 100 = the 5 % boundary, 4 of 100 below it
def test_the_tail_check_at_its_materiality_boundary(slow, tail):
    assert TAIL_MATERIAL == 0.05
    b, c = arms(slow)
    r = compare_latency(b, c, warmup=0, resamples=200, threshold=0.02)
    s = r["slow_runs"]
    assert s["baseline_share"] == pytest.approx(np.mean([slow_share(x) for x in b.launches]), abs=1e-12) == 0.0
    assert s["candidate_share"] == pytest.approx(np.mean([slow_share(x) for x in c.launches]), abs=1e-12)
    assert s["candidate_share"] == pytest.approx(slow / 100)
    assert (s["verdict"] == "slower") is tail
    assert r["verdict"] == "faster"  # the median: 9 vs 10 ms
    if tail:
        assert r["tail_regression"].startswith("tail regression: median ") and "faster (faster), but" in \
            r["tail_regression"]
        assert f"{slow:.1f} % of runs took ≥ 2× their launch's median (baseline 0.0 %)" in r["tail_regression"]
        assert r["tail_regression"] in r["warnings"]
    elif r["tail_regression"] is not None:  # a mean or p99 that is slower may still speak, but not the share
        assert "of runs took" not in r["tail_regression"]


def test_a_slower_p99_with_a_faster_median_is_a_tail_regression():
    b, c = arms(12)  # 12 % of the candidate's runs 2.5× slow: its p90 and p99 sit on them
    r = compare_latency(b, c, warmup=0, resamples=200)
    m = r["metrics"]
    assert m["median"]["verdict"] == "faster" and m["p99"]["verdict"] == "slower"
    p99 = [np.percentile(x, 99) for x in c.launches], [np.percentile(x, 99) for x in b.launches]
    assert m["p99"]["speedup"] < 1 and np.mean(p99[0]) > np.mean(p99[1])
    assert "p99 " in r["tail_regression"] and "slower [" in r["tail_regression"]
    assert r["tail_regression"].endswith("— some runs got much slower")


def test_no_tail_statement_when_the_headline_itself_is_slower():
    b, c = arms(12)
    r = compare_latency(c, b, warmup=0, resamples=200)  # swapped: the median is slower, nothing to add
    assert r["verdict"] == "slower" and r["tail_regression"] is None


def bimodal(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.where(np.arange(n) % 2 == 0, 10.0, 14.0) * np.exp(rng.normal(0.0, 0.005, n))


@pytest.mark.parametrize("layout, warned", [
    ((60, 60, 60), True),       # every launch bimodal
    ((30, 30), True),           # 30 runs: enough to look
    ((29, 29), False),          # 29: too few to look at all
    ((60, 60, 0, 0), True),     # 2 of 4 launches: at least two and at least half
    ((60, 60, 0, 0, 0), False),  # 2 of 5: fewer than half
    ((60, 0, 0), False),        # one launch that switched levels is that launch's state, not the configuration's
])
def test_the_multimodality_warning_at_its_boundaries(layout, warned):
    launches = [bimodal(n, s) if n else 10.0 * np.exp(np.random.default_rng(s).normal(0, 0.005, 60))
                for s, n in enumerate(layout)]
    b = Arm("bimodal", launches)
    c = Arm("c", [10.0 * np.exp(np.random.default_rng(50 + s).normal(0, 0.005, 60)) for s in range(len(layout))])
    r = compare_latency(b, c, warmup=0, resamples=200)
    notes = [w for w in r["warnings"] if w.startswith("bimodal: latency is multimodal")]
    assert bool(notes) is warned
    if warned:
        n_split = sum(1 for n in layout if n)
        assert f"within {n_split} of {sum(1 for n in layout if n >= 30 or n == 0)} launch(es)" in notes[0]


def test_identical_constant_arms_are_not_significant():
    """A coarse timer can give every run the same value: the interval is exactly [1, 1], which is no change."""
    b = Arm("b", [np.full(40, 5.0)])
    c = Arm("c", [np.full(40, 5.0)])
    r = compare_latency(b, c, warmup=0, launch_cv=0, resamples=200)
    assert r["speedup"]["estimate"] == 1.0 and r["ci"]["low"] == r["ci"]["high"] == 1.0
    assert r["significant"] is False and r["verdict"] == "equivalent"


def test_each_launch_keeps_its_source_name():
    b, c = arms(0)
    r = compare_latency(b, c, warmup=0, resamples=200)
    assert [x["source"] for x in r["baseline"]["launches"]] == b.sources
    assert [x["source"] for x in r["candidate"]["launches"]] == c.sources


def steady(median: float, n: int, cv: float, seed: int) -> np.ndarray:
    return median * np.exp(np.random.default_rng(seed).normal(0.0, cv, n))


@pytest.mark.parametrize("spread, from_arms", [(0.20, True), (0.005, False)])
def test_one_against_two_launches_never_allows_less_than_the_two_showed(spread, from_arms):
    """1 vs 2 launches with a stated 3 % launch SD: the allowance is the larger of the 3 % and the SD of the two
    launches' log medians (computed here), and the result says which."""
    b = Arm("b", [steady(10.0, 80, 0.01, 1)])
    c = Arm("c", [steady(9.0, 80, 0.01, 2), steady(9.0 * (1 + spread), 80, 0.01, 3)])
    r = compare_latency(b, c, warmup=0, launch_cv=0.03, resamples=200)
    shown = float(np.std([np.log(np.median(x)) for x in c.launches], ddof=1))
    a = r["launch_allowance"]
    assert r["regime"] == "single-launch" and a["applied"] is True and a["from_arms"] is from_arms
    assert a["launch_cv"] == pytest.approx(max(0.03, shown), rel=1e-9)
    assert r["launch_sd_estimate"] is None


def test_several_launches_report_the_measured_sd_and_no_allowance():
    b = Arm("b", [steady(10.0 * (1 + 0.02 * k), 60, 0.01, k) for k in range(3)])
    c = Arm("c", [steady(9.0 * (1 - 0.02 * k), 60, 0.01, 9 + k) for k in range(3)])
    r = compare_latency(b, c, warmup=0, launch_cv=0.07, resamples=200)
    assert r["regime"] == "multi-launch" and r["launch_allowance"]["applied"] is False
    assert r["launch_allowance"]["launch_cv"] == 0.07  # the noise given, not applied: the launches measure it
    assert r["launch_sd_estimate"] is not None


def test_inconclusive_advice_names_the_noise_that_dominates():
    # launch-bound: quiet runs, one launch per arm, a 25 % launch SD allowed — only more launches help
    r = compare_latency(Arm("b", [steady(10.0, 100, 0.01, 1)]), Arm("c", [steady(10.0 / 1.05, 100, 0.01, 2)]),
                        warmup=0, launch_cv=0.25, resamples=200)
    assert r["verdict"] == "inconclusive"
    assert r["advice"].startswith("inconclusive — one launch per arm cannot separate this from launch-to-launch "
                                  "variation (SD 25 %")
    rec = r["plan"]["recommended"]
    assert r["advice"].endswith(f"record ≥ {rec['launches_per_arm']} launches per arm" if rec else
                                "more than 50 launches per arm would be needed for a change this small")
    # run-bound: noisy runs, few of them, a 1 % launch SD — more runs per launch help
    r = compare_latency(Arm("b", [steady(10.0, 12, 0.30, 3)]), Arm("c", [steady(10.0, 12, 0.30, 4)]),
                        warmup=0, launch_cv=0.01, resamples=200)
    within = np.sqrt(np.mean([np.var(np.log(x), ddof=1) for x in (steady(10.0, 12, 0.30, 3), steady(10.0, 12, 0.30, 4))]))
    assert (np.pi / 2) * within ** 2 / 12 >= 0.01 ** 2  # the run noise dominates here, by construction
    assert r["verdict"] == "inconclusive" and r["advice"].startswith("underpowered: the minimum detectable effect is ")
    assert "add runs (" in r["advice"] and "launch-to-launch variation dominates" not in r["advice"]


def test_slow_runs_against_a_much_faster_median_are_a_wider_tail_not_runs_that_got_slower():
    """The candidate 3× faster with 8 % of its runs at 2.5× its own median (7.5 ms, still below the baseline's
    10 ms): its p99 is faster, so the sentence must not say that runs got slower."""
    b = Arm("b", [launch(10.0, 100, 0, seed=s) for s in range(3)], [f"b_l{s + 1}.etdump" for s in range(3)])
    c = Arm("c", [launch(3.0, 100, 8, seed=10 + s) for s in range(3)], [f"c_l{s + 1}.etdump" for s in range(3)])
    assert all(np.percentile(x, 99) < min(np.percentile(y, 1) for y in b.launches) for x in c.launches)
    r = compare_latency(b, c, warmup=0, resamples=200)
    m = r["metrics"]
    assert r["slow_runs"]["verdict"] == "slower" and r["slow_runs"]["candidate_share"] == pytest.approx(0.08)
    assert m["p99"]["verdict"] == "faster" and all(m[k]["verdict"] != "slower" for k in ("mean", "p90", "p99"))
    t = r["tail_regression"]
    assert t.startswith("wider tail: median ") and "got much slower" not in t and "tail regression" not in t
    assert "8.0 % of runs took ≥ 2× their launch's median (baseline 0.0 %)" in t
    p99 = m["p99"]
    assert f"though p90 {fmt_ratio(m['p90']['speedup'])} faster" in t
    assert f"p99 {fmt_ratio(p99['speedup'])} faster [{p99['ci_low']:.3g}–{p99['ci_high']:.3g}]" in t
    assert t in r["warnings"]
