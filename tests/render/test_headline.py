"""The one-line summaries agents get (``render/headline.py``): every kind the MCP tools return has its own line,
built from the document's figures (checked against the documents of real runs)."""

from __future__ import annotations

import gzip
import shutil

from edgeprof import api
from edgeprof.render.headline import _BY_KIND, headline
from testdata import DATA


def test_every_tool_kind_has_a_line():
    from edgeprof.server import tools

    kinds = {k for ks in tools.OUTPUT_KINDS.values() for k in ks}  # every kind an MCP tool can answer with
    assert kinds <= set(_BY_KIND), kinds - set(_BY_KIND)
    assert hasattr(tools, "_doc")


def test_lines_carry_the_figures(tmp_path):
    f = tmp_path / "tel_xnn.etdp"
    f.write_bytes(gzip.decompress((DATA / "etdump" / "tel_xnn.N20.etdp.gz").read_bytes()))
    b = api.breakdown(f).to_json()
    top = max(b["categories"], key=lambda c: c["avg_ms"])
    assert f"{top['line']} {top['pct_of_e2e']:.0f} %" in headline(b) and f"over {b['runs']} runs" in headline(b)
    lat = api.latency(f)[0].to_json()
    assert f"over {lat['steady']['count']} steady runs" in headline(lat)
    assert headline({"kind": "history", "series": [], "regressions": ["x: +9 %"]}) == "regression: x: +9 %"
    assert headline({"kind": "something-new"}) == "something-new"  # a kind without a line says its kind


def test_phase_comparisons_and_ane_folders_have_their_own_lines(tmp_path):
    """The two kinds an MCP tool can answer with besides the CLI's usual ones: a phase comparison's line is its
    statements (what changed per phase), an ANE folder's says how many submodel reports it read."""
    for n in ("llm_kv_portable", "llm_kv_xnn"):
        (tmp_path / f"{n}.etdp").write_bytes(gzip.decompress((DATA / "llm" / f"{n}.G2S64.etdp.gz").read_bytes()))
        shutil.copy(DATA / "llm" / f"{n}.G2S64.runs.json", tmp_path / f"{n}.runs.json")
    cmp = api.compare_phases(tmp_path / "llm_kv_portable.etdp", tmp_path / "llm_kv_xnn.etdp").to_json()
    assert cmp["kind"] == "phase_comparison" and cmp["statements"]
    assert headline(cmp) == "; ".join(cmp["statements"]) and "decode" in headline(cmp)
    folder = tmp_path / "ane"
    folder.mkdir()
    shutil.copy(DATA / "anemll" / "anemll_profile_0.4.1.illustrative.json", folder / "a.json")
    shutil.copy(DATA / "anemll" / "ane_costplan.illustrative.json", folder / "b.json")
    doc = api.ane_folder([folder]).to_json()
    assert doc["kind"] == "ane_folder"
    assert headline(doc).startswith(f"{len(doc['reports'])} submodel report(s)") and len(doc["reports"]) >= 1
