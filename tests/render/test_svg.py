"""The report's SVG charts: well-formed, self-describing, and drawn to scale (geometry recomputed here from
the input numbers, not read back from the renderer's own arithmetic)."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from edgeprof.render import svg

NS = {"s": "http://www.w3.org/2000/svg"}


def _parse(text: str) -> ET.Element:
    root = ET.fromstring(text)  # raises on any markup error (an unescaped name, a broken attribute)
    assert root.tag == "{http://www.w3.org/2000/svg}svg" and root.get("role") == "img"
    assert root.find("s:title", NS).text and root.find("s:desc", NS).text
    _x0, _y0, w, h = map(float, root.get("viewBox").split())
    for el in root.iter():
        for a in ("x", "cx", "x1", "x2"):
            if el.get(a) is not None:
                assert -1 <= float(el.get(a)) <= w + 1, (el.tag, a, el.get(a))
        for a in ("y", "cy", "y1", "y2"):
            if el.get(a) is not None:
                assert -20 <= float(el.get(a)) <= h + 1, (el.tag, a, el.get(a))
    return root


def _titled(root, tag):
    return [el for el in root.iter(f"{{{NS['s']}}}{tag}") if el.find("s:title", NS) is not None]


@given(st.floats(-1e6, 1e6), st.floats(1e-3, 1e6), st.integers(2, 10))
def test_ticks_are_round_evenly_spaced_and_cover_the_range(lo, span, n):
    hi = lo + span * max(1.0, abs(lo)) * 1e-3 if span < 1 else lo + span  # spans a chart can show
    t = svg.nice_ticks(lo, hi, n)
    steps = np.diff(t)
    step = float(np.median(steps))
    assert t[0] <= lo + 1e-8 * step and t[-1] >= hi - 1e-8 * step  # within rounding of a tick
    assert np.allclose(steps, step, rtol=1e-4)
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert any(math.isclose(mantissa, m, rel_tol=1e-4) for m in (1, 2, 2.5, 5, 10))
    assert len(t) <= 2 * n + 2


def test_names_with_markup_are_escaped_everywhere():
    evil = 'conv<"&">#1'
    charts = [
        svg.latency_trend([{"name": evil, "values_ms": [1.0, 2.0, 1.5], "warmup": 1, "outliers": [1]}]),
        svg.distribution([{"name": evil, "values_ms": [1.0, 2.0, 1.5]}]),
        svg.stacked_bars([{"label": evil, "parts": [(evil, 1.0), ("GEMM", 2.0)]}], title=evil),
        svg.hbars([(evil, 1.0, evil)], title=evil),
        svg.timeline([{"lane": "portable", "start_ms": 0.0, "dur_ms": 1.0, "name": evil, "category": evil}], evil),
    ]
    for c in charts:
        root = _parse(c)
        assert any(evil in (el.text or "") for el in root.iter())


def test_stacked_bars_are_shares_of_each_run():
    parts_a = [("GEMM", 6.0), ("CONV", 3.0), ("framework_overhead", 1.0)]
    parts_b = [("GEMM", 0.1), ("CONV", 0.3), ("framework_overhead", 0.0)]
    root = _parse(svg.stacked_bars([{"label": "SME2-Off", "parts": parts_a}, {"label": "SME2-On", "parts": parts_b}]))
    rects = _titled(root, "rect")
    assert len(rects) == 5  # the zero part is not drawn
    widths = [float(r.get("width")) for r in rects]
    full = 760 - 170 - 90
    assert sum(widths[:3]) == pytest.approx(full, abs=0.05) and sum(widths[3:]) == pytest.approx(full, abs=0.05)
    assert widths[0] / full == pytest.approx(0.6, abs=1e-3) and widths[4] / full == pytest.approx(0.75, abs=1e-3)
    assert "SME2-On · CONV: 0.3 ms (75.0 %)" in rects[4].find("s:title", NS).text


def test_horizontal_bars_are_proportional_to_their_values():
    items = [("a", 4.0, "GEMM"), ("b", 1.0, "CONV"), ("c", 0.25, "OTHER")]
    root = _parse(svg.hbars(items, "top operators"))
    w = [float(r.get("width")) for r in _titled(root, "rect")]
    assert w[1] / w[0] == pytest.approx(0.25, rel=1e-2) and w[2] / w[0] == pytest.approx(0.0625, rel=2e-2)


def test_distribution_draws_every_finite_run_and_the_median_where_it_is():
    rng = np.random.default_rng(1)
    a = [*rng.normal(10, 1, 40), float("nan"), None]
    root = _parse(svg.distribution([{"name": "a", "values_ms": a}]))
    dots = list(root.iter(f"{{{NS['s']}}}circle"))
    assert len(dots) == 40
    finite = np.array([v for v in a if v is not None and math.isfinite(v)])
    # the median line sits where the linear axis puts np.median, read off the axis' own tick labels
    ticks = [(float(t.get("x")), float(t.text.replace(",", ""))) for t in root.iter(f"{{{NS['s']}}}text")
             if t.get("text-anchor") == "middle" and t.text and t.text.replace(".", "").replace(",", "").isdigit()]
    (xa, va), (xb, vb) = ticks[0], ticks[-1]
    expect_x = xa + (np.median(finite) - va) * (xb - xa) / (vb - va)
    med_lines = [el for el in root.iter(f"{{{NS['s']}}}line") if el.get("stroke-width") == "2.5"]
    assert float(med_lines[0].get("x1")) == pytest.approx(expect_x, abs=0.15)


def test_distribution_uses_a_log_axis_only_beyond_ten_times():
    close = svg.distribution([{"name": "a", "values_ms": [10, 11, 12]}, {"name": "b", "values_ms": [2, 2.1, 2.2]}])
    far = svg.distribution([{"name": "a", "values_ms": [10, 11, 12]}, {"name": "b", "values_ms": [0.5, 0.6, 0.7]}])
    assert "(log scale)" not in close and "(log scale)" in far
    assert "no latency data" in svg.distribution([{"name": "a", "values_ms": [None, float("nan")]}])


def test_trend_marks_warmup_runs_hollow_and_rings_outliers():
    vals = [5.0, 3.0, 1.0, 1.1, 0.9, 4.0, 1.0]
    root = _parse(svg.latency_trend([{"name": "x", "values_ms": vals, "warmup": 2, "outliers": [5]}]))
    dots = _titled(root, "circle")
    assert len(dots) == len(vals)
    assert [d.get("fill") == "#fff" for d in dots] == [True, True, False, False, False, False, False]
    rings = [c for c in root.iter(f"{{{NS['s']}}}circle") if c.get("stroke") == "#dc2626" and c.get("fill") == "none"]
    assert len(rings) == 1 and rings[0].get("cx") == dots[5].get("cx")
    ys = [float(d.get("cy")) for d in dots]
    assert np.argsort(ys).tolist() == np.argsort([-v for v in vals], kind="stable").tolist()  # higher ms is higher up


def test_timeline_puts_segments_in_time_order_on_their_lanes():
    segs = [{"lane": "portable", "start_ms": 0.0, "dur_ms": 0.5, "name": "aten.add", "category": "ELEMENTWISE"},
            {"lane": "delegated", "start_ms": 0.5, "dur_ms": 2.0, "name": "XnnpackBackend", "category": "GEMM"},
            {"lane": "delegate ops", "start_ms": 0.6, "dur_ms": 1.0, "name": "FC #1", "category": "GEMM"},
            {"lane": "portable", "start_ms": 2.5, "dur_ms": 0.25, "name": "aten.mul", "category": "ELEMENTWISE"}]
    root = _parse(svg.timeline(segs, "one inference"))
    rects = _titled(root, "rect")
    xs = {r.find("s:title", NS).text.split(" (")[0]: (float(r.get("x")), float(r.get("width"))) for r in rects}
    assert xs["aten.add"][0] < xs["XnnpackBackend"][0] < xs["FC #1"][0] < xs["aten.mul"][0]
    assert xs["XnnpackBackend"][1] / xs["aten.add"][1] == pytest.approx(4.0, rel=1e-2)
