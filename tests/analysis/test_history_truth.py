"""History on histories with known truth made of real launches (tests/helpers/history_truth.py: the real-noise
corpus, one launch per commit, a known change from a known commit on): steps found at their commit, steps too
young to confirm reported as pending or possible at their commit and nowhere else, few false changes on flat
series; what kind of change a store's change is (proportional, concentrated, an operator appearing); a real
end-to-end path through ETDump files, ``ingest`` and ``history``. The figures the README states come from
``bench/bench_history.py --only truth`` (more histories)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

import edgeprof
import history_truth as ht
from edgeprof.analysis.history import CONFIRM_AFTER, POSSIBLE_LIMIT, change_kind, commits_to_confirm
from edgeprof.cli import main


@pytest.fixture(scope="module")
def table():
    return ht.suite(reps=2)


def test_steps_are_found_at_their_commit(table):
    rows = table["steps"]
    # a 2.3× step (gpt_xnn → gpt_xnnq8 size) with three commits after it: confirmed at its exact commit
    assert rows[(2.3, 3)]["exact"] / rows[(2.3, 3)]["histories"] >= 0.95
    # with one commit after it: reported (pending or possible) at its commit
    assert rows[(2.3, 1)]["reported"] / rows[(2.3, 1)]["histories"] >= 0.8
    # 1.5× with ten commits after it: confirmed within ±2 commits
    assert rows[(1.5, 10)]["near"] / rows[(1.5, 10)]["histories"] >= 0.95
    # 2.3×: confirmed as soon as the rule allows (the step's commit and CONFIRM_AFTER more)
    until = rows[(2.3, 10)]["until"]
    assert len(until) == rows[(2.3, 10)]["histories"] and np.mean(until) <= CONFIRM_AFTER + 1.5


def test_nothing_is_reported_at_a_wrong_commit_and_false_changes_are_rare(table):
    rows = table["steps"]
    assert all(a["wrong_place"] == 0 for a in rows.values())  # pending or possible only where the step is
    commits = sum(a["commits"] for a in rows.values())
    assert 100 * sum(a["false"] for a in rows.values()) / commits <= 0.3
    flat = table["flat"]
    assert 100 * flat["false"] / flat["commits"] <= 0.3


def test_commits_to_confirm_against_a_direct_t_test():
    """The commits a possible change needs: the first count at which scipy's two-sample t test (pooled, the same
    point variance) passes the gate — checked at the boundary (one fewer does not)."""
    from scipy import stats

    alpha, s2, before = 0.001, 0.04, 20
    for est in (0.3, 0.5, 0.83):
        more = commits_to_confirm(est, s2, before, 1, alpha=alpha)
        assert more is not None

        def p(na, est=est):
            df = na + before - 2
            t = est / math.sqrt(s2 * (1 / na + 1 / before))
            return 2 * stats.t.sf(t, df)
        na = 1 + more
        assert p(na) < alpha and na - 1 >= CONFIRM_AFTER
        assert na - 1 == CONFIRM_AFTER or p(na - 1) >= alpha
    assert commits_to_confirm(0.01, s2, before, 1, alpha=alpha) is None  # beyond POSSIBLE_LIMIT more commits
    assert commits_to_confirm(0.3, s2, before, 1, alpha=alpha, limit=POSSIBLE_LIMIT) == \
        commits_to_confirm(0.3, s2, before, 1, alpha=alpha, limit=10 * POSSIBLE_LIMIT)


def _row(name, before, after):
    return {"name": name, "before_ms": before, "after_ms": after, "delta_ms": after - before}


@pytest.mark.parametrize("factor_b, kind", [
    # A 6 ms, B 4 ms; A × 1.5 and B × b. D by hand = (|3 − 6(r − 1)| + |4(b − 1) − 4(r − 1)|) / (3 + |4(b − 1)|)
    (1.5, "proportional"),      # everything × 1.5: D = 0
    (1.285, "proportional"),    # D = 0.2493 ≤ 0.25
    (1.28, "mixed"),            # D = 0.2563
    (1.133, "mixed"),           # D = 0.4988
    (1.13, "concentrated"),     # D = 0.5045 ≥ 0.5
    (1.0, "concentrated"),      # A alone: D = 2(1 − 0.6) = 0.8
])
def test_change_kind_at_its_boundaries(factor_b, kind):
    rows = [_row("A", 6.0, 9.0), _row("B", 4.0, 4.0 * factor_b)]
    before, after = 10.0, 9.0 + 4.0 * factor_b
    r = after / before
    hand = (abs(3.0 - 6.0 * (r - 1)) + abs(4.0 * (factor_b - 1) - 4.0 * (r - 1))) / (3.0 + abs(4.0 * (factor_b - 1)))
    got = change_kind(rows, before, after)
    assert got["kind"] == kind and got["kind_deviation"] == pytest.approx(hand, abs=1e-12)


def test_change_kind_cannot_tell_when_one_line_holds_the_time():
    # a line of 76 % moving alone is too close to everything moving (D = 0.48): no kind claimed; at 74 % (D = 0.52)
    # it is told apart
    assert change_kind([_row("A", 7.6, 11.4), _row("B", 2.4, 2.4)], 10.0, 13.8)["kind"] is None
    assert change_kind([_row("A", 7.4, 11.1), _row("B", 2.6, 2.6)], 10.0, 13.7)["kind"] == "concentrated"


@pytest.fixture(scope="module")
def kinds_store(tmp_path_factory):
    store = tmp_path_factory.mktemp("kinds") / "h.duckdb"
    gemm = ht.concentrated_operator("tel_xnn")
    truths = {
        "proportional": ht.Truth("step", 1.5, 20, 30, "c_quiet", "tel_xnn"),
        "concentrated": ht.Truth("concentrated", 2.0, 20, 30, "c_quiet", "tel_xnn", gemm),
        "appears": ht.Truth("appears", 1.3, 20, 30, "c_quiet", "toycnn_xnn"),
        "flat": ht.Truth("flat", 1.0, None, 30, "c_quiet", "tel_xnn"),
        "young": ht.Truth("step", 2.3, 29, 30, "c_quiet", "toycnn_xnn"),
    }
    items = []
    for name, t in truths.items():
        items += ht.build(t, seed=3, name=name)
    ht.write_store(store, items)
    return store, gemm


def _series(res, model):
    return next(s for s in res.series if s["model"] == model)


def test_proportional_and_concentrated_changes_are_told_apart(kinds_store):
    store, gemm = kinds_store
    res = edgeprof.history(store)
    prop = _series(res, "proportional")["changes"]
    assert [(c["commit_after"], c["status"], c["kind"]) for c in prop] == [("c0020", "confirmed", "proportional")]
    assert "likely the environment" in prop[0]["kind_evidence"] and "proportional change" in prop[0]["statement"]
    conc = _series(res, "concentrated")["changes"]
    assert [(c["commit_after"], c["status"], c["kind"]) for c in conc] == [("c0020", "confirmed", "concentrated")]
    assert conc[0]["attribution"]["operators"][0]["name"] == gemm and "likely the code" in conc[0]["kind_evidence"]
    assert _series(res, "flat")["changes"] == []


def test_an_operator_appearing_is_a_change(kinds_store):
    store, _ = kinds_store
    res = edgeprof.history(store, model="appears")
    ch = res.series[0]["changes"]
    assert [(c["commit_after"], c["status"]) for c in ch] == [("c0020", "confirmed")]
    assert ch[0]["attribution"]["operators_appeared"] == [ht.NEW_OP] and f"appeared: {ht.NEW_OP}" in ch[0]["statement"]
    op = edgeprof.history(store, model="appears", metric=f"op:{ht.NEW_OP}")
    (c,) = op.series[0]["changes"]
    assert (c["commit_after"], c["direction"], c["status"], c["commits_after"]) == ("c0020", "appeared", "confirmed", 9)
    assert "absent in the 20 commit(s) before" in c["statement"]


def test_a_step_at_the_newest_commit_is_possible_with_the_commits_that_would_confirm_it(kinds_store):
    store, _ = kinds_store
    res = edgeprof.history(store, model="young")
    (c,) = res.series[0]["changes"]
    assert c["commit_after"] == "c0029" and c["status"] in ("possible", "pending")
    if c["status"] == "possible":
        assert c["commits_needed"] >= CONFIRM_AFTER and "more at this level would confirm it" in c["statement"]
    assert not res.data["regressions"]  # nothing confirmed: no gate fails on it


def test_real_files_through_ingest_and_history(tmp_path):
    """As a user does it: one ETDump per commit (the 12 real launches of toycnn_portable and of tel_portable in a
    busy session, in random order; 2× slower from commit c08 for one model, unchanged for the other), ingested one
    by one with the CLI; history finds the step at c08 and nothing on the flat series; ingesting everything again
    changes nothing."""
    import noise_corpus as nc
    from corpus_etdump import etdump_of

    rng = np.random.default_rng(5)
    store = tmp_path / "h.duckdb"
    files = []
    for model, program, factor in (("stepped", "toycnn_portable", 2.0), ("flat", "tel_portable", 1.0)):
        launches = nc.session("b_busy")[program]
        for c, i in enumerate(rng.permutation(len(launches))):  # each launch once: no two files alike
            f = tmp_path / f"c{c:02d}" / f"{model}.etdp"
            f.parent.mkdir(exist_ok=True)
            f.write_bytes(etdump_of(launches[int(i)], factor if c >= 8 else 1.0))
            files.append((f, c))
    r = CliRunner()

    def ingest_all():
        for f, c in files:
            res = r.invoke(main, ["ingest", str(f), "--store", str(store), "--commit", f"c{c:02d}",
                                  "--time", f"2026-11-01T{c:02d}:00:00"])
            assert res.exit_code == 0, res.output + res.stderr

    ingest_all()
    first = r.invoke(main, ["history", "--store", str(store), "--json"])
    assert first.exit_code == 0
    doc = json.loads(first.stdout)
    by = {s["model"]: s for s in doc["series"]}
    assert [(c["commit_after"], c["direction"], c["status"]) for c in by["stepped"]["changes"]] == \
        [("c08", "regression", "confirmed")]
    assert by["flat"]["changes"] == []
    ingest_all()
    again = r.invoke(main, ["history", "--store", str(store), "--json"])
    assert json.loads(again.stdout)["series"] == doc["series"]
