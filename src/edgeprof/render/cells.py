"""The cells and captions a comparison's tables share in every renderer (terminal, Markdown, HTML): each table
names the statistic its figures are, and a speedup sits beside the per-arm values it is the ratio of."""

from __future__ import annotations

from ..conventions import fmt_ci, fmt_ms

TYPICAL_HEADER = "typical ms/run base → cand"
TYPICAL_NOTE = ("*typical ms/run*: what the speedup is the ratio of — each launch's 10 %-trimmed mean time per run "
                "(the median, marked ᵐ, for a line whose spikes outnumber the trim), launches combined; "
                "*mean ms/run*: the mean over all the arm's runs, which the shares are of.")
METRICS_NOTE = ("Each arm's value of a metric is its launches' values combined (precision-weighted, on the log "
                "scale); the speedup is their ratio. The latency table pools the runs of all launches instead.")


def typical_cell(row: dict, digits: int = 4) -> str:
    """``base → cand`` of the speedup's estimator (ᵐ: medians), or — for a line without one."""
    b, c = row.get("baseline_typical_ms"), row.get("candidate_typical_ms")
    if b is None or c is None:
        return "—"
    return f"{fmt_ms(b, digits)} → {fmt_ms(c, digits)}" + ("ᵐ" if row.get("estimator") == "median" else "")


def speedup_cell(row: dict, ci_digits: int = 4) -> str:
    """``speedup [low–high]`` (3 significant digits), the interval left out when the line was not tested."""
    if row.get("speedup") is None:
        return "—"
    ci = fmt_ci(row["ci_low"], row["ci_high"], ci_digits) if row.get("ci_low") is not None else ""
    return f"{row['speedup']:.3g}{ci}"
