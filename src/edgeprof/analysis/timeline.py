"""Arm-kit-compatible event tables: per-run timelines and per-operator statistics (pure functions).

The first columns are exactly the SME2 ExecuTorch profiling kit's, so scripts written against its CSVs
keep working; ours follow. Deliberate differences from the kit (its bugs, fixed):

* ``pct_total`` is the event's share of *its run's* ``Method::execute`` (the kit divided by the sum of
  every row in the run, wrappers included, which made shares about three times too small). Events nest
  (a kernel sits inside its OPERATOR_CALL), so shares of nested rows overlap; ``self_pct`` never does:
  it sums to 100 over a run.
* ops stats ``count`` is executions per run, not the number of distinct event instances, and
  ``total_ms``/``pct_total`` are per inference, averaged over runs.
* load/init events (``Default`` block) are not in the timelines; ``analysis_summary.json`` reports them.
"""

from __future__ import annotations

import json
from typing import cast

import numpy as np
import polars as pl

from .._ids import dense_rows, distinct_ids, first_index, first_rows
from ..conventions import METHOD_EXECUTE, OP_TYPES_ID, OP_TYPES_INLINE, OP_TYPES_MODES, OP_TYPES_REF, ms, op_type
from ..columns import Column, Columns, Numbers, Text, from_series, numbers
from ..model import Profile
from .groupstats import group_stats, list_counts
from .inspector_order import inspector_order

TIMELINE_KIT_COLUMNS = ("model_id", "name", "type", "delegate_backend", "start_us", "end_us", "duration_ms",
                        "pct_total", "node_id", "run_index", "block")
OPS_STATS_KIT_COLUMNS = ("model_id", "name", "type", "delegate_backend", "count", "total_ms", "avg_ms", "pct_total")

PCT_DECIMALS = 6  # percentages are rounded so CSVs stay compact and stable


def _json_of(v) -> str | None:
    """A list of op types as a JSON array; None (an empty CSV cell) when unknown (no ETRecord)."""
    if v is None:
        return None
    return json.dumps(list(v), ensure_ascii=False)


def timeline_table(profile: Profile, model_id: str, *, run_index: int | None = None,
                   runs: tuple[int, int] | None = None, node_ids: np.ndarray | None = None) -> pl.DataFrame:
    """One row per event of the execute runs, in execution order.

    ``run_index`` selects one run, ``runs=(a, b)`` the runs ``a ≤ run_index < b``; ``node_ids`` (from
    :func:`~edgeprof.analysis.inspector_order.inspector_order`) can be passed to avoid recomputing it.
    """
    return Timeline(profile, model_id, node_ids).table(run_index=run_index, runs=runs)


class Timeline:
    """Builds timeline tables of one profile; per-profile work is done once, blocks are cheap.

    ``chunks()`` yields the whole timeline in blocks of whole runs, so a writer can stream a
    200k-event timeline without holding it in memory. Tables come as plain columns
    (:class:`edgeprof.columns.Columns`: the CSV writer's input; ``.to_polars()`` for a DataFrame) or, from
    :meth:`table`, as a DataFrame.
    """

    def __init__(self, profile: Profile, model_id: str, node_ids: np.ndarray | None = None,
                 op_types: str = OP_TYPES_INLINE, op_type_ids: dict | None = None, first_row: int = 0):
        """``op_types``: each event's op-type list in every row (``inline``, column ``op_types``) or as an id into
        :meth:`op_types_table` (``ref``, column ``op_types_id``; see :data:`edgeprof.conventions.OP_TYPES_REF`).
        Ids count the lists in order of first appearance in the timeline; ``op_type_ids`` (list → id) carries
        the numbering over from the timelines of earlier blocks of runs of the same file, whose ``parent`` rows
        count from the file's first event, ``first_row`` before this block's first."""
        if op_types not in OP_TYPES_MODES:
            raise ValueError(f"op_types must be one of {', '.join(OP_TYPES_MODES)}, got {op_types!r}")
        self._ctx = _TimelineContext(profile, model_id, node_ids, op_types, op_type_ids, first_row)
        self._counts = profile.runs.filter(pl.col("run_index") >= 0).sort("run_index")["n_events"].to_numpy()

    def columns(self, *, run_index: int | None = None, runs: tuple[int, int] | None = None) -> Columns:
        """The rows of one run (``run_index``), of the runs ``a ≤ run_index < b`` (``runs``), or of all."""
        if run_index is not None:
            runs = (run_index, run_index + 1)
        return self._ctx.rows(self._ctx.select(runs))

    def table(self, *, run_index: int | None = None, runs: tuple[int, int] | None = None) -> pl.DataFrame:
        return self.columns(run_index=run_index, runs=runs).to_polars()

    def op_types_table(self) -> pl.DataFrame | None:
        """The distinct op-type lists the ``op_types_id`` column refers to (``op_types_id``, ``op_types`` as a JSON
        list); None inline, or when no event has a list (no ETRecord)."""
        lists = self._ctx.op_type_lists
        if not lists:
            return None
        return pl.DataFrame({OP_TYPES_ID: np.arange(len(lists), dtype=np.int32), "op_types": lists})

    def chunks(self, max_rows: int = 262144):
        counts = self._counts
        a = 0
        while a < counts.size:
            b, rows = a, 0
            while b < counts.size and (rows == 0 or rows + counts[b] <= max_rows):
                rows += int(counts[b])
                b += 1
            yield self.columns(runs=(a, b))
            a = b


def _text(s: pl.Series, fn=None) -> Column:
    """``s`` as codes into its distinct values (``fn`` applied to each distinct value, not to each row)."""
    col = from_series(s)
    return col if fn is None or not isinstance(col, Text) else Text(col.codes, [fn(v) for v in col.values], col.dtype)


class _TimelineContext:
    """Per-profile arrays computed once; :meth:`rows` then builds any subset of the timeline cheaply."""

    def __init__(self, profile: Profile, model_id: str, node_ids: np.ndarray | None, op_types: str = OP_TYPES_INLINE,
                 op_type_ids: dict | None = None, first_row: int = 0):
        ev = profile.events
        self.model_id = model_id
        self.run_idx = run_idx = ev["run_index"].to_numpy()
        runs = profile.runs.filter(pl.col("run_index") >= 0)
        # runs without profile events (allocation- or debug-only) are in the runs table, not in the events
        n_runs = max(int(run_idx.max(initial=-1)), int(cast(int, runs["run_index"].max())) if runs.height else -1) + 1
        self.e2e = np.full(n_runs, np.nan)
        self.e2e[runs["run_index"].to_numpy()] = runs["e2e_ns"].cast(pl.Float64).fill_null(np.nan).to_numpy()
        origin = np.zeros(n_runs, dtype=np.int64)
        origin[runs["run_index"].to_numpy()] = runs["start_ns"].fill_null(0).to_numpy()
        self.start = start = ev["start_ns"].to_numpy()
        is_exec = (ev["name"] == METHOD_EXECUTE).to_numpy() & (run_idx >= 0)
        if is_exec.any():  # a run's origin is its Method::execute start when there is one
            ex_start = np.full(n_runs, np.iinfo(np.int64).max)
            np.minimum.at(ex_start, run_idx[is_exec], start[is_exec])
            has = ex_start != np.iinfo(np.int64).max
            origin[has] = ex_start[has]
        self.origin = origin
        self.node_ids = node_ids if node_ids is not None else inspector_order(profile)["node_id"].to_numpy()
        # text columns as codes into their few distinct values, derived once, then sliced per block
        ids, _, names = profile.name_groups()
        ids = ids.astype(np.int32, copy=False)
        self.name = Text(ids, names, ev["name"].dtype)
        self.type = Text(ids, [op_type(x) for x in names], pl.Categorical)
        op_ids, _, op_lists = profile.op_type_groups()
        op_ids = op_ids.astype(np.int32, copy=False)
        if op_types == OP_TYPES_REF:  # an id per distinct list, by first appearance; the lists once, in op_type_lists
            ids = op_type_ids if op_type_ids is not None else {}
            codes = np.zeros(len(op_lists), dtype=np.int32)
            listed = np.zeros(len(op_lists), dtype=bool)
            first = first_rows(op_ids[run_idx >= 0], len(op_lists))
            shown = np.flatnonzero(first >= 0)
            for g in shown[np.argsort(first[shown], kind="stable")].tolist():
                if op_lists[g] is not None:
                    codes[g], listed[g] = ids.setdefault(_json_of(op_lists[g]), len(ids)), True
            self.op_type_lists: list | None = list(ids)
            self.op_types: tuple[str, Column] = (OP_TYPES_ID, Numbers(codes[op_ids], ~listed[op_ids]))
        else:
            self.op_type_lists = None
            self.op_types = ("op_types", Text(op_ids, [_json_of(v) for v in op_lists], pl.Categorical))
        self.text = {c: _text(ev[c]) for c in ("delegate_backend", "block", "kind", "module_path", "timing_source")}
        self.text["backend_source"] = _text(ev["backend_source"], lambda v: v or None)
        self.number = {c: from_series(ev[c]) for c in ("run_index", "event_index", "instruction_id", "depth")}
        dur = ev["duration_ns"]
        self.dur_f = dur.cast(pl.Float64).fill_null(np.nan).to_numpy()
        self.dur0 = dur.fill_null(0).to_numpy()
        self.self_ns = ev["self_ns"].to_numpy()
        parent = ev["parent"]
        self.parent = parent.fill_null(first_row).to_numpy() - first_row
        self.no_parent = parent.is_null().to_numpy()
        self.event_index = ev["event_index"].to_numpy()
        self._by_run: np.ndarray | None = None  # rows in run order, and their runs (found on first use)
        self._sorted_runs: np.ndarray | None = None

    def select(self, runs: tuple[int, int] | None) -> np.ndarray:
        """Rows (ascending) of the execute runs in [a, b) — all of them when ``runs`` is None. Found by binary
        search in the rows sorted by run once, so a table written in many chunks costs O(N) in all, not O(N²)."""
        if self._by_run is None or self._sorted_runs is None:
            self._by_run = np.argsort(self.run_idx, kind="stable")
            self._sorted_runs = self.run_idx[self._by_run].astype(np.int64)  # int64 keys: no cast per search
        a, b = (0, np.iinfo(np.int64).max) if runs is None else (max(runs[0], 0), runs[1])
        lo, hi = np.searchsorted(self._sorted_runs, [a, b], side="left")
        return np.sort(self._by_run[lo:hi])

    def rows(self, rows: np.ndarray) -> Columns:
        contiguous = bool(rows.size) and rows[-1] - rows[0] + 1 == rows.size
        take = slice(int(rows[0]), int(rows[0]) + rows.size) if contiguous else rows
        r = self.run_idx[take]
        e2e = self.e2e[r]
        start = self.start[take]
        dur_f = self.dur_f[take]
        self_ns = self.self_ns[take]
        text, number = self.text, self.number
        op_name, op_col = self.op_types
        return Columns({
            "model_id": Text(np.zeros(rows.size, dtype=np.int32), [self.model_id], pl.Categorical),
            "name": self.name.take(take),
            "type": self.type.take(take),
            "delegate_backend": text["delegate_backend"].take(take),
            "start_us": numbers(start / 1e3),
            "end_us": numbers((start + self.dur0[take]) / 1e3),
            "duration_ms": numbers(ms(dur_f), nan_is_null=True),
            "pct_total": numbers(np.round(dur_f / e2e * 100, PCT_DECIMALS), nan_is_null=True),
            "node_id": Numbers(self.node_ids[take]),
            "run_index": number["run_index"].take(take),
            "block": text["block"].take(take),
            # ours
            "kind": text["kind"].take(take),
            "event_index": number["event_index"].take(take),
            "instruction_id": number["instruction_id"].take(take),
            "depth": number["depth"].take(take),
            "parent_event_index": Numbers(self.event_index[self.parent[take]], self.no_parent[take]),
            "self_ms": numbers(ms(self_ns)),
            "self_pct": numbers(np.round(self_ns / e2e * 100, PCT_DECIMALS)),
            "offset_us": numbers((start - self.origin[r]) / 1e3),
            op_name: op_col.take(take),
            "module_path": text["module_path"].take(take),
            "timing_source": text["timing_source"].take(take),
            "backend_source": text["backend_source"].take(take),
        })


def ops_stats_table(profile: Profile, model_id: str) -> pl.DataFrame:
    """Per operator type and backend, per inference: executions, total/average time, share of end-to-end.

    Groups are (``type``, ``delegate_backend``, ``kind``); computed with dense ids and numpy, so a 200k-event
    profile needs a few arrays of its length and no hash tables.
    """
    all_ids, _, all_names = profile.name_groups()
    rows = np.flatnonzero(profile.events["run_index"].to_numpy() >= 0)
    ev = profile.execute_events()  # the same rows, in order (a zero-copy slice when contiguous)
    runs = profile.runs.filter(pl.col("run_index") >= 0)
    n_runs = max(runs.height, 1)
    mean_e2e = runs["e2e_ns"].cast(pl.Float64).mean() or float("nan")
    type_names = [op_type(v) for v in all_names]
    type_code = {t: i for i, t in enumerate(dict.fromkeys(type_names))}
    tid = np.array([type_code[t] for t in type_names], dtype=np.int64)[all_ids[rows]]
    bid, _ = distinct_ids(ev["delegate_backend"])
    kid = ev["kind"].to_physical().to_numpy().astype(np.int64)
    gid = dense_rows(tid, bid, kid)
    first = first_index(gid)
    G = first.size
    dur = ev["duration_ns"]
    st = group_stats(gid, dur.fill_null(0).to_numpy(), dur.is_not_null().to_numpy(), G)
    occurrences = np.bincount(gid, minlength=G)
    self_sum = np.bincount(gid, weights=ev["self_ns"].to_numpy().astype(np.float64), minlength=G)
    timing = ["+".join(sorted(v for v in vals if v)) for vals in _values_per_group(gid, ev["timing_source"], G)]
    op_ids, _, op_lists = profile.op_type_groups()
    ops = list_counts(gid, op_ids[rows], op_lists, G, per=n_runs)
    keys = ev.select("delegate_backend", "kind").gather(first).with_columns(pl.col("kind").cast(pl.String))
    per_run_int = bool((occurrences % n_runs == 0).all())
    count = occurrences // n_runs if per_run_int else occurrences / n_runs
    attached = profile.etrecord is not None and profile.etrecord.status == "attached"
    type_list = list(type_code)
    types = [type_list[t] for t in tid[first].tolist()]
    out = pl.DataFrame({
        "model_id": [model_id] * G,
        "name": types,
        "type": types,
        "delegate_backend": keys["delegate_backend"].cast(pl.String),
        "count": count,
        "total_ms": np.round(ms(st["sum"] / n_runs), 6),
        "avg_ms": np.round(ms(st["mean"]), 6),
        "pct_total": np.round(st["sum"] / n_runs / mean_e2e * 100, PCT_DECIMALS),
        "kind": keys["kind"],
        "runs": [runs.height] * G,
        "occurrences": occurrences,
        "min_ms": ms(st["min"]),
        "median_ms": np.round(ms(st["median"]), 6),
        "max_ms": ms(st["max"]),
        "std_ms": np.round(ms(st["std"]), 6),
        "self_total_ms": np.round(ms(self_sum / n_runs), 6),
        "self_pct": np.round(self_sum / n_runs / mean_e2e * 100, PCT_DECIMALS),
        "timing_source": timing,
        "op_types": [json.dumps(v, ensure_ascii=False) if attached else None for v in ops],
    }, schema_overrides={"op_types": pl.String, "timing_source": pl.String}).fill_nan(None)
    return out.sort(["total_ms", "name", "delegate_backend"], descending=[True, False, False], nulls_last=True)


def _values_per_group(gid: np.ndarray, s: pl.Series, G: int) -> list[list]:
    """The distinct values of ``s`` in each of the ``G`` groups (each distinct value decoded once)."""
    vid, vfirst = distinct_ids(s)
    values = s.gather(vfirst).to_list()
    pair = first_index(dense_rows(gid, vid))
    out: list[list] = [[] for _ in range(G)]
    for g, v in zip(gid[pair].tolist(), vid[pair].tolist()):
        out[g].append(values[v])
    return out
