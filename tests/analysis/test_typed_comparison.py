"""One comparison, typed: every end-to-end metric, category and operator line of a comparison is a frozen record
(edgeprof/comparison.py) made once by the analysis; the JSON document is those records' rows, and every renderer
reads the records and the JSON read back alike. Statuses come from one rule (conventions.line_status), tested at
its boundaries."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from testdata import DATA

from edgeprof import api
from edgeprof.comparison import CategoryLine, MetricContrast, OperatorLine
from edgeprof.conventions import LineStatus, Verdict, line_status
from edgeprof.render.jsonfmt import dumps


@pytest.fixture(scope="module", params=["etdump", "ort"])
def comparison(request, etdump_dir):
    files = {"etdump": (etdump_dir / "toycnn_portable.N20.etdp", etdump_dir / "toycnn_xnn.N20.etdp"),
             "ort": (DATA / "ort" / "cnn_cpu_t1_l1.ort.json", DATA / "ort" / "cnn_int8_cpu_t1_l1.ort.json.gz")}
    b, c = files[request.param]
    return api.compare(baseline=[str(b)], candidate=[str(c)])


def test_every_line_is_a_frozen_record(comparison):
    doc = comparison.doc
    cats = doc["by_category"]["categories"]
    ops = doc["by_category"]["operators"]["matched"]
    assert cats and (ops or comparison.doc["by_category"]["operators"]["matched_total"] == 0)
    assert all(isinstance(c, CategoryLine) for c in cats)
    assert all(isinstance(o, OperatorLine) for o in ops)
    assert all(isinstance(m, MetricContrast) for m in doc["metrics"].values())
    with pytest.raises(dataclasses.FrozenInstanceError):
        cats[0].status = LineStatus.FASTER  # type: ignore[misc]
    # every status and verdict is a member of its enum, not a free string
    assert all(isinstance(c.status, LineStatus) for c in cats)
    assert all(isinstance(m.verdict, Verdict) for m in doc["metrics"].values())


def test_the_json_rows_are_the_records(comparison):
    doc = comparison.doc
    back = json.loads(dumps(comparison.to_json()))
    rows = back["by_category"]["categories"]
    assert [r["line"] for r in rows] == [c.line for c in doc["by_category"]["categories"]]
    for r, c in zip(rows, doc["by_category"]["categories"]):
        assert set(r) == {f.name for f in dataclasses.fields(CategoryLine)}
        assert r["status"] == c.status.value
        assert r["share_change_ci"] == list(c.share_change_ci)
        for k in ("speedup", "ci_low", "ci_high", "q_value"):
            assert r[k] == c[k]


def test_terminal_renders_the_records_and_the_json_alike(comparison, capfd):
    """The renderer reads a record as it reads its JSON row: the in-memory comparison and the one read back from
    its JSON print the same category and operator tables."""
    from edgeprof.render import terminal

    def printed(bc) -> str:
        capfd.readouterr()
        terminal.print_categories(bc)
        return capfd.readouterr().out

    bc = comparison.doc["by_category"]
    shown = printed(bc)
    assert shown == printed(json.loads(dumps(bc)))
    assert all(c.line.replace("_", " ").split()[0] in shown for c in bc["categories"])  # shown with spaces, may wrap


@pytest.mark.parametrize("low, q, expected", [
    (1.02 * (1 + 1e-12), 0.05, LineStatus.FASTER),   # just above 1 + δ, q at α: faster
    (1.02 * (1 - 1e-12), 0.05, LineStatus.NO_CHANGE),  # an interval reaching just below 1 + δ does not clear it
    (1.02 * (1 + 1e-12), 0.05 + 1e-12, LineStatus.NO_CHANGE),  # q just above α: not significant
    (1.5, 0.0, LineStatus.FASTER),
])
def test_line_status_at_its_boundaries(low, q, expected):
    assert line_status(low, low * 2, q, 0.02, 0.05) is expected
    # the mirror image: a slower line
    mirrored = line_status(1 / (low * 2), 1 / low, q, 0.02, 0.05)
    assert mirrored is (LineStatus.SLOWER if expected is LineStatus.FASTER else LineStatus.NO_CHANGE)


def test_a_line_status_agrees_with_its_interval_and_q(comparison):
    """An oracle of the rule, written out: faster iff q ≤ 0.05 and the interval lies above 1.02; slower iff q ≤ 0.05
    and it lies below 1/1.02."""
    for row in comparison.doc["by_category"]["categories"] + comparison.doc["by_category"]["operators"]["matched"]:
        if row.q_value is None:
            assert row.status in (LineStatus.UNTESTED, LineStatus.ABSENT, LineStatus.NEW, None)
            continue
        up = math.log(row.ci_low) > math.log(1.02) and row.q_value <= 0.05
        down = math.log(row.ci_high) < -math.log(1.02) and row.q_value <= 0.05
        assert row.status == ("faster" if up else "slower" if down else "no significant change")
        assert row.significant == (row.q_value <= 0.05)
