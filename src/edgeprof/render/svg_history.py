"""Inline SVG charts of a history (``edgeprof history --html``): the metric per commit with its interval and the
changes marked, and the categories' shares of each commit stacked. No JavaScript; hover titles on the marks."""

from __future__ import annotations

import math

from ..conventions import fmt_ms

from .svg import SERIES, _grid_y, _legend, _short, _svg, color_for, escape, legend_height, nice_ticks

REGRESSION, IMPROVEMENT, PENDING = "#dc2626", "#059669", "#9ca3af"
W, LEFT, RIGHT = 900, 70, 20


def _x_axis(body: list[str], points: list[dict], x_of, y: float) -> None:
    n = len(points)
    for i in sorted({int(t) for t in nice_ticks(0, max(n - 1, 1), 8) if t <= n - 1}):
        body.append(f'<text x="{x_of(i):.1f}" y="{y:.1f}" font-size="10" text-anchor="middle" fill="#374151">'
                    f'{escape(_short(str(points[i]["commit"]), 10))}</text>')


def _panel(body: list[str], s: dict, k: int, top: float, step: float):
    """A series' panel: its title drawn; (points, count, top edge, x of a commit index)."""
    pts = s["points"]
    n = max(len(pts), 1)
    y_top = top + k * step + 18
    body.append(f'<text x="{LEFT}" y="{y_top - 6}" font-size="12" font-weight="600" fill="#111827">'
                f'{escape(s["label"])}</text>')
    pw = W - LEFT - RIGHT

    def x_of(i: float) -> float:
        return LEFT + pw * (i + 0.5) / n

    return pts, n, y_top, x_of


def point_values(p: dict) -> tuple[float, float, float, str]:
    """(estimate, interval low, high, unit) of a history point as charts and tables show it: ms, or memory in MiB."""
    if "estimate_bytes" in p:
        return p["estimate_bytes"] / 2**20, p["ci_low_bytes"] / 2**20, p["ci_high_bytes"] / 2**20, "MiB"
    return p["estimate_ms"], p["ci_low_ms"], p["ci_high_ms"], "ms"


def trend(series: list[dict], metric: str) -> str:
    """One panel per series: the estimate per commit (dots), its launch-aware 95 % interval (band), and a
    vertical line at each change (red: regression, green: improvement, grey: not yet confirmed)."""
    panel_h, gap, top = 170, 46, 10
    pw = W - LEFT - RIGHT
    h = top + len(series) * (panel_h + gap) + 30
    body: list[str] = []
    for k, s in enumerate(series):
        pts, n, y_top, x_of = _panel(body, s, k, top, panel_h + gap)
        shown = [point_values(p) for p in pts]
        vals = [v for e in shown for v in e[1:3] if v is not None and math.isfinite(v)]
        if not vals:
            continue
        ticks = nice_ticks(min(vals), max(vals), 4)

        def y_of(v, y_top=y_top, lo=ticks[0], hi=ticks[-1]):
            return y_top + panel_h * (1 - (v - lo) / (hi - lo))

        body += _grid_y(ticks, y_of, LEFT, pw)
        body.append(f'<text x="14" y="{y_top + panel_h / 2:.1f}" font-size="11" fill="#374151" text-anchor="middle" '
                    f'transform="rotate(-90 14 {y_top + panel_h / 2:.1f})">{escape(metric)}</text>')
        band = [f"{x_of(i):.1f},{y_of(e[2]):.1f}" for i, e in enumerate(shown)]
        band += [f"{x_of(i):.1f},{y_of(e[1]):.1f}" for i, e in reversed(list(enumerate(shown)))]
        c = SERIES[k % len(SERIES)]
        body.append(f'<polygon class="band" points="{" ".join(band)}" fill="{c}" fill-opacity="0.15" stroke="none"/>')
        body.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.2" points="'
                    + " ".join(f"{x_of(i):.1f},{y_of(e[0]):.1f}" for i, e in enumerate(shown)) + '"/>')
        r = 1.6 if n > 120 else 3
        for i, (p, (est, lo, hi, unit)) in enumerate(zip(pts, shown)):
            body.append(f'<circle class="point" cx="{x_of(i):.1f}" cy="{y_of(est):.1f}" r="{r}" fill="{c}">'
                        f'<title>{escape(str(p["commit"]))} ({escape(str(p["time"]))}): {fmt_ms(est)} {unit} '
                        f'[{lo:.4g}–{hi:.4g}], {p["launches"]} launch(es)</title></circle>')
        for ch in (c for c in s["changes"] if c["index"] is not None):  # appearances are stated, not drawn
            col = (PENDING if ch["status"] in ("pending", "possible")
                   else (REGRESSION if ch["direction"] == "regression" else IMPROVEMENT))
            x = LEFT + pw * ch["index"] / n
            body.append(f'<line class="change {escape(ch["direction"])} {escape(ch["status"])}" x1="{x:.1f}" x2="{x:.1f}" '
                        f'y1="{y_top:.1f}" y2="{y_top + panel_h:.1f}" stroke="{col}" stroke-width="2" '
                        f'stroke-dasharray="{"4 3" if ch["status"] == "pending" else "none"}">'
                        f'<title>{escape(ch["statement"])} ({escape(ch["status"])})</title></line>')
        _x_axis(body, pts, x_of, y_top + panel_h + 14)
    body += _legend([("regression", REGRESSION), ("improvement", IMPROVEMENT), ("pending (not yet confirmed)", PENDING)],
                    LEFT, h - 18, pw)
    return _svg(W, h, f"{metric} per commit", "the metric per commit with its 95 % interval; changes marked", body,
                "history-trend")


def shares(series: list[dict]) -> str:
    """One panel per series: each category's share of the commit's end-to-end mean, stacked (100 % per commit)."""
    panel_h, gap, top = 150, 40, 10
    pw = W - LEFT - RIGHT
    cats: list[str] = []
    for s in series:
        for p in s["points"]:
            for c in p["shares_pct"]:
                if c not in cats:
                    cats.append(c)
    names = [c.replace("_", " ").lower() for c in cats]
    base = top + len(series) * (panel_h + gap)
    h = base + 16 + legend_height(names, pw)
    body: list[str] = []
    for k, s in enumerate(series):
        pts, _n, y_top, x_of = _panel(body, s, k, top, panel_h + gap)

        def y_of(pct, y_top=y_top):
            return y_top + panel_h * (1 - pct / 100)

        body += _grid_y((0, 50, 100), y_of, LEFT, pw)
        lower = [0.0] * len(pts)
        for j, c in enumerate(cats):
            upper = [lo + max(p["shares_pct"].get(c, 0.0), 0.0) for lo, p in zip(lower, pts)]
            if any(u > lo for u, lo in zip(upper, lower)):
                poly = [f"{x_of(i):.1f},{y_of(min(u, 100)):.1f}" for i, u in enumerate(upper)]
                poly += [f"{x_of(i):.1f},{y_of(min(lo, 100)):.1f}" for i, lo in reversed(list(enumerate(lower)))]
                mean = sum(p["shares_pct"].get(c, 0.0) for p in pts) / max(len(pts), 1)
                body.append(f'<polygon class="share" points="{" ".join(poly)}" fill="{color_for(c, j)}">'
                            f'<title>{escape(c)}: {mean:.1f} % on average</title></polygon>')
            lower = upper
        _x_axis(body, pts, x_of, y_top + panel_h + 14)
    body += _legend([(nm, color_for(c, i)) for i, (c, nm) in enumerate(zip(cats, names))], LEFT, base + 10, pw)
    return _svg(W, h, "Where the time goes, per commit", "each category's share of the end-to-end mean, per commit",
                body, "history-shares")
