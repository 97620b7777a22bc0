"""The invariant walk (edgeprof/invariants.py): each rule finds what it is about, at its boundary, and passes what
an honest document says; then the walk over comparisons of real launches (the real-noise corpus, tests/data/noise)
at 1 vs 1, 2 vs 2 and 3 vs 3 finds nothing — points inside their intervals, shares in [0, 100], statuses that
agree with their figures, sentences that quote the table beside them."""

from __future__ import annotations

import numpy as np
import pytest

import noise_corpus as nc

from edgeprof import invariants
from edgeprof.analysis import noise as nz
from edgeprof.analysis.compare_ops import compare_lines


def rules(doc) -> list[str]:
    return [v.rule for v in invariants.violations(doc)]


@pytest.mark.parametrize("point,ok", [(1.0, True), (2.0, True), (1.5, True), (0.99999, False), (2.00001, False)])
def test_a_point_inside_its_interval_at_both_ends(point, ok):
    assert (rules({"speedup": point, "ci_low": 1.0, "ci_high": 2.0}) == []) is ok
    assert (rules({"estimate": point, "ci": {"low": 1.0, "high": 2.0}}) == []) is ok
    assert (rules({"speedup": point, "low": 1.0, "high": 2.0}) == []) is ok
    assert (rules({"baseline_share": point * 10, "baseline_share_ci": [10.0, 20.0]}) == []) is ok


def test_a_reversed_interval():
    assert rules({"ci_low": 2.0, "ci_high": 1.0}) == ["interval"]
    assert rules({"x_ci": [3.0, 1.0]}) == ["interval"]


@pytest.mark.parametrize("key,value,ok", [
    ("baseline_share", 0.0, True), ("baseline_share", 100.0, True), ("baseline_share", -0.001, False),
    ("candidate_share", 100.001, False), ("share_pct", 140.8, False),
    ("share_change", -100.0, True), ("share_change", 100.0, True), ("share_change", -100.01, False),
])
def test_shares_and_share_changes_in_range(key, value, ok):
    assert (rules({key: value}) == []) is ok


def test_share_intervals_in_range():
    assert rules({"candidate_share": 50.0, "candidate_share_ci": [-0.64, 140.8]}) == ["share"]
    assert rules({"share_change_ci": [-101.0, 3.0]}) == ["share"]
    assert rules({"share_change_ci": [-100.0, 100.0]}) == []


@pytest.mark.parametrize("key,value,ok", [("p_value", 0.0, True), ("p_value", 1.0, True), ("q_value", 1.01, False),
                                          ("q_value", -0.01, False), ("launch_p_value", 2.0, False)])
def test_probabilities_in_range(key, value, ok):
    assert (rules({key: value}) == []) is ok


@pytest.mark.parametrize("status,point,lo,hi,found", [
    ("faster", 1.5, 1.1, 2.0, []),
    ("faster", 0.0411, 1.29, 6.82, ["interval", "status"]),   # the point 24× slower, the interval and status faster
    ("faster", 1.5, 0.9, 2.0, ["status"]),
    ("slower", 0.5, 0.4, 0.9, []),
    ("slower", 0.5, 0.4, 1.0, ["status"]),
    ("no significant change", 1.5, 0.9, 2.0, []),
])
def test_a_status_agrees_with_its_point_and_interval(status, point, lo, hi, found):
    assert rules({"status": status, "speedup": point, "ci_low": lo, "ci_high": hi}) == found


@pytest.mark.parametrize("text,estimate,ok", [
    ("b is 406.99x faster than a", 426.0, False),
    ("b is 426.00x faster than a", 426.0, True),
    ("b is 426.00x faster than a", 426.004999, True),
    ("b is 426.00x faster than a", 426.006, False),
    ("b is 2.00x slower than a", 0.5, True),
    ("b is 2.00x slower than a", 0.4, False),
])
def test_a_description_quotes_the_estimate(text, estimate, ok):
    assert (rules({"estimate": estimate, "description": text}) == []) is ok


def _by_category(statement: str, pool=(2.2, 20.5)):
    return {"bottleneck": {"statement": statement, "material_share_pct": 10.0, "threshold_percentage_points": 5.0,
                           "largest_baseline": "CONV"},
            "categories": [{"line": "CONV", "baseline_share": 95.0, "candidate_share": 70.0},
                           {"line": "POOL", "baseline_share": pool[0], "candidate_share": pool[1]}]}


def test_a_sentence_saying_nothing_grew_beside_a_category_that_grew():
    said = "no bottleneck shift: CONV 95 % → 70 % of latency, and no other category grew to a material share"
    assert rules(_by_category(said)) == ["sentence"]
    assert rules(_by_category(said, pool=(2.2, 9.9))) == []     # below the material share
    assert rules(_by_category(said, pool=(5.5, 10.4))) == []    # under +5 points
    honest = said + " that the runs establish; POOL 2 % → 20 % of latency, not established at this noise"
    assert rules(_by_category(honest)) == []


def test_a_sentence_quoting_a_share_the_table_does_not_hold():
    said = "no bottleneck shift: CONV 95 % → 76 % of latency"
    assert rules(_by_category(said, pool=(2.2, 3.0))) == ["sentence"]
    assert rules(_by_category("no bottleneck shift: CONV 95 % → 70 % of latency", pool=(2.2, 3.0))) == []


@pytest.mark.parametrize("b,c,ok", [(2.0, 1.0, True), (2.0, 0.999, False), (4.0, 2.0, True), (2.0001, 1.0, False)])
def test_a_speedup_is_the_ratio_of_the_typical_values_beside_it(b, c, ok):
    assert (rules({"speedup": 2.0, "ci_low": 1.5, "ci_high": 2.5, "baseline_typical_ms": b,
                   "candidate_typical_ms": c}) == []) is ok


def _tails(mean, p90, p99, text):
    return {"metrics": {m: {"speedup": s, "ci_low": s, "ci_high": s, "verdict": v}
                        for m, (s, v) in zip(("mean", "p90", "p99"), (mean, p90, p99))},
            "tail_regression": text}


def test_a_tail_sentence_saying_runs_got_slower_needs_a_slower_tail_figure():
    said = "tail regression: median 3.33× faster (faster), but 8.0 % of runs took … — some runs got much slower"
    assert rules(_tails((1.2, "faster"), (3.3, "faster"), (6.6, "faster"), said)) == ["sentence"]
    assert rules(_tails((1.2, "faster"), (3.3, "faster"), (0.8, "slower"), said)) == []
    assert rules(_tails((1.2, "faster"), (3.3, "faster"), (6.6, "faster"),
                        "wider tail: median 3.33× faster (faster), and …, though p99 6.6× faster [6.6–6.6]")) == []


@pytest.mark.parametrize("text,ok", [("p99 1.25× slower [", True), ("p99 1.26× slower [", False),
                                     ("p99 1.25× faster [", False)])
def test_a_tail_sentence_quotes_the_metric_it_names(text, ok):
    assert (rules(_tails((1.0, "no significant change"), (1.0, "no significant change"), (0.8, "slower"),
                         f"tail regression: median 1.01× faster (no significant change), but {text}")) == []) is ok


def test_check_names_the_kind_and_the_place():
    with pytest.raises(ValueError, match=r"comparison document breaks its invariants: /a/0: share: candidate_share "
                                         r"140 is not in \[0, 100\]"):
        invariants.check({"kind": "comparison", "a": [{"candidate_share": 140.0}]})
    invariants.check({"kind": "comparison", "a": [{"candidate_share": 40.0}]})


# ---- real launches: every comparison of the corpus's splits walks clean ---------------------------------------

@pytest.mark.parametrize("kb", [1, 2, 3])
def test_comparisons_of_real_launches_break_no_invariant(kb):
    """Every program of two sessions (quiet and bursty), A/A and with a 2× effect: the category and operator
    tables of compare_lines, walked."""
    checked = 0
    for session in ("a_bursts", "c_quiet"):
        data = nc.session(session)
        prof = nc.machine_noise(data)
        for prog in nc.PROGRAMS:
            ls = data[prog]
            for b, c in nc.splits(len(ls), kb, kb, 4):
                for factor in (1.0, 2.0):
                    r = compare_lines([nc.line_tables(ls[i]) for i in b],
                                      [nc.line_tables(ls[i], factor) for i in c], b_name="b", c_name="c",
                                      noise=prof if kb == 1 else nz.default())
                    from edgeprof.render.jsonfmt import clean

                    found = invariants.violations(clean(r))
                    assert not found, (session, prog, b, c, factor, [str(v) for v in found[:3]])
                    cats = [x for x in r["categories"] if x["ci_low"] is not None]
                    assert cats and all(x["ci_low"] <= x["speedup"] <= x["ci_high"] for x in cats)
                    checked += 1
    assert checked == 2 * 6 * 4 * 2


def test_a_spiky_operator_keeps_its_point_with_its_interval():
    """A sibling operator with 16 of 40 runs over 10× its median (as on a real phone): the point comes from the
    estimator that gives the interval, so it lies inside, and the status agrees."""
    rng = np.random.default_rng(3)
    launches = nc.session("c_quiet")["toycnn_xnn"]
    tabs = [nc.line_tables(x) for x in launches[:6]]
    key = next(iter(tabs[0][2]))
    for _i, (_m, _e, ops) in enumerate(tabs[3:]):
        col = ops[key].copy()
        spikes = rng.choice(col.size, size=int(0.4 * col.size), replace=False)
        col[spikes] *= 12
        ops[key] = col
    r = compare_lines(tabs[:3], tabs[3:], b_name="b", c_name="c", noise=nz.default())
    row = next(x for x in r["operators"]["matched"] if x["baseline_operator"] == key)
    assert row["ci_low"] <= row["speedup"] <= row["ci_high"]
    assert row["mean_ratio"] < row["speedup"]  # the spikes move the ratio of the means shown more: said apart
    assert not invariants.violations(row)


# ---- drift is per launch ----------------------------------------------------------------------------------------

def test_drift_is_never_fitted_across_launch_boundaries():
    """Three 20-run launches of one program at three levels (real launches of the corpus, sorted by median): strung
    together they would be a steep 60-run trend; per launch there are too few runs to tell, and it says so."""
    from edgeprof.analysis.latency import detect_drift, robust_latency

    ls = sorted(nc.session("c_quiet")["toycnn_portable"], key=lambda x: float(np.median(x.steady)))
    three = [ls[0].steady[:20], ls[6].steady[:20], ls[11].steady[:20]]
    v = np.concatenate(three)
    assert detect_drift(v)["significant"]                       # what the series alone would say
    rep = robust_latency(v, warmup_known=0, launch_sizes=[20, 20, 20])
    d = rep["drift"]
    assert not d["testable"] and not d["significant"] and "never across launches" in d["note"]
    assert len(d["per_launch"]) == 3
    # with launches long enough each is tested, at α/3: the strongest launch's p-value, times 3
    long = [x.steady[:60] for x in (ls[0], ls[6], ls[11])]
    rep = robust_latency(np.concatenate(long), warmup_known=0, launch_sizes=[60, 60, 60])
    ps = [detect_drift(x)["mann_kendall"]["p_value"] for x in long]
    assert rep["drift"]["mann_kendall"]["p_value"] == pytest.approx(min(1.0, 3 * min(ps)))
    assert rep["drift"]["significant"] == (3 * min(ps) < 0.05)


# ---- share intervals are honest, not just in range ---------------------------------------------------------------

@pytest.mark.parametrize("k", [1, 2, 3])
def test_share_intervals_cover_the_share_over_all_launches(k):
    """The truth: a program's share of a line over all 12 of its launches (each launch's share, of the end-to-end
    time or of the lines' sum where they overlap past it — computed here — averaged); an arm of k launches drawn
    from them states a 95 % interval, which must hold it ≥ 90 % of the time (lines of ≥ 1 %, every session and
    program). One launch alone needs the launch allowance for it (without it: 44 %)."""
    from edgeprof.analysis.breakdown import LINES

    hit = n = 0
    for session in nc.SESSIONS:
        data = nc.session(session)
        for prog in nc.PROGRAMS:
            tabs = [nc.line_tables(x) for x in data[prog]]
            truth = {}
            for j, ln in enumerate(LINES):
                shares = []
                for m, e, _ in tabs:
                    whole = np.maximum(e, np.clip(m, 0, None).sum(axis=1))
                    shares.append(100 * np.clip(m[:, j], 0, None).mean() / whole.mean())
                truth[ln] = float(np.mean(shares))
            for b, c in nc.splits(12, k, k, 4):
                r = compare_lines([tabs[i] for i in b], [tabs[i] for i in c], b_name="b", c_name="c",
                                  noise=nz.default())
                for row in r["categories"]:
                    if truth[row["line"]] >= 1:
                        lo, hi = row["baseline_share_ci"]
                        hit += lo <= truth[row["line"]] <= hi
                        n += 1
    assert n > 500 and hit / n >= 0.90, (hit, n)


def _placement_doc():
    from edgeprof import api

    from testdata import DATA

    return api.placement(DATA / "placement" / "gate_nosigmoid.N10.etdp.gz").to_json()


def test_a_placement_document_and_what_breaks_it():
    import copy

    doc = _placement_doc()
    assert rules(doc) == []
    merged = copy.deepcopy(doc)  # two neighbouring partitions on one placement: not maximal
    merged["partitions"][1]["placement"] = "XnnpackBackend"
    assert "placement" in rules(merged)
    uncovered = copy.deepcopy(doc)
    uncovered["partitions"][0]["ops"] -= 1
    assert "placement" in rules(uncovered)
    shares = copy.deepcopy(doc)
    shares["placements"][0]["time_share_pct"] += 0.01
    assert "placement" in rules(shares)
    said = copy.deepcopy(doc)
    said["summary"]["accelerated_time_share_pct"] += 0.1  # the statement quotes it at one decimal
    assert rules(said) == ["sentence"]


def test_a_placement_diff_and_what_breaks_it():
    import copy

    from edgeprof import api

    from testdata import DATA

    doc = api.placement_diff(DATA / "placement" / "gate_xnn.N10.etdp.gz",
                             DATA / "placement" / "gate_nosigmoid.N10.etdp.gz").to_json()
    assert rules(doc) == []
    for edit in (lambda d: d.update(fallbacks=0), lambda d: d.update(verdict="same_placement"),
                 lambda d: d.update(moved_cost_ms=d["moved_cost_ms"] + 0.001)):
        bad = copy.deepcopy(doc)
        edit(bad)
        assert "placement" in rules(bad)
    suspected = copy.deepcopy(doc)  # no move, but a suspected fallback: still the fallback verdict
    suspected.update(moved=[], fallbacks=0, suspected_fallbacks=["conv#0"], moved_cost_ms=None)
    assert rules(suspected) == []
