"""Dense integer ids for grouping large columns without sorting: numpy, or the compiled core's one-pass loops where
it is built (:mod:`edgeprof.compiled`; the numpy code is their oracle: tests/core/test_dense_ids.py)."""

from __future__ import annotations

import numpy as np
import polars as pl

from .compiled import module


_EXACT_IN_INT64 = ("i",)  # signed integers keep their order as int64 (unsigned ones up to 32 bits, below)


def dense(v: np.ndarray) -> np.ndarray:
    """Dense ranks (0..k-1, int32) of integer values; a lookup table when the range is small, else a sort."""
    v = np.asarray(v)
    if v.size == 0:
        return v.astype(np.int32)
    core = module()
    if core is not None and (v.dtype.kind in _EXACT_IN_INT64 or (v.dtype.kind == "u" and v.dtype.itemsize <= 4)):
        out = np.empty(v.size, dtype=np.int32)
        if core.dense(np.ascontiguousarray(v.reshape(-1), dtype=np.int64), out) >= 0:
            return out.reshape(v.shape)
    if v.dtype.itemsize < 8:  # offsets from the minimum in 64 bits: an int8's would wrap
        v = v.astype(np.int64)
    lo, hi = int(v.min()), int(v.max())
    if hi - lo <= 2 * v.size + 1024:
        seen = np.zeros(hi - lo + 1, dtype=np.int32)
        off = v - lo
        seen[off] = 1
        rank = np.cumsum(seen, dtype=np.int32)
        rank -= 1
        return rank[off]
    return np.unique(v, return_inverse=True)[1].reshape(-1).astype(np.int32)


def dense_rows(*cols: np.ndarray) -> np.ndarray:
    """Dense ids (0..k-1) of the distinct rows of the given integer columns (in the order of the rows' values,
    first column first): each column's dense ids combined into one integer per row, ranked again only when the
    combination's range outgrows :func:`dense`'s lookup table (2n + 1024), so it never sorts."""
    ids = [dense(np.asarray(c).astype(np.int64, copy=False)) for c in cols]
    if not ids or ids[0].size == 0:
        return np.zeros(cols[0].size if cols else 0, dtype=np.int32)
    out = ids[0].astype(np.int64)
    width, table = int(out.max()) + 1, 2 * out.size + 1024
    for c_ids in ids[1:]:
        k = int(c_ids.max()) + 1
        if width * k > table:  # rank what is combined so far (at most n distinct: the product then fits in int64)
            out = dense(out).astype(np.int64)
            width = int(out.max()) + 1
        out *= k
        out += c_ids
        width *= k
    return dense(out) if len(ids) > 1 else ids[0]


def first_index(ids: np.ndarray) -> np.ndarray:
    """Row of the first occurrence of each id (ids dense 0..k-1)."""
    return first_rows(ids, int(ids.max(initial=-1)) + 1)


def first_rows(ids: np.ndarray, k: int) -> np.ndarray:
    """The first row of each of ``k`` group ids (−1 for a group no row has; ids need not all occur)."""
    first = np.full(k, -1, dtype=np.int64)
    core = module()
    if core is not None and ids.ndim == 1 and ids.size < np.iinfo(np.int32).max and k <= np.iinfo(np.int32).max \
            and (ids.size == 0 or (int(ids.min()) >= 0 and int(ids.max()) < k)):
        core.first_rows(np.ascontiguousarray(ids, dtype=np.int32), first)
        first[first == ids.size] = -1
        return first
    present, rows = np.unique(ids, return_index=True)
    first[present] = rows
    return first


def distinct_ids(s: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """(dense id per row, first row of each id) for any Series (nulls form their own group)."""
    if s.null_count() == s.len():  # all null (e.g. op types without an ETRecord): one group
        return np.zeros(s.len(), dtype=np.int64), np.zeros(1 if s.len() else 0, dtype=np.int64)
    if isinstance(s.dtype, (pl.Categorical, pl.Enum)):
        phys = s.to_physical()
        key = phys.to_numpy() if not phys.null_count() else phys.cast(pl.Int64).fill_null(-1).to_numpy()
    elif s.dtype.is_integer():
        key = s.cast(pl.Int64).fill_null(np.iinfo(np.int64).min).to_numpy()
    else:
        key = s.hash().to_numpy().view(np.int64)
    ids = dense(key)
    return ids, first_index(ids)

