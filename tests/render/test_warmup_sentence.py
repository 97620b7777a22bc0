"""The latency table's warm-up row quotes figures that agree with the rows beside it: the warm-up runs' median
against the median after them (what made them warm-up), and the median and mean without them beside the same
statistics with them — checked against numpy on a series whose steady runs have a slow tail, where leaving two
slower-than-median warm-up runs out raises the mean."""

from __future__ import annotations

import numpy as np
import pytest

from edgeprof.analysis.latency import robust_latency
from edgeprof.conventions import fmt_ms
from edgeprof.render.terminal import warmup_sentence


def series(warm: float) -> np.ndarray:
    rng = np.random.default_rng(7)
    steady = 0.85 * np.exp(rng.normal(0, 0.004, 98))
    steady[::10] = 2.0  # 10 % slow runs: the steady mean (≈ 0.965) is above the warm-up runs
    return np.concatenate([[warm, warm], steady])


@pytest.mark.parametrize("warm, rises", [(0.95, True), (1.5, False)])
def test_the_warmup_row_quotes_both_medians_and_the_statistics_with_and_without_them(warm, rises):
    v = series(warm)
    r = robust_latency(v)
    w = r["warmup"]
    assert w["count"] == 2
    text = warmup_sentence(w, r["median_ms"], r["mean_ms"])
    assert f"median {fmt_ms(warm)} ms vs {fmt_ms(float(np.median(v[2:])))} ms after them" in text
    assert f"median {fmt_ms(float(np.median(v[2:])))} ms (with them {fmt_ms(float(np.median(v)))})" in text
    assert f"mean {fmt_ms(float(np.mean(v[2:])))} ms (with them {fmt_ms(float(np.mean(v)))})" in text
    assert bool(np.mean(v[2:]) > np.mean(v)) is rises
    assert ("the mean rises without them" in text) is rises
