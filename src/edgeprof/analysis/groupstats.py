"""Per-group statistics over large integer columns with numpy (no hash tables, bounded memory).

``gid`` are dense group ids (0..G-1, see :mod:`edgeprof._ids`); values are int64 nanoseconds with an
optional validity mask. Results are float arrays of length G (NaN where a group has no valid value).
"""

from __future__ import annotations

import numpy as np


def group_stats(gid: np.ndarray, values: np.ndarray, valid: np.ndarray | None = None, n_groups: int | None = None) -> dict:
    """count, sum, min, max, median (midpoint of the two middle values), sample std (ddof=1) per group."""
    G = int(n_groups if n_groups is not None else (gid.max(initial=-1) + 1))
    if valid is None or valid.all():  # the usual case: no copies
        g, v = gid, np.asarray(values, dtype=np.int64)
    else:
        g, v = gid[valid], values[valid].astype(np.int64)
    count = np.bincount(g, minlength=G).astype(np.int64)
    total = np.bincount(g, weights=v, minlength=G)
    has = count > 0
    mean = np.divide(total, count, out=np.full(G, np.nan), where=has)
    dev = v - mean[g]
    dev *= dev
    ss = np.bincount(g, weights=dev, minlength=G)
    del dev
    std = np.sqrt(np.divide(ss, count - 1, out=np.full(G, np.nan), where=count > 1))
    start = np.concatenate(([0], np.cumsum(count)[:-1]))
    lo = start + (count - 1) // 2
    hi = start + count // 2
    end = start + count - 1
    at = _sorted_within_groups(g, v, G)  # the values sorted by (group, value); at(rows, groups) reads them
    median = np.full(G, np.nan)
    vmin, vmax = np.full(G, np.nan), np.full(G, np.nan)  # each group's ends in the sorted values
    groups = np.flatnonzero(has)
    median[has] = (at(lo[has], groups).astype(np.float64) + at(hi[has], groups)) / 2
    vmin[has], vmax[has] = at(start[has], groups), at(end[has], groups)
    return {
        "count": count,
        "sum": total,
        "min": vmin,
        "max": vmax,
        "mean": mean,
        "median": median,
        "std": std,
    }


def _sorted_within_groups(g: np.ndarray, v: np.ndarray, G: int):
    """The values sorted by (group, value), as a function of (positions, the group of each). One integer sort of
    ``group × span + (value − min)`` where that fits in 63 bits (a few ms per million rows), else a two-key sort."""
    if v.size:
        low = int(v.min())
        width = int(v.max()) - low + 1
        if G * width < 1 << 62:
            key = g.astype(np.int64) * width
            key += v - low
            key.sort()
            return lambda rows, groups: key[rows] - groups * width + low
    sv = v[np.lexsort((v, g))]
    return lambda rows, groups: sv[rows]


def list_counts(gid: np.ndarray, vid: np.ndarray, values: list, n_groups: int, per: float = 1.0) -> list[dict[str, float]]:
    """Per group: how often each item of a list column occurs over the group's rows, divided by ``per``.

    The list column comes as ``vid`` (a dense id per row of its distinct lists, see
    :meth:`~edgeprof.model.Profile.op_type_groups`) and ``values`` (the list of each id), so each distinct
    list is decoded once. Multiplicity is kept — an XNNPACK call that fused three ``aten.linear`` ops counts
    three — so with ``per`` = runs this is the op types one inference executes in that group. Dicts are
    ordered by count (descending), then name.
    """
    from .._ids import dense_rows, first_index

    out: list[dict[str, float]] = [{} for _ in range(n_groups)]
    if vid.size == 0 or not any(values):
        return out
    pair = dense_rows(gid, vid)
    occ = np.bincount(pair)
    first = first_index(pair)
    for g, v, n in zip(gid[first].tolist(), vid[first].tolist(), occ.tolist()):
        for t in values[v] or ():
            out[g][t] = out[g].get(t, 0) + n
    result = []
    for d in out:
        items = sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))
        result.append({t: (n // per if n % per == 0 else round(n / per, 6)) if per != 1 else n for t, n in items})
    return result
