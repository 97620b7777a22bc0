"""The mutation tool (tools/mutation): its operators on a known source and the list of equivalent mutants kept
current. The seeded sample of the core modules (at least 85 % of its mutants killed) is the slow tier: `.ci/run`
runs it after the test suite (`python tools/mutation/run.py --sample 5 --seed 20`)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "mutation"))
from mutants import mutants, mutated_source  # noqa: E402
from run import CORE, EQUIVALENT, STRING_RULES, load_equivalent, module_path  # noqa: E402

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
