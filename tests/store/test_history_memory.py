"""Memory over commits and the planted 2× gate, on real collections through the ExecuTorch runtime.

One model at two input sizes with the same weights (tests/data/memory/programs: act_mid_portable plans 64 MiB of
activations, act_large_portable exactly twice that, the emitter's own figures in programs.json), six launches each
collected by `edgeprof run`. The oracle of every figure is the manifest `run` wrote (each launch's recorded peaks),
recomputed here with the standard library — never edgeprof's output.

- The gate: large against mid is a planted 2× of the planned activations; `compare --fail-on memory-regression`
  fails. The peaks' difference is the plan's (64 MiB) within 2 % plus 2 MiB: the arena is one allocation the runtime
  touches whole at load (see tests/analysis/test_memory_collect.py).
- History: the mid launches ingested two per commit as c1–c3, the large ones as c4–c6 (a commit's launches measure the
  launch-to-launch noise: a process's first launch on a machine can peak some MiB higher than the next, so one launch
  per commit leaves too few commits to tell a step from it); `history --metric peak_rss` finds one confirmed step, at
  c4, whose size is the ratio of the two sides' geometric-mean peaks; `--fail-on regression`
  fails on it; a phase's metric (`peak_rss:load`) steps at the same commit; a phase no launch has is one line, exit 2.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess

import pytest
from testdata import DATA, needs, edgeprof_cli

PROGRAMS = DATA / "memory" / "programs"
MiB = 2**20
COMMITS = {"act_mid_portable": ["c1", "c2", "c3"], "act_large_portable": ["c4", "c5", "c6"]}


def cli(*args, cwd=None, ok=True) -> subprocess.CompletedProcess:
    return edgeprof_cli(*args, cwd=cwd, code=0 if ok else None)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    needs("executorch", "run")
    d = tmp_path_factory.mktemp("memhist")
    for n in COMMITS:
        shutil.copy(PROGRAMS / f"{n}.pte", d)
    cli("run", d / "act_mid_portable.pte", d / "act_large_portable.pte", "--runs", "1", "--warmup", "1",
        "--launches", "6", "--out", d / "out", "--no-progress")
    man = json.loads((d / "out" / "manifest.json").read_text())
    launches = {n: [r for r in man["results"] if r["experiment"] == n and r["status"] == "ok"] for n in COMMITS}
    assert [len(v) for v in launches.values()] == [6, 6]
    for n, commits in COMMITS.items():
        for k, c in enumerate(commits):
            day = 1 + len(commits) * (n == "act_large_portable") + k
            cli("ingest", *(d / "out" / r["metrics"]["etdump_rel"] for r in launches[n][2 * k:2 * k + 2]), "--store",
                d / "h.duckdb", "--commit", c, "--model", "actnet", "--experiment", "portable", "--time",
                f"2026-12-0{day}T00:00:00")
    return d, launches


def peak(r: dict, phase: str = "runs") -> int:
    return next(p["peak_rss_bytes"] for p in r["metrics"]["memory"]["phases"] if p["phase"] == phase)


def gmean(xs) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def test_a_planted_two_fold_activation_fails_the_gate(store):
    d, launches = store
    truth = json.loads((PROGRAMS / "programs.json").read_text())["files"]
    plan = {n: truth[f"{n}.pte"]["executorch_planned_bytes"] for n in COMMITS}
    assert plan["act_large_portable"] == 2 * plan["act_mid_portable"] == 128 * MiB
    mid, large = ([peak(r) for r in launches[n]] for n in COMMITS)
    measured = gmean(large) - gmean(mid)  # the same harness inputs' shapes differ too: the model's part below
    r = cli("compare", "--run-dir", d / "out", "-b", "act_mid_portable", "-c", "act_large_portable", "--no-write",
            "--fail-on", "memory-regression", "--json", ok=False)
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("edgeprof: error: memory regression: peak memory during")
    mem = json.loads(r.stdout)["memory"]
    runs = next(p for p in mem["phases"] if p["phase"] == "runs")
    assert runs["estimate"] == pytest.approx(gmean(large) / gmean(mid), rel=1e-12)
    assert runs["candidate_bytes"] - runs["baseline_bytes"] == pytest.approx(measured, rel=1e-9)
    assert runs["ci_low"] > 1 + mem["threshold"] and mem["verdict"] == "larger"
    doc = json.loads(cli("memory", d / "out", "--json").stdout)
    model = {c["name"]: c["gap"]["model_bytes"] for c in doc["configurations"]}
    planned = plan["act_large_portable"] - plan["act_mid_portable"]
    assert abs(model["act_large_portable"] - model["act_mid_portable"] - planned) <= 0.02 * planned + 2 * MiB


def test_ingest_stores_each_launch_phase_by_phase(store):
    import duckdb

    d, launches = store
    con = duckdb.connect(str(d / "h.duckdb"), read_only=True)
    try:
        rows = con.execute('SELECT l."commit", m.phase_index, m.phase, m.peak_rss_bytes, m.rss_bytes, m.pss_bytes '
                           'FROM memory m JOIN launches l USING (launch_id) ORDER BY l."commit", m.phase_index').fetchall()
        (version,), = con.execute("SELECT value FROM store_meta WHERE key = 'schema_version'").fetchall()
    finally:
        con.close()
    assert version == "3"
    want = []
    for n, commits in COMMITS.items():
        for r, c in zip(launches[n], (c for c in commits for _ in range(2))):
            want += [(c, i, p["phase"], p["peak_rss_bytes"], p["rss_bytes"], p["pss_bytes"])
                     for i, p in enumerate(r["metrics"]["memory"]["phases"])]
    assert sorted(rows) == sorted(want)  # (two launches per commit: their rows interleave)
    assert [x[2] for x in rows[::2][:6]] == ["start", "load", "init", "inputs", "warmup", "runs"] and len(rows) == 72


def test_history_finds_the_commit_where_peak_memory_stepped(store):
    d, launches = store
    h = json.loads(cli("history", "--store", d / "h.duckdb", "--metric", "peak_rss", "--json").stdout)
    (s,) = h["series"]
    assert [p["commit"] for p in s["points"]] == ["c1", "c2", "c3", "c4", "c5", "c6"]
    # a launch's value: its largest peak over the phases; a commit's point: the geometric mean of its two launches
    # (equal weights: no launch carries a within-launch variance)
    tops = [max(p["peak_rss_bytes"] for p in r["metrics"]["memory"]["phases"]) for n in COMMITS for r in launches[n]]
    assert [p["estimate_bytes"] for p in s["points"]] == pytest.approx(
        [gmean(tops[2 * k:2 * k + 2]) for k in range(6)], rel=1e-12)
    assert all(p["ci_low_bytes"] <= p["estimate_bytes"] <= p["ci_high_bytes"] for p in s["points"])
    steps = [c for c in s["changes"] if c["status"] == "confirmed"]
    assert len(steps) == 1 and steps[0]["commit_after"] == "c4" and steps[0]["direction"] == "regression"
    # the step: the mean level after against before (equal precision per commit: the geometric means of the sides)
    mid, large = tops[:6], tops[6:]
    assert steps[0]["change_pct"] == pytest.approx(100 * (gmean(large) / gmean(mid) - 1), rel=1e-6)
    assert steps[0]["statement"].startswith(f"peak_rss +{steps[0]['change_pct']:.1f} %")
    assert h["regressions"] and h["regressions"][0].endswith(steps[0]["statement"])
    r = cli("history", "--store", d / "h.duckdb", "--metric", "peak_rss", "--fail-on", "regression", ok=False)
    assert r.returncode == 1 and "regression: " in r.stderr.strip().splitlines()[-1]
    load = json.loads(cli("history", "--store", d / "h.duckdb", "--metric", "peak_rss:load", "--json").stdout)
    (step,) = [c for c in load["series"][0]["changes"] if c["status"] == "confirmed"]
    assert step["commit_after"] == "c4" and step["statement"].startswith("peak_rss:load +")
    loads = [peak(r, "load") for n in COMMITS for r in launches[n]]
    assert [p["estimate_bytes"] for p in load["series"][0]["points"]] == pytest.approx(
        [gmean(loads[2 * k:2 * k + 2]) for k in range(6)], rel=1e-12)


def test_a_memory_metric_the_store_lacks_is_one_line(store):
    d, _ = store
    r = cli("history", "--store", d / "h.duckdb", "--metric", "peak_rss:boot", ok=False)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "no launch has 'peak_rss:boot'; phases stored: init, inputs, load, runs, start, warmup" in r.stderr
    r = cli("history", "--store", d / "h.duckdb", "--metric", "peak_rss:", ok=False)
    assert r.returncode == 2 and "name a phase after the colon" in r.stderr


def test_compare_points_a_memory_metric_to_its_gate(store):
    d, _ = store
    r = cli("compare", "--run-dir", d / "out", "-b", "act_mid_portable", "-c", "act_large_portable", "--no-write",
            "--metric", "peak_rss", ok=False)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--fail-on memory-regression" in r.stderr
