"""Two launches per arm and nothing measured: the arms' 2 launch-level degrees of freedom have no floor, so two
launches that agree by chance gave intervals far narrower than the machine's launch noise (A/A false 8.3 % and
coverage 90 % on the corpus's noisiest program before). The launch-SD allowance now enters as a 2-df measurement
(edgeprof/analysis/launches.py ``FLOOR_DF``): checked on every 2 vs 2 split of real launches (the real-noise corpus,
tests/data/noise), and at its boundary — 2 df floored, 4 df (3 vs 3) and an explicit --launch-cv 0 left alone."""

from __future__ import annotations

import math

import numpy as np
import pytest

import noise_corpus as nc

from edgeprof.analysis import launches as L
from edgeprof.analysis import noise as nz


@pytest.mark.parametrize("session, program", [("b_busy", "toycnn_xnnq8"), ("a_bursts", "tel_xnnq8")])
def test_two_vs_two_aa_with_nothing_measured_on_the_noisiest_real_launches(session, program):
    ls = nc.session(session)[program]
    sp = nc.splits(len(ls), 2, 2, 120)
    false = cover = 0
    for b, c in sp:
        r = nc.judge(ls, b, c, nz.default())["median"]
        false += r["verdict"] in ("faster", "slower")
        cover += r["ci_low"] <= 1 <= r["ci_high"]
    assert len(sp) == 120
    assert false / len(sp) <= 0.05 and cover / len(sp) >= 0.95
    lines = sum(bool(nc.flagged_lines(ls, b, c, nz.default())) for b, c in sp[:30])
    assert lines / 30 <= 0.10


def _arms(k):
    rng = np.random.default_rng(k)
    yb = np.log(10.0) + np.array([0.0, 0.001, -0.001][:k])  # launches that agree by chance
    yc = np.log(10.0) + np.array([0.002, 0.0, 0.001][:k])
    v = np.full(k, 1e-6) * (1 + rng.random(k))
    return yb, v, yc, v.copy()


def test_the_floor_at_two_degrees_of_freedom_only():
    assert L.FLOOR_DF == 2
    yb, vb, yc, vc = _arms(2)
    ct = L.contrast(yb, vb, yc, vc, launch_cv=0.25)
    # the pooled t interval on 2 + 2 df, computed here: (SS + 2·0.25²)/4 · (1/2 + 1/2)
    ss = ((yb - yb.mean()) ** 2).sum() + ((yc - yc.mean()) ** 2).sum()
    se = math.sqrt((ss + 2 * 0.25 ** 2) / 4 * 1.0)
    from scipy.stats import t
    assert ct["se"] == pytest.approx(se, rel=1e-9) and ct["df"] == 4
    assert ct["high"] - ct["estimate"] == pytest.approx(t.ppf(0.975, 4) * se, rel=1e-9)
    assert "no measured launch noise" in ct["method"]
    # no allowance asked for: the arms alone
    assert L.contrast(yb, vb, yc, vc, launch_cv=0.0)["se"] < 0.01
    # 3 vs 3 (4 df): the arms' spread as before
    yb, vb, yc, vc = _arms(3)
    ct3 = L.contrast(yb, vb, yc, vc, launch_cv=0.25)
    assert ct3["df"] == 4 and ct3["se"] < 0.01 and "no measured launch noise" not in ct3["method"]
    # a measured launch noise is used as measured, not replaced by the allowance
    yb, vb, yc, vc = _arms(2)
    ctm = L.contrast(yb, vb, yc, vc, launch_cv=0.25, measured=(0.02, 10))
    assert ctm["df"] == 12 and ctm["se"] == pytest.approx(math.sqrt((ss + 10 * 0.02 ** 2) / 12), rel=1e-9)
