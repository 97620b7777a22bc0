"""The gates where CI shows them: a GitHub Actions step summary, workflow-command annotations and a JUnit XML report,
each checked against the comparison's own JSON figures (the bundled example's real ETDumps: portable is ~55× slower
than XNNPACK fp32), and the escaping rule each format adds to the one every person-facing text goes through."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from edgeprof.conventions import shown
from edgeprof.render.ci import Check, annotation, junit
from testdata import ROOT

RUNS = ROOT / "src" / "edgeprof" / "examples" / "toycnn" / "runs" / "linux"
GITHUB_UNESCAPE = {"%25": "%", "%0D": "\r", "%0A": "\n", "%3A": ":", "%2C": ","}


def gate(tmp_path, *args, env=None):
    """``edgeprof compare`` on the example run folder as a CI step runs it (a clean environment but for ``env``)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return subprocess.run([sys.executable, "-m", "edgeprof", "compare", "--run-dir", str(RUNS), "--no-write", *args],
                          capture_output=True, text=True, cwd=tmp_path, env={**base, **(env or {})})


def unescape(s: str) -> str:
    """A workflow command's value as the runner reads it back (GitHub's documented escapes)."""
    return re.sub("%25|%0D|%0A|%3A|%2C", lambda m: GITHUB_UNESCAPE[m.group(0)], s)


def parse_annotations(text: str) -> list[tuple[str, str, str]]:
    out = []
    for line in text.splitlines():
        m = re.fullmatch(r"::(error|warning|notice) title=([^:]*)::(.*)", line)
        if m:
            out.append((m.group(1), unescape(m.group(2)), unescape(m.group(3))))
    return out


def table_rows(markdown: str) -> dict[str, list[str]]:
    """The step summary's figures table (first column → cells), read by a CommonMark parser."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    rows, row = {}, None
    for t in tokens:
        if t.type == "tr_open":
            row = []
        elif t.type == "inline" and row is not None:
            row.append(t.content)
        elif t.type == "tr_close":
            rows[row[0]] = row[1:]
            row = None
    return rows


def close(cell: str, value: float, digits: int = 4) -> bool:
    """A cell printed with ``digits`` significant digits (thousands separated) is the document's figure rounded."""
    return abs(float(cell.strip("×[]").replace(",", "")) - value) <= 0.501 * 10 ** (1 - digits) * abs(value)


def test_a_failing_gate_reports_the_comparisons_figures_to_github_and_junit(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("## earlier step\n")
    r = gate(tmp_path, "-b", "xnnpack_fp32", "-c", "portable", "--fail-on", "regression", "--json",
             "--junit", "gate.xml", env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)  # --json: stdout holds the document only; the annotations went to stderr
    assert doc["verdict"] == "slower"
    failure = f"regression: {doc['summary_line']}"
    assert r.stderr.rstrip().splitlines()[-1] == f"edgeprof: error: {failure}"

    # annotations: one error, its message the failure, exactly as the runner reads it back
    assert parse_annotations(r.stderr) == [("error", "edgeprof compare: regression", failure)]

    # JUnit: one suite, one case, one failure whose message is the failure
    suites = ET.parse(tmp_path / "gate.xml").getroot()
    assert suites.tag == "testsuites" and suites.get("tests") == "1" and suites.get("failures") == "1"
    (case,) = suites.iter("testcase")
    assert case.get("name") == "regression"
    assert case.find("failure").get("message") == failure == case.find("failure").text
    assert case.find("system-out").text == doc["summary_line"]

    # step summary: appended after the earlier step's, every statistic's figures as the document has them
    text = summary.read_text()
    assert text.startswith("## earlier step\n### edgeprof compare: portable vs xnnpack_fp32 — gate failed")
    assert doc["summary_line"] in text
    rows = table_rows(text)
    assert rows["regression"][:2] == ["failed", failure]
    for name, m in doc["metrics"].items():
        cells = rows[name + (" (gated)" if name == doc["metric"] else "")]
        assert close(cells[0], m["baseline_typical_ms"]) and close(cells[1], m["candidate_typical_ms"])
        assert close(cells[2], m["speedup"], 3)
        low, high = cells[3].strip("[]").split("–")
        assert close(low, m["ci_low"]) and close(high, m["ci_high"])
        assert cells[4] == m["verdict"]
    assert f"{doc['baseline']['count']} vs {doc['candidate']['count']} runs" in text


def test_a_passing_gate_says_so_and_exits_0(tmp_path):
    summary = tmp_path / "summary.md"
    r = gate(tmp_path, "-b", "portable", "-c", "xnnpack_fp32", "--fail-on", "regression", "--junit", "gate.xml",
             "--ci", "github", env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert r.returncode == 0, r.stderr
    notes = parse_annotations(r.stdout)  # without --json the annotations are on stdout
    assert len(notes) == 1 and notes[0][:2] == ("notice", "edgeprof compare: regression")
    suites = ET.parse(tmp_path / "gate.xml").getroot()
    assert suites.get("failures") == "0" and suites.find(".//failure") is None
    assert "gate passed" in summary.read_text().splitlines()[0]
    assert notes[0][2] == suites.find(".//system-out").text  # the same finding in both


@pytest.mark.parametrize("ci, env, reports", [
    ("auto", {}, False),                                     # not on GitHub: exit code (and --junit) only
    ("auto", {"GITHUB_ACTIONS": "true"}, True),              # on GitHub: summary and annotations
    ("none", {"GITHUB_ACTIONS": "true"}, False),             # asked not to
    ("github", {}, True),                                    # asked to, wherever it runs
])
def test_where_the_gate_reports(tmp_path, ci, env, reports):
    summary = tmp_path / "summary.md"
    r = gate(tmp_path, "-b", "xnnpack_fp32", "-c", "portable", "--fail-on", "regression", "--ci", ci,
             env={**env, "GITHUB_STEP_SUMMARY": str(summary)})
    assert r.returncode == 1
    assert summary.exists() == reports
    assert bool(parse_annotations(r.stdout)) == reports


def test_a_step_summary_that_is_an_input_is_refused_and_left_as_it_was(tmp_path):
    etdump = RUNS / "portable" / "toycnn_portable_t1.etdump"
    before = etdump.read_bytes()
    r = gate(tmp_path, "-b", "xnnpack_fp32", "-c", "portable", "--fail-on", "regression", "--ci", "github",
             env={"GITHUB_STEP_SUMMARY": str(etdump)})
    assert r.returncode == 2 and "it is an input of this command" in r.stderr
    assert r.stderr.count("\n") == 2  # the roles line, then the one-line error
    assert etdump.read_bytes() == before


def test_without_a_gate_nothing_fails(tmp_path):
    r = gate(tmp_path, "-b", "xnnpack_fp32", "-c", "portable", "--junit", "gate.xml", "--ci", "github",
             env={"GITHUB_STEP_SUMMARY": str(tmp_path / "s.md")})
    assert r.returncode == 0
    assert ET.parse(tmp_path / "gate.xml").getroot().get("tests") == "0"
    assert "No gate was set" in (tmp_path / "s.md").read_text()
    assert parse_annotations(r.stdout) == []


TEXT = st.text(st.characters(codec="utf-8"), max_size=60) | st.sampled_from(
    ["50 % [1,2]: x", "a\r\nb\x1b[31mc", "\ufffe\uffff\x00", "]]> & <x a=\"1\">", "%0A%25"])


@settings(max_examples=300, deadline=None)
@given(title=TEXT, message=TEXT)
def test_an_annotation_is_one_line_the_runner_reads_back_as_shown(title, message):
    line = annotation("error", title, message)
    assert len(line.splitlines()) == 1 and "\r" not in line and "\n" not in line
    ((level, t, m),) = parse_annotations(line)
    assert (level, t, m) == ("error", shown(title), shown(message))


@settings(max_examples=300, deadline=None)
@given(name=TEXT, failure=TEXT, finding=TEXT)
def test_a_junit_report_parses_and_holds_each_text_as_shown(name, failure, finding):
    root = ET.fromstring(junit("compare", [Check(name, failure or None, finding)]).encode())
    case = root.find(".//testcase")
    assert case.get("name") == shown(name)
    assert (case.find("system-out").text or "") == shown(finding)
    if failure:
        assert case.find("failure").get("message") == shown(failure)
    assert root.get("failures") == ("1" if failure else "0")
