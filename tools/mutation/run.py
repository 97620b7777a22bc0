"""Mutation testing of edgeprof's core modules: `make mutation` (all mutants), `make mutation-sample` (CI).

1. Test map: the tests below run once under coverage, each test in its own context, so every source line knows
   the tests that execute it (and how long each takes).
2. Each mutant (tools/mutation/mutants.py) is written into a private copy of the package (symlinks to the real
   files except the mutated one) that comes first on the path, and the tests reaching its lines (the module's own
   test file first, then the fastest) run in a forked child that imports the package and the tests afresh
   (the parent holds only third-party imports), stopping at the first failure. A failure or a timeout kills it.
3. docs/develop/mutation.md gets the kill rate per module and every surviving mutant, with the reason from
   tools/mutation/equivalent.tsv when it is listed as equivalent.

Why not mutmut: mutmut 3 runs the tests inside its own process against a trampolined copy of the code, so the tests
that run `python -m edgeprof` in a subprocess would see unmutated code, and its output is per function rather
than per module; a 200-line mutator that runs every mutant in a fresh interpreter avoids both.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import itertools
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SRC = ROOT / "src"
sys.path.insert(0, str(HERE))
from mutants import Mutant, mutants, mutated_source  # noqa: E402

# the core modules and the tests that guard them
CORE = [
    "edgeprof.io.flatbuf", "edgeprof.io.etdump", "edgeprof.io.etdump_decode", "edgeprof.io.etrecord", "edgeprof.io.etrecord_zip",
    "edgeprof.model", "edgeprof.ane_model", "edgeprof.analysis.latency", "edgeprof.analysis.compare",
    "edgeprof.analysis.launches", "edgeprof.analysis.rank_tests", "edgeprof.analysis.stats", "edgeprof.taxonomy", "edgeprof.analysis.breakdown",
    "edgeprof.analysis.kernels", "edgeprof.kernel_names", "edgeprof.io.xnnlog", "edgeprof.analysis.ane",
    "edgeprof.io.anemll", "edgeprof.analysis.ane_islands",
]
STRING_RULES = {"edgeprof.taxonomy", "edgeprof.kernel_names"}  # modules whose string constants are rules
TESTS = ["tests/io", "tests/analysis", "tests/core", "tests/coreml/test_static.py", "tests/cli/test_compare_launches.py",
         "tests/cli/test_seed_000.py", "tests/cli/test_seed_003.py", "tests/render", "tests/api/test_results.py",
         "tests/llm", *(f"tests/cli/test_{n}.py" for n in (  # the oracles of the commands' outputs
             "analysis_summary_oracle", "breakdown_csv_oracle", "breakdown_json_oracle", "collections_json_oracle",
             "compare_json_oracle", "kernels_json_oracle", "kit_csv_oracle", "latency_json_oracle", "plan_json_oracle",
             "trace_oracle"))]
# timing, packaging and the mutation tool itself (its sample would run inside its own test map)
EXCLUDE_TESTS = ["tests/core/test_layout.py", "tests/core/test_mutation.py",
                 "tests/analysis/test_noise_corpus.py"]  # resampling the real-noise corpus: far over any mutant's budget
WORK = ROOT / ".mutation"
EQUIVALENT = HERE / "equivalent.tsv"
WEIGHTS = HERE / "map_weights.json"  # seconds per test file in a past map, to split a fresh map evenly
SURVIVORS = ROOT / "docs" / "mutation_survivors.tsv"  # written by a full run: the mutants no test kills yet
# every mutant's last outcome, committed: full runs on fresh machines (CI, a new checkout) continue where the last
# one stopped instead of starting over (.mutation/ is a local cache of the same)
LEDGER = HERE / "results.tsv.gz"
LEDGER_FIELDS = ("status", "ran", "tests", "run_at", "seconds")
TEST_BUDGET = 6.0   # seconds of (mapped) test time per mutant; the fastest tests reaching the line first
ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONHASHSEED": "0"}


def module_path(module: str) -> Path:
    return SRC / (module.replace(".", "/") + ".py")


def _shards(tests: list[str], n: int, previous: dict) -> list[list[str]]:
    """The test files split into n shards of about equal time (the previous map's durations, else file sizes)."""
    files = []
    for t in tests:
        p = ROOT / t
        files += sorted(str(f.relative_to(ROOT)) for f in p.rglob("test_*.py")) if p.is_dir() else [t]
    files = [f for f in files if f not in EXCLUDE_TESTS]
    cost = defaultdict(float)
    for node, sec in previous.items():
        cost[node.split("::")[0]] += sec
    if not cost and WEIGHTS.exists():  # a fresh checkout: the seconds per file a past map took (balance only)
        cost.update(json.loads(WEIGHTS.read_text()))
    weight = {f: cost.get(f) or (ROOT / f).stat().st_size / 20_000 for f in files}
    shards: list[list[str]] = [[] for _ in range(n)]
    load = [0.0] * n
    for f in sorted(files, key=weight.get, reverse=True):  # largest first, each to the lightest shard
        i = load.index(min(load))
        shards[i].append(f)
        load[i] += weight[f]
    return [s for s in shards if s]


def build_map(modules: list[str], tests: list[str], jobs: int = 1) -> tuple[dict, dict]:
    """{file: {line: [node ids]}}, {node id: seconds} from one coverage run of the tests, split over `jobs`
    processes (their coverage data combined)."""
    WORK.mkdir(exist_ok=True)
    data_file, durations = WORK / "coverage", WORK / "durations.json"
    previous = json.loads(durations.read_text()) if durations.exists() else {}
    for p in (data_file, durations, *WORK.glob("coverage.*"), *WORK.glob("subcov.*"), *WORK.glob("durations.*.json")):
        p.unlink(missing_ok=True)
    include = ",".join(str(module_path(m)) for m in modules)
    # tests that run `python -m edgeprof` are mapped to the lines that process runs (subcov/sitecustomize.py)
    env = dict(os.environ, **ENV, PYTHONPATH=os.pathsep.join([str(HERE / "subcov"), str(HERE)]),
               EDGEPROF_MUTATION_SUBCOV=str(WORK / "subcov"), EDGEPROF_MUTATION_INCLUDE=include)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = ""  # the map run keeps hypothesis' plugin, as the suite does
    t0 = time.perf_counter()
    procs = []
    for i, shard in enumerate(_shards(tests, max(1, jobs), previous)):
        cmd = [sys.executable, "-m", "coverage", "run", f"--data-file={data_file}.{i}", f"--include={include}",
               "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "contexts", "-o", "addopts=", "--no-header",
               *shard]
        out = open(WORK / f"map.{i}.log", "w+")
        procs.append((subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                       env=dict(env, EDGEPROF_MUTATION_DURATIONS=str(WORK / f"durations.{i}.json"))),
                      out))
    failed = []
    for proc, out in procs:
        if proc.wait() != 0:
            out.seek(0)
            failed.append(out.read()[-3000:])
        out.close()
    if failed:
        sys.exit("the tests fail without any mutant; fix them first:\n" + "\n".join(failed))
    import coverage
    combined = coverage.CoverageData(basename=str(data_file))
    parts = sorted(WORK.glob("coverage.*")) + sorted(WORK.glob("subcov.*"))
    for part in parts:
        d = coverage.CoverageData(basename=str(part))
        d.read()
        combined.update(d)
    combined.write()
    merged: dict[str, float] = {}
    for part in sorted(WORK.glob("durations.*.json")):
        merged.update(json.loads(part.read_text()))
        part.unlink()
    durations.write_text(json.dumps(merged))
    for part in parts:
        part.unlink()
    print(f"test map: {time.perf_counter() - t0:.0f} s in {len(procs)} processes", flush=True)
    return read_map(data_file, durations)


def read_map(data_file: Path, durations: Path) -> tuple[dict, dict]:
    import coverage
    data = coverage.CoverageData(basename=str(data_file))
    data.read()
    lines = {}
    for f in data.measured_files():
        lines[str(Path(f).resolve())] = {ln: [c for c in ctx if c] for ln, ctx in data.contexts_by_lineno(f).items()}
    return lines, json.loads(durations.read_text())


def load_equivalent() -> dict[str, str]:
    out = {}
    if EQUIVALENT.exists():
        for n, row in enumerate(EQUIVALENT.read_text().splitlines(), 1):
            if row.strip() and not row.startswith("#"):
                key, sep, reason = row.partition("\t")
                if not sep or not reason.strip():
                    sys.exit(f"{EQUIVALENT}:{n}: a row is KEY<TAB>REASON")
                out[key] = reason.strip()
    return out


class Overlay:
    """A private copy of the package: symlinks to the real files, one of them replaced by a mutant at a time."""

    def __init__(self, root: Path):
        self.root = root
        if root.exists():
            shutil.rmtree(root)
        for dirpath, dirnames, filenames in os.walk(SRC / "edgeprof"):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            rel = Path(dirpath).relative_to(SRC)
            (root / rel).mkdir(parents=True, exist_ok=True)
            for name in filenames:
                (root / rel / name).symlink_to(Path(dirpath) / name)

    def put(self, mutant: Mutant, text: str) -> None:
        target = self.root / module_path(mutant.module).relative_to(SRC)
        target.unlink()
        target.write_text(text)
        shutil.rmtree(target.parent / "__pycache__", ignore_errors=True)

    def restore(self, mutant: Mutant) -> None:
        target = self.root / module_path(mutant.module).relative_to(SRC)
        target.unlink()
        target.symlink_to(module_path(mutant.module))
        shutil.rmtree(target.parent / "__pycache__", ignore_errors=True)

    def fork_tests(self, nodeids: list[str], module: str = "") -> int:
        """Run the tests in a forked child whose first path entry is this copy; returns the child's pid.

        The parent has imported the third-party libraries the tests use (never edgeprof, never a test module), so
        the child skips their import cost and imports the package — with the mutant — and the tests afresh.
        Tests that start `python -m edgeprof` get the copy through PYTHONPATH."""
        pid = os.fork()
        if pid:
            return pid
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            os.chdir(ROOT)
            os.environ.update(ENV, PYTHONPATH=str(self.root))
            sys.path.insert(0, str(self.root))
            if module:  # a mutant that breaks its module's import is killed by every test that imports it
                import importlib
                try:
                    importlib.import_module(module)
                except Exception:
                    os._exit(2)
            import pytest
            rc = pytest.main(["-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--no-header", "--tb=no",
                              "-W", "ignore", *nodeids])
            os._exit(int(rc))
        except BaseException:
            os._exit(3)


def preload() -> None:
    """Import what the tests import from outside the project, before any fork (not edgeprof itself)."""
    assert "edgeprof" not in sys.modules
    import click  # noqa: F401
    import hypothesis  # noqa: F401
    import numpy  # noqa: F401
    import polars  # noqa: F401  (its thread pool starts on first use, i.e. in each child)
    import pytest  # noqa: F401
    import scipy.special  # noqa: F401
    import scipy.stats  # noqa: F401


def select_tests(m: Mutant, lines: dict, durations: dict, budget: float,
                 skip: set = frozenset()) -> tuple[list[str], int, float]:
    """The tests that execute the mutant's lines, within ``budget`` seconds of their recorded time. Fast tests
    come first (a test taking over a quarter of the budget goes after every faster one: one slow test of the
    module's own files must not eat the budget twenty fast ones elsewhere would use). Within each, the module's
    own test files and the other files take turns (own first), so neither crowds out the other — a boundary test
    of a reader's duration rule lives in its own file, not the reader's — each ranked most focused first (fewest
    lines of this module executed: unit tests before simulations and whole commands), then fastest — except that
    a test whose parameters name the mutated string (``…[avg_pool2d-aten-POOL/avg]`` for ``'POOL/avg'``) goes
    before all others of its group: of a table's thousand labelled cases, it is the one about this entry. A test that does not fit in what is left is passed over, and the
    faster ones after it still run. A line run only at import (module constants, default arguments) takes the
    tests of the whole module and every test of its own test files."""
    by_line = lines.get(str(module_path(m.module).resolve()), {})
    ids = set()
    for ln in range(m.line, m.end_line + 1):
        ids.update(by_line.get(ln, ()))
    stem = m.module.rsplit(".", 1)[-1]
    own = lambda t: 0 if f"test_{stem}" in t.split("::")[0] else 1  # noqa: E731
    src_line = _source_lines(m.module)[m.line - 1].lstrip() if m.line else ""
    at_import = m.scope == "<module>" or src_line.startswith(("def ", "async def ", "class "))
    if not ids or at_import:  # run at import only (module constants, default arguments): every test of the module,
        # and the module's own tests that execute none of its lines (a test that reads a constant runs no line of
        # it). Such a line's own contexts are only the tests that happened to import the module first — every
        # `python -m edgeprof` a test starts, since the map follows them — which say nothing about its value.
        ids = {t for tests in by_line.values() for t in tests} | {t for t in durations if not own(t)}
    reach = _reach(by_line)
    value = _literal(m.edit)
    named = (lambda t: 0 if value in t.split("::", 1)[-1] else 1) if value else (lambda t: 1)  # noqa: E731
    slow = lambda t: durations.get(t, 1.0) > budget / 4  # noqa: E731  (a slow test goes last: it would eat the budget)
    ranked = []
    for is_slow in (False, True):
        group = sorted((t for t in ids if t not in skip and slow(t) == is_slow),
                       key=lambda t: (named(t), reach.get(t, 0), durations.get(t, 1.0), t))
        own_files, elsewhere = [t for t in group if own(t) == 0], [t for t in group if own(t) == 1]
        ranked += [t for pair in itertools.zip_longest(own_files, elsewhere) for t in pair if t is not None]
    chosen, spent = [], 0.0
    for t in ranked:
        if chosen and spent + durations.get(t, 1.0) > budget:
            continue  # a test that does not fit leaves room for the faster ones after it
        chosen.append(t)
        spent += durations.get(t, 1.0)
    return chosen, len(ids), spent


def machine_factor(durations: dict) -> float:
    """How much slower this machine ran the mapped tests than the reference map (map_weights.json, seconds per test
    file): the per-mutant budget is scaled by it (1 to 3), so a slower or busier machine picks the same tests for a
    mutant, and a sample's kill rate measures the tests, not the machine."""
    if not WEIGHTS.exists():
        return 1.0
    ref = json.loads(WEIGHTS.read_text())
    now: dict[str, float] = defaultdict(float)
    for node, sec in durations.items():
        now[node.split("::")[0]] += sec
    files = [f for f in ref if f in now and ref[f] > 0]
    base = sum(ref[f] for f in files)
    factor = min(3.0, max(1.0, sum(now[f] for f in files) / base)) if base > 0 else 1.0
    print(f"machine: the mapped tests took {factor:.2f}× the reference map's time; budget per mutant scaled by it",
          flush=True)
    return factor


def _literal(edit: str) -> str:
    """The string a string mutant changes (``'POOL/avg' → 'XXPOOL/avgXX'`` → ``POOL/avg``); "" for other edits and
    for strings too short to name a test."""
    head = edit.split(" → ", 1)[0]
    if len(head) >= 5 and head[0] == head[-1] and head[0] in "'\"":
        return head[1:-1]
    return ""


@functools.lru_cache(maxsize=None)
def _source_lines(module: str) -> list[str]:
    """A module's source lines, read once per run (select_tests asks for every mutant)."""
    return module_path(module).read_text().splitlines()


_REACH: dict[int, dict] = {}


def _reach(by_line: dict) -> dict:
    """Lines of one module each test executes (cached per module)."""
    key = id(by_line)
    if key not in _REACH:
        count: dict[str, int] = {}
        for tests in by_line.values():
            for t in tests:
                count[t] = count.get(t, 0) + 1
        _REACH[key] = count
    return _REACH[key]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modules", help="comma-separated modules (default: the core modules)")
    ap.add_argument("--sample", type=int, help="this many mutants in all, drawn at random from every non-equivalent "
                    "mutant of the modules (the CI sample: seeded by the commit, the seed printed)")
    ap.add_argument("--seed", default="commit", help="the sample's seed: a number, or 'commit' (from git HEAD)")
    ap.add_argument("--time-budget", type=float, default=None,
                    help="minutes a full run may take: mutants not run for longest go first, the rest waits for the "
                         "next run (results accumulate)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--min-kill", type=float, default=0.85, help="fail when a kill rate is below this")
    ap.add_argument("--report", type=Path, help="write the Markdown report here (default: docs/develop/mutation.md for a "
                    "full run, nothing for a sample)")
    ap.add_argument("--survivors", action="store_true", help="run only the previous run's survivors again")
    ap.add_argument("--equivalents", action="store_true",
                    help="run only the mutants listed as equivalent: each one a test kills is named (relabel it)")
    ap.add_argument("--new-tests-only", action="store_true",
                    help="with --survivors: run only tests that are new or in test files changed since the previous "
                         "test map (a survivor's outcome can only change through them)")
    ap.add_argument("--resume", action="store_true", help="keep what an interrupted run already found")
    ap.add_argument("--budget", type=float, default=TEST_BUDGET,
                    help=f"seconds of test time per mutant (default {TEST_BUDGET:g})")
    ap.add_argument("--report-only", action="store_true", help="rewrite the report from the stored results")
    ap.add_argument("--reuse-map", action="store_true", help="use the test map of the previous run")
    ap.add_argument("--tests", help="comma-separated test paths for the map (default: the core tests)")
    ap.add_argument("--keys", help="run only these mutants: keys from docs/mutation_survivors.tsv, comma-separated, "
                    "or @FILE with one key per line (nothing is recorded: a check while writing a test)")
    ap.add_argument("--against", help="with --keys: run these tests (comma-separated paths or node ids) against "
                    "each mutant instead of the mapped ones (no test map is built)")
    args = ap.parse_args(argv)
    if args.keys:
        return run_keys(args)

    modules = args.modules.split(",") if args.modules else CORE
    equivalent = load_equivalent()
    sources = {m: module_path(m).read_text() for m in modules}
    allm = {m: mutants(m, sources[m], strings=m in STRING_RULES) for m in modules}
    previous = load_results()

    if args.report_only:
        results = previous
        add_core_modules(allm, sources)
        rows = summarize(CORE, allm, results, equivalent, sample=False)
        print_table(rows)
        write_report(args.report or ROOT / "docs" / "develop" / "mutation.md", rows, allm, results, equivalent, CORE, 0.0)
        return 0
    done: dict[str, dict] = {}
    if args.resume and (WORK / "partial.json").exists():
        done = json.loads((WORK / "partial.json").read_text())
    todo: list[Mutant] = []
    if args.sample:
        seed = sample_seed(args.seed)
        todo = [x for x in sample_pool(allm, equivalent, args.sample, seed) if x.key not in done]
        print(f"sample: {len(todo)} of the {sum(len(v) for v in allm.values()) - len(equivalent)} non-equivalent "
              f"mutants of {len(modules)} modules, seed {seed}" + (f" (commit {commit_id()})" if args.seed == "commit"
                                                                      else ""), flush=True)
    else:
        for m in modules:
            pool = allm[m]
            if args.survivors:
                pool = [x for x in pool if not is_killed(previous.get(x.key, {}).get("status", "survived"))]
            if args.equivalents:
                pool = [x for x in pool if x.key in equivalent]
            # listed equivalents run too: one that a test kills is no equivalent, and fails the run until relabelled
            todo += [x for x in pool if x.key not in done]
        todo.sort(key=lambda x: previous.get(x.key, {}).get("run_at", 0.0))  # never run, or run longest ago, first

    old_tests = set()
    if args.new_tests_only:  # tests of the previous map whose file has not changed since: they ran already
        prev = WORK / "durations.json"
        since = prev.stat().st_mtime
        old_tests = {t for t in json.loads(prev.read_text())
                     if (ROOT / t.split("::")[0]).exists() and (ROOT / t.split("::")[0]).stat().st_mtime < since}
    if args.reuse_map and (WORK / "durations.json").exists():
        lines, durations = read_map(WORK / "coverage", WORK / "durations.json")
    else:
        lines, durations = build_map(modules, args.tests.split(",") if args.tests else TESTS, args.jobs)
    args.budget *= machine_factor(durations)
    WORK.mkdir(exist_ok=True)
    overlays = [Overlay(WORK / "overlay" / f"w{i}") for i in range(args.jobs)]
    results: dict[str, dict] = dict(done)
    t_start = time.perf_counter()
    preload()
    queue = list(todo)
    running: dict[int, tuple] = {}  # pid -> (slot, mutant, record, started, timeout)
    free = list(range(args.jobs))

    def finish(rec: dict, key: str) -> None:
        results[key] = rec
        if len(results) % 25 == 0:
            (WORK / "partial.json").write_text(json.dumps(results, ensure_ascii=False))
            print(f"  {len(results)}/{len(todo) + len(done)} mutants, {time.perf_counter() - t_start:.0f} s", flush=True)

    deadline = t_start + 60 * args.time_budget if args.time_budget else None
    while queue or running:
        if deadline is not None and time.perf_counter() > deadline and queue:
            print(f"time budget spent: {len(queue)} mutant(s) left for the next run", flush=True)
            queue.clear()
            continue
        while queue and free:
            mut = queue.pop(0)
            tests, reached, spent = select_tests(mut, lines, durations, args.budget, skip=old_tests)
            rec = {"module": mut.module, "line": mut.line, "scope": mut.scope, "edit": mut.edit, "tests": reached,
                   "run_at": time.time()}
            if old_tests and not tests:  # no new test reaches it: the previous outcome stands
                rec = dict(previous.get(mut.key, rec))
                finish(rec, mut.key)
                continue
            if not tests:
                rec.update(status="no test", seconds=0.0)
                finish(rec, mut.key)
                continue
            slot = free.pop()
            overlays[slot].put(mut, mutated_source(sources[mut.module], mut.index, strings=mut.module in STRING_RULES))
            rec["ran"] = len(tests)
            pid = overlays[slot].fork_tests(tests, mut.module)
            running[pid] = (slot, mut, rec, time.perf_counter(), 15 + 3 * spent)
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            now = time.perf_counter()
            for p, (slot, mut, rec, t0, limit) in list(running.items()):
                if now - t0 > limit:
                    os.kill(p, signal.SIGKILL)
                    rec["timed_out"] = True
            time.sleep(0.02)
            continue
        slot, mut, rec, t0, _ = running.pop(pid)
        overlays[slot].restore(mut)
        free.append(slot)
        rc = os.waitstatus_to_exitcode(status)
        rec["seconds"] = round(time.perf_counter() - t0, 2)
        if rec.pop("timed_out", False):
            rec["status"] = "killed (timeout)"
        else:
            # 1: a test failed; 2: collection broke (the mutant breaks an import); 4/5: the node ids were not found
            rec["status"] = ("survived" if rc == 0 else "killed" if rc == 1 else "killed (import)" if rc == 2
                             else f"error (exit {rc})")
        finish(rec, mut.key)

    if not args.sample:  # results accumulate across runs (keys are stable); the report covers every core module
        merged = dict(previous)
        merged.update(results)
        save_results(merged)
        results = merged
        modules = CORE
        add_core_modules(allm, sources)
    rows = summarize(modules, allm, results, equivalent, sample=bool(args.sample))
    print_table(rows)
    if args.report or not args.sample:
        write_report(args.report or ROOT / "docs" / "develop" / "mutation.md", rows, allm, results, equivalent, modules,
                     time.perf_counter() - t_start, survivors=not args.equivalents)
    low = [r for r in rows if r["score"] is not None and r["score"] < args.min_kill  # equivalents cannot be killed
           and not args.equivalents  # (a run of the equivalents alone has no kill rate to hold)
           and (args.sample or r["run"] >= r["mutants"])]  # a module not fully run yet has no score to hold
    for r in rows:
        if not args.sample and r["run"] < r["mutants"]:
            print(f"not complete: {r['module']}: {r['mutants'] - r['run']} of {r['mutants']} mutants not run yet")
    if args.sample:
        killed = sum(r["killed"] for r in rows)
        run = sum(r["run"] for r in rows)
        rate = killed / run if run else 1.0
        lo, hi = wilson(killed, run)
        print(f"sample: {killed}/{run} killed = {100 * rate:.1f} % (95 % interval {100 * lo:.1f}–{100 * hi:.1f} %; "
              f"target {100 * args.min_kill:.0f} % pooled)")
        return 0 if rate >= args.min_kill else 1
    for r in low:
        print(f"below target: {r['module']} score {100 * r['score']:.1f} %")
    mislabelled = [k for k in equivalent if is_killed(results.get(k, {}).get("status", ""))]
    for k in mislabelled:
        print(f"listed as equivalent but killed (relabel it in {EQUIVALENT.name}): {k}")
    return 1 if low or mislabelled else 0


def run_keys(args) -> int:
    """Run the named mutants, each against ``--against`` (or the mapped tests), and print each one's outcome."""
    raw = Path(args.keys[1:]).read_text().splitlines() if args.keys.startswith("@") else args.keys.split(",")
    keys = [k.strip() for k in raw if k.strip() and k.strip() != "key"]
    wanted = {k.split(":", 1)[0] for k in keys}
    sources = {m: module_path(m).read_text() for m in wanted}
    found = {x.key: x for m in wanted for x in mutants(m, sources[m], strings=m in STRING_RULES)}
    unknown = [k for k in keys if k not in found]
    for k in unknown:
        print(f"no such mutant (the source changed since it was listed?): {k}")
    if args.against:
        tests_of = lambda mut: args.against.split(",")  # noqa: E731
    else:
        lines, durations = (read_map(WORK / "coverage", WORK / "durations.json") if args.reuse_map
                            else build_map(sorted(wanted), args.tests.split(",") if args.tests else TESTS, 1))
        tests_of = lambda mut: select_tests(mut, lines, durations, args.budget)[0]  # noqa: E731
    preload()
    overlay = Overlay(WORK / "overlay" / "keys")
    survived = 0
    for k in keys:
        if k not in found:
            continue
        mut = found[k]
        overlay.put(mut, mutated_source(sources[mut.module], mut.index, strings=mut.module in STRING_RULES))
        _, status = os.waitpid(overlay.fork_tests(tests_of(mut), mut.module), 0)
        overlay.restore(mut)
        rc = os.waitstatus_to_exitcode(status)
        verdict = "survived" if rc == 0 else "killed" if rc in (1, 2) else f"error (exit {rc})"
        survived += rc == 0
        print(f"{verdict}\t{k}", flush=True)
    return 1 if survived or unknown else 0


def load_results() -> dict:
    """The last outcome of each mutant: the local cache, else the committed ledger."""
    cache = WORK / "results.json"
    if cache.exists():
        return json.loads(cache.read_text())
    if not LEDGER.exists():
        return {}
    out = {}
    for line in gzip.decompress(LEDGER.read_bytes()).decode().splitlines()[1:]:
        key, status, ran, tests, run_at, seconds = line.split("\t")
        out[key] = {"status": status, "ran": int(ran) if ran else None, "tests": int(tests) if tests else 0,
                    "run_at": float(run_at), "seconds": float(seconds) if seconds else None}
    return out


def save_results(results: dict) -> None:
    WORK.mkdir(exist_ok=True)
    (WORK / "results.json").write_text(json.dumps(results, indent=1, ensure_ascii=False))
    rows = ["key\t" + "\t".join(LEDGER_FIELDS)]
    for key in sorted(results):
        r = results[key]
        rows.append("\t".join([key, *("" if r.get(f) is None else str(round(r[f]) if f == "run_at" else r[f])
                                       for f in LEDGER_FIELDS)]))
    LEDGER.write_bytes(gzip.compress(("\n".join(rows) + "\n").encode(), mtime=0))


def commit_id() -> str:
    r = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return r.stdout.strip()[:12] if r.returncode == 0 else "unknown"


def sample_seed(seed: str) -> int:
    """A number as given, or one derived from the commit (each commit's CI draws its own sample)."""
    if seed != "commit":
        return int(seed)
    c = commit_id()
    return int(c[:8], 16) if c != "unknown" else 0


def sample_pool(allm: dict, equivalent: dict, n: int, seed: int) -> list:
    """``n`` mutants drawn at random (``seed``) from every non-equivalent mutant of the modules, in a stable order."""
    pool = sorted((x for ms in allm.values() for x in ms if x.key not in equivalent), key=lambda x: x.key)
    return random.Random(seed).sample(pool, min(n, len(pool)))


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a proportion k/n."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return max(0.0, c - h), min(1.0, c + h)


def add_core_modules(allm: dict, sources: dict) -> None:
    """The mutants of every core module a run did not touch, so the report covers them all."""
    for m in CORE:
        if m not in allm:
            sources[m] = module_path(m).read_text()
            allm[m] = mutants(m, sources[m], strings=m in STRING_RULES)


def is_killed(status: str) -> bool:
    return status.startswith("killed")


def summarize(modules, allm, results, equivalent, *, sample: bool) -> list[dict]:
    rows = []
    for m in modules:
        recs = [(x, results.get(x.key)) for x in allm[m]]
        ran = [(x, r) for x, r in recs if r is not None]
        killed = sum(is_killed(r["status"]) for _, r in ran)
        eq = 0 if sample else sum(x.key in equivalent and (r is None or not is_killed(r["status"])) for x, r in recs)
        total = len(ran) if sample else len(allm[m])
        survived = total - killed - eq
        open_ = sum(1 for x, r in ran if not is_killed(r["status"]) and (sample or x.key not in equivalent))
        rows.append({"module": m, "mutants": total, "run": len(ran), "killed": killed, "equivalent": eq, "open": open_,
                     "survived": survived,
                     "rate": killed / total if total else None,
                     "score": killed / (total - eq) if total - eq else None})
    return rows


def print_table(rows) -> None:
    print(f"{'module':34} {'mutants':>7} {'killed':>7} {'equiv':>6} {'open':>5} {'killed %':>9} {'score %':>8}")
    for r in rows:
        done = r["run"] >= r["mutants"] or r["mutants"] == 0  # a module not fully run has no figure yet
        rate = f"{100 * r['rate']:.1f}" if r["rate"] is not None and done else "—"
        score = f"{100 * r['score']:.1f}" if r["score"] is not None and done else "—"
        print(f"{r['module']:34} {r['mutants']:7} {r['killed']:7} {r['equivalent']:6} {r['survived']:5} {rate:>9} "
              f"{score:>8}")


def write_report(path: Path, rows, allm, results, equivalent, modules, seconds: float, survivors: bool = True) -> None:
    out = ["# Mutation testing", "",
           f"Generated by `make mutation` (tools/mutation/run.py) on {time.strftime('%Y-%m-%d')}, "
           f"{sum(r['mutants'] for r in rows)} mutants"
           + (f" (the last run took {seconds / 60:.0f} min on {os.cpu_count()} cores). " if seconds else ". ")
           + "A survivor marked *time budget* ran only the first of the tests reaching it (fast tests before slow "
           "ones; the module's own test files and the others taking turns, each most focused first; the cases "
           "naming a mutated string before all): the tests left out might still kill it. "
           "Operators and what is left alone: tools/mutation/mutants.py. A mutant is killed when a test reaching "
           "its line fails or times out; *equivalent* mutants are listed in tools/mutation/equivalent.tsv with the "
           "reason no test can tell them apart. *killed %* = killed / all mutants; *score* = killed / (all − "
           "equivalent), the figure held to 85 % per module. CI runs a seeded sample (`make mutation-sample`) and "
           "fails below 85 % killed.", "",
           "A module some of whose mutants no run has reached yet (*not run*) has no score: the next full run takes "
           "them first.", "",
           "| module | mutants | not run | killed | equivalent | open | killed % | score |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        done = r["run"] >= r["mutants"] and r["rate"] is not None and r["score"] is not None  # (a sample's empty row)
        out.append(f"| `{r['module']}` | {r['mutants']} | {r['mutants'] - r['run']} | {r['killed']} | {r['equivalent']} | "
                   f"{r['open']} | "
                   + (f"{100 * r['rate']:.1f} | {100 * r['score']:.1f} |" if done else "— | — |"))
    out += ["", "## Surviving mutants", ""]
    by_reason = defaultdict(list)
    open_ = []
    for m in modules:
        for x in allm[m]:
            r = results.get(x.key)
            if r is not None and is_killed(r["status"]):
                continue
            line = f"`{x.module}` line {x.line} (`{x.scope}`): {x.edit}"
            if x.key in equivalent:
                by_reason[equivalent[x.key]].append(line)
            else:
                part = (f" (ran {r['ran']} of the {r['tests']} tests reaching it: time budget)"
                        if r and r.get("ran") and r["ran"] < r.get("tests", 0) else "")
                open_.append(line + f" — {r['status'] if r else 'not run'}{part}")
    if open_:
        out += ["### Not yet killed", ""] + [f"- {s}" for s in open_] + [""]
    out += ["### Equivalent (grouped by reason)", ""]
    for reason, items in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        out += [f"**{reason}** ({len(items)})", ""] + [f"- {s}" for s in items] + [""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n")
    if not survivors:
        print(f"wrote {path}")
        return
    rows_tsv = ["key\tmodule\tline\tedit\tstatus"]
    for m in modules:
        for x in allm[m]:
            r = results.get(x.key)
            if x.key not in equivalent and (r is None or not is_killed(r["status"])):
                rows_tsv.append(f"{x.key}\t{x.module}\t{x.line}\t{x.edit}\t{r['status'] if r else 'not run'}")
    SURVIVORS.write_text("\n".join(rows_tsv) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
