"""A table as plain columns: numbers as numpy arrays (with a null mask where they have nulls), text as a code per
row into the column's distinct values.

The large tables (the timelines: a row per event) are built this way, so the compiled core writes their CSV straight
from the arrays — no DataFrame of the event count is made on the way (:func:`edgeprof.render.csv_text.write_csv`).
:meth:`Columns.to_polars` gives the same table as a Polars DataFrame (Parquet, the pure-Python path, the API), and
the two writers are held to the same bytes by tests/render/test_csv_text.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import polars as pl


@dataclass(frozen=True)
class Text:
    """A text column: ``codes[i]`` (≥ 0) indexes ``values`` (str, or None for a null); ``dtype`` is its Polars type
    (Categorical, an Enum, or String). A value may repeat in ``values`` (two codes can show the same text)."""

    codes: np.ndarray
    values: list
    dtype: pl.DataType | type[pl.DataType] | None = None

    def __len__(self) -> int:
        return len(self.codes)

    def take(self, rows: slice | np.ndarray) -> Text:
        return Text(self.codes[rows], self.values, self.dtype)

    def series(self, name: str) -> pl.Series:
        import polars as pl

        return pl.Series(name, self.values, dtype=self.dtype or pl.Categorical).gather(self.codes)


@dataclass(frozen=True)
class Numbers:
    """A numeric column: ``values`` (numpy; its dtype is the column's) and ``nulls`` (bool per row, or None)."""

    values: np.ndarray
    nulls: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.values)

    def take(self, rows: slice | np.ndarray) -> Numbers:
        return Numbers(self.values[rows], None if self.nulls is None else self.nulls[rows])

    def series(self, name: str) -> pl.Series:
        import numpy as np
        import polars as pl

        s = pl.Series(name, self.values)
        if self.nulls is not None and self.nulls.any():
            s = s.scatter(np.flatnonzero(self.nulls), None)
        return s


Column = Text | Numbers


def numbers(values: np.ndarray, nan_is_null: bool = False) -> Numbers:
    """A numeric column of ``values``; with ``nan_is_null`` its NaNs are nulls (an empty CSV cell, not ``NaN``)."""
    import numpy as np

    return Numbers(values, np.isnan(values) if nan_is_null else None)


def from_series(s: pl.Series) -> Column:
    """A Polars column as a plain column: text as codes into its distinct values (found in one pass); anything else
    as numpy values and a null mask (a column of type Null: int8 zeros, every row null)."""
    import numpy as np
    import polars as pl

    from ._ids import distinct_ids

    if s.dtype == pl.String or isinstance(s.dtype, (pl.Categorical, pl.Enum)):
        ids, first = distinct_ids(s)
        return Text(ids.astype(np.int32, copy=False), s.gather(first).cast(pl.String).to_list(), s.dtype)
    if s.dtype == pl.Null:
        return Numbers(np.zeros(s.len(), dtype=np.int8), np.ones(s.len(), dtype=bool))
    if s.null_count():
        filled = s.fill_null(strategy="forward").fill_null(strategy="backward")  # any value: the mask hides it
        if filled.null_count():  # every row null
            filled = pl.repeat(0, s.len(), eager=True).cast(s.dtype)
        return Numbers(filled.to_numpy(), s.is_null().to_numpy())
    return Numbers(s.to_numpy())


class Columns:
    """Named columns of equal length, in order."""

    def __init__(self, columns: dict[str, Column]):
        self.columns = columns
        lengths = {len(c) for c in columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns of different lengths: {sorted(lengths)}")
        self.height = lengths.pop() if lengths else 0

    @property
    def width(self) -> int:
        return len(self.columns)

    def to_polars(self) -> pl.DataFrame:
        import polars as pl

        return pl.DataFrame([c.series(name) for name, c in self.columns.items()])
