"""Edges of the ANE report reader: a file of another format given as a report is named for what it is, text that is
not UTF-8 is refused at its first bad byte, and a JSON document of neither kind names its tool only when it has one."""

from __future__ import annotations

import gzip

import pytest
from testdata import DATA

from edgeprof.errors import InputError
from edgeprof.io.anemll import read_report, report_from_doc


def test_an_etdump_given_as_a_report_is_named_as_an_etdump(tmp_path):
    p = tmp_path / "profile.json"
    p.write_bytes(gzip.decompress((DATA / "etdump" / "toycnn_xnn.N20.etdp.gz").read_bytes()))  # a real ETDump
    with pytest.raises(InputError, match=r"this is an ETDump \(an ExecuTorch profile\), not an anemll-profile or "
                                         r"ane-costplan JSON report: read it with `edgeprof analyze FILE`"):
        read_report(p)


def test_latin1_text_is_refused_at_its_first_non_utf8_byte(tmp_path):
    p = tmp_path / "profile.json"
    p.write_bytes(b'{"tool": "caf\xe9"}')     # é in Latin-1: byte 13 does not start a UTF-8 sequence
    with pytest.raises(InputError, match=r"not UTF-8 text \(at byte offset 13\)"):
        read_report(p)


@pytest.mark.parametrize("doc,tail", [
    ({"tool": "xcode"}, "the document is an object (its tool is 'xcode')"),
    ({"operations": []}, "the document is an object"),   # a cost plan without total_cost or with_device
    (["tool"], "the document is an array"),
])
def test_a_document_of_neither_kind_names_its_tool_only_when_it_has_one(doc, tail):
    with pytest.raises(InputError) as e:
        report_from_doc(doc, "x.json")
    assert str(e.value).endswith("neither an anemll-profile nor an ane-costplan JSON report: " + tail)
