"""The HTML report and the Markdown report of the same result hold the same tables, row for row and cell for cell:
the Markdown is rendered to HTML by an independent CommonMark implementation (markdown-it-py), both documents'
tables are read with the standard library's HTML parser, and compared. A row lost (or added, or reordered) by one
renderer fails, whatever the table. Each table's numbers are then checked against the result's JSON in the tests
of the report's content (tests/api/test_report.py)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt
from testdata import DATA

from edgeprof import api


class _Tables(HTMLParser):
    """Every <table> of a document: its rows, each a list of cell texts (tags dropped, spaces collapsed)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self._depth = 0
        self._cell: list[str] | None = None
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("svg", "style", "script"):
            self._skip += 1
        elif tag == "table":
            self._depth += 1
            self.tables.append([])
        elif tag == "tr" and self._depth:
            self.tables[-1].append([])
        elif tag in ("td", "th") and self._depth:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("svg", "style", "script"):
            self._skip -= 1
        elif tag == "table":
            self._depth -= 1
        elif tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(re.sub(r"\s+", " ", "".join(self._cell)).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None and not self._skip:
            self._cell.append(data)


def _tables(html: str) -> list[list[list[str]]]:
    """The tables, without all-empty rows (a Markdown key–value table needs an empty header row; HTML has none)."""
    p = _Tables()
    p.feed(html)
    return [rows for rows in ([r for r in t if any(r)] for t in p.tables) if rows]


MD = MarkdownIt("commonmark", {"html": False}).enable("table")


@pytest.fixture(scope="module", params=["etdump_pair", "ort_pair", "ort_fallback", "litert_single"])
def report(request, etdump_dir):
    inputs = {
        "etdump_pair": [etdump_dir / "toycnn_portable.N20.etdp", etdump_dir / "toycnn_xnn.N20.etdp"],
        "ort_pair": [DATA / "ort" / "cnn_cpu_t1_l1.ort.json", DATA / "ort" / "cnn_int8_cpu_t1_l1.ort.json.gz"],
        "ort_fallback": [DATA / "ort" / "cnn_ov_t1_l1.ort.json.gz", DATA / "ort" / "cnn_mixed_ov_t1_l1.ort.json.gz"],
        "litert_single": [DATA / "litert" / "cnn_xnnpack_benchmark.log"],
    }[request.param]
    return api.report([str(p) for p in inputs])


def test_html_and_markdown_hold_the_same_tables(report):
    generated = "2026-12-02T00:00:00Z"
    md_tables = _tables(MD.render(report.markdown(generated)))
    html_tables = _tables(report.html(generated))
    assert len(md_tables) >= 3
    assert len(html_tables) == len(md_tables)
    for k, (a, b) in enumerate(zip(md_tables, html_tables)):
        assert len(a) == len(b), f"table {k} ({a[0][:3]}): {len(a)} rows in Markdown, {len(b)} in HTML"
        for i, (ra, rb) in enumerate(zip(a, b)):
            assert ra == rb, f"table {k} row {i}"
