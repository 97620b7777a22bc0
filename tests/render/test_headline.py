"""The one-line summaries agents get (``render/headline.py``): every kind the MCP tools return has its own line,
built from the document's figures (checked against the documents of real runs)."""

from __future__ import annotations

import gzip

from edgeprof import api
from edgeprof.render.headline import _BY_KIND, headline
from testdata import DATA


def test_every_tool_kind_has_a_line():
    from edgeprof.server import tools

    kinds = {"latency", "comparison", "breakdown", "analysis_summary", "kernels", "validation", "phases", "program",
             "coreml_static", "history", "report", "ane_analysis", "collection"}
    assert kinds <= set(_BY_KIND)
    assert hasattr(tools, "_doc")


def test_lines_carry_the_figures(tmp_path):
    f = tmp_path / "tel_xnn.etdp"
    f.write_bytes(gzip.decompress((DATA / "etdump" / "tel_xnn.N20.etdp.gz").read_bytes()))
    b = api.breakdown(f).to_dict()
    top = max(b["categories"], key=lambda c: c["avg_ms"])
    assert f"{top['line']} {top['pct_of_e2e']:.0f} %" in headline(b) and f"over {b['runs']} runs" in headline(b)
    lat = api.latency(f)[0].to_dict()
    assert f"over {lat['steady']['count']} steady runs" in headline(lat)
    assert headline({"kind": "history", "series": [], "regressions": ["x: +9 %"]}) == "regression: x: +9 %"
    assert headline({"kind": "something-new"}) == "something-new"  # a kind without a line says its kind
