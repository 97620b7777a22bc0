"""Where the time goes: exact per-run accounting by operator category, backends, hotspots, graph breaks.

Accounting (per run, exact): every event inside a run's ``Method::execute`` contributes its *self*
time (its duration minus the events directly inside it) to exactly one line:

* a leaf event (portable kernel, delegate op, other leaf) → its operator **category** (taxonomy);
* ``OPERATOR_CALL`` → ``framework_overhead`` (the call minus its kernel; all of a bare prim-op call);
* ``DELEGATE_CALL`` → ``delegate_overhead`` (the call minus its per-op events);
* ``Method::execute`` → ``unattributed`` (execute minus its top-level children);
* framework-like leaves (``JF_CALL``, ``MOVE_CALL``, ``FREE_CALL``) → ``framework_overhead``.

Self times telescope, so the lines of a run add up to its ``Method::execute`` exactly (in integer ns).
XNNPACK's per-op durations are whole microseconds measured on its own clock, so a delegate overhead can
be slightly negative; it is reported as measured.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import polars as pl

from .._ids import dense_rows, distinct_ids, first_index
from ..conventions import METHOD_EXECUTE, ms, op_type
from ..model import Profile
from ..runtimes import EXECUTORCH, HOST_BACKEND
from ..taxonomy import CATEGORIES, DEFAULT, FC_NOTE, OTHER, Taxonomy
from .groupstats import list_counts

OVERHEADS = ("framework_overhead", "delegate_overhead", "unattributed")
LINES = CATEGORIES + OVERHEADS


def _roots(parent: np.ndarray) -> np.ndarray:
    """Each row's top ancestor (itself when it has no parent), climbing at most 16 levels; each step moves only the
    rows still climbing."""
    root = np.arange(parent.size)
    rows = np.flatnonzero(parent >= 0)
    p = parent[rows]
    for _ in range(16):
        if not rows.size:
            break
        root[rows] = p
        p = parent[p]
        up = p >= 0
        rows, p = rows[up], p[up]
    return root


class EventLines:
    """Per execute event: its accounting line (index into :data:`LINES`, −1 outside runs) and whether it
    is a leaf; per distinct event name: its taxonomy class and kit ``type``. Codes, not strings, per row."""

    def __init__(self, profile: Profile, taxonomy: Taxonomy = DEFAULT):
        ev = profile.events
        parent = ev["parent"].fill_null(-1).to_numpy()
        self.name_ids, _, self.names = profile.name_groups()
        self.classes = [taxonomy.classify(s) for s in self.names]
        self.types = [op_type(s) for s in self.names]
        col = {k: i for i, k in enumerate(LINES)}
        fw = col["framework_overhead"]
        cat_code = np.array([col.get(c.category, fw) for c in self.classes], dtype=np.int16)
        is_exec_name = np.array([s == METHOD_EXECUTE for s in self.names], dtype=bool)
        kinds = ev["kind"].to_physical().to_numpy()
        from ..model import KINDS

        k = {name: i for i, name in enumerate(KINDS)}
        run = ev["run_index"].to_numpy()
        name_exec = is_exec_name[self.name_ids]
        in_exec = (run >= 0) & name_exec[_roots(parent)]
        line = cat_code[self.name_ids]
        line[kinds == k["operator_call"]] = fw
        line[kinds == k["delegate_call"]] = col["delegate_overhead"]
        line[name_exec] = col["unattributed"]
        line[~in_exec] = -1
        self.line = line
        # the reader nests kernels under OPERATOR_CALL, delegate ops under DELEGATE_CALL and every other event
        # under Method::execute: kernels, delegate ops and other events are the leaves
        self.leaf = in_exec & ~name_exec & np.isin(kinds, (k["kernel"], k["delegate_op"], k["other"]))

    def column(self, values: list) -> np.ndarray:
        """A per-distinct-name list expanded to rows."""
        return np.array(values, dtype=object)[self.name_ids]


def per_run_lines(profile: Profile, lines: EventLines) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """(matrix runs × LINES of ns, e2e ns per run, run indices): the exact accounting of every run."""
    run = profile.events["run_index"].to_numpy()
    self_ns = profile.events["self_ns"].to_numpy()
    keep = lines.line >= 0
    runs = profile.runs.filter(pl.col("run_index") >= 0).sort("run_index")
    n_runs = runs.height
    idx = run[keep].astype(np.int64) * len(LINES) + lines.line[keep]
    # float64 sums of integer ns are exact below 2**53 ns (104 days per run and line)
    m = np.bincount(idx, weights=self_ns[keep].astype(np.float64), minlength=n_runs * len(LINES))
    m = np.rint(m[: n_runs * len(LINES)]).astype(np.int64).reshape(n_runs, len(LINES))
    e2e = runs["e2e_ns"].fill_null(0).to_numpy()
    return m, e2e, runs["run_index"].to_list()


def share_base(lines: np.ndarray, e2e: np.ndarray) -> np.ndarray:
    """What a share of latency is of, per run: the end-to-end time, or the lines' sum where they overlap past it
    (events of several threads, a hostile or rewritten profile) — so a share is a part of a whole, in [0, 100]; a
    negative line (a residual below zero) counts as no time. ``lines``: runs × lines; ``e2e``: per run."""
    return np.maximum(e2e, np.clip(lines, 0, None).sum(axis=1))


def per_run_operators(prof: Profile, lines: EventLines, skip: int = 0) -> dict[str, np.ndarray]:
    """Per operator type: time (ns) in each run after the skipped warm-up runs."""
    ev = prof.events
    run = ev["run_index"].to_numpy()
    leaf = lines.leaf & (run >= skip)
    n_runs = prof.n_runs - skip
    if n_runs <= 0:
        return {}
    type_code = {t: i for i, t in enumerate(dict.fromkeys(lines.types))}
    tid = np.array([type_code[t] for t in lines.types], dtype=np.int64)[lines.name_ids]
    dur = ev["duration_ns"].fill_null(0).to_numpy()
    # the sums of a type's durations in each run, added in row order (as np.add.at adds them)
    cell = tid[leaf] * n_runs + (run[leaf].astype(np.int64) - skip)
    m = np.bincount(cell, weights=dur[leaf].astype(np.float64), minlength=len(type_code) * n_runs)
    m = m.reshape(len(type_code), n_runs)
    names = list(type_code)
    present = np.flatnonzero(np.bincount(tid[leaf], minlength=len(names)))
    return {names[i]: m[i] for i in present}


def breakdown(profile: Profile, *, taxonomy: Taxonomy = DEFAULT, top: int = 15, name: str = "") -> dict:
    """Category table, top operators, portable vs delegated, portable hotspots and graph breaks."""
    ev = profile.events
    lines = EventLines(profile, taxonomy)
    mat, e2e, runs = per_run_lines(profile, lines)
    n_runs = max(len(runs), 1)
    e2e_mean = float(e2e.mean()) if e2e.size else 0.0
    check = int(np.abs(mat.sum(axis=1) - e2e).max()) if e2e.size else 0
    leaf = lines.leaf
    run = ev["run_index"].to_numpy()

    # categories + overhead lines
    lcode = lines.line[leaf]
    n_leaf = np.bincount(lcode, minlength=len(LINES)) if lcode.size else np.zeros(len(LINES), np.int64)
    type_ids = np.array(list(lines.types), dtype=object)
    distinct: dict[int, set] = {}
    for code, tid in set(zip(lcode.tolist(), lines.name_ids[leaf].tolist())):
        distinct.setdefault(code, set()).add(type_ids[tid])
    cat_rows = []
    for j, ln in enumerate(LINES):
        tot = float(mat[:, j].sum())
        if tot == 0 and ln not in OVERHEADS and n_leaf[j] == 0:
            continue
        cat_rows.append({
            "line": ln, "kind": "overhead" if ln in OVERHEADS else "category",
            "total_ms": ms(tot), "avg_ms": ms(tot / n_runs),
            "pct_of_e2e": tot / n_runs / e2e_mean * 100 if e2e_mean else None,
            "operator_count": len(distinct.get(j, ())), "executions_per_run": float(n_leaf[j]) / n_runs,
        })
    cat_rows.sort(key=lambda r: (r["kind"] != "category", -r["avg_ms"]))

    # operators (leaf events by type and backend)
    ops = _operator_table(ev, profile.op_type_groups(), lines, leaf, n_runs, e2e_mean)
    other = [o for o in ops if o["category"] == OTHER][:top]

    # portable vs delegated
    by_backend: dict[str, dict] = {}
    for o in ops:
        b = by_backend.setdefault(o["backend"], {"avg_ms": 0.0, "pct_of_e2e": 0.0 if e2e_mean else None})
        b["avg_ms"] += o["avg_ms"]
        if e2e_mean:
            b["pct_of_e2e"] += o["pct_of_e2e"]
    n_dcalls = int(((ev["kind"] == "delegate_call").to_numpy() & (run >= 0)).sum())
    hotspots = [o for o in ops if o["backend"] == HOST_BACKEND][:top]
    result: dict[str, Any] = {
        "name": name,
        "runtime": profile.runtime or EXECUTORCH.name,
        "taxonomy_version": taxonomy.version,
        "runs": len(runs),
        "e2e_ms": {"mean": ms(e2e_mean), "median": ms(float(np.median(e2e))) if e2e.size else None},
        "accounting_check_max_abs_ns": check,
        "categories": cat_rows,
        "operators": ops[:top],
        "operators_all": ops,
        "other_top": other,
        "backends": {
            "leaf_time": by_backend,
            "framework_overhead_ms": ms(float(mat[:, LINES.index("framework_overhead")].mean())) if runs else 0.0,
            "delegate_overhead_ms": ms(float(mat[:, LINES.index("delegate_overhead")].mean())) if runs else 0.0,
            "unattributed_ms": ms(float(mat[:, LINES.index("unattributed")].mean())) if runs else 0.0,
            "delegate_calls_per_run": n_dcalls / n_runs,
        },
        "portable_hotspots": hotspots,
        "graph_breaks": graph_breaks(profile),
        "notes": [],
    }
    if any(o["op"] == "Fully Connected" for o in ops) and any(o["category"] == "CONV" for o in ops):
        result["notes"].append(FC_NOTE)
    if other and sum(o["avg_ms"] for o in other) > 0.5 * ms(e2e_mean):
        result["notes"].append("OTHER dominates: inspect " + ", ".join(o["operator"] for o in other[:3])
                               + " before recommending backend work")
    return result


def _operator_table(ev: pl.DataFrame, op_groups: tuple, lines: EventLines, leaf: np.ndarray, n_runs: int,
                    e2e_mean: float) -> list[dict]:
    """Leaf events grouped by (kit type, backend): time per run, share, executions, op types."""
    rows = np.flatnonzero(leaf)
    if rows.size == 0:
        return []
    type_code = {t: i for i, t in enumerate(dict.fromkeys(lines.types))}
    tid = np.array([type_code[t] for t in lines.types], dtype=np.int64)[lines.name_ids[rows]]
    bid, _bfirst = distinct_ids(ev["delegate_backend"].gather(rows))
    gid = dense_rows(tid, bid)
    first = rows[first_index(gid)]
    dur = ev["duration_ns"].fill_null(0).to_numpy()[rows]
    tot = np.bincount(gid, weights=dur.astype(np.float64))
    cnt = np.bincount(gid)
    backends = ev["delegate_backend"].gather(first).cast(pl.String).to_list()
    op_ids, _, op_lists = op_groups
    op_types = list_counts(gid, op_ids[rows], op_lists, int(tot.size), per=n_runs)
    out = []
    for g in np.argsort(-tot, kind="stable").tolist():
        r0 = int(first[g])
        cls = lines.classes[int(lines.name_ids[r0])]
        types = op_types[g]
        out.append({
            "operator": lines.types[int(lines.name_ids[r0])], "backend": backends[g], "category": cls.category,
            "subtype": cls.subtype, "op": cls.op, "dtypes": "/".join(cls.dtypes), "total_ms": ms(tot[g]),
            "avg_ms": ms(tot[g] / n_runs), "pct_of_e2e": tot[g] / n_runs / e2e_mean * 100 if e2e_mean else None,
            "event_count": int(cnt[g]), "executions_per_run": cnt[g] / n_runs, "op_types": types,
        })
    return out


def graph_breaks(profile: Profile) -> dict:
    """The ordered delegated/portable segments of a run (like Core ML graph interruptions).

    Segments come from the top-level events of each run (children of ``Method::execute``): a
    ``DELEGATE_CALL`` is a delegated segment; consecutive portable calls form one portable island.
    Times are the mean over runs with the same segment structure as run 0.
    """
    from ..model import KINDS

    ev = profile.events
    if not profile.n_runs:
        return {"segments": [], "portable_islands": 0, "transitions": 0}
    # codes, not strings: a string is looked up only for the rows of run 0 that are shown
    kind = ev["kind"].to_physical().to_numpy()
    run = ev["run_index"].to_numpy()
    depth = ev["depth"].to_numpy()
    top_kinds = [KINDS.index(k) for k in ("operator_call", "delegate_call", "other")]
    top = (run >= 0) & (depth == 1) & np.isin(kind, top_kinds)
    rows = np.flatnonzero(top)
    if rows.size == 0:
        return {"segments": [], "portable_islands": 0, "transitions": 0}
    is_del = kind[rows] == KINDS.index("delegate_call")
    r = run[rows]
    new_seg = np.r_[True, (r[1:] != r[:-1]) | (is_del[1:] != is_del[:-1]) | is_del[1:]]
    seg_of = np.cumsum(new_seg) - 1
    run_start = np.r_[True, r[1:] != r[:-1]]  # the rows of a run are contiguous: events are in run order
    seg_in_run = seg_of - seg_of[np.flatnonzero(run_start)][np.cumsum(run_start) - 1]
    dur = ev["duration_ns"].fill_null(0).to_numpy()[rows]
    name_ids, _, name_list = profile.name_groups()
    parent = ev["parent"].fill_null(-1).to_numpy()
    r0 = int(r.min())
    # kernel names inside each top-level portable call; delegate op names inside each delegate call (run 0)
    children: dict[int, list[str]] = {}
    for i in np.flatnonzero((run == r0) & (parent >= 0)).tolist():
        children.setdefault(int(parent[i]), []).append(name_list[name_ids[i]])
    run0 = r == r0
    # runs whose top-level structure (delegated or not, name; in order) is run 0's
    sig = name_ids[rows].astype(np.int64) * 2 + is_del
    sig0 = sig[run0]
    starts = np.flatnonzero(run_start)
    lengths = np.diff(np.r_[starts, rows.size])
    same_len = lengths == sig0.size
    cand = starts[same_len]
    if cand.size:
        block = sig[cand[:, None] + np.arange(sig0.size)]
        equal = (block == sig0).all(axis=1)
    else:
        equal = np.zeros(0, dtype=bool)
    matching_runs = r[cand[equal]]
    matching = set(matching_runs.tolist())
    same = np.isin(r, matching_runs)
    backend0 = ev["delegate_backend"].gather(rows[run0]).cast(pl.String).to_list()
    segs = []
    n0 = int(seg_in_run[run0].max()) + 1
    for k in range(n0):
        sel0 = run0 & (seg_in_run == k)
        idx0 = rows[sel0]
        delegated = bool(is_del[sel0][0])
        t_all = np.bincount(r[same & (seg_in_run == k)], weights=dur[same & (seg_in_run == k)])
        t_runs = t_all[sorted(matching)] if len(matching) else np.array([dur[sel0].sum()])
        ops: list[str] = []
        for i in idx0.tolist():
            kids = children.get(i, [])
            ops.extend(kids if kids else ([] if delegated else [name_list[name_ids[i]]]))
        segs.append({
            "index": k, "kind": "delegated" if delegated else HOST_BACKEND,
            "backend": str(backend0[int(np.flatnonzero(sel0[run0])[0])]) if delegated else HOST_BACKEND,
            "calls": int(sel0.sum()), "ops": ops if not delegated else [f"{len(ops)} delegate ops"],
            "op_names": ops, "mean_ms": ms(float(np.mean(t_runs))), "run0_ms": ms(float(dur[sel0].sum())),
        })
    islands = sum(1 for s in segs if s["kind"] == HOST_BACKEND)
    transitions = sum(1 for a, b in itertools.pairwise(segs) if a["kind"] != b["kind"])
    between = sum(1 for i, s in enumerate(segs) if s["kind"] == HOST_BACKEND
                  and any(x["kind"] == "delegated" for x in segs[:i]) and any(x["kind"] == "delegated" for x in segs[i + 1:]))
    return {"segments": segs, "portable_islands": islands, "portable_islands_between_delegates": between,
            "transitions": transitions, "runs_with_run0_structure": len(matching), "runs": int(starts.size)}


def summary_split(profile: Profile, taxonomy: Taxonomy = DEFAULT) -> dict:
    """Mean ms per run by category and overhead line, and by backend — for ``analysis_summary.json``."""
    lines = EventLines(profile, taxonomy)
    mat, _, runs = per_run_lines(profile, lines)
    if not runs:
        return {"categories_ms": {}, "backends_ms": {}}
    means = ms(mat.mean(axis=0))
    cats = {ln: float(v) for ln, v in zip(LINES, means) if v != 0 or ln in OVERHEADS}
    run = profile.events["run_index"].to_numpy()
    leaf = lines.leaf & (run >= 0)
    bid, bfirst = distinct_ids(profile.events["delegate_backend"])
    names = profile.events["delegate_backend"].gather(bfirst).cast(pl.String).to_list()
    dur = profile.events["duration_ns"].fill_null(0).to_numpy()
    per_b = np.bincount(bid[leaf], weights=dur[leaf].astype(np.float64), minlength=len(names)) / len(runs)
    per_b = ms(per_b)
    backends = {names[i]: float(per_b[i]) for i in range(len(names)) if per_b[i] or names[i] in (HOST_BACKEND,)}
    for ln in OVERHEADS:
        backends[ln] = cats.get(ln, 0.0)
    return {"categories_ms": cats, "backends_ms": backends}
