"""Edges of the rank tests: the pairwise-difference estimators' 4-million-pair limit one pair past it (exactly 4M
pairs, 2,000 × 2,000, is tested in test_rank_tests_boundaries.py)."""

from __future__ import annotations

import numpy as np

from edgeprof.analysis import rank_tests as rt


def test_hodges_lehmann_subsamples_one_pair_past_four_million():
    # 41 × 97,561 = 4,000,001 pairs: subsampled to 41 × 2,000 (√4M values of a sample at most)
    rng = np.random.default_rng(3)
    x, y = rng.normal(1, 1, 41), rng.normal(0, 1, 97_561)
    hl = rt.hodges_lehmann(x, y)
    assert hl["subsampled"] is True
