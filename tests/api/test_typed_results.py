"""Typed results: each command's result holds a frozen document of its kind's declared type, made once from what
the analyses built (an undeclared or missing field is an error there, whether or not the JSON check is on), written
by one ``to_json``; a result never changes after it is made."""

from __future__ import annotations

import dataclasses
import json

import pytest
from click.testing import CliRunner
from testdata import DATA

import edgeprof
from edgeprof.cli import main
from edgeprof.documents import DOCUMENTS, ComparisonDoc, LatencyDoc, LatencyReportsDoc
from edgeprof.documents_base import ABSENT, DocumentError
import contextlib


@pytest.fixture
def pair(etdump):
    return str(etdump("toycnn_portable.N20")), str(etdump("toycnn_xnn.N20"))


def test_a_result_and_its_document_are_frozen(pair):
    cmp = edgeprof.compare(*pair, warmup=0)
    assert isinstance(cmp.doc, ComparisonDoc) and cmp.doc.verdict == cmp.verdict == cmp["verdict"] == "faster"
    with pytest.raises(dataclasses.FrozenInstanceError):
        cmp.doc.verdict = "slower"
    with pytest.raises(dataclasses.FrozenInstanceError):
        cmp.doc = None
    with pytest.raises(TypeError):
        cmp["verdict"] = "slower"
    data = cmp.data
    data["verdict"] = "slower"  # a copy: the result is unchanged
    assert cmp.verdict == "faster" and cmp.to_json()["verdict"] == "faster"
    written = cmp.with_(written="/x/c.json")
    assert written.doc.written == "/x/c.json" and written.to_json()["written"] == "/x/c.json"
    assert cmp.doc.written is ABSENT and "written" not in cmp.to_json() and "written" not in cmp
    with pytest.raises(DocumentError, match=r"undeclared field.*speedup_ratio"):
        cmp.with_(speedup_ratio=2.0)


def test_a_document_refuses_fields_its_type_does_not_declare(pair):
    doc = edgeprof.compare(*pair).to_json()
    assert ComparisonDoc.from_json(doc).to_json() == doc
    with pytest.raises(DocumentError, match=r"ComparisonDoc \(comparison\): undeclared field\(s\) speedup_ratio"):
        ComparisonDoc.from_json({**doc, "speedup_ratio": 2.0})
    with pytest.raises(DocumentError, match=r"missing field\(s\) summary_line, verdict"):
        ComparisonDoc.from_json({k: v for k, v in doc.items() if k not in ("verdict", "summary_line")})
    # optional fields may be absent, required ones may be null where their type allows it
    bare = {k: v for k, v in doc.items() if k not in ("by_category", "tests", "metrics")}
    assert "by_category" not in ComparisonDoc.from_json(bare).to_json()


def test_an_analysis_that_adds_a_field_fails_the_command_without_the_json_check(pair, monkeypatch):
    """A planted drift between an analysis and its declared document: caught when the result is made, in
    production too (the JSON check off), not only by the tests' schema validation."""
    import edgeprof.analysis.compare as ac

    monkeypatch.delenv("EDGEPROF_CHECK_JSON", raising=False)
    real = ac.compare_latency

    def drifted(*a, **k):
        return {**real(*a, **k), "speedup_ratio": 2.0}

    monkeypatch.setattr(ac, "compare_latency", drifted)
    with pytest.raises(DocumentError, match="speedup_ratio"):
        edgeprof.compare(*pair)


def test_every_document_goes_back_and_forth_through_its_type(pair, tmp_path):
    """The JSON each command prints, read into its kind's declared type and written again, is the same JSON —
    nested documents (a collection's reports, a latency pair's comparison) included."""
    ex = tmp_path / "ex"
    assert CliRunner().invoke(main, ["example", str(ex)]).exit_code == 0
    etd = sorted(ex.rglob("*.etdump"))
    logs = [DATA / "xnnpack" / "mac_sme2_on_xnntrace.log", DATA / "xnnpack" / "mac_sme2_off_xnntrace.log"]
    anes = sorted((DATA / "anemll").glob("*.json"))
    commands = [["latency", str(etd[0]), "--json", "--no-write"],
                ["latency", str(etd[0]), "--compare", str(etd[1]), "--json", "--no-write"],
                ["compare", *pair, "--json", "--no-write"],
                ["breakdown", str(etd[0]), str(etd[1]), "--json", "--no-write"],
                ["kernels", str(logs[0]), "--json", "--no-write"],
                ["kernel-view", "-b", str(logs[1]), "-c", str(logs[0]), "--json"],
                ["validate", str(ex), "--json"], ["ane", str(anes[0]), "--json"], ["ane", str(anes[1]), "--json"],
                ["trace", str(etd[0]), "--json", "--out", str(tmp_path / "t.json")]]
    kinds = set()
    for cmd in commands:
        r = CliRunner().invoke(main, cmd)
        assert r.exit_code in (0, 1), (cmd, r.output)
        doc = json.loads(r.stdout)
        shapes = DOCUMENTS[doc["kind"]]
        matches = []
        for t in shapes:
            with contextlib.suppress(DocumentError):
                matches.append(t.from_json(doc).to_json())
        assert doc in matches, (cmd, [t.__name__ for t in shapes])
        kinds.add(doc["kind"])
    assert kinds == {"latency", "comparison", "breakdown", "kernels", "kernel_view", "validation", "ane_analysis",
                     "ane_plan", "trace"}
    pair_doc = json.loads(CliRunner().invoke(main, commands[1]).stdout)
    typed = LatencyReportsDoc.from_json(pair_doc)
    assert all(isinstance(x, LatencyDoc) for x in typed.reports) and isinstance(typed.comparison, ComparisonDoc)
    assert typed.reports[0].median_ms == pair_doc["reports"][0]["median_ms"]
