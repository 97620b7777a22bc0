"""Inline SVG charts for the HTML report: no JavaScript, no external resources, readable on a laptop and in
print. Each function returns one ``<svg>`` element (``role="img"`` with a title and description; hover
titles on the marks)."""

from __future__ import annotations

import html
import math

from ..conventions import fmt_ms, shown


def escape(value) -> str:
    """Text from data in an SVG or HTML text node or attribute: shown as everywhere
    (:func:`edgeprof.conventions.shown`: a control character as ``\\x1b``, never raw), then HTML-escaped."""
    return html.escape(shown(value))

FONT = "font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif"
SERIES = ("#2563eb", "#ea580c", "#059669", "#9333ea", "#dc2626", "#0891b2", "#ca8a04", "#4b5563")
CATEGORY_COLORS = {
    "CONV": "#2563eb", "GEMM": "#7c3aed", "ATTENTION": "#db2777", "ELEMENTWISE": "#059669", "ACTIVATION": "#16a34a",
    "NORM": "#0891b2", "POOL": "#0d9488", "REDUCTION": "#65a30d", "DATA_MOVEMENT": "#ea580c", "RESHAPE": "#f59e0b",
    "QUANT": "#a16207", "EMBEDDING": "#be185d", "RESIZE": "#6366f1", "OTHER": "#6b7280",
    "framework_overhead": "#cbd5e1", "delegate_overhead": "#94a3b8", "unattributed": "#e2e8f0",
}
LANE_COLORS = {"portable": "#ea580c", "delegated": "#2563eb", "delegate ops": "#60a5fa"}


def color_for(category: str, i: int = 0) -> str:
    return CATEGORY_COLORS.get(category, SERIES[i % len(SERIES)])


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About n round tick values covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step + 1e-9) * step
    ticks, t = [], start
    while True:
        ticks.append(round(t, 12))
        if t >= hi - step * 1e-9:
            return ticks
        t += step


def fmt(v: float) -> str:
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 1:
        return f"{v:.3g}"
    return f"{v:.3g}"


def _svg(w: int, h: int, title: str, desc: str, body: list[str], cls: str) -> str:
    t = escape(title)
    return (f'<svg class="chart {cls}" viewBox="0 0 {w} {h}" width="100%" style="max-width:{w}px;{FONT}" role="img" '
            f'aria-label="{t}" xmlns="http://www.w3.org/2000/svg"><title>{t}</title><desc>{escape(desc)}</desc>'
            + "".join(body) + "</svg>")


def _grid_y(ticks, y_of, x0: float, w: float) -> list[str]:
    """Horizontal grid lines with their values on the left."""
    out = []
    for t in ticks:
        y = y_of(t)
        out.append(f'<line x1="{x0:.1f}" x2="{x0 + w:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e7eb"/>')
        out.append(f'<text x="{x0 - 6:.1f}" y="{y + 4:.1f}" font-size="11" text-anchor="end" fill="#374151">{fmt(t)}</text>')
    return out


def _grid_x(ticks, x_of, y0: float, y1: float, label=fmt) -> list[str]:
    """Vertical grid lines from y0 to y1 with their values below."""
    out = []
    for t in ticks:
        x = x_of(t)
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y0:.1f}" y2="{y1:.1f}" stroke="#e5e7eb"/>')
        out.append(f'<text x="{x:.1f}" y="{y1 + 14:.1f}" font-size="11" text-anchor="middle" fill="#374151">{label(t)}</text>')
    return out


def latency_trend(series: list[dict], title: str = "Latency per run") -> str:
    """One panel per configuration (each with its own ms scale, so a fast and a slow configuration are both
    readable): every run in order, warm-up runs hollow on a shaded band, outliers ringed in red."""
    w, left, right, panel_h, gap, top = 760, 64, 20, 130, 34, 8
    n_max = max((len(s["values_ms"]) for s in series), default=1) or 1
    pw = w - left - right
    h = top + len(series) * (panel_h + gap) + 44
    body: list[str] = []

    def x_of(i):
        return left + pw * (i + 0.5) / n_max

    for k, s in enumerate(series):
        c = SERIES[k % len(SERIES)]
        y_top = top + k * (panel_h + gap) + 18
        vals = [v for v in s["values_ms"] if v is not None and math.isfinite(v)]
        body.append(f'<text x="{left}" y="{y_top - 6}" font-size="12" font-weight="600" fill="#111827">'
                    f'{escape(s["name"])}</text>')
        if not vals:
            continue
        lo, hi = min(vals), max(vals)
        pad = (hi - lo) * 0.1 or hi * 0.05 or 1.0
        ticks = nice_ticks(max(0.0, lo - pad), hi + pad, 4)
        y0, y1 = ticks[0], ticks[-1]

        def y_of(v, y_top=y_top, y0=y0, y1=y1):
            return y_top + panel_h * (1 - (v - y0) / (y1 - y0))

        warm = s.get("warmup", 0)
        if warm:
            body.append(f'<rect x="{left}" y="{y_top}" width="{pw * warm / n_max:.1f}" height="{panel_h}" fill="#fef3c7">'
                        f'<title>warm-up: {"run 0" if warm == 1 else f"runs 0–{warm - 1}"}</title></rect>')
        body += _grid_y(ticks, y_of, left, pw)
        body.append(f'<text x="14" y="{y_top + panel_h / 2:.1f}" font-size="11" fill="#374151" text-anchor="middle" '
                    f'transform="rotate(-90 14 {y_top + panel_h / 2:.1f})">ms</text>')
        pts = [(x_of(i), y_of(v), i, v) for i, v in enumerate(s["values_ms"]) if v is not None and math.isfinite(v)]
        dense = len(pts) > 150  # many runs: thin line, small dots, small rings
        r_dot, r_ring = (1.3, 3.2) if dense else (3.2, 6.5)
        body.append(f'<polyline fill="none" stroke-width="{0.6 if dense else 1.5}" stroke="{c}" '
                    f'stroke-opacity="{0.45 if dense else 1}" points="'
                    + " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in pts) + '"/>')
        outl = set(s.get("outliers", []))
        for x, y, i, v in pts:
            hollow = i < warm
            body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r_dot}" fill="{"#fff" if hollow else c}" stroke="{c}" '
                        f'stroke-width="{0.8 if dense else 1.5}"><title>{escape(s["name"])} run {i}: {fmt_ms(v)} ms'
                        f'{" (warm-up)" if hollow else ""}{" (outlier)" if i in outl else ""}</title></circle>')
            if i in outl:
                body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r_ring}" fill="none" stroke="#dc2626" '
                            f'stroke-width="{1 if dense else 1.5}"/>')
    axis_y = top + len(series) * (panel_h + gap) + 2
    for tick in nice_ticks(0, max(n_max - 1, 1), 8):
        if tick <= n_max - 1:
            body.append(f'<text x="{x_of(tick):.1f}" y="{axis_y}" font-size="11" text-anchor="middle" fill="#374151">'
                        f'{int(tick)}</text>')
    body.append(f'<text x="{left + pw / 2:.1f}" y="{axis_y + 15}" font-size="11" text-anchor="middle" fill="#374151">'
                "run (in recording order)</text>")
    body += _legend([("warm-up run (hollow, shaded)", "#fde68a"), ("outlier (ringed)", "#dc2626")], left, axis_y + 32)
    return _svg(w, h + 8, title, "end-to-end latency of every run, in run order, one panel per configuration", body,
                "trend")


def _legend(items: list[tuple[str, str]], x: float, y: float, width: float = 700) -> list[str]:
    """Swatches and names, wrapped to ``width``; rows go down from ``y``."""
    out, cx, cy = [], x, y
    for name, c in items:
        w = 24 + 6.6 * len(name)
        if cx + w > x + width and cx > x:
            cx, cy = x, cy + 16
        out.append(f'<rect x="{cx:.1f}" y="{cy - 9:.1f}" width="10" height="10" fill="{c}"/>')
        out.append(f'<text x="{cx + 14:.1f}" y="{cy:.1f}" font-size="11" fill="#111827">{escape(name)}</text>')
        cx += w
    return out


def legend_height(items: list[str], width: float = 700) -> int:
    rows, cx = 1, 0.0
    for name in items:
        w = 24 + 6.6 * len(name)
        if cx + w > width and cx > 0:
            rows, cx = rows + 1, 0.0
        cx += w
    return 16 * rows


def distribution(series: list[dict], title: str = "Latency distribution") -> str:
    """Box (quartiles, 1.5×IQR whiskers) and every run as a dot, one row per configuration, on a shared axis —
    logarithmic when the configurations differ by more than 10×, so each box stays readable."""
    import numpy as np

    row_h, left, right, top = 54, 170, 20, 20
    w = 760
    h = top + row_h * max(len(series), 1) + 44
    vals = [v for s in series for v in s["values_ms"] if v is not None and math.isfinite(v) and v > 0]
    if not vals:
        return _svg(w, 60, title, "no data", ['<text x="20" y="30" font-size="13">no latency data</text>'], "dist")
    meds = [float(np.median([v for v in s["values_ms"] if v is not None and math.isfinite(v)]))
            for s in series if any(v is not None and math.isfinite(v) for v in s["values_ms"])]
    log = len(meds) > 1 and min(meds) > 0 and max(meds) / min(meds) > 10
    lo, hi = min(vals), max(vals)
    pw = w - left - right
    if log:
        e0, e1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        e1 = max(e1, e0 + 1)
        ticks = [10.0 ** e for e in range(e0, e1 + 1)]

        def x_of(v):
            return left + pw * (math.log10(max(v, 1e-12)) - e0) / (e1 - e0)
    else:
        pad = (hi - lo) * 0.05 or hi * 0.05 or 1.0
        ticks = nice_ticks(max(0.0, lo - pad), hi + pad)

        def x_of(v):
            return left + pw * (v - ticks[0]) / (ticks[-1] - ticks[0])

    body = []
    body += _grid_x(ticks, x_of, top, h - 40)
    body.append(f'<text x="{left + pw / 2:.1f}" y="{h - 10}" font-size="11" text-anchor="middle" fill="#374151">'
                f'ms per run{" (log scale)" if log else ""}</text>')
    for k, s in enumerate(series):
        c = SERIES[k % len(SERIES)]
        v = np.array([x for x in s["values_ms"] if x is not None and math.isfinite(x)], dtype=float)
        yc = top + row_h * k + row_h / 2
        body.append(f'<text x="{left - 8}" y="{yc + 4:.1f}" font-size="12" text-anchor="end" fill="#111827">'
                    f'{escape(_short(s["name"], 21))}</text>')
        if v.size == 0:
            continue
        q1, med, q3 = np.percentile(v, [25, 50, 75])
        iqr = q3 - q1
        wl, wh = v[v >= q1 - 1.5 * iqr].min(), v[v <= q3 + 1.5 * iqr].max()
        body.append(f'<line x1="{x_of(wl):.1f}" x2="{x_of(wh):.1f}" y1="{yc:.1f}" y2="{yc:.1f}" stroke="{c}"/>')
        body.append(f'<rect x="{x_of(q1):.1f}" y="{yc - 13:.1f}" width="{max(x_of(q3) - x_of(q1), 1):.1f}" height="26" '
                    f'fill="{c}" fill-opacity="0.15" stroke="{c}"><title>{escape(s["name"])}: median {fmt_ms(med)} ms, '
                    f'IQR {q1:.4g}–{fmt_ms(q3)} ms</title></rect>')
        body.append(f'<line x1="{x_of(med):.1f}" x2="{x_of(med):.1f}" y1="{yc - 13:.1f}" y2="{yc + 13:.1f}" '
                    f'stroke="{c}" stroke-width="2.5"/>')
        for i, x in enumerate(v):
            jitter = ((i * 7919) % 17 - 8) * 1.2
            body.append(f'<circle cx="{x_of(x):.1f}" cy="{yc + jitter:.1f}" r="2.2" fill="{c}" fill-opacity="0.7">'
                        f'<title>{fmt_ms(x)} ms</title></circle>')
        body.append(f'<text x="{min(x_of(wh) + 6, w - right - 60):.1f}" y="{yc - 16:.1f}" font-size="11" fill="{c}">'
                    f'median {fmt_ms(med, 3)} ms</text>')
    return _svg(w, h, title, "box plot (quartiles, 1.5×IQR whiskers) and every run", body, "dist")


def stacked_bars(bars: list[dict], title: str = "Where the time goes") -> str:
    """bars: {label, parts: [(category, ms)]}. One 100 % bar per configuration (shares of its run, so a
    bottleneck shift shows even when the configurations differ 50× in speed), its ms per run at the end."""
    row_h, left, right, top = 46, 170, 90, 20
    w = 760
    cats: list[str] = []
    for b in bars:
        for c, _ in b["parts"]:
            if c not in cats:
                cats.append(c)
    names = [c.replace("_", " ").lower() for c in cats]
    pw = w - left - right
    axis_y = top + row_h * max(len(bars), 1)
    h = axis_y + 40 + legend_height(names, pw + right)
    body = []
    body += _grid_x((0, 25, 50, 75, 100), lambda t: left + pw * t / 100, top, axis_y, lambda t: f"{t}%")
    body.append(f'<text x="{left + pw / 2:.1f}" y="{axis_y + 28}" font-size="11" text-anchor="middle" fill="#374151">'
                "share of the run's time</text>")
    for k, b in enumerate(bars):
        y = top + row_h * k + 8
        body.append(f'<text x="{left - 8}" y="{y + 19:.1f}" font-size="12" text-anchor="end" fill="#111827">'
                    f'{escape(_short(b["label"], 21))}</text>')
        tot = sum(ms for _, ms in b["parts"]) or 1.0
        x = float(left)
        for c, ms in b["parts"]:
            wd = pw * ms / tot
            if wd <= 0:
                continue
            body.append(f'<rect x="{x:.2f}" y="{y:.1f}" width="{wd:.2f}" height="28" fill="{color_for(c, cats.index(c))}">'
                        f'<title>{escape(b["label"])} · {escape(c)}: {fmt_ms(ms)} ms ({100 * ms / tot:.1f} %)</title></rect>')
            if wd > 34:
                body.append(f'<text x="{x + wd / 2:.1f}" y="{y + 18:.1f}" font-size="10" text-anchor="middle" '
                            f'fill="#fff">{100 * ms / tot:.0f}%</text>')
            x += wd
        body.append(f'<text x="{left + pw + 6}" y="{y + 19:.1f}" font-size="11" fill="#374151">{fmt_ms(tot)} ms</text>')
    body += _legend([(n, color_for(c, i)) for i, (c, n) in enumerate(zip(cats, names))], left, axis_y + 48, pw + right)
    return _svg(w, h, title, "share of each run's time by category, one bar per configuration", body, "stacked")


def hbars(items: list[tuple[str, float, str]], title: str, unit: str = "ms") -> str:
    """items: (label, value, category) — horizontal bars, largest first."""
    row_h, left, right, top = 22, 300, 70, 10
    w = 760
    h = top + row_h * max(len(items), 1) + 30
    vmax = max((v for _, v, _ in items), default=0) or 1.0
    pw = w - left - right
    body = []
    for k, (label, v, cat) in enumerate(items):
        y = top + row_h * k
        wd = pw * v / vmax
        body.append(f'<text x="{left - 8}" y="{y + 15:.1f}" font-size="11" text-anchor="end" fill="#111827">'
                    f'{escape(_short(label, 46))}</text>')
        body.append(f'<rect x="{left}" y="{y + 3:.1f}" width="{max(wd, 0.5):.1f}" height="16" fill="{color_for(cat, k)}">'
                    f'<title>{escape(label)} ({escape(cat)}): {v:.4g} {unit}</title></rect>')
        body.append(f'<text x="{left + wd + 4:.1f}" y="{y + 15:.1f}" font-size="11" fill="#374151">{v:.3g} {unit}</text>')
    return _svg(w, h, title, "operators by time per run", body, "hbars")


def roofline(points: list[dict], title: str) -> str:
    """points: {label, x (FLOP/byte), y (GFLOP/s), category} on log–log axes (decades as grid lines)."""
    import math

    w, h, left, right, top, bottom = 760, 360, 70, 20, 10, 50
    xs = [p["x"] for p in points if p["x"] > 0 and p["y"] > 0]
    ys = [p["y"] for p in points if p["x"] > 0 and p["y"] > 0]
    if not xs:
        return _svg(w, 60, title, "no point with both intensity and throughput", [], "roofline")
    x0, x1 = math.floor(math.log10(min(xs))), math.ceil(math.log10(max(xs))) or 1
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys))) or 1
    x1, y1 = max(x1, x0 + 1), max(y1, y0 + 1)
    pw, ph = w - left - right, h - top - bottom

    def px(v):
        return left + pw * (math.log10(v) - x0) / (x1 - x0)

    def py(v):
        return top + ph * (1 - (math.log10(v) - y0) / (y1 - y0))

    body = []
    for e in range(x0, x1 + 1):
        x = left + pw * (e - x0) / (x1 - x0)
        body.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="#e5e7eb"/>')
        body.append(f'<text x="{x:.1f}" y="{top + ph + 16}" font-size="11" text-anchor="middle" fill="#374151">'
                    f'{fmt(10.0 ** e)}</text>')
    for e in range(y0, y1 + 1):
        y = top + ph * (1 - (e - y0) / (y1 - y0))
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#e5e7eb"/>')
        body.append(f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end" fill="#374151">'
                    f'{fmt(10.0 ** e)}</text>')
    body.append(f'<text x="{left + pw / 2:.1f}" y="{h - 12}" font-size="12" text-anchor="middle" fill="#111827">'
                f'FLOP per byte moved</text>')
    body.append(f'<text x="14" y="{top + ph / 2:.1f}" font-size="12" text-anchor="middle" fill="#111827" '
                f'transform="rotate(-90 14 {top + ph / 2:.1f})">GFLOP/s achieved</text>')
    for k, p in enumerate(points):
        if p["x"] > 0 and p["y"] > 0:
            body.append(f'<circle cx="{px(p["x"]):.1f}" cy="{py(p["y"]):.1f}" r="4" fill="{color_for(p["category"], k)}" '
                        f'fill-opacity="0.8"><title>{escape(p["label"])} ({escape(p["category"])}): '
                        f'{p["x"]:.3g} FLOP/B, {p["y"]:.3g} GFLOP/s</title></circle>')
    return _svg(w, h, title, "achieved throughput against arithmetic intensity, one point per kernel", body, "roofline")


def timeline(segments: list[dict], title: str, lane_names: dict | None = None) -> str:
    """segments: {lane, start_ms, dur_ms, name, category}; one lane each for portable, delegated, delegate ops
    (``lane_names``: a lane's label in the runtime's words, e.g. ONNX Runtime's CPUExecutionProvider)."""
    names = lane_names or {}
    lanes = [ln for ln in ("portable", "delegated", "delegate ops") if any(s["lane"] == ln for s in segments)]
    lane_h, left, right, top = 34, 110, 20, 10
    w = 760
    h = top + lane_h * max(len(lanes), 1) + 40
    end = max((s["start_ms"] + s["dur_ms"] for s in segments), default=0) or 1.0
    ticks = nice_ticks(0, end)
    pw = w - left - right

    def x_of(v):
        return left + pw * v / ticks[-1]

    body = []
    axis_y = top + lane_h * len(lanes)
    body += _grid_x(ticks, x_of, top, axis_y)
    body.append(f'<text x="{left + pw / 2:.1f}" y="{axis_y + 30}" font-size="11" text-anchor="middle" fill="#374151">'
                "ms from the start of the run</text>")
    for k, ln in enumerate(lanes):
        y = top + lane_h * k
        label = _short(names.get(ln, ln), 16)
        body.append(f'<text x="{left - 8}" y="{y + 21}" font-size="12" text-anchor="end" fill="#111827">{escape(label)}</text>')
        body.append(f'<rect x="{left}" y="{y + 4}" width="{pw}" height="{lane_h - 8}" fill="#f8fafc"/>')
        for s in (s for s in segments if s["lane"] == ln):
            x, wd = x_of(s["start_ms"]), max(x_of(s["start_ms"] + s["dur_ms"]) - x_of(s["start_ms"]), 0.8)
            c = LANE_COLORS[ln] if ln == "delegated" else color_for(s["category"])
            body.append(f'<rect x="{x:.2f}" y="{y + 6}" width="{wd:.2f}" height="{lane_h - 12}" fill="{c}" stroke="#fff" '
                        f'stroke-width="0.5"><title>{escape(s["name"])} ({escape(s["category"])}): {fmt_ms(s["dur_ms"])} ms at '
                        f'{fmt_ms(s["start_ms"])} ms</title></rect>')
    cats = list(dict.fromkeys(s["category"] for s in segments if s["lane"] != "delegated"))
    if cats:
        body += _legend([(c.replace("_", " ").lower(), color_for(c)) for c in cats], left, axis_y + 48, pw)
        h += 10 + legend_height(list(cats), pw)
    host = names.get("portable", "portable")
    return _svg(w, h, title, f"one inference: {host} kernels, delegate calls and the delegate's operators", body,
                "timeline")


def _short(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"
