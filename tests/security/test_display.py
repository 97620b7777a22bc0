"""The display rule: every string from outside (a file name, an operator or kernel name, a model name in a report)
passes one escaping function (:func:`edgeprof.conventions.shown`) on its way to a terminal, a Markdown or an HTML
page, an error or a warning line — each control character shown as ``\\x1b``, never raw — and a CSV cell that a
spreadsheet would evaluate is written with a leading apostrophe that edgeprof's own readers remove again. JSON keeps
the raw strings.

Inputs are real fixtures under hostile names: an ETDump copied under a name holding a window-title sequence (OSC 0),
a bidirectional override and a C1 control, whose XNNPACK operators were renamed (with the reference FlatBuffers
runtime, tests/helpers/etdump_rewrite.py) to clipboard-writing sequences (OSC 52), NUL, CSI, bidi isolates — or to
spreadsheet formulas. Every command runs as a user runs it (``python -m edgeprof``, bytes captured)."""

from __future__ import annotations

import csv
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from etdump_rewrite import read, rename, write
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from testdata import DATA

TITLE = "\x1b]0;PWN\x07"  # OSC 0: sets the terminal's window title
SHOWN_TITLE = r"\x1b]0;PWN\x07"
CLIPBOARD = "\x1b]52;c;cHduZWQ=\x07"  # OSC 52: writes the clipboard
HOST = "m" + TITLE + "\u202e\x9b"  # a file stem: window title, right-to-left override, C1 CSI
SHOWN_HOST = r"m\x1b]0;PWN\x07\u202e\x9b"
ATTACK_OPS = {  # XNNPACK operator (delegate debug string) → hostile name (the instance suffix kept)
    "Convolution (NHWC, F32) IGEMM #1": f"conv{CLIPBOARD} #1",
    "Fully Connected (NC, F32) GEMM #1": "fc\x00\x9b31m\u2066x\u2069\u2028 #1",
    "Max Pooling (NHWC, F32) #1": "pool\x7f\x1b[2J\u200f #1",
}
SHOWN_CLIPBOARD = r"conv\x1b]52;c;cHduZWQ=\x07"
FORMULAS = {  # XNNPACK operator → a name a spreadsheet would evaluate (or one that must read back as it is)
    "Convolution (NHWC, F32) IGEMM #1": "=cmd|' /C calc'!A0",
    "Convolution (NHWC, F32) IGEMM #2": '+HYPERLINK("http://x","y")',
    "Fully Connected (NC, F32) GEMM #1": "@SUM(1+1)",
    "Max Pooling (NHWC, F32) #1": "-2+3",
    "Static Reshape (NC) #1": "\t=1+2",
    "Transpose (ND, X32) #1": "\r=3+4",
    "Transpose (ND, X32) #2": "'=already quoted",
}

# what a terminal or an editor acts on: C0 controls but tab and newline, DEL; decoded: C1, bidi, separators
_RAW_BYTES = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")
_RAW_CHARS = re.compile("[\x80-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
MD = MarkdownIt("commonmark").enable("table")


def _raw(data: bytes) -> list[str]:
    """Every control character found raw in ``data`` (bytes as written to a terminal or a file)."""
    return [repr(m) for m in _RAW_BYTES.findall(data)] + [repr(c) for c in _RAW_CHARS.findall(data.decode("utf-8", "replace"))]


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "CLICOLOR_FORCE", "TTY_COMPATIBLE")}
    return {**env, "COLUMNS": "200"}


def ep(*args, cwd=None) -> subprocess.CompletedProcess:
    """A command as a user runs it; stdout and stderr as the bytes a terminal would receive."""
    return subprocess.run([sys.executable, "-m", "edgeprof", *map(str, args)], capture_output=True, env=_env(),
                          cwd=cwd, timeout=300)


def _etdump(name: str, mapping=None) -> bytes:
    data = gzip.decompress((DATA / "etdump" / f"{name}.etdp.gz").read_bytes())
    if mapping is None:
        return data
    runs, version = read(data)
    return write(rename(runs, lambda n: mapping.get(n, n)), version)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    d = tmp_path_factory.mktemp("display")
    (d / "one").mkdir()
    hostile = d / "one" / f"{HOST}_t1.etdp"
    hostile.write_bytes(_etdump("toycnn_xnn.N20", ATTACK_OPS))
    base = d / "base_t1.etdp"
    base.write_bytes(_etdump("toycnn_portable.N20"))
    bad = d / f"{HOST}_bad.etdp"
    bad.write_bytes(b"\x00" * 64)
    log = d / f"{HOST}_xnntrace.log"
    shutil.copy(DATA / "xnnpack" / "mac_sme2_on_xnntrace.log", log)
    pte = d / f"{HOST}.pte"
    shutil.copy(DATA / "pte" / "toycnn_xnn.pte", pte)
    ane = json.loads((DATA / "anemll" / "anemll_profile_0.4.1.illustrative.json").read_text())
    _rename_model(ane, f"model{TITLE}")
    (d / "ane.json").write_text(json.dumps(ane))
    return {"dir": d, "hostile": hostile, "base": base, "bad": bad, "log": log, "pte": pte, "ane": d / "ane.json"}


def _rename_model(doc: dict, name: str) -> None:
    model = doc.get("model")
    if isinstance(model, dict):
        for key in ("display_name", "name", "path"):
            if key in model:
                model[key] = name


# --------------------------------------------------------------------------------------------------
# the terminal
# --------------------------------------------------------------------------------------------------

def _commands(w: dict, tmp: Path) -> dict[str, tuple]:
    h, b = w["hostile"], w["base"]
    store = tmp / f"{HOST}.duckdb"
    return {
        "trace": ("trace", h, "--out", tmp / f"{HOST}.trace.json"),
        "report": ("report", h, "--out", tmp / "r.md", "--html", tmp / "r.html"),
        "analyze": ("analyze", h, "--output-dir", tmp / "an", "--no-progress"),
        "breakdown": ("breakdown", h, "--no-write"),
        "latency": ("latency", h, "--no-write"),
        "kernels": ("kernels", h, "--no-write"),
        "kernels_log": ("kernels", w["log"], "--out", tmp / f"{HOST}_kernels.csv"),
        "kernel_view": ("kernel-view", "-b", w["log"], "-c", DATA / "xnnpack" / "mac_sme2_off_xnntrace.log",
                        "--out", tmp / f"{HOST}_kv.md"),
        "compare": ("compare", b, h),
        "plan": ("plan", h, b, "--effect", "5%", "--no-write"),
        "program": ("program", w["pte"]),
        "ane": ("ane", w["ane"]),
        "ingest": ("ingest", h, "--store", store),
        "history": ("history", "--store", store),
        "export": ("export", "--store", store, "--to", tmp / f"{HOST}_export/"),
        "error": ("latency", w["bad"]),
    }


@pytest.fixture(scope="module")
def terminal(world, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("terminal")
    return tmp, {name: ep(*args) for name, args in _commands(world, tmp).items()}


SHOWS = {  # what each command shows of the hostile names (at least)
    "trace": [SHOWN_HOST], "report": [SHOWN_HOST], "analyze": [SHOWN_HOST], "breakdown": [SHOWN_CLIPBOARD],
    "latency": [SHOWN_HOST], "kernels": [SHOWN_HOST], "kernels_log": [SHOWN_HOST], "kernel_view": [SHOWN_HOST],
    "compare": [SHOWN_HOST], "plan": [SHOWN_HOST], "program": [SHOWN_HOST], "ane": [SHOWN_TITLE],
    "ingest": [SHOWN_HOST], "history": [SHOWN_HOST], "export": [SHOWN_HOST], "error": [SHOWN_HOST],
}


@pytest.mark.parametrize("name", list(SHOWS))
def test_no_control_character_of_a_name_reaches_the_terminal(terminal, name):
    """trace, report, analyze, breakdown, latency, kernels, kernel-view, compare, plan, program, ane, ingest, history,
    export and an error line: nothing raw on stdout or stderr; the name is there, its escapes visible."""
    _, runs = terminal
    r = runs[name]
    assert r.returncode == (2 if name == "error" else 0), r.stderr.decode(errors="replace")[-800:]
    out = r.stdout + r.stderr
    assert not _raw(r.stdout) and not _raw(r.stderr), (name, _raw(out)[:10])
    text = out.decode("utf-8")
    for piece in SHOWS[name]:
        assert piece in text, (name, piece, text[-1500:])
    assert "Traceback" not in text


def test_an_error_line_names_the_file_visibly(terminal):
    _, runs = terminal
    lines = runs["error"].stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("edgeprof: error: ") and SHOWN_HOST in lines[0]


def _operators(doc: dict) -> set[str]:
    (bd,) = doc["breakdowns"]
    return {o["operator"] for o in bd["operators"]}


def test_json_keeps_the_raw_names(world):
    """--json is data: the names are there as they are (JSON's own escapes, decoded by any reader), and still no raw
    control character is printed (JSON writes DEL, C1 and bidi characters as \\u escapes)."""
    r = ep("breakdown", world["hostile"], "--no-write", "--json")
    assert r.returncode == 0, r.stderr
    assert not _raw(r.stdout)
    names = _operators(json.loads(r.stdout))
    assert {n.removesuffix(" #1") for n in ATTACK_OPS.values()} <= names, names
    r = ep("latency", world["hostile"], "--no-write", "--json")
    assert json.loads(r.stdout)["reports"][0]["name"].startswith(HOST)


# --------------------------------------------------------------------------------------------------
# Markdown and HTML pages
# --------------------------------------------------------------------------------------------------

def test_reports_hold_no_raw_control_character(terminal, world, tmp_path):
    """report.md, report.html, kernel_view.md and the program/ANE Markdown: no control character raw (``cat
    report.md`` sets no window title, an editor reorders nothing); a viewer shows the names with their escapes."""
    tmp, runs = terminal
    assert runs["report"].returncode == 0 and runs["kernel_view"].returncode == 0
    for args in (("program", world["pte"], "--markdown", tmp_path / "p.md"),
                 ("ane", world["ane"], "--markdown", tmp_path / "a.md")):
        r = ep(*args)
        assert r.returncode == 0, r.stderr
    md = (tmp / "r.md").read_bytes()
    page = (tmp / "r.html").read_bytes()
    for f in (md, page, (tmp / f"{HOST}_kv.md").read_bytes(), (tmp_path / "p.md").read_bytes(), (tmp_path / "a.md").read_bytes()):
        assert not _raw(f), _raw(f)[:10]
    seen = MD.render(md.decode())  # what a Markdown viewer shows
    assert SHOWN_HOST in seen.replace("&amp;", "&")
    assert SHOWN_HOST in page.decode()
    assert SHOWN_CLIPBOARD in page.decode()
    assert r"fc\x00\x9b31m\u2066x\u2069\u2028" in page.decode()  # NUL, CSI, isolates, line separator
    assert SHOWN_HOST in MD.render((tmp / f"{HOST}_kv.md").read_text())
    assert SHOWN_HOST in MD.render((tmp_path / "p.md").read_text())
    assert SHOWN_TITLE in MD.render((tmp_path / "a.md").read_text())


def test_a_literal_backslash_stays_apart_from_an_escape(tmp_path):
    """A name holding the four characters ``\\x1b`` is shown with its backslash doubled, so it never reads as an
    ESC; the ESC itself is ``\\x1b``."""
    p = tmp_path / "lit\\x1b_t1.etdp"
    p.write_bytes(_etdump("toycnn_xnn.N20"))
    q = tmp_path / "esc\x1b_t1.etdp"
    q.write_bytes(_etdump("toycnn_xnn.N20"))
    a, b = ep("latency", p, "--no-write"), ep("latency", q, "--no-write")
    assert a.returncode == b.returncode == 0
    assert b"lit\\\\x1b" in a.stdout and b"esc\\x1b" in b.stdout and b"esc\\\\x1b" not in b.stdout


# --------------------------------------------------------------------------------------------------
# CSV cells a spreadsheet would evaluate
# --------------------------------------------------------------------------------------------------

def _number(cell: str) -> bool:
    try:
        float(cell)
        return True
    except ValueError:
        return False


def formula_cells(path: Path) -> list[str]:
    """Cells a spreadsheet would evaluate (read with Python's csv module, not edgeprof): a first character of
    ``=``, ``+``, ``-``, ``@``, TAB or CR, unless the cell is a plain number."""
    with open(path, newline="", encoding="utf-8") as f:
        return [c for row in csv.reader(f) for c in row if c and c[0] in "=+-@\t\r" and not _number(c)]


def _columns(path: Path) -> dict[str, list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return {h: [r[i] for r in rows[1:]] for i, h in enumerate(rows[0])}


@pytest.fixture(scope="module")
def sheets(tmp_path_factory):
    d = tmp_path_factory.mktemp("sheets")
    f = d / "f_t1.etdp"
    f.write_bytes(_etdump("toycnn_xnn.N20", FORMULAS))
    o = d / "o_t1.etdp"
    o.write_bytes(_etdump("toycnn_xnn.N20"))
    log = d / "k_xnntrace.log"
    shutil.copy(DATA / "xnnpack" / "mac_sme2_on_xnntrace.log", log)
    runs = [ep("analyze", f, "--output-dir", d / "fa", "--no-progress", "--op-types", "inline"),
            ep("analyze", o, "--output-dir", d / "oa", "--no-progress", "--op-types", "inline"),
            ep("breakdown", f, "--output-dir", d / "fb"),
            ep("kernels", log, "--out", d / "k_kernels.csv", "--model-id", '=HYPERLINK("http://x","y")')]
    for r in runs:
        assert r.returncode == 0, r.stderr.decode()[-800:]
    return d


def test_no_csv_cell_a_spreadsheet_would_evaluate(sheets):
    """Every CSV analyze, breakdown and kernels write: timeline CSVs, ops stats, category summary, operator details,
    e2e latency, other top ops, graph breaks, kernels — zero cells a spreadsheet evaluates; the names are there
    behind one apostrophe; every numeric cell is as it was, byte for byte."""
    files = [*sorted(p for sub in ("fa", "fb") for p in (sheets / sub).rglob("*.csv")), sheets / "k_kernels.csv"]
    assert len(files) >= 7, files
    found = {p.name: formula_cells(p) for p in files}
    assert not any(found.values()), {k: v[:3] for k, v in found.items() if v}
    timeline = next((sheets / "fa").rglob("*_exec_all_runs_timeline.csv"))
    names = set(_columns(timeline)["name"])
    assert {"'=cmd|' /C calc'!A0", "'+HYPERLINK(\"http://x\",\"y\")", "'@SUM(1+1)", "'-2+3", "'\t=1+2", "'\r=3+4",
            "''=already quoted"} <= names, names
    assert _columns(sheets / "k_kernels.csv")["model_id"][0] == "'=HYPERLINK(\"http://x\",\"y\")"
    # numeric columns never change: the renamed profile's timelines have every numeric cell of the original
    for tail in ("_exec_all_runs_timeline.csv", "_exec_run0_timeline.csv"):
        f = _columns(next((sheets / "fa").rglob(f"f_t1{tail}")))
        o = _columns(next((sheets / "oa").rglob(f"o_t1{tail}")))
        numeric = [c for c, v in o.items() if v and all(x == "" or _number(x) for x in v)]
        assert {"duration_ms", "run_index", "start_us"} <= set(numeric)
        for c in numeric:
            assert f[c] == o[c], c


def test_edgeprof_reads_its_own_csv_back_to_the_raw_names(sheets):
    """breakdown of the timeline CSV gives the operator names the ETDump gives — the formulas, and a name that
    itself starts with an apostrophe — exactly; the kernels CSV gives its raw model_id back."""
    timeline = next((sheets / "fa").rglob("*_exec_all_runs_timeline.csv"))
    assert "'=cmd|' /C calc'!A0" in _columns(timeline)["name"]  # written neutralised
    from_csv = json.loads(ep("breakdown", timeline, "--no-write", "--json").stdout)
    from_etdump = json.loads(ep("breakdown", sheets / "f_t1.etdp", "--no-write", "--json").stdout)
    assert _operators(from_csv) == _operators(from_etdump)
    assert {"=cmd|' /C calc'!A0", '+HYPERLINK("http://x","y")', "@SUM(1+1)", "-2+3",
            "'=already quoted"} <= _operators(from_csv)
    r = ep("kernels", sheets / "k_kernels.csv", "--json", "--no-write")
    assert r.returncode == 0, r.stderr
    (log,) = json.loads(r.stdout)["logs"]
    assert {k["model_id"] for k in log["kernels"]} == {'=HYPERLINK("http://x","y")'}


# --------------------------------------------------------------------------------------------------
# the two rules themselves, on any string
# --------------------------------------------------------------------------------------------------

_ESCAPE = re.compile(r"\\(\\|t|n|r|x[0-9a-f]{2}|u[0-9a-f]{4})")
_ATOMS = [*"\\x=+-@'.5e\t\r\n\x00\x1b\x07\x7f\x85\x9b\u061c\u200e\u202e\u2028\u2066", "\\x1b", "'=", "-1", "+2.5e3"]
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20) | st.lists(
    st.sampled_from(_ATOMS), max_size=12).map("".join)


def _read_back(shown_text: str) -> str:
    """What a reader gets back from a shown string: the escapes decoded as a Python string literal's."""
    return _ESCAPE.sub(lambda m: {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}.get(m.group(1)) or chr(int(m.group(1)[1:], 16)),
                       shown_text)


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_what_is_shown_is_safe_and_reads_back(s):
    from edgeprof.conventions import shown

    out = shown(s)
    assert not _RAW_BYTES.search(out.encode()) and not _RAW_CHARS.search(out), repr(out)
    assert _read_back(out) == s


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_a_csv_cell_is_never_a_formula_and_reads_back(s):
    from edgeprof.conventions import csv_cell, csv_text

    cell = csv_cell(s)
    assert not (cell and cell[0] in "=+-@\t\r" and not _number(cell)), repr(cell)
    assert csv_text(cell) == s
    assert cell == s or cell == "'" + s


@given(st.text(alphabet=st.sampled_from("ab:'\\\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\x1b"), max_size=12))
@settings(max_examples=300, deadline=None)
def test_an_input_error_is_one_line_whatever_its_file_says(text):
    """A value quoted from a file into an error (an anemll field, an ONNX Runtime event name) may hold any line
    break str.splitlines() knows: the error's text is still one line, and the line break is written visibly."""
    from edgeprof.conventions import one_line
    from edgeprof.errors import InputError

    e = str(InputError(f"/in/{text}.json", f"got '{text}'", line=3))
    assert len(e.splitlines()) == 1 and e.endswith("(line 3)")
    assert one_line(text).replace("\\n", "").replace("\\r", "").replace("\\x", "").replace("\\u", "").count("\n") == 0
    if "\n" in text:
        assert "\\n" in e
