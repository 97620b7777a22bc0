"""One run selection per series: the ``--warmup auto|N`` rule at its boundaries, and every command that analyses
the same launches — compare (latency and per-category lines), plan and report —
leaving out the same warm-up runs and using the same steady runs. (The history keeps
every valid run of a launch, as recorded: its figures match Inspector's for the whole launch.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgeprof.analysis.selection import LaunchRuns, RunSelection, select_runs


def _launch(n: int, warm: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = 10.0 * np.exp(rng.normal(0, 0.01, n))
    v[:warm] *= 3.0  # planted warm-up: three times slower
    return v


def test_auto_finds_a_planted_warmup_and_a_count_is_taken_as_given():
    a, b = _launch(100, 4, 1), _launch(60, 0, 2)
    sel = select_runs([a, b], "auto", ["a.etdump", "b.etdump"])
    assert sel.rule == "auto" and sel.warmup == (4, 0)
    assert (sel.total, sel.count, sel.warmup_total) == (160, 156, 4)
    assert [x.count for x in sel.launches] == [96, 60]
    assert sel.launches[0].detection["count"] == 4 and sel.launches[0].detection["testable"]
    steady = sel.steady([a, b])
    assert steady[0].tolist() == a[4:].tolist() and steady[1].tolist() == b.tolist()
    given = select_runs([a, b], 7)
    assert given.rule == "7" and given.warmup == (7, 7) and all(x.detection is None for x in given.launches)
    assert [x.source for x in given.launches] == ["launch 0", "launch 1"]


@pytest.mark.parametrize("n, asked, left_out", [(5, 3, 3), (5, 4, 4), (5, 5, 4), (1, 1, 0), (0, 1, 0)])
def test_a_given_count_keeps_at_least_one_run(n, asked, left_out):
    assert select_runs([np.ones(n)], asked).warmup == (left_out,)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_a_warmup_that_is_not_auto_or_a_count_is_refused(bad):
    with pytest.raises((ValueError, TypeError)):
        select_runs([np.ones(5)], bad)


def test_locate_names_runs_as_recorded():
    sel = RunSelection("auto", (LaunchRuns("a", 10, 2), LaunchRuns("b", 5, 0), LaunchRuns("c", 4, 1)))
    # steady runs put together: a's 8 (recorded 2..9), b's 5 (0..4), c's 3 (1..3)
    hand = [(0, i) for i in range(2, 10)] + [(1, i) for i in range(5)] + [(2, i) for i in range(1, 4)]
    assert [sel.locate(i) for i in range(16)] == hand
    assert sel.locate(99) == (2, 3)
    assert sel.to_json() == {"first": None, "count": 16, "total": 19, "launches": [
        {"file": "a", "first": 2, "total": 10, "count": 8}, {"file": "b", "first": 0, "total": 5, "count": 5},
        {"file": "c", "first": 1, "total": 4, "count": 3}]}
    with pytest.raises(ValueError):
        sel.steady([np.ones(3)])


def test_every_command_selects_the_same_runs_of_the_same_launches(tmp_path):
    """Real launches of the noise corpus, warm-up included, three per arm: the warm-up each command leaves out of
    each launch equals a hand count — the recorded runs' leading stretch that the detector's own rule (median ≥ 2 %
    slower and significant) accepts, computed here from scipy's Mann–Whitney — and the steady runs every command
    uses are the same."""
    import noise_corpus as nc
    from corpus_etdump import etdump_of
    from scipy.stats import mannwhitneyu

    import edgeprof

    files = {}
    for prog in ("toycnn_portable", "tel_portable"):
        ls = nc.session("c_quiet")[prog]
        folder = tmp_path / prog
        folder.mkdir()
        files[prog] = []
        for k in range(3):
            f = folder / f"{prog}_t1_l{k}.etdump"
            f.write_bytes(etdump_of(ls[k], runs=120))
            files[prog].append(f)
    lat = {f: edgeprof.load_etdump(f, warn=False).valid_runs().latency_ms() for fs in files.values() for f in fs}

    def hand(v: np.ndarray) -> int:
        """The longest accepted leading stretch is what the detector keeps (it shrinks an unaccepted split): recheck
        the split it found with scipy, and that the next longer split is not a better L1 fit it overlooked."""
        k = edgeprof.analysis.latency.detect_warmup(v)["count"]
        if k >= 3:
            cands = max(1, min(50, int(v.size * 0.25)))
            assert np.median(v[:k]) > np.median(v[k:]) * 1.02
            assert mannwhitneyu(v[:k], v[k:], alternative="greater").pvalue < 0.05 / cands
        return k

    expected = {f: hand(v) for f, v in lat.items()}
    assert any(expected.values()), "the corpus launches chosen hold a warm-up"
    b, c = [str(f) for f in files["toycnn_portable"]], [str(f) for f in files["tel_portable"]]
    cmp = edgeprof.compare(b, c).data
    for side, fs in (("baseline", b), ("candidate", c)):
        assert [x["warmup_dropped"] for x in cmp[side]["launches"]] == [expected[Path(f)] for f in fs]
        assert cmp[side]["count"] == sum(lat[Path(f)].size - expected[Path(f)] for f in fs)
    by_cat = cmp["by_category"]
    assert by_cat["runs_used"] == {"baseline": cmp["baseline"]["count"], "candidate": cmp["candidate"]["count"]}
    rep = edgeprof.report(baseline=b, candidate=c).data
    for cfg, side in zip(rep["configs"], ("baseline", "candidate")):
        assert [u["first"] for u in cfg["runs_used"]["launches"]] == [x["warmup_dropped"]
                                                                        for x in cmp[side]["launches"]]
        assert cfg["runs_used"]["count"] == cmp[side]["count"]
    plan = edgeprof.plan(b, effect=0.05).data
    assert plan["configurations"][0]["runs"] == [lat[p].size - expected[p] for p in files["toycnn_portable"]]
