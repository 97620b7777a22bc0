"""The mode detector behind the multimodality warning (`stats.modes`) on samples of known shape — two clusters of
known masses and centres, a long tail, a constant launch, the run-count and mass boundaries — and its density
against scipy's Gaussian KDE given the same bandwidth (Silverman's rule: 0.9·min(SD, IQR/1.34)·n^−0.2 on log
latency), masses split at the valley between the two peaks, on more runs than one block of the computation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from edgeprof.analysis.stats import MIN_RUNS_SHAPE, MODE_DIP, MODE_MASS, modes


def clusters(n: int, share: float, a: float = 10.0, b: float = 20.0, sd: float = 0.02, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    k = round(share * n)
    return np.r_[a * np.exp(rng.normal(0, sd, k)), b * np.exp(rng.normal(0, sd, n - k))]


def kde_masses(v: np.ndarray) -> tuple[list[float], list[float]]:
    """scipy's KDE on the detector's grid (512 points, 3 bandwidths beyond the data), split at the lowest point
    between the two highest peaks: (masses, centres)."""
    x = np.log(v)
    sd = x.std(ddof=1)
    q75, q25 = np.percentile(x, [75, 25])
    bw = 0.9 * min(sd, (q75 - q25) / 1.34) * x.size ** -0.2
    grid = np.linspace(x.min() - 3 * bw, x.max() + 3 * bw, 512)
    dens = sps.gaussian_kde(x, bw_method=bw / sd)(grid)
    inner = np.flatnonzero((dens[1:-1] > dens[:-2]) & (dens[1:-1] >= dens[2:])) + 1
    p, q = sorted(inner[np.argsort(dens[inner])[-2:]])
    cut = p + int(np.argmin(dens[p:q + 1]))
    total = dens.sum()
    return [dens[:cut].sum() / total, dens[cut:].sum() / total], [float(np.exp(grid[p])), float(np.exp(grid[q]))]


@pytest.mark.parametrize("n,share", [(200, 0.3), (1000, 0.5), (9000, 0.3)])  # 9,000 runs: three blocks of 4,096
def test_two_clusters_match_scipys_density(n, share):
    v = clusters(n, share, seed=n)
    got = modes(v)
    masses, centres = kde_masses(v)
    assert got["multimodal"] is True
    assert got["masses"] == pytest.approx(masses, rel=1e-9)
    assert got["centres_ms"] == pytest.approx(centres, rel=1e-9)
    assert got["masses"][0] == pytest.approx(share, abs=0.02)  # and the truth: the clusters' shares and centres
    assert got["centres_ms"] == pytest.approx([10.0, 20.0], rel=0.02)


@pytest.mark.parametrize("share,multimodal", [(0.12, False), (0.28, True)])
def test_a_cluster_is_a_mode_only_with_a_fifth_of_the_runs(share, multimodal):
    assert MODE_MASS == 0.20
    got = modes(clusters(2000, share, seed=3))
    assert got["multimodal"] is multimodal
    assert len(got["masses"]) == (2 if multimodal else 1) and len(got["centres_ms"]) == len(got["masses"])
    if not multimodal:  # the small cluster is not reported; the large one is the mode
        assert got["masses"][0] == pytest.approx(1 - share, abs=0.02)
        assert got["centres_ms"][0] == pytest.approx(20.0, rel=0.02)


def test_too_few_runs_to_tell_at_the_boundary():
    assert MIN_RUNS_SHAPE == 30
    few = clusters(MIN_RUNS_SHAPE - 1, 0.5, seed=5)
    got = modes(few)
    assert got == {"multimodal": False, "masses": [1.0], "centres_ms": [pytest.approx(float(np.median(few)))]}
    assert modes(clusters(MIN_RUNS_SHAPE, 0.5, seed=5))["multimodal"] is True


def test_constant_runs_a_long_tail_and_close_clusters_are_one_mode():
    assert modes(np.full(100, 7.5)) == {"multimodal": False, "masses": [1.0], "centres_ms": [pytest.approx(7.5)]}
    assert modes(np.array([])) == {"multimodal": False, "masses": [], "centres_ms": []}
    tail = 10 * np.exp(np.random.default_rng(1).gamma(1.0, 0.15, 2000))
    assert modes(tail)["multimodal"] is False
    # clusters 1 SD apart: the density between them never falls to 0.35 of the smaller peak
    assert MODE_DIP == 0.35
    assert modes(clusters(2000, 0.5, a=10.0, b=10.0 * np.exp(0.04), sd=0.02, seed=2))["multimodal"] is False
