"""``edgeprof schema``: the JSON Schema (draft 2020-12) of every document kind, generated from the declared types
(src/edgeprof/documents.py), checked by an independent validator (the ``jsonschema`` package): the schemas
against the draft's metaschema, real documents against the schemas, planted departures rejected. Every other
test's documents pass through the same check (tests/conftest.py sets ``EDGEPROF_CHECK_JSON``)."""

from __future__ import annotations

import copy
import json
import os

import jsonschema
import pytest
from click.testing import CliRunner

from edgeprof.cli import main
from edgeprof.conventions import CHECK_JSON_ENV as CHECK_ENV
from edgeprof.conventions import KINDS, SCHEMA_VERSION


def _run(*args):
    r = CliRunner().invoke(main, [str(a) for a in args])
    return r


def test_every_kind_has_a_schema_the_draft_accepts():
    r = _run("schema")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert list(doc) == list(KINDS)
    for _kind, s in doc.items():
        jsonschema.Draft202012Validator.check_schema(s)
        assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert json.loads(_run("schema", "comparison").stdout) == doc["comparison"]
    assert _run("schema", "--list").stdout.split() == list(KINDS)


def test_an_unknown_kind_is_a_usage_error():
    r = _run("schema", "comparisons")
    assert r.exit_code == 2 and "unknown document kind 'comparisons'" in r.stderr and "comparison" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def real_docs(etdump_dir, tmp_path_factory):
    b, c = etdump_dir / "toycnn_portable.N20.etdp", etdump_dir / "toycnn_xnn.N20.etdp"
    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("schema_docs"))  # the commands write their files here
    try:
        return {"comparison": json.loads(_run("compare", "-b", b, "-c", c, "--json").stdout),
                "latency": json.loads(_run("latency", b, c, "--json").stdout)}
    finally:
        os.chdir(here)


def _validator(kind):
    return jsonschema.Draft202012Validator(json.loads(_run("schema", kind).stdout))


def test_real_documents_validate_and_departures_are_rejected(real_docs):
    cmp, lat = real_docs["comparison"], real_docs["latency"]
    v = _validator("comparison")
    assert not list(v.iter_errors(cmp))
    assert len(lat["reports"]) == 2 and not list(_validator("latency").iter_errors(lat))

    def rejected(change):
        d = copy.deepcopy(cmp)
        change(d)
        return bool(list(v.iter_errors(d)))
    assert rejected(lambda d: d.update(surprise=1))                    # an undeclared field
    assert rejected(lambda d: d.update(verdict="fastr"))               # a verdict outside conventions.VERDICTS
    assert rejected(lambda d: d.pop("speedup"))                        # a required field missing
    assert rejected(lambda d: d.update(resamples="2000"))             # an integer as text
    assert rejected(lambda d: d.update(resamples=2000.5))             # a fraction where a count belongs
    assert rejected(lambda d: d.update(schema_version=SCHEMA_VERSION + 1))
    assert rejected(lambda d: d.update(kind="latency"))
    assert not rejected(lambda d: d.update(p_value=None))              # a non-finite number is written as null
    assert not rejected(lambda d: d.pop("written", None))              # optional


def test_the_check_stops_a_document_that_departs_from_its_type(monkeypatch, etdump):
    """The check runs where documents are serialised: a field the types do not declare fails the command
    while EDGEPROF_CHECK_JSON is set, and passes without it (so it is the check that stopped it)."""
    from edgeprof.api import result_base

    assert os.environ.get(CHECK_ENV) == "1"
    plain = result_base.Result.body
    monkeypatch.setattr(result_base.Result, "body", lambda self: {**plain(self), "surprise": 1})
    path = etdump("toycnn_xnn.N20")
    bad = _run("trace", path, "--out", path.parent / "t.json", "--json")
    assert bad.exit_code != 0
    assert "trace document departs from its schema" in (bad.stderr + str(bad.exception)) and "surprise" in \
        (bad.stderr + str(bad.exception))
    monkeypatch.delenv(CHECK_ENV)
    ok = _run("trace", path, "--out", path.parent / "t.json", "--json")
    assert ok.exit_code == 0 and json.loads(ok.stdout)["surprise"] == 1


@pytest.mark.missing_extra_expected
def test_the_check_without_jsonschema_is_one_line_naming_what_to_install(monkeypatch, etdump):
    import sys

    monkeypatch.setitem(sys.modules, "jsonschema", None)  # as on a core install
    path = etdump("toycnn_xnn.N20")
    r = _run("trace", path, "--out", path.parent / "t2.json", "--json")
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "EDGEPROF_CHECK_JSON=1" in r.stderr and "edgeprof[test]" in r.stderr
