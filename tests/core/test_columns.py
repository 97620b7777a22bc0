"""Plain columns (edgeprof.columns): a Polars column taken apart and put back is the same column, type and nulls
included; putting it back leaves the arrays it came from as they were."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_series_equal

from edgeprof.columns import Columns, Numbers, Text, from_series, numbers

KINDS = pl.Enum(["framework", "kernel", "other"])


@pytest.mark.parametrize("s", [
    pl.Series("i8", [1, None, -128, 127], dtype=pl.Int8),
    pl.Series("i32", [5, 6, None, 5], dtype=pl.Int32),
    pl.Series("i64", [2**62, -1, 0, 3]),
    pl.Series("u32", [1, 2, None, 4], dtype=pl.UInt32),
    pl.Series("f", [0.5, None, float("nan"), -0.0]),
    pl.Series("b", [True, None, False, True]),
    pl.Series("s", ["a", None, "a", ""]),
    pl.Series("c", ["x", "y", None, "x"], dtype=pl.Categorical),
    pl.Series("k", ["kernel", "other", None, "kernel"], dtype=KINDS),
    pl.Series("none", [None] * 4, dtype=pl.Int32),
    pl.Series("nob", [None] * 4, dtype=pl.Boolean),
    pl.Series("day", [0, None, 3, 1], dtype=pl.Int32).cast(pl.Date),
])
def test_a_column_taken_apart_and_put_back_is_the_same(s):
    c = from_series(s)
    assert len(c) == s.len()
    assert_series_equal(c.series(s.name), s, check_exact=True)
    assert_series_equal(c.take(np.array([3, 0])).series(s.name), s.gather([3, 0]), check_exact=True)
    assert_series_equal(c.take(slice(1, 3)).series(s.name), s.slice(1, 2), check_exact=True)


def test_text_is_codes_into_distinct_values():
    c = from_series(pl.Series(["b", "a", "b", None, "a"], dtype=pl.Categorical))
    assert isinstance(c, Text) and len(c.values) == 3
    assert [c.values[i] for i in c.codes.tolist()] == ["b", "a", "b", None, "a"]


def test_nulls_are_set_without_touching_the_source_array():
    v = np.array([1.0, np.nan, 3.0])
    col = numbers(v, nan_is_null=True)
    s = col.series("x")
    assert s.to_list() == [1.0, None, 3.0] and np.isnan(v[1]) and v.tolist()[0::2] == [1.0, 3.0]
    assert numbers(v).series("x").is_nan().to_list() == [False, True, False]  # NaN stays NaN unless asked
    ints = np.array([4, 5, 6], dtype=np.int32)
    assert Numbers(ints, np.array([False, True, False])).series("n").to_list() == [4, None, 6]
    assert ints.tolist() == [4, 5, 6]


def test_a_table_of_columns_becomes_a_dataframe():
    t = Columns({"a": Numbers(np.arange(3)), "t": Text(np.array([1, 0, 1], np.int32), ["x", "y"], pl.Categorical)})
    assert (t.height, t.width) == (3, 2)
    df = t.to_polars()
    assert df.columns == ["a", "t"] and df["t"].to_list() == ["y", "x", "y"] and df["t"].dtype == pl.Categorical
    with pytest.raises(ValueError, match="different lengths"):
        Columns({"a": Numbers(np.arange(3)), "b": Numbers(np.arange(2))})
    assert Columns({}).height == 0
