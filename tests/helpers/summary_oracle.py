"""The latency summary every document carries (count, mean, median, extremes, spread, percentiles, trimmed means),
checked against numpy and scipy on the runs it summarizes — one oracle for every report that has one."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats


def check_summary(s: dict, x: np.ndarray) -> None:
    """Each summary key ``s`` has (those it lacks are not asked for) equals numpy's or scipy's figure on ``x``."""
    assert s["count"] == x.size
    for key, want in (("mean_ms", x.mean()), ("median_ms", np.median(x)), ("min_ms", x.min()), ("max_ms", x.max()),
                      ("std_dev_ms", x.std(ddof=1)), ("cv_percent", 100 * x.std(ddof=1) / x.mean()),
                      ("iqr_ms", stats.iqr(x)), ("mad_ms", stats.median_abs_deviation(x)),
                      ("sigma_mad_ms", stats.median_abs_deviation(x, scale="normal")),
                      ("trimmed_mean_5_ms", stats.trim_mean(x, 0.05)), ("trimmed_mean_10_ms", stats.trim_mean(x, 0.10))):
        if key in s:
            assert s[key] == pytest.approx(want, rel=1e-5, abs=1e-6), key
    for p, v in s.get("percentiles", {}).items():
        assert v == pytest.approx(np.percentile(x, int(p[1:])), rel=1e-5), p
