"""`compare` at the edges of its rules, on constructed launches whose statistics are known by construction: whether
the launch-to-launch allowance or the runs bound an inconclusive result (tau² against (π/2)·σ²/n, the variance of
a median of n normal runs, on both sides of equality), the underpowered advice at MDE = threshold, launches of one
run (no within-launch spread to measure), the tail check when both arms have the same share of slow runs, the
tail sentence's wording, and the library defaults the README documents."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as ss

from edgeprof.analysis.compare import Arm, _tail_statement, compare_latency

BOUND = "inconclusive — one launch per arm cannot separate this from launch-to-launch variation"
UNDERPOWERED = "underpowered: the minimum detectable effect is "


def exact_launch(median: float, log_sd: float, n: int, seed: int) -> np.ndarray:
    """n runs whose log values have sample SD exactly ``log_sd`` (normal scores, standardized) around ``median``,
    in a shuffled order (no trend)."""
    z = ss.norm.ppf((np.arange(n) + 0.5) / n)
    z = (z - z.mean()) / z.std(ddof=1)
    return (median * np.exp(log_sd * z))[np.random.default_rng(seed).permutation(n)]


def median_variance_bound(launches: list[np.ndarray]) -> float:
    """(π/2)·σ²/n: the variance of a median of n normal runs, with σ² the mean per-launch variance of log latency
    (launches of more than one run) and n the smallest launch."""
    var = [np.var(np.log(x), ddof=1) for x in launches if x.size > 1]
    within = np.sqrt(np.mean(var))
    return (np.pi / 2) * within ** 2 / min(x.size for x in launches)


def sd_with_square(target: float) -> float:
    """The float tau with tau ** 2 == target exactly (searched from √target one ulp at a time)."""
    tau = math.sqrt(target)
    for _ in range(64):
        if tau ** 2 == target:
            return tau
        tau = np.nextafter(tau, np.inf if tau ** 2 < target else -np.inf)
    pytest.skip("no float whose square is exactly the bound")


# --- one launch per arm: the allowance against the noise of the launches' medians -------------------------------

def one_vs_one():
    """1 vs 1 launch of 40 runs, σ = 3 % each; the candidate 3 % faster (inconclusive at δ = 2 %)."""
    return [exact_launch(10.0, 0.03, 40, seed=1)], [exact_launch(10.0 / 1.03, 0.03, 40, seed=2)]


def two_vs_one():
    """A baseline of a one-run launch at exactly the median of a 20-run launch (the two launches agree: the arms
    show no launch spread), against one candidate launch of 20 runs. The smallest launch has 1 run."""
    long = exact_launch(10.0, 0.03, 20, seed=3)
    return [np.array([np.median(long)]), long], [exact_launch(10.0, 0.03, 20, seed=4)]


@pytest.mark.parametrize("arms", [one_vs_one, two_vs_one])
@pytest.mark.parametrize("side", ["below", "equal", "above"])
def test_the_launch_allowance_bounds_a_single_launch_result_only_when_it_exceeds_the_median_noise(arms, side):
    b, c = arms()
    bound = median_variance_bound(b + c)
    tau = {"below": math.sqrt(bound) * (1 - 1e-6), "equal": sd_with_square(bound),
           "above": math.sqrt(bound) * (1 + 1e-6)}[side]
    r = compare_latency(Arm("b", b), Arm("c", c), warmup=0, launch_cv=tau, threshold=0.02, resamples=100)
    assert r["regime"] == "single-launch" and r["verdict"] == "inconclusive"
    assert r["launch_allowance"]["launch_cv"] == tau and not r["launch_allowance"]["from_arms"]
    assert r["minimum_detectable_effect"] > 0.02
    if side == "above":
        assert r["advice"].startswith(BOUND)
    else:  # the median's own noise is at least as large: more runs help, the allowance is not the bound
        assert r["advice"].startswith(UNDERPOWERED) and "add runs (" in r["advice"]
        assert "launch-to-launch variation dominates" not in r["advice"]
    assert r["advice"] in r["warnings"]


def test_the_minimum_detectable_effect_of_a_single_launch_comparison_and_its_boundary():
    b, c = one_vs_one()
    tau = 0.5 * math.sqrt(median_variance_bound(b + c))  # run noise bounds: "add runs" advice when underpowered
    r = compare_latency(Arm("b", b), Arm("c", c), warmup=0, launch_cv=tau, threshold=0.02, resamples=100)
    ci = r["ci"]
    z = ss.norm.ppf(0.975)
    se = math.log(ci["high"] / ci["low"]) / (2 * z)  # a normal interval: est ± z·se on the log scale
    assert ci["standard_error_log"] == pytest.approx(se, rel=1e-9)
    mde = math.expm1((z + ss.norm.ppf(0.80)) * se)  # detected with 80 % power at the 5 % level
    assert r["minimum_detectable_effect"] == pytest.approx(mde, rel=1e-9)
    assert r["advice"].startswith(UNDERPOWERED)
    # a threshold equal to the MDE is resolvable by this design: no underpowered advice; just below it, there is
    at = compare_latency(Arm("b", b), Arm("c", c), warmup=0, launch_cv=tau, resamples=100,
                         threshold=r["minimum_detectable_effect"])
    assert at["verdict"] == "inconclusive" and at["advice"] is None
    below = compare_latency(Arm("b", b), Arm("c", c), warmup=0, launch_cv=tau, resamples=100,
                            threshold=r["minimum_detectable_effect"] * (1 - 1e-9))
    assert below["verdict"] == "inconclusive" and below["advice"].startswith(UNDERPOWERED)


def test_a_multi_launch_result_bound_by_launch_variation_is_not_told_it_has_one_launch():
    b = [exact_launch(10.0 * math.exp(o), 0.01, 20, seed=i) for i, o in enumerate((0.0, 0.08, -0.07))]
    c = [exact_launch(10.0 * math.exp(o), 0.01, 20, seed=5 + i) for i, o in enumerate((0.05, -0.06, 0.01))]
    r = compare_latency(Arm("b", b), Arm("c", c), warmup=0, threshold=0.02)
    assert r["regime"] == "multi-launch" and r["verdict"] == "inconclusive"
    assert r["launch_sd_estimate"] ** 2 > median_variance_bound(b + c)  # launch spread ≫ a 20-run median's
    assert r["advice"].startswith(UNDERPOWERED) and r["advice"].endswith("launch-to-launch variation dominates")
    assert "one launch per arm" not in r["advice"]


# --- launches of one run ----------------------------------------------------------------------------------------

def test_launches_of_one_run_have_no_measurable_run_noise_so_launches_are_the_advice():
    b = Arm("b", [np.array([10.0]), np.array([10.4]), np.array([9.7])])
    c = Arm("c", [np.array([10.1]), np.array([9.8]), np.array([10.3])])
    r = compare_latency(b, c, warmup=0, threshold=0.02)
    assert r["regime"] == "multi-launch" and r["verdict"] == "inconclusive"
    assert r["plan"]["within_sd"] == 0.0  # no launch has two runs to show a spread
    # every bit of variation is between launches: adding runs cannot help
    assert r["advice"].startswith(UNDERPOWERED) and "add launches" in r["advice"]
    assert r["advice"].endswith("launch-to-launch variation dominates")


def test_a_one_run_launch_makes_its_median_as_noisy_as_a_run():
    """The smallest launch sets the median's noise: with a one-run launch it is σ² itself, not σ²/2."""
    long = exact_launch(10.0, 0.035, 20, seed=1)
    b = [np.array([np.median(long)]), long]
    c = [exact_launch(10.0, 0.035, 20, seed=2)]
    sigma2 = np.mean([np.var(np.log(x), ddof=1) for x in (long, c[0])])
    tau = math.sqrt(0.75 * (np.pi / 2) * sigma2)  # between (π/2)σ²/2 and (π/2)σ²/1
    r = compare_latency(Arm("b", b), Arm("c", c), warmup=0, launch_cv=tau, threshold=0.02, resamples=100)
    assert r["regime"] == "single-launch" and r["verdict"] == "inconclusive"
    assert r["advice"].startswith(UNDERPOWERED) and "add runs (" in r["advice"]


# --- the tail check ---------------------------------------------------------------------------------------------

def slow_launch(slow: int, n: int = 100, median: float = 10.0, seed: int = 0) -> np.ndarray:
    x = exact_launch(median, 0.01, n, seed)
    x[np.linspace(5, n - 1, slow).astype(int)] = 2.5 * median
    return x


@pytest.mark.parametrize("k", [1, 3])
def test_the_same_share_of_slow_runs_in_both_arms_is_no_tail_regression(k):
    b = Arm("b", [slow_launch(10, seed=i) for i in range(k)])
    c = Arm("c", [slow_launch(10, median=9.0, seed=10 + i) for i in range(k)])
    r = compare_latency(b, c, warmup=0, launch_cv=0.0, resamples=100)
    s = r["slow_runs"]
    assert s["baseline_share"] == s["candidate_share"] == 0.10  # 10 of 100 runs ≥ 2× the median, by construction
    assert s["verdict"] == "no significant change"
    assert r["tail_regression"] is None


def tails(head: float, head_verdict: str, **others) -> dict:
    """Per-metric records as compare makes them: speedup, interval and verdict (others: metric → (speedup,
    verdict)); ``slow`` → (baseline share, candidate share, verdict)."""
    out = {"median": {"speedup": head, "ci_low": head * 0.9, "ci_high": head * 1.1, "verdict": head_verdict}}
    for m in ("mean", "p90", "p99"):
        s, v = others.get(m, (head, head_verdict))
        out[m] = {"speedup": s, "ci_low": 0.5, "ci_high": 0.75 if v == "slower" else 1.5, "verdict": v}
    if "slow" in others:
        b, c, v = others["slow"]
        out["slow_share"] = {"baseline_share": b, "candidate_share": c, "verdict": v}
    return out


def test_no_tail_statement_when_nothing_in_the_tail_got_worse():
    assert _tail_statement(tails(1.2, "faster", slow=(0.0, 0.01, "no significant change")), "median") is None
    assert _tail_statement(tails(1.0, "equivalent"), "median") is None


def test_a_slower_p99_alone_is_a_tail_regression():
    t = tails(1.2, "faster", p99=(0.8, "slower"), slow=(0.0, 0.0, "no significant change"))
    assert _tail_statement(t, "median") == ("tail regression: median 1.2× faster (faster), but p99 1.25× slower "
                                            "[0.5–0.75] — some runs got much slower")


def test_a_grown_share_of_slow_runs_alone_is_a_tail_regression():
    t = tails(1.0, "equivalent", slow=(0.0, 0.08, "slower"))
    assert _tail_statement(t, "median") == ("tail regression: median 1× faster (equivalent), but 8.0 % of runs took "
                                            "≥ 2× their launch's median (baseline 0.0 %) — more runs are slow "
                                            "against their median")


@pytest.mark.parametrize("head, said", [(1.0, "median 1× faster"), (1.5, "median 1.5× faster"),
                                        (0.99, "median 1.01× slower")])
def test_the_tail_statement_states_the_head_ratio_as_the_summary_line_does(head, said):
    """speedup ≥ 1 reads "faster" (1× included), below 1 its inverse "slower"."""
    t = tails(head, "inconclusive", p90=(0.7, "slower"))
    assert _tail_statement(t, "median").startswith(f"tail regression: {said} (inconclusive), but p90 1.43× slower")


def test_slow_runs_beside_a_faster_p90_are_a_wider_tail():
    t = tails(1.3, "faster", p90=(1.2, "faster"), p99=(1.1, "inconclusive"), slow=(0.01, 0.06, "slower"))
    assert _tail_statement(t, "median") == (
        "wider tail: median 1.3× faster (faster), and 6.0 % of runs took ≥ 2× their launch's median (baseline "
        "1.0 %), though p90 1.2× faster [0.5–1.5] — the slow runs are slow against the candidate's own median, "
        "not against the baseline")


# --- defaults -----------------------------------------------------------------------------------------------------

def test_the_defaults_are_seed_0_and_2000_resamples():
    """README: the bootstrap uses 2,000 resamples and --seed (default 0); one launch per arm without an allowance is
    the bootstrap interval, so the defaults decide it."""
    b = Arm("b", [exact_launch(10.0, 0.03, 31, seed=1)])
    c = Arm("c", [exact_launch(9.8, 0.03, 31, seed=2)])
    r = compare_latency(b, c, warmup=0, launch_cv=0.0)
    assert r["seed"] == 0 and r["resamples"] == 2000
    explicit = compare_latency(b, c, warmup=0, launch_cv=0.0, seed=0, resamples=2000)
    assert r["regime"] == "single-launch, no allowance" and r["ci"] == explicit["ci"]


def test_launches_of_two_runs_give_the_run_noise_the_plan_uses():
    b = [np.array([10.0, 10.6]), np.array([10.3, 9.9]), np.array([9.6, 10.1])]
    c = [np.array([10.2, 9.7]), np.array([9.9, 10.5]), np.array([10.4, 10.0])]
    r = compare_latency(Arm("b", b), Arm("c", c), warmup=0, threshold=0.02)
    assert r["verdict"] == "inconclusive"
    pooled = math.sqrt(np.mean([np.var(np.log(x), ddof=1) for x in b + c]))  # by hand: each pair's variance
    assert pooled == pytest.approx(math.sqrt(np.mean([(math.log(x[0] / x[1])) ** 2 / 2 for x in b + c])))
    assert r["plan"]["within_sd"] == pytest.approx(pooled, rel=1e-12)


def _launch_with_slow_runs(slow: int, seed: int, n: int = 100, median: float = 10.0):
    import numpy as np
    import scipy.stats as ss

    x = median * np.exp(0.01 * ss.norm.ppf((np.arange(n) + 0.5) / n))[np.random.default_rng(seed).permutation(n)]
    x[np.linspace(5, n - 1, slow).astype(int)] = 2.5 * median  # `slow` runs at 2.5× the median
    return x


@pytest.mark.parametrize("b_slow, c_slow, slower", [(4, 5, False), (4, 20, True)])
def test_launches_with_equal_slow_run_counts_still_carry_their_sampling_error(b_slow, c_slow, slower):
    """Three launches per arm, each with exactly the same number of slow runs: the launches do not spread, but each
    launch's share is still a sample of its runs. 12/300 against 15/300 is no evidence (Fisher's exact test: p ≈
    0.69); 12/300 against 60/300 is (p < 1e-9)."""
    import scipy.stats as ss

    from edgeprof.analysis.compare import Arm, compare_latency

    r = compare_latency(Arm("b", [_launch_with_slow_runs(b_slow, i) for i in range(3)]),
                        Arm("c", [_launch_with_slow_runs(c_slow, 10 + i) for i in range(3)]), warmup=0, resamples=100)
    fisher = ss.fisher_exact([[3 * b_slow, 300 - 3 * b_slow], [3 * c_slow, 300 - 3 * c_slow]]).pvalue
    assert (fisher < 0.05) == slower
    assert (r["slow_runs"].verdict == "slower") == slower
    assert (r["slow_runs"].p_value < 0.05) == slower
