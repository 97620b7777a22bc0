"""The mutation tool (tools/mutation): its operators on a known source, the list of equivalent mutants kept current
and each with a reason, and the CI sample drawn at random from every non-equivalent mutant. The sample (at least
85 % of its mutants killed, pooled) is the slow tier: `.ci/run` runs it after the test suite
(`python tools/mutation/run.py --sample 100`, seeded by the commit)."""

from __future__ import annotations

import ast
import sys

import pytest
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "mutation"))
from mutants import mutants, mutated_source  # noqa: E402
from run import CORE, EQUIVALENT, STRING_RULES, load_equivalent, module_path, sample_pool, wilson  # noqa: E402

SOURCE = '''
"""doc"""
LIMIT: int = 5
def f(a, b=0.5):
    """doc"""
    if a < LIMIT and not b:
        return a + 1
    return f"{a - 1}"
'''


def test_operators_on_a_known_source():
    ms = mutants("m", SOURCE)
    edits = [(m.line, m.edit) for m in ms]
    # hand count: LIMIT 5→6, default 0.5→1.0, `<`→`<=`, `and`→`or`, `not` removed, `+`→`-`, 1→2; the docstrings,
    # the annotation and the f-string are left alone
    assert edits == [(3, "`5` → `6`"), (4, "`0.5` → `1.0`"), (6, "`<` → `<=`"), (6, "`not` removed"),
                     (6, "`and` → `or`"), (7, "`1` → `2`"), (7, "`+` → `-`")]
    for m in ms:  # each mutant differs from the original in exactly one place and still compiles
        new = mutated_source(SOURCE, m.index)
        compile(new, "m", "exec")
        assert ast.dump(ast.parse(new)) != ast.dump(ast.parse(SOURCE))
    assert "a <= LIMIT" in mutated_source(SOURCE, 2) and "return a - 1" in mutated_source(SOURCE, 6)
    assert len({m.key for m in ms}) == len(ms)


def test_strings_are_mutated_only_where_they_are_rules():
    src = 'RULES = {"clamp": "ACTIVATION"}\n'
    assert mutants("m", src) == []
    assert [m.edit for m in mutants("m", src, strings=True)] == ["'clamp' → 'XXclampXX'",
                                                                "'ACTIVATION' → 'XXACTIVATIONXX'"]


def test_every_listed_equivalent_mutant_still_exists():
    listed = load_equivalent()
    keys = set()
    for m in CORE:
        keys |= {x.key for x in mutants(m, module_path(m).read_text(), strings=m in STRING_RULES)}
    stale = sorted(set(listed) - keys)
    assert not stale, f"{EQUIVALENT} lists mutants that no longer exist: {stale[:5]}"


def test_a_mutant_s_pytest_collects_the_suite():
    """Each mutant runs pytest with the environment the runner gives it (no plugins autoloaded): the suite's
    conftest must load there — an xdist-only hook once stopped every mutant's run with an internal error."""
    import os
    import subprocess

    from run import ENV, ROOT

    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-o",
                        "addopts=", "tests/core/test_mutation.py"], cwd=ROOT, env={**os.environ, **ENV},
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "INTERNALERROR" not in r.stdout + r.stderr, r.stdout[-1500:] + r.stderr[-1500:]


def test_the_sample_draws_from_every_non_equivalent_mutant():
    allm = {m: mutants(m, module_path(m).read_text(), strings=m in STRING_RULES) for m in CORE}
    equivalent = load_equivalent()
    a = sample_pool(allm, equivalent, 100, 7)
    assert len(a) == 100 and len({x.key for x in a}) == 100
    assert not {x.key for x in a} & set(equivalent)
    assert [x.key for x in sample_pool(allm, equivalent, 100, 7)] == [x.key for x in a]  # the seed decides
    assert {x.key for x in sample_pool(allm, equivalent, 100, 8)} != {x.key for x in a}
    # over many seeds every module is drawn about in proportion to its mutants (no module kept out)
    drawn = dict.fromkeys(CORE, 0)
    for seed in range(40):
        for x in sample_pool(allm, equivalent, 100, seed):
            drawn[x.module] += 1
    pool = sum(len(v) for v in allm.values()) - len(equivalent)
    for m in CORE:
        share = sum(x.key not in equivalent for x in allm[m]) / pool
        assert abs(drawn[m] / 4000 - share) <= 0.02 + 0.25 * share, m


def test_the_interval_of_the_kill_rate_is_wilsons():
    from scipy.stats import binomtest

    for k, n in ((95, 100), (85, 100), (100, 100), (0, 10)):
        lo, hi = wilson(k, n)
        ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert (lo, hi) == (pytest.approx(ci.low, abs=1e-6), pytest.approx(ci.high, abs=1e-6))


def test_every_equivalent_label_gives_a_reason_a_reviewer_can_check():
    for key, reason in load_equivalent().items():
        assert len(reason) >= 25, (key, reason)  # a sentence that says why, not a tag
        assert not reason.lower().startswith(("equivalent", "same", "n/a", "todo")), (key, reason)


def test_the_committed_ledger_carries_results_to_a_fresh_checkout(tmp_path, monkeypatch):
    """A full run's outcomes are written to the committed ledger as well as the local cache, and a checkout
    without the cache (CI, a new machine) reads them back: successive full runs accumulate."""
    import run

    monkeypatch.setattr(run, "WORK", tmp_path / "cache")
    monkeypatch.setattr(run, "LEDGER", tmp_path / "results.tsv.gz")
    results = {"m:f:`<` → `<=`:abcd:0": {"status": "killed", "ran": 3, "tests": 9, "run_at": 1764720000.4,
                                        "seconds": 1.5, "module": "m"},
               "m:f:`1` → `2`:abcd:0": {"status": "survived", "ran": 9, "tests": 9, "run_at": 1764720001.0,
                                       "seconds": 4.25}}
    run.save_results(results)
    (tmp_path / "cache" / "results.json").unlink()  # a fresh checkout: the ledger only
    back = run.load_results()
    assert set(back) == set(results)
    for k, r in results.items():
        assert {f: back[k][f] for f in run.LEDGER_FIELDS} == {**{f: r[f] for f in run.LEDGER_FIELDS},
                                                             "run_at": round(r["run_at"])}
    first = (tmp_path / "results.tsv.gz").read_bytes()
    run.save_results(back)
    assert (tmp_path / "results.tsv.gz").read_bytes() == first  # byte-stable: a rerun with no change is no diff


def test_the_most_focused_tests_run_first_within_the_budget():
    """Among tests of other files than the module's own, a unit test of the mutated function (few lines of the
    module) runs before tests that read whole files (many lines), so a budget spent on the broad ones cannot crowd
    it out; slow tests go last."""
    import run
    from mutants import Mutant

    f = str(run.module_path("edgeprof.io.etdump").resolve())
    broad = [f"tests/cli/test_whole_commands.py::t{i}" for i in range(50)]
    focused = "tests/io/test_durations.py::boundary"
    slow = "tests/io/test_durations.py::slow"
    lines = {f: {10: [*broad, focused, slow], **dict.fromkeys(range(11, 200), broad)}}
    durations = {**dict.fromkeys(broad, 0.1), focused: 0.2, slow: 5.0}
    m = Mutant("edgeprof.io.etdump", 0, 10, 10, "duration_problems", "`>=` → `>`", "k")
    chosen, reached, spent = run.select_tests(m, lines, durations, budget=2.0)
    assert chosen[0] == focused and slow not in chosen and reached == 52
    assert spent <= 2.0 < spent + 0.1 and chosen[1:] == sorted(broad)[:len(chosen) - 1]  # filled up, in name order


def test_a_constant_read_at_import_gets_every_test_of_its_module():
    """A module constant's line runs only at import, recorded under whichever tests imported the module first —
    every `python -m edgeprof` a test starts, since the map follows them. Its mutants take the tests of the whole
    module (the own tests first), not those few first importers."""
    import run
    from mutants import Mutant

    f = str(run.module_path("edgeprof.taxonomy").resolve())
    src = run.module_path("edgeprof.taxonomy").read_text().splitlines()
    const = next(i for i, line in enumerate(src, 1) if line.startswith(("EXACT", "_EXACT", "RULES", "_RULES")) or
                 (line and not line.startswith((" ", "#", "def", "class", "from", "import", '"', ")")) and "=" in line))
    importers = [f"tests/cli/test_x.py::cmd{i}" for i in range(5)]
    unit = "tests/core/test_taxonomy.py::test_rule"
    lines = {f: {const: importers, const + 400: [unit]}}
    durations = {**dict.fromkeys(importers, 3.0), unit: 0.1}
    m = Mutant("edgeprof.taxonomy", 0, const, const, "<module>", "'a' → 'XXaXX'", "k")
    chosen, reached, _ = run.select_tests(m, lines, durations, budget=6.0)
    assert chosen[0] == unit and reached == 6


def test_a_slow_test_of_the_own_files_does_not_crowd_out_the_fast_ones():
    """A module's own test files may reach a line only through slow whole-recording tests while twenty fast unit
    tests elsewhere reach it too: the fast ones run first and a slow test that no longer fits is passed over —
    the selection does not end at it (it once did: one 3 s own test was all a 6 s budget ran)."""
    import run
    from mutants import Mutant

    f = str(run.module_path("edgeprof.analysis.launches").resolve())
    own_slow = ["tests/analysis/test_launches.py::real_a", "tests/analysis/test_launches.py::real_b"]
    fast = [f"tests/analysis/test_compare_rules.py::t{i:02d}" for i in range(20)]
    lines = {f: {73: [*own_slow, *fast]}}
    durations = {own_slow[0]: 3.0, own_slow[1]: 12.0, **dict.fromkeys(fast, 0.01)}
    m = Mutant("edgeprof.analysis.launches", 0, 73, 73, "log_quantile_stats", "`>` → `>=`", "k")
    chosen, reached, spent = run.select_tests(m, lines, durations, budget=6.0)
    assert chosen[:20] == sorted(fast) and chosen[20:] == [own_slow[0]] and reached == 22
    assert abs(spent - 3.2) < 1e-9


def test_the_own_files_and_the_others_take_turns():
    """A reader's own test files can hold a hundred fast whole-file tests reaching a line whose boundary test lives
    in another file: the two groups take turns, so the boundary test runs second, not after the budget is gone."""
    import run
    from mutants import Mutant

    f = str(run.module_path("edgeprof.io.etdump").resolve())
    own_tests = [f"tests/io/test_etdump.py::whole{i:03d}" for i in range(100)]
    boundary = "tests/io/test_durations.py::boundary"
    lines = {f: {60: [*own_tests, boundary], **dict.fromkeys(range(61, 300), own_tests)}}
    durations = {**dict.fromkeys(own_tests, 0.1), boundary: 0.1}
    m = Mutant("edgeprof.io.etdump", 0, 60, 60, "duration_problems", "`>=` → `>`", "k")
    chosen, reached, _ = run.select_tests(m, lines, durations, budget=2.05)
    assert chosen[:2] == [own_tests[0], boundary] and len(chosen) == 20 and reached == 101


def test_a_string_mutant_runs_the_cases_that_name_its_value_first():
    """A table entry's label is read at import, so its mutant takes every test of the module — a thousand
    labelled cases; the ones whose parameters name the mutated string run first, not whichever fit the budget."""
    import run
    from mutants import Mutant

    f = str(run.module_path("edgeprof.taxonomy").resolve())
    cases = [f"tests/core/test_taxonomy.py::test_every_rule[abs{i:03d}-aten-CAT/x{i:03d}]" for i in range(500)]
    mine = "tests/core/test_taxonomy.py::test_every_rule[avg_pool2d-aten-POOL/avg]"  # as focused, later by name
    lines = {f: {105: [*cases, mine], 400: [*cases, mine]}}
    durations = {**dict.fromkeys(cases, 0.05), mine: 0.05}
    m = Mutant("edgeprof.taxonomy", 0, 105, 105, "<module>", "'POOL/avg' → 'XXPOOL/avgXX'", "k")
    chosen, reached, _ = run.select_tests(m, lines, durations, budget=1.0)
    assert chosen[0] == mine and reached == 501 and len(chosen) < 50
    assert run._literal("`>=` → `>`") == "" and run._literal("'NC' → 'XXNCXX'") == ""  # too short to name a test
    assert run._literal("'SME2' → 'XXSME2XX'") == "SME2"
