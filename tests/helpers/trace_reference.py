"""The trace writer's reference: the straightforward per-event implementation edgeprof shipped first (one Python
dict per slice, nesting repaired parent by parent). The fast writer must produce the same document."""

from __future__ import annotations

from edgeprof.model import Profile
from edgeprof.render.trace import INIT_TID, PID, _tid
from edgeprof.taxonomy import DEFAULT, Taxonomy


def reference_trace_events(profile: Profile, *, runs: list[int] | None = None, include_init: bool = True,
                 taxonomy: Taxonomy = DEFAULT, name: str | None = None):
    """(events, header, stats): ``events`` yields the trace events one at a time (metadata first), so a large
    profile is written without holding them all; ``header`` is the document's other data."""
    import numpy as np

    ev = profile.events
    run_idx = ev["run_index"].to_numpy()
    keep_runs = set(range(profile.n_runs) if runs is None else runs)
    mask = np.isin(run_idx, list(keep_runs)) | ((run_idx < 0) & include_init)
    start = ev["start_ns"].to_numpy()
    end = ev["end_ns"].to_numpy()
    rows = np.flatnonzero(mask & ev["duration_ns"].is_not_null().to_numpy())
    skipped = int(mask.sum() - rows.size)
    parent = ev["parent"].fill_null(-1).to_numpy()
    depth = ev["depth"].to_numpy()
    base = int(start[rows].min()) if rows.size else 0

    # adjusted [start, end) per exported row: parents before children, siblings in time order
    exported = np.zeros(ev.height, dtype=bool)
    exported[rows] = True
    adj_s = start.astype(np.int64).copy()
    adj_e = end.astype(np.int64).copy()
    last_child_end: dict[tuple, int] = {}
    for r in rows[np.lexsort((start[rows], depth[rows]))].tolist():
        s, e = int(adj_s[r]), int(adj_e[r])
        p = int(parent[r])
        has_parent = p >= 0 and exported[p]
        if has_parent:
            s = min(max(s, int(adj_s[p])), int(adj_e[p]))
            e = min(e, int(adj_e[p]))
        key = (int(run_idx[r]), p if has_parent else -1)
        s = max(s, last_child_end.get(key, s))
        if has_parent:
            s = min(s, int(adj_e[p]))
        adj_s[r], adj_e[r] = s, max(e, s)
        last_child_end[key] = int(adj_e[r])
    adjusted = (adj_s[rows] != start[rows].astype(np.int64)) | (adj_e[rows] != end[rows].astype(np.int64))
    tids = sorted({_tid(int(x)) for x in np.unique(run_idx[rows]).tolist()})
    stats = {"slices": int(rows.size), "adjusted": int(adjusted.sum()), "skipped_no_duration": skipped,
             "runs": sorted(keep_runs), "tracks": len(tids)}
    header = {"tool": "edgeprof", "source": profile.source, "time_origin_ns": base,
              "note": "ts/dur in µs (three decimals = ETDump nanoseconds), relative to time_origin_ns"}

    def events():
        yield {"name": "process_name", "ph": "M", "pid": PID, "tid": 0,
               "args": {"name": f"edgeprof: {name or profile.source.rsplit('/', 1)[-1]}"}}
        for t in tids:
            label = "load & init" if t == INIT_TID else f"run {t - 1}"
            yield {"name": "thread_name", "ph": "M", "pid": PID, "tid": t, "args": {"name": label}}
            yield {"name": "thread_sort_index", "ph": "M", "pid": PID, "tid": t, "args": {"sort_index": t}}
        names = ev["name"].cast(str).to_list()
        kinds = ev["kind"].cast(str).to_list()
        instr = ev["instruction_id"].to_numpy()
        backend = ev["delegate_backend"].cast(str).to_list()
        timing = ev["timing_source"].cast(str).to_list()
        ev_index = ev["event_index"].to_numpy()
        op_types = ev["op_types"].to_list() if "op_types" in ev.columns else None
        order = rows[np.lexsort((depth[rows], adj_s[rows], run_idx[rows]))]
        for r in order.tolist():
            s, e = int(adj_s[r]), int(adj_e[r])
            args = {"kind": kinds[r], "category": taxonomy.classify(names[r]).category, "event_index": int(ev_index[r]),
                    "run_index": int(run_idx[r]), "timing_source": timing[r]}
            if int(instr[r]) >= 0:
                args["instruction_id"] = int(instr[r])
            if backend[r] not in (None, "None", ""):
                args["delegate_backend"] = backend[r]
            if op_types is not None and op_types[r]:
                args["op_types"] = list(op_types[r])
            p = int(parent[r])
            if p >= 0 and exported[p]:
                args["parent_event_index"] = int(ev_index[p])
            if timing[r] == "synthesized_start":
                args["synthesized_start"] = True
            if s != int(start[r]) or e != int(end[r]):
                args["adjusted"] = {"recorded_ts_us": _us(int(start[r]) - base),
                                    "recorded_dur_us": _us(int(end[r]) - int(start[r]))}
            yield {"name": names[r], "cat": kinds[r], "ph": "X", "pid": PID, "tid": _tid(int(run_idx[r])),
                   "ts": _us(s - base), "dur": _us(e - s), "args": args}

    return events(), header, stats




def reference_trace(profile: Profile, **kw) -> dict:
    events, header, stats = reference_trace_events(profile, **kw)
    return {"trace": {"traceEvents": list(events), "otherData": header}, "stats": stats}


def _us(ns: int) -> float:
    return round(ns / 1000, 3)
