"""What a CI system is shown of a gate: a GitHub Actions step summary (Markdown), workflow-command annotations and a
JUnit XML report — each rendered from the command's JSON document and the gate's checks, so every figure is the
document's.

Outside text (names from profiles, file names, the statements built from them) goes through the one escaping rule
first (:func:`edgeprof.conventions.shown`: control characters, ESC among them, and line breaks written as
``\\x1b``, ``\\n``), then through its format's own: workflow commands escape ``%``, CR and LF in a message and also
``:`` and ``,`` in a property; XML escapes ``& < > "`` — and after ``shown`` nothing XML has no place for is left.
"""

from __future__ import annotations

from typing import NamedTuple

from ..conventions import fmt_ci, fmt_ms, fmt_pct, fmt_ratio, shown
from . import markdown as md


class Check(NamedTuple):
    """One thing a gate checked: its name (``regression``, ``memory-regression``…), why it failed (None: it
    passed) and what it found either way (one sentence)."""

    name: str
    failure: str | None
    finding: str


# ---- the formats' own escapes (after shown) -----------------------------------------------------------------------
_DATA = str.maketrans({"%": "%25", "\r": "%0D", "\n": "%0A"})
_PROPERTY = str.maketrans({"%": "%25", "\r": "%0D", "\n": "%0A", ":": "%3A", ",": "%2C"})
_XML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})


def annotation(level: str, title: str, message: str) -> str:
    """One workflow command: ``::error title=T::message`` (``level``: error, warning or notice)."""
    return f"::{level} title={shown(title).translate(_PROPERTY)}::{shown(message).translate(_DATA)}"


def xml_text(value) -> str:
    """``value`` as XML character data or an attribute value."""
    return shown(value).translate(_XML)


# ---- what the checks say ---------------------------------------------------------------------------------------
def annotation_lines(command: str, checks: list[Check]) -> list[str]:
    """An error per failed check, a notice per passed one."""
    return [annotation("error" if c.failure else "notice", f"edgeprof {command}: {c.name}", c.failure or c.finding)
            for c in checks]


def junit(command: str, checks: list[Check]) -> str:
    """A JUnit XML report: one test suite (the command), one test case per check, a ``<failure>`` for each that
    failed (its message the reason) and the finding as the case's output."""
    failed = sum(1 for c in checks if c.failure)
    name = xml_text(f"edgeprof {command}")
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuites name="{name}" tests="{len(checks)}" failures="{failed}" errors="0">',
           f'  <testsuite name="{name}" tests="{len(checks)}" failures="{failed}" errors="0" skipped="0">']
    for c in checks:
        out.append(f'    <testcase classname="{name}" name="{xml_text(c.name)}">')
        if c.failure:
            out.append(f'      <failure type="{xml_text(c.name)}" message="{xml_text(c.failure)}">'
                       f"{xml_text(c.failure)}</failure>")
        out.append(f"      <system-out>{xml_text(c.finding)}</system-out>")
        out.append("    </testcase>")
    return "\n".join([*out, "  </testsuite>", "</testsuites>"]) + "\n"


def _checks_md(command: str, checks: list[Check]) -> list[str]:
    if not checks:
        return [f"No gate was set (`--fail-on`): edgeprof {command} reports, it does not fail the step.", ""]
    rows = [[c.name, "failed" if c.failure else "passed", c.failure or c.finding] for c in checks]
    return [md.table(["gate", "result", "what edgeprof found"], rows)]


def comparison_summary(doc: dict, checks: list[Check]) -> str:
    """The step summary of ``edgeprof compare``: the verdict line, the gate, every statistic's figures."""
    base, cand = doc["baseline"], doc["candidate"]
    metric = doc.get("metric") or "median"
    failed = any(c.failure for c in checks)
    out = [f"### edgeprof compare: {md.text(cand['name'])} vs {md.text(base['name'])} — "
           f"{'gate failed' if failed else 'gate passed' if checks else 'verdict ' + md.text(doc['verdict'])}", "",
           md.text(doc["summary_line"]), ""]
    out += _checks_md("compare", checks)
    rows = []
    for name, m in (doc.get("metrics") or {}).items():
        if m.get("speedup") is None:
            continue
        rows.append([name + (" (gated)" if name == metric else ""), fmt_ms(m.get("baseline_typical_ms")),
                     fmt_ms(m.get("candidate_typical_ms")), fmt_ratio(m["speedup"]),
                     fmt_ci(m.get("ci_low"), m.get("ci_high")).strip(), m.get("verdict") or ""])
    level = fmt_pct(100 * (doc.get("level") or 0.95), 0)
    out += [md.table(["statistic", f"{base['name']} (baseline) ms", f"{cand['name']} (candidate) ms",
                      "speedup", f"{level} % interval", "verdict"], rows),
            f"speedup = baseline / candidate (> 1: the candidate is faster); threshold "
            f"{fmt_pct(100 * doc['threshold'], 1)} %; {base['count']} vs {cand['count']} runs.", ""]
    return "\n".join(out) + "\n"


def history_summary(doc: dict, checks: list[Check]) -> str:
    """The step summary of ``edgeprof history``: the gate, then each series' newest point and its changes."""
    from .svg_history import point_values

    failed = any(c.failure for c in checks)
    out = [f"### edgeprof history: {md.text(doc['metric'])} — "
           f"{'gate failed' if failed else 'gate passed' if checks else 'trend'}", ""]
    out += _checks_md("history", checks)
    rows = []
    for s in doc["series"]:
        if not s["points"]:
            continue
        p = s["points"][-1]
        est, lo, hi, unit = point_values(p)
        rows.append([s["label"], p["commit"], f"{fmt_ms(est)} {unit}", f"{fmt_ms(lo)}–{fmt_ms(hi)}",
                     str(len(s["changes"]))])
    if rows:
        out.append(md.table(["series", "newest commit", doc["metric"], "95 % interval", "changes"], rows))
    return "\n".join(out) + "\n"
