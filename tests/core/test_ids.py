"""Dense group ids against a plain-Python oracle (tuples in a dict), on random columns of every supported kind."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from edgeprof._ids import dense, dense_rows, distinct_ids, first_index


def _oracle(values: list) -> list[int]:
    """Same-value rows share an id, different values differ (ids in first-seen order)."""
    seen: dict = {}
    return [seen.setdefault(tuple(v) if isinstance(v, list) else ("null",) if v is None else (v,), len(seen))
            for v in values]


def _same_partition(ids: np.ndarray, oracle: list[int]) -> bool:
    pairs = set(zip(ids.tolist(), oracle))
    return len(pairs) == len(set(oracle)) == len(set(ids.tolist()))


@pytest.mark.parametrize("seed", range(6))
def test_list_ids_match_tuple_oracle(seed):
    rng = np.random.default_rng(seed)
    alphabet = ["aten.linear", "aten.add", "aten.mul", "aten.gelu", None]
    rows = []
    for _ in range(3000):
        r = rng.random()
        if r < 0.05:
            rows.append(None)
        elif r < 0.2:
            rows.append([])
        else:  # short lists mostly, a few long ones with shared prefixes
            n = int(rng.integers(1, 4 if rng.random() < 0.9 else 30))
            rows.append([alphabet[int(k)] for k in rng.integers(0, len(alphabet) - (0 if seed % 2 else 1), n)])
    for dtype in (pl.List(pl.Categorical), pl.List(pl.String)):
        s = pl.Series("op_types", rows, dtype=dtype)
        ids, first = distinct_ids(s)
        assert _same_partition(ids, _oracle(rows)), dtype
        assert ids.max() + 1 == first.size and (ids[first] == np.arange(first.size)).all()
        for k, f in enumerate(first.tolist()):
            assert f == int(np.flatnonzero(ids == k)[0])
    ints = pl.Series("x", [None if v is None else [len(t or "") for t in v] for v in rows], dtype=pl.List(pl.Int64))
    assert _same_partition(distinct_ids(ints)[0], _oracle(ints.to_list()))


def test_prefix_lists_and_null_elements_are_distinct():
    rows = [["a"], ["a", "b"], ["a", None], ["a", "b"], [None], [], None, ["a"]]
    ids, _ = distinct_ids(pl.Series("x", rows, dtype=pl.List(pl.Categorical)))
    assert _same_partition(ids, _oracle(rows))
    assert ids[1] == ids[3] and ids[0] == ids[7] and len(set(ids.tolist())) == 6


def test_dense_and_dense_rows_against_numpy_unique():
    rng = np.random.default_rng(1)
    for v in (rng.integers(-5, 50, 1000), rng.integers(0, 2**40, 1000), np.array([], dtype=np.int64)):
        assert (dense(v) == np.unique(v, return_inverse=True)[1].reshape(-1)).all()
    a, b = rng.integers(0, 7, 5000), rng.integers(0, 11, 5000)
    ids = dense_rows(a, b)
    assert _same_partition(ids, _oracle(list(zip(a.tolist(), b.tolist()))))
    assert (first_index(ids) == np.unique(ids, return_index=True)[1]).all()


@pytest.mark.parametrize("n,highs", [(5000, (7, 11, 3)), (2000, (300, 300, 50, 2)), (3, (2**40, 2, 2**62)),
                                     (0, (4, 4)), (1, (9,))])
def test_dense_rows_rank_rows_as_numpy_does(n, highs):
    """Ids in the rows' lexicographic order, as np.unique(axis=0) numbers them, whether the columns' ranges combine
    within one lookup table or outgrow it (ranked again on the way)."""
    rng = np.random.default_rng(n)
    cols = [rng.integers(0, h, n) for h in highs]
    want = np.unique(np.stack(cols, axis=1), axis=0, return_inverse=True)[1].reshape(-1) if n else np.zeros(0)
    got = dense_rows(*cols)
    assert got.dtype == np.int32 and got.tolist() == want.tolist()


@pytest.mark.parametrize("walk", ["c", "python"])
def test_first_rows_of_ids_some_absent(walk, monkeypatch):
    from testdata import need_core

    from edgeprof._ids import first_rows
    from edgeprof.conventions import CORE_ENV

    if walk == "c":
        need_core()
    monkeypatch.setenv(CORE_ENV, walk)
    ids = np.array([3, 1, 3, 0, 1, 5])
    assert first_rows(ids, 7).tolist() == [3, 1, -1, 0, -1, 5, -1]
    assert first_rows(np.zeros(0, np.int64), 2).tolist() == [-1, -1]
    assert first_rows(ids, 6).tolist() == [3, 1, -1, 0, -1, 5]


@pytest.mark.parametrize("walk", ["c", "python"])
def test_dense_ids_by_both_paths_against_numpy_unique(walk, monkeypatch):
    """The compiled core's loops (edgeprof._core.dense, first_rows) and the numpy code, each against np.unique: every
    integer type, the extremes of int64, and ranges exactly at the lookup table's bound (2n + 1024) and one past it."""
    from testdata import need_core

    from edgeprof.conventions import CORE_ENV

    if walk == "c":
        need_core()
    monkeypatch.setenv(CORE_ENV, walk)
    rng = np.random.default_rng(52)
    cases = [rng.integers(-100, 100, 3000).astype(t) for t in (np.int8, np.int16, np.int32, np.int64)]
    cases += [rng.integers(0, 200, 3000).astype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)]
    cases += [np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0, -1]),
              np.array([2**64 - 1, 0, 2**63, 5], dtype=np.uint64), np.array([7]), np.array([], dtype=np.int64)]
    for n in (1, 10, 500):
        for span in (2 * n + 1024, 2 * n + 1025):  # the table's bound and one past it: both paths give the ranks
            v = rng.integers(0, span + 1, n).astype(np.int64) - 40
            v[0], v[-1] = -40, span - 40
            cases.append(v)
    for v in cases:
        want = np.unique(v, return_inverse=True)[1].reshape(-1)
        got = dense(v)
        assert got.dtype == np.int32 and (got.reshape(-1) == want).all(), v.dtype
        if v.size:
            assert (first_index(got.reshape(-1)) == np.unique(got, return_index=True)[1]).all()


def test_the_cores_group_loops_refuse_what_they_cannot_hold():
    from testdata import need_core

    need_core()
    from edgeprof import _core

    with pytest.raises(ValueError, match="outside"):
        _core.first_rows(np.array([0, 3], np.int32), np.empty(3, np.int64))
    with pytest.raises(ValueError, match="outside"):
        _core.first_rows(np.array([0, -1], np.int32), np.empty(3, np.int64))
    with pytest.raises(ValueError):  # an output shorter than the values
        _core.dense(np.arange(5, dtype=np.int64), np.empty(4, np.int32))
    with pytest.raises(ValueError):  # values of the wrong width
        _core.dense(np.arange(5, dtype=np.int32), np.empty(5, np.int32))
    assert _core.dense(np.array([0, 10**12], np.int64), np.empty(2, np.int32)) == -1  # too wide: the caller sorts
