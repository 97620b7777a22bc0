"""Histories with known truth, made of real launches: every commit is one launch of the real-noise corpus
(tests/data/noise: separate process launches of the same program, drawn at random from one session, so the
commit-to-commit noise is the real launch-to-launch noise of that machine, modes and bursts included), with a
known change applied from a known commit on:

* ``step``: every run's time (every line and operator) × ``factor`` — a step of that size end to end, also
  what an environment change (clocks, thermal state, another device) looks like;
* ``concentrated``: one operator's time × ``factor`` (and its category's line with it) — what a code change looks
  like;
* ``appears``: a new operator taking ``factor`` − 1 of the end-to-end time per run appears;
* ``flat``: nothing changes.

Used by tests/analysis/test_history_truth.py and ``bench/bench_history.py --only truth``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

import noise_corpus as nc

NEW_OP = "native_call_gelu.out"  # the operator an ``appears`` history gains (in no corpus program)


@dataclass
class Truth:
    kind: str  # flat | step | concentrated | appears
    factor: float  # end-to-end time after / before the change (step, concentrated: applied to what they touch)
    at: int  # index of the first commit with the change (None for flat)
    commits: int
    session: str
    program: str
    operator: str | None = None  # the operator a concentrated change touches / an appearing one adds


def _summary(launch, scale_all: float = 1.0, op: str | None = None, op_scale: float = 1.0, add_ms: float = 0.0):
    """The launch as a history keeps it (:class:`~edgeprof.analysis.launch_summary.LaunchSummary`), changed."""
    from edgeprof.analysis.launch_summary import LaunchSummary
    from edgeprof.taxonomy import classify

    k = launch.skip
    lines = {c[5:]: v[k:] * scale_all for c, v in launch.columns.items() if c.startswith("line:") and v[k:].any()}
    ops = {c[3:]: v[k:] * scale_all for c, v in launch.columns.items() if c.startswith("op:") and v[k:].any()}
    e2e = launch.steady * scale_all
    cats = {o: classify(o).category for o in ops}
    if op is not None and op_scale != 1.0:
        extra = ops[op] * (op_scale - 1.0)
        ops[op] = ops[op] + extra
        lines[cats[op]] = lines[cats[op]] + extra
        e2e = e2e + extra
    if add_ms:
        extra = add_ms * e2e / float(np.mean(e2e))  # the new operator shares the launch's own noise
        ops[NEW_OP] = extra
        cats[NEW_OP] = classify(NEW_OP).category
        lines[cats[NEW_OP]] = lines.get(cats[NEW_OP], 0.0) + extra
        e2e = e2e + extra
    return LaunchSummary(e2e, list(range(e2e.size)), lines, ops, cats, dict.fromkeys(ops, 1.0),
                         dict.fromkeys(ops, "portable"))


def concentrated_operator(program: str, session: str = "c_quiet") -> str | None:
    """The program's operator that holds 20–70 % of the time (a change in it alone is distinguishable from a
    change of everything), or None."""
    launch = nc.session(session)[program][0]
    total = float(launch.steady.mean())
    shares = {c[3:]: float(v[launch.skip:].mean()) / total for c, v in launch.columns.items() if c.startswith("op:")}
    fit = [o for o, s in sorted(shares.items(), key=lambda kv: -kv[1]) if 0.2 <= s <= 0.7]
    return fit[0] if fit else None


def build(truth: Truth, seed: int, name: str) -> list[tuple[dict, object]]:
    """[(store identity, LaunchSummary)] per commit of one history (model ``name``)."""
    rng = np.random.default_rng(seed)
    launches = nc.session(truth.session)[truth.program]
    base_ms = float(np.median([x.steady.mean() for x in launches]))
    t0 = datetime(2026, 1, 1)
    out = []
    for c in range(truth.commits):
        launch = launches[int(rng.integers(len(launches)))]
        changed = truth.at is not None and c >= truth.at
        if not changed or truth.kind == "flat":
            summ = _summary(launch)
        elif truth.kind == "step":
            summ = _summary(launch, scale_all=truth.factor)
        elif truth.kind == "concentrated":
            summ = _summary(launch, op=truth.operator, op_scale=truth.factor)
        else:
            summ = _summary(launch, add_ms=(truth.factor - 1.0) * base_ms)
        t = t0 + timedelta(hours=c)
        ident = {"launch_id": f"{name}-{c:04d}", "model": name, "device": truth.session, "date": t.date().isoformat(),
                 "time": t, "experiment": truth.program, "platform": "corpus", "fingerprint": None, "threads": 1,
                 "commit": f"c{c:04d}", "branch": "main", "labels": "{}", "source": f"corpus:{name}:{c}",
                 "source_kind": "corpus", "edgeprof_version": "test", "ingested_at": t}
        out.append((ident, summ))
    return out


def write_store(path, items) -> None:
    from edgeprof.analysis.launch_summary import launch_record
    from edgeprof.store.backends import open_store
    from edgeprof.store.rows import frames

    recs = []
    for ident, summ in items:
        rec = launch_record(summ)
        rec["launch"]["taxonomy_version"] = "test"
        recs.append((ident, rec))
    with open_store(path, write=True) as st:
        st.write(frames(recs))


def points(truth: Truth, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The end-to-end history of a ``step`` or ``flat`` truth as the analysis sees it, without a store: each
    commit's log median and its variance (edgeprof's own per-launch statistics), the step applied as the exact
    shift of the log it is."""
    rng = np.random.default_rng(seed)
    launches = nc.session(truth.session)[truth.program]
    y, v = np.empty(truth.commits), np.empty(truth.commits)
    for c in range(truth.commits):
        y[c], v[c] = nc.stats(launches[int(rng.integers(len(launches)))])["median"]
        if truth.kind == "step" and c >= truth.at:
            y[c] += math.log(truth.factor)
    return y, v


def judge(changes: list[dict], truth: Truth, tolerance: int = 2) -> dict:
    """What the changes found say about the truth: a confirmed change at the step's commit (exactly / within
    ``tolerance``), the step reported as pending or possible there, and false changes (confirmed elsewhere)."""
    at = truth.at
    conf = [c for c in changes if c["status"] == "confirmed"]
    near = [c for c in conf if at is not None and abs(c["index"] - at) <= tolerance]
    other = [c for c in changes if c["status"] in ("pending", "possible", "eager")]
    return {"exact": any(c["index"] == at for c in near), "near": bool(near),
            "reported": any(c["index"] == at for c in other) and not near,
            "false": len(conf) - len(near),
            "wrong_place": sum(1 for c in other if at is None or abs(c["index"] - at) > tolerance)}


def detect_points(y: np.ndarray, v: np.ndarray, **kw) -> list[dict]:
    from edgeprof.analysis.history import commit_points, detect

    pts = commit_points([f"c{i}" for i in range(y.size)], y, v)
    return detect(pts["estimate"], pts["var"], threshold=kw.pop("threshold", 0.02), **kw)


def suite(*, reps: int = 2, factors=(1.1, 1.5, 2.3), afters=(1, 3, 10), before: int = 20, flat_commits: int = 30,
          sessions=None, programs=None, seed: int = 0, detector=None) -> dict:
    """The end-to-end known-truth table: per (factor, commits after the step) the share of histories whose step
    is confirmed at its exact commit / within ±2, reported as pending or possible at its commit, the mean commits
    measured from the step until it is confirmed (histories with 10 after), and false changes per 100 commits —
    over every session × program of the corpus, ``reps`` histories each (half of the steps slowdowns, half
    speedups); flat histories of ``flat_commits`` give the false-alarm rate on no change. ``detector(y, v)`` →
    changes (``index``, ``status``) replaces history's own (the benchmark's anchors)."""
    detect_points_ = detector or detect_points
    sessions = sessions or nc.SESSIONS
    programs = programs or nc.PROGRAMS
    rows = {}
    k = 0
    for factor in factors:
        for after in afters:
            acc = {"histories": 0, "exact": 0, "near": 0, "reported": 0, "false": 0, "commits": 0, "wrong_place": 0,
                   "until": []}
            for s in sessions:
                for p in programs:
                    for r in range(reps):
                        k += 1
                        f = factor if r % 2 == 0 else 1 / factor
                        truth = Truth("step", f, before, before + after, s, p)
                        y, v = points(truth, seed + k)
                        j = judge(detect_points_(y, v), truth)
                        acc["histories"] += 1
                        acc["commits"] += truth.commits
                        for key in ("exact", "near", "reported", "false", "wrong_place"):
                            acc[key] += int(j[key])
                        if after == max(afters):  # commits measured from the step until it is confirmed
                            for m in range(1, after + 1):
                                if judge(detect_points_(y[:before + m], v[:before + m]), truth)["near"]:
                                    acc["until"].append(m)
                                    break
            rows[(factor, after)] = acc
    flat = {"histories": 0, "false": 0, "commits": 0, "possible": 0}
    for s in sessions:
        for p in programs:
            for _ in range(reps):
                k += 1
                truth = Truth("flat", 1.0, None, flat_commits, s, p)
                y, v = points(truth, seed + k)
                ch = detect_points_(y, v)
                flat["histories"] += 1
                flat["commits"] += flat_commits
                flat["false"] += sum(c["status"] == "confirmed" for c in ch)
                flat["possible"] += sum(c["status"] in ("possible", "pending") for c in ch)
    return {"steps": rows, "flat": flat}
