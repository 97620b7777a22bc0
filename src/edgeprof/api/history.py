"""``edgeprof history`` and ``edgeprof export``: a metric per commit from a history store, its changes and their
causes; a store's tables copied to another store."""

from __future__ import annotations

import contextlib
import math
import re
from pathlib import Path
from typing import Any, cast

from ..conventions import THRESHOLD
from ..errors import UsageError
from ..files import command
from ._common import checked_threshold
from .results_history import ExportResult, HistoryResult

SERIES_KEYS = ("model", "experiment", "device", "threads")
Z = 1.959963984540054


def _metric(metric: str) -> tuple[str, str | None]:
    """``median``/``mean``/``p90`` (or the stored ``median_ms``…) → the launches' column; ``category:NAME`` and
    ``op:NAME`` → that series; ``peak_rss``, ``rss``, ``pss`` (``:PHASE``) → ("memory", "FIELD_bytes[:PHASE]")."""
    from ..conventions import MEMORY_METRICS, metric_name
    from ..store.schema import E2E_METRICS

    field, _, phase = metric.partition(":")
    if field in MEMORY_METRICS:
        if _ and not phase.strip():
            raise UsageError(f"--metric {metric}: name a phase after the colon (e.g. {field}:load) or none")
        return "memory", f"{field}_bytes:{phase.strip()}" if phase.strip() else f"{field}_bytes"
    for kind in ("category", "op"):
        if metric.startswith(kind + ":") and metric[len(kind) + 1:].strip():
            return kind, metric[len(kind) + 1:].strip()
    try:
        column = f"{metric_name(metric)}_ms"
    except ValueError:
        column = None
    if column in E2E_METRICS:
        return column, None
    if column is not None:
        raise UsageError(f"--metric {metric}: the history store keeps the median, mean and p90 of each launch")
    raise UsageError(f"--metric must be median, mean, p90, category:NAME, op:NAME, peak_rss, rss or pss (each "
                     f"also as peak_rss:PHASE …); got '{metric[:60]}'")


def store_launch_noise(store, device: str | None = None):
    """What a history store knows about launch-to-launch noise (see :func:`launch_noise_of`)."""
    from ..store.backends import open_store

    with open_store(store) as st:
        return launch_noise_of(st, device)


def launch_noise_of(st, device: str | None = None):
    """The launch SD pooled over every group of launches an open store holds for one model, experiment,
    device, thread count and commit — on ``device`` when given and stored, else on any. None when no group holds
    two launches."""
    import numpy as np

    from ..analysis import noise as nz
    from ..files import display

    rows = st.rows('SELECT model, experiment, device, threads, "commit", median_log, median_log_var, mean_log, '
                   'mean_log_var, p90_log, p90_log_var FROM launches WHERE median_log IS NOT NULL')
    if device is not None and any(r[2] == device for r in rows):
        rows = [r for r in rows if r[2] == device]
    groups: dict = {}
    for r in rows:
        groups.setdefault(tuple(r[:5]), []).append(r[5:])
    per = {}
    for m, j in (("median", 0), ("mean", 2), ("p90", 4)):
        g = [(np.array([x[j] for x in v], dtype=float), np.array([x[j + 1] or 0.0 for x in v], dtype=float))
             for v in groups.values() if len(v) >= 2 and all(x[j] is not None for x in v)]
        per[m] = nz.estimate(g)
    if per["median"] is None:
        return None
    sd, df, n = per["median"]
    where = f"history store {display(st.path)}" + (f" (device {device})" if device else "")
    return nz.measured(sd, df, n, "history store", where,
                       {m: (e[0], e[1]) for m, e in per.items() if m != "median" and e is not None})


def _where(filters: dict) -> tuple[str, list]:
    sql, params = [], []
    for col, v in filters.items():
        if v is None:
            continue
        if col == "device":  # a device is stored as "<name> — <cpu facts>": its name alone selects it
            sql.append('("device" = ? OR starts_with("device", ?))')
            params += [v, f"{v} — "]
            continue
        sql.append(f'"{col}" = ?')
        params.append(v)
    return (" WHERE " + " AND ".join(sql)) if sql else "", params


def _stored(st) -> str:
    """What an open store holds, for the next step after filters that match nothing: model on device, up to six."""
    rows = st.rows("SELECT DISTINCT model, device FROM launches ORDER BY model, device")
    text = "; ".join(f"model {m} on device {d}" for m, d in rows[:6])
    return text + (f" and {len(rows) - 6} more" if len(rows) > 6 else "")


@command
def history(store, *, model: str | None = None, experiment: str | None = None, device: str | None = None,
            threads: int | None = None, branch: str | None = None, metric: str = "median_ms",
            threshold: float = THRESHOLD, eager: bool = False, launch_cv: float | str | None = None,
            since: str | None = None, top: int = 5, lock_timeout: float = 60.0, detector: str | None = None,
            beta: float | None = None, alpha: float | None = None) -> HistoryResult:
    """Per series (model × experiment × device × threads) matching the filters: one point per commit in time
    order with a launch-aware interval, the gated changes with their attribution (see
    :mod:`edgeprof.analysis.history`), and ``regression`` — whether the newest confirmed change at or after
    ``since`` (a commit or an ISO time) is a slowdown. ``detector``/``beta`` choose the change-point candidates
    (the benchmark compares them; the defaults are the chosen ones). ``launch_cv``: a launch SD, or None / "auto"
    for the measured one."""
    from ..store.backends import open_store

    kind, name = _metric(metric)
    threshold = checked_threshold(threshold, upper=10.0)
    launch_cv = None if launch_cv == "auto" else launch_cv  # auto: measured (the default)
    where, params = _where({"model": model, "experiment": experiment, "device": device, "threads": threads,
                            "branch": branch})
    with open_store(store, lock_timeout=lock_timeout) as st:
        launches = st.query(f"SELECT * FROM launches{where} ORDER BY time, launch_id", params)
        sub = f"SELECT launch_id FROM launches{where}"
        cats = st.query(f"SELECT launch_id, category, mean_ms, mean_log, mean_log_var FROM categories "
                        f"WHERE launch_id IN ({sub})", params)
        ops = st.query(f"SELECT launch_id, operator, category, mean_ms, mean_log, mean_log_var FROM operators "
                       f"WHERE launch_id IN ({sub})", params)
        placed = st.query(f"SELECT launch_id, op_index, op_key, op_name, placement, accelerated, ms_per_run, fingerprint "
                          f"FROM placements WHERE launch_id IN ({sub}) ORDER BY launch_id, op_index", params)
        memory = st.query(f"SELECT launch_id, phase_index, phase, peak_rss_bytes, rss_bytes, pss_bytes FROM memory "
                          f"WHERE launch_id IN ({sub}) ORDER BY launch_id, phase_index", params)
        devices = sorted({d for d in launches["device"].to_list() if d is not None}) if launches.height else []
        noise = {d: launch_noise_of(st, d) for d in devices} if launch_cv is None else {}
        stored = _stored(st) if launches.height == 0 and where else ""
    if launches.height == 0:
        if not where:
            raise UsageError(f"{store}: the store holds no launches")
        raise UsageError(f"{store}: no launches match the filters; stored: {stored}")
    since_at = _since(since, launches)
    series = []
    for key, rows in launches.group_by(list(SERIES_KEYS), maintain_order=True):
        ident = dict(zip(SERIES_KEYS, key))
        s = _series(ident, rows, cats, ops, kind, name, threshold=threshold, eager=eager,
                    launch_cv=cast("float | None", launch_cv),  # ("auto" is None by now)
                    prior=noise.get(ident["device"]) if kind != "memory" else None, top=top, detector=detector,
                    beta=beta, alpha=alpha, memory=memory)
        if s is not None:
            s["placement_changes"] = _placement_changes(rows, placed)
            series.append(s)
    if not series and kind == "memory":
        phases = sorted(set(memory["phase"].to_list()))
        raise UsageError(f"no launch has '{metric}'" + (f"; phases stored: {', '.join(phases)}" if phases else
                         "; no launch in the store has recorded memory (collect with edgeprof run, then ingest)"))
    if not series:
        avail = sorted(set((cats if kind == "category" else ops)["category" if kind == "category" else "operator"]
                           .to_list()))[:12]
        raise UsageError(f"no launch has '{metric}'; stored: {', '.join(avail) or 'nothing'}")
    regression = []
    for s in series:
        gate = [c for c in s["changes"] if c["status"] in ("confirmed", "eager") and _after_since(c, s, since_at)]
        if gate and gate[-1]["direction"] == "regression":
            regression.append(f"{s['label']}: {gate[-1]['statement']}")
    fallbacks = [f"{s['label']}: {c['statement']}" for s in series for c in s["placement_changes"]
                 if c["fallbacks"] and _after_since({"commit_after": c["commit_after"], "time_after": c["time_after"]},
                                                    s, since_at)]
    return HistoryResult({"store": str(store), "metric": metric, "threshold": threshold, "eager": eager,
                          "since": since, "series": series, "regressions": regression, "fallbacks": fallbacks,
                          "method": _method_text()})


def _placement_changes(rows, placed) -> list[dict]:
    """The commits of one series where its placement changed (:func:`edgeprof.analysis.placement.placement_changes`):
    each commit's launches in time order, each launch's operators in order."""
    import polars as pl

    from ..analysis.placement_diff import placement_changes

    rows = rows.sort(["time", "launch_id"])
    keys = [c if c is not None else f"launch:{i[:12]}" for c, i in zip(rows["commit"].to_list(),
                                                                        rows["launch_id"].to_list())]
    mine = placed.filter(pl.col("launch_id").is_in(rows["launch_id"].to_list()))
    per_launch: dict[str, list[dict]] = {}
    for r in mine.iter_rows(named=True):
        per_launch.setdefault(r["launch_id"], []).append(r)
    by_commit: dict[str, list[list[dict]]] = {}
    times: dict[str, str | None] = {}
    for k, lid, t in zip(keys, rows["launch_id"].to_list(), rows["time"].to_list()):
        times.setdefault(k, t.isoformat() if t else None)
        if lid in per_launch:
            by_commit.setdefault(k, []).append(per_launch[lid])
    return placement_changes(list(dict.fromkeys(keys)), times, by_commit)


def _method_text() -> str:
    from ..analysis.history import ALPHA, CONFIRM_AFTER, DETECTOR, POSSIBLE_P, POSSIBLE_TAIL, WINDOW

    return (f"points: launches of a commit combined with launch-to-launch variance; changes: {DETECTOR} candidates "
            f"gated by a t test (p < {ALPHA:g}) on the mean level in up to {WINDOW} commits either side and a size "
            f"beyond the threshold, confirmed after {CONFIRM_AFTER} more commits; a step in the newest "
            f"{POSSIBLE_TAIL} commits that passes p < {POSSIBLE_P:g} but not yet the gate is reported as possible, "
            "with the commits that would confirm it")


def _since(since: str | None, launches) -> tuple[str | None, str | None] | None:
    """``--since`` read once, before anything is computed: a commit of the launches shown (or the one commit a
    prefix of 4+ hex digits names) as (commit, the time of its first launch); else an ISO 8601 time as (None, naive
    UTC text); else a commit id (7 to 64 hex digits) the store has no launch of — a base commit never profiled — as
    None: every change counts, as without ``--since``. Anything else is a usage error."""
    if since is None:
        return None
    text = since.strip()
    commits = launches.filter(launches["commit"].is_not_null())
    rows = commits.filter(commits["commit"] == text)
    if not rows.height and len(text) >= 4 and _HEX.fullmatch(text):
        named = commits.filter(commits["commit"].str.starts_with(text))
        if named["commit"].n_unique() == 1:
            rows = named
    if rows.height:
        t = rows["time"].min()
        return rows["commit"][0], t.isoformat() if t is not None else None
    from .ingest import parse_time

    try:
        return None, parse_time(text, what="--since").isoformat()
    except UsageError:
        pass
    if 7 <= len(text) <= 64 and _HEX.fullmatch(text):
        return None
    shown = since if len(since) <= 60 else since[:60] + "…"
    raise UsageError(f"--since '{shown}' is neither a commit of the launches shown nor an ISO 8601 time")


_HEX = re.compile(r"[0-9a-fA-F]+")


def _after_since(change: dict, s: dict, since_at: tuple[str | None, str | None] | None) -> bool:
    """Whether a change lies at or after ``--since`` (:func:`_since`): by commit order within a series that holds
    that commit, else by time."""
    if since_at is None:
        return True
    commit, t = since_at
    keys = s["commits"]
    if commit is not None and commit in keys:
        return keys.index(change["commit_after"]) >= keys.index(commit)
    return t is None or (change["time_after"] or "") >= t


def _series(ident: dict, rows, cats, ops, kind: str, name: str | None, *, threshold: float, eager: bool,
            launch_cv: float | None, top: int, prior=None, detector: str | None = None, beta: float | None = None,
            alpha: float | None = None, memory=None) -> dict | None:
    import numpy as np
    import polars as pl

    from ..analysis.history import attribute, commit_points, detect

    rows = rows.sort(["time", "launch_id"])
    if kind == "memory":  # one value per launch, no within-launch variance: launches are the replicates
        assert name is not None  # (the field, from _metric)
        y, v = _memory_values(rows, memory, name), pl.Series([0.0] * rows.height)
    elif kind == "category" or kind == "op":
        assert name is not None  # (the category or operator, from _metric)
        table, col = (cats, "category") if kind == "category" else (ops, "operator")
        m = table.filter(pl.col(col).str.to_lowercase() == name.lower()) if kind == "category" else \
            table.filter(pl.col(col) == name)
        # one row per launch and category / operator type (the summary keys them uniquely)
        joined = rows.select("launch_id").join(m.unique("launch_id", keep="first"), on="launch_id", how="left")
        y, v = joined["mean_log"], joined["mean_log_var"]
    else:
        stem = kind.removesuffix("_ms")
        y, v = rows[f"{stem}_log"], rows[f"{stem}_log_var"]
    ok = y.is_not_null().to_numpy() & np.isfinite(y.fill_null(float("nan")).to_numpy())
    if not ok.any():
        return None
    all_keys = [c if c is not None else f"launch:{i[:12]}" for c, i in zip(rows["commit"].to_list(),
                                                                          rows["launch_id"].to_list())]
    all_times: dict[str, str | None] = {}
    for k, t in zip(all_keys, rows["time"].to_list()):
        all_times.setdefault(k, t.isoformat() if t else None)
    presence = _presence(all_keys, ok, all_times, kind, name) if name is not None and kind != "memory" else []
    rows = rows.filter(pl.Series(ok))
    y_arr = y.to_numpy()[ok].astype(float)
    v_arr = v.fill_null(0.0).to_numpy()[ok].astype(float)
    keys = [c if c is not None else f"launch:{i[:12]}" for c, i in zip(rows["commit"].to_list(), rows["launch_id"].to_list())]
    pts = commit_points(keys, y_arr, v_arr, launch_cv=launch_cv, prior=prior)
    order = pts["keys"]
    k_index = {k: j for j, k in enumerate(order)}
    g = np.array([k_index[k] for k in keys])
    n = len(order)
    # per point: end-to-end mean ms and each category's / operator's mean ms (averaged over its launches)
    counts = np.bincount(g, minlength=n)
    e2e = np.bincount(g, weights=rows["mean_ms"].fill_null(0).to_numpy(), minlength=n) / counts
    lid_point = dict(zip(rows["launch_id"].to_list(), g.tolist()))

    def matrix(table, col):
        t = table.filter(pl.col("launch_id").is_in(list(lid_point)))
        names = sorted(set(t[col].to_list()))
        col_i = {x: j for j, x in enumerate(names)}
        mat = np.zeros((n, len(names)))
        if names:
            pi = np.array([lid_point[x] for x in t["launch_id"].to_list()])
            ci = np.array([col_i[x] for x in t[col].to_list()])
            np.add.at(mat, (pi, ci), t["mean_ms"].fill_null(0).to_numpy())
        return names, mat / counts[:, None]

    cat_names, cat_mat = matrix(cats, "category")
    op_names, op_mat = matrix(ops, "operator")
    first_rows: dict[str, int] = {}
    for j, k in enumerate(keys):
        first_rows.setdefault(k, j)
    times = rows["time"].to_list()
    branches = rows["branch"].to_list()
    points = []
    for j, k in enumerate(order):
        est, var = pts["estimate"][j], pts["var"][j]
        se = math.sqrt(var)
        r0 = first_rows[k]
        shares = {c: 100.0 * cat_mat[j, i] / e2e[j] for i, c in enumerate(cat_names) if e2e[j] > 0 and cat_mat[j, i]}
        unit = "bytes" if kind == "memory" else "ms"
        points.append({"commit": k, "branch": branches[r0], "time": times[r0].isoformat() if times[r0] else None,
                       "launches": pts["launches"][j], f"estimate_{unit}": math.exp(est),
                       f"ci_low_{unit}": math.exp(est - Z * se), f"ci_high_{unit}": math.exp(est + Z * se),
                       "e2e_mean_ms": float(e2e[j]), "shares_pct": shares})
    changes = []
    opts: dict[str, Any] = {k: v for k, v in (("detector", detector), ("beta", beta), ("alpha", alpha)) if v is not None}
    for c in detect(pts["estimate"], pts["var"], threshold=threshold, eager=eager, **opts):
        # a step in memory is not attributed to where the time went
        att = (attribute(c, e2e, (cat_names, cat_mat), (op_names, op_mat), top=top) if kind != "memory" else
               {"categories": [], "operators": []})
        changes.append(_change(c, att, order, points, kind, name))
    changes += presence
    changes.sort(key=lambda c: (c["time_after"] or "", c["commit_after"]))
    label = " · ".join(f"{k}={ident[k]}" for k in SERIES_KEYS if ident[k] is not None)
    return {**ident, "label": label, "points": points, "changes": changes, "commits": list(all_times), "tau": pts["tau"],
            "tau_source": pts["tau_source"], "excluded_launches": int((~ok).sum())}


def _memory_values(rows, memory, name: str):
    """Per launch (``rows``' order) the memory metric ``name`` (``FIELD_bytes`` or ``FIELD_bytes:PHASE``) as its
    natural log: the phase's value, or without a phase the largest over the launch's phases; null where not recorded."""
    import polars as pl

    field, _, phase = name.partition(":")
    m = memory.filter(pl.col(field).is_not_null() & (pl.col(field) > 0))
    m = m.filter(pl.col("phase") == phase) if phase else m
    per = m.group_by("launch_id").agg(pl.col(field).max().alias("value"))
    joined = rows.select("launch_id").join(per, on="launch_id", how="left", maintain_order="left")
    return joined["value"].cast(pl.Float64).log()


def _change(c: dict, att: dict, order: list, points: list, kind: str, name: str | None) -> dict:
    """A detected change as history reports it: where, how large, how sure, what moved and what kind of change."""
    i = c["index"]
    pct = 100 * (math.exp(c["estimate"]) - 1)
    lo, hi = 100 * (math.exp(c["low"]) - 1), 100 * (math.exp(c["high"]) - 1)
    lead = att["categories"][0] if att["categories"] else None
    what = (kind if name is None else f"{kind}:{name}") if kind != "memory" else str(name).replace("_bytes", "")
    statement = f"{what} {'+' if pct >= 0 else ''}{pct:.1f} % [{lo:+.1f}, {hi:+.1f}] at {order[i]} (after {order[i - 1]})"
    if c["status"] == "possible":
        statement = (f"possible change: {statement}; not established by the {c['commits_after'] + 1} commit(s) "
                     f"measured from it — about {c['commits_needed']} more at this level would confirm it")
    if lead and lead["share_of_change_pct"] is not None:
        statement += (f"; largest mover {lead['name']} ({lead['delta_ms']:+.3g} ms, "
                      f"{lead['share_of_change_pct']:.0f} % of the change)")
    for key, verb in (("operators_appeared", "appeared"), ("operators_disappeared", "disappeared")):
        if att.get(key):
            statement += f"; {verb}: {', '.join(att[key][:4])}" + (" …" if len(att[key]) > 4 else "")
    if att.get("kind"):
        statement += f"; {att['kind']} change"
    return {"index": i, "commit_before": order[i - 1], "commit_after": order[i], "time_after": points[i]["time"],
            "direction": c["direction"], "status": c["status"], "commits_after": c["commits_after"],
            "commits_needed": c.get("commits_needed"), "change_pct": pct, "ci_pct": [lo, hi],
            "p_value": c["p_value"], "speedup": math.exp(-c["estimate"]), "before_points": list(c["before"]),
            "after_points": list(c["after"]), "attribution": att, "kind": att.get("kind"),
            "kind_evidence": att.get("kind_evidence"), "statement": statement}


def _presence(keys: list, has, times: dict, kind: str, name: str) -> list[dict]:
    """Where a category or operator appears in or disappears from the series (commit order): a change of its
    own, confirmed once CONFIRM_AFTER more commits agree. ``has``: per launch, whether it holds the line."""
    from ..analysis.history import CONFIRM_AFTER

    order = list(dict.fromkeys(keys))
    present = dict.fromkeys(order, False)
    for k, h in zip(keys, has.tolist()):
        present[k] = present[k] or bool(h)
    seq = [present[k] for k in order]
    out = []
    for i in range(1, len(seq)):
        if seq[i] == seq[i - 1]:
            continue
        run_after = next((j for j in range(i, len(seq)) if seq[j] != seq[i]), len(seq)) - i
        run_before = i - next((j + 1 for j in range(i - 1, -1, -1) if seq[j] != seq[i - 1]), 0)
        verb = "appears" if seq[i] else "disappears"
        status = "confirmed" if run_after - 1 >= CONFIRM_AFTER else "pending"
        out.append({"index": None, "commit_before": order[i - 1], "commit_after": order[i], "time_after": times[order[i]],
                    "direction": "appeared" if seq[i] else "disappeared", "status": status,
                    "commits_after": run_after - 1, "commits_needed": None, "change_pct": None, "ci_pct": None,
                    "p_value": None, "speedup": None, "before_points": [i - run_before, i],
                    "after_points": [i, i + run_after], "attribution": None, "kind": None, "kind_evidence": None,
                    "statement": f"{kind}:{name} {verb} at {order[i]} (after {order[i - 1]}): "
                                 f"{'absent' if seq[i] else 'present'} in the {run_before} commit(s) before, "
                                 f"{'present' if seq[i] else 'absent'} in {run_after} from it on"})
    return out


@command
def export(store, target, *, lock_timeout: float = 60.0) -> ExportResult:
    """Copy every launch of ``store`` that ``target`` lacks (a Parquet dataset ``DIR/`` or a DuckDB file)."""
    from ..store.backends import open_store
    from ..store.schema import TABLES, polars_schema

    if Path(store).resolve() == Path(target).resolve():
        raise UsageError("export needs a target other than the store itself")
    with open_store(store, lock_timeout=lock_timeout) as src:
        ids = src.query("SELECT launch_id FROM launches")["launch_id"].to_list()
        with open_store(target, write=True, lock_timeout=lock_timeout) as dst:
            lock = dst.lock() if dst.kind == "parquet" else contextlib.nullcontext()
            with lock:
                have = dst.existing(ids)
                new = [i for i in ids if i not in have]
                if new:
                    dst.write({t: src.query(f'SELECT * FROM "{t}" WHERE launch_id IN (SELECT unnest(?))', [new])
                               .cast(polars_schema(t)) for t in TABLES})
                counts = dst.counts()
            kind = dst.kind
    return ExportResult({"store": str(store), "target": str(target), "target_kind": kind, "launches_copied": len(new),
                         "launches_already_there": len(ids) - len(new), "counts": counts})

