"""Names from data in Markdown, HTML and terminal output: no viewer ever runs, links or loads them.

The oracle for Markdown is markdown-it-py (a port of markdown-it, the CommonMark renderer many viewers use),
with raw HTML enabled as in the viewers where it matters: whatever a value holds, the tokens it renders to
hold no HTML, no link and no image, and a value shown as code is shown exactly. Then real reports of a real
profile whose operator names were rewritten into attacks, rendered by markdown-it and by edgeprof's HTML
writer and opened in headless Chromium; and the terminal tables of the same profile."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser

import pytest
from etdump_rewrite import read, rename, write
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from testdata import DATA

from edgeprof.conventions import shown
from edgeprof.render.markdown import cell, code, table, text

MD = MarkdownIt("commonmark", {"html": True}).enable("table")
MD.validateLink = lambda url: True  # as permissive as the most permissive viewer: javascript: links count too
ATOMS = ["`", "``", "```", "<", ">", "[", "]", "(", ")", "!", "\\", "&", "|", "#", "-", "1.", " ", "a", "x", ":",
         "<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "javascript:alert(1)", "http://evil.example/i.png",
         "&lt;", "&#60;", "<http://evil.example>", "]:", "\n", "\t", "*", "_", "~"]
values = st.lists(st.sampled_from(ATOMS), max_size=14).map("".join) | st.text(max_size=40)


def _tokens(md: str):
    for t in MD.parse(md):
        yield t
        yield from t.children or []


def _unsafe(md: str) -> list[str]:
    return [t.type for t in _tokens(md) if t.type in ("html_inline", "html_block", "link_open", "image")]


def _plain(md: str) -> str:
    inline = next(t for t in MD.parse(md) if t.type == "inline")
    return "".join(c.content for c in inline.children if c.type in ("text", "code_inline"))


@settings(max_examples=400, deadline=None)
@given(values)
def test_no_value_becomes_html_a_link_or_an_image(v):
    assert not _unsafe(text(v)), text(v)
    assert not _unsafe(f"- item {text(v)}")
    assert not _unsafe(table(["name", "value"], [[v, code(v)], ["x", v]]))
    assert not _unsafe(f"see {code(v)} and {text(v)}")


@settings(max_examples=400, deadline=None)
@given(values)
def test_code_shows_the_value_verbatim(v):
    """As the value is shown everywhere: control characters (a line break too) as ``\\n``, ``\\x1b``, never raw."""
    flat = shown(v)
    inline = [t for t in _tokens(f"x {code(v)} y") if t.type == "code_inline"]
    assert len(inline) == 1 and inline[0].content == (flat if flat.strip(" ") else inline[0].content)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([a for a in ATOMS if a not in ("*", "_", "~", "\n", "\t")]), max_size=14).map("".join))
def test_text_outside_code_shows_the_value(v):
    """Without emphasis marks, what a viewer shows is the value as it is shown everywhere (code spans it holds show
    their text)."""
    if "`" in v or v != v.strip(" ") or not v.strip():
        return  # backticks may legitimately form code spans; edge spaces collapse
    assert _plain(text(v)) == shown(v)


def test_the_old_regex_cases():
    """The cases found by hand: one backtick then two, a link to javascript:, a remote image, a reference
    definition, a leading heading marker."""
    for v in ("a`b``<img src=x onerror=alert(1)>", "[x](javascript:alert(1))", "![i](http://evil.example/i.png)",
              "[r]: javascript:alert(1)", "x` <img src=x onerror=alert(1)> `y", "\\`<img src=x onerror=alert(1)>`"):
        assert not _unsafe(text(v)) and not _unsafe(f"- {cell(v)}"), v
    assert text("# heading").startswith("\\#") and _plain(text("# heading")) == "# heading"


ATTACKS = {"Convolution": "x``<img src=x onerror=document.title='PWNED'>`",
           "Fully Connected": "[click](javascript:document.title='PWNED')",
           "ReLU": "![i](http://127.0.0.1:9/pwn.png)\x1b]0;PWNED\x07\x1b[2J"}


@pytest.fixture(scope="module")
def hostile_pair(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile_names")
    runs, version = read(gzip.decompress((DATA / "etdump" / "toycnn_xnn.N20.etdp.gz").read_bytes()))

    def attack(name):
        for k, v in ATTACKS.items():
            if name.startswith(k):
                return v + name
        return name
    (d / "b").mkdir()
    (d / "c").mkdir()
    (d / "b" / "toycnn_portable_t1.etdump").write_bytes(gzip.decompress(
        (DATA / "etdump" / "toycnn_portable.N20.etdp.gz").read_bytes()))
    (d / "c" / "toycnn_xnn_t1.etdump").write_bytes(write(rename(runs, attack), version))
    return d


class _Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [k for k, _ in attrs]


def test_reports_and_tables_of_hostile_names_run_nothing(hostile_pair, tmp_path):
    ep = [sys.executable, "-m", "edgeprof"]
    r = subprocess.run([*ep, "report", hostile_pair, "-b", "toycnn_portable", "-c", "toycnn_xnn", "--out", tmp_path / "r.md",
                        "--html", tmp_path / "r.html"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "r.md").read_text()
    assert "onerror" in md and "javascript" in md  # the names are there, shown as text
    assert not _unsafe(md)
    parsed = _Elements()
    parsed.feed((tmp_path / "r.html").read_text())
    assert not {"img", "script", "a", "iframe", "object"} & set(parsed.tags)
    assert not [a for a in parsed.attrs if a.startswith("on") or a in ("href", "src")]
    term = subprocess.run([*ep, "breakdown", hostile_pair / "c" / "toycnn_xnn_t1.etdump"], capture_output=True,
                          text=True, env=dict(os.environ, COLUMNS="200"))
    assert term.returncode == 0 and "PWNED" in term.stdout
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", term.stdout + term.stderr)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        if os.environ.get("EDGEPROF_REQUIRE_CHROMIUM"):
            raise AssertionError("Chromium is required here")
        return
    page = tmp_path / "md.html"
    page.write_text(f"<!doctype html><title>safe</title><body>{MD.render(md)}</body>")
    for p in (page, tmp_path / "r.html"):
        dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                              "--disable-component-update", "--no-first-run", f"--user-data-dir={tmp_path / 'prof'}",
                              "--virtual-time-budget=2000", "--dump-dom", p.as_uri()],
                             capture_output=True, text=True, timeout=180)
        assert dom.returncode == 0, dom.stderr[-1000:]
        assert "PWNED</title>" not in dom.stdout and "<img" not in dom.stdout and "<title>" in dom.stdout
