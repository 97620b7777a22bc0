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
