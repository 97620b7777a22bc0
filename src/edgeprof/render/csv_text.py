"""A table's CSV text, written by edgeprof's compiled core straight from the columns where it is built
(``edgeprof._core.csv_rows``), else by Polars — the same bytes either way: Polars' writer is the oracle
(tests/render/test_csv_text.py compares both on every table the commands write and on random tables).

The core formats numbers row by row (integers; floats as Polars prints them, the shortest text that reads back,
positional from 1e-5 to 1e16); a text column becomes a code per row into the cells of its distinct values, each cell
made once: the spreadsheet guard (:func:`guarded_text`, the one rule) then Polars' quoting
(a cell that is empty or holds a comma, a quote or a line break is quoted, quotes doubled). A column of a type the
core does not write (Float32, dates, lists, UInt64 past Int64) sends the whole table to Polars.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl

    from ..columns import Columns

ROWS_PER_CALL = 32768  # rows formatted per call into the core (a few MB of text)

_INT, _FLOAT, _BOOL, _CODES, _NULL = range(5)


def write_csv(table: pl.DataFrame | Columns, f, *, header: bool, scratch: bytearray | None = None) -> None:
    """Append ``table`` (a DataFrame, or plain :class:`~edgeprof.columns.Columns`) as CSV to the binary file ``f``
    (its header line first when ``header``); empty cells for nulls. The core formats into ``scratch`` (a bytearray
    reused from call to call and chunk to chunk: its pages are touched once, not once per chunk)."""
    from ..columns import Columns
    from ..compiled import module

    core = module()
    cols = None if core is None or not table.width else plain_columns(table) if isinstance(table, Columns) else columns(table)
    if cols is None:
        df = table.to_polars() if isinstance(table, Columns) else table
        guarded_text(df).write_csv(f, include_header=header, null_value="")
        return
    if header:
        f.write(header_line(table))
    scratch = bytearray() if scratch is None else scratch
    for a in range(0, table.height, ROWS_PER_CALL):
        n = core.csv_rows(cols, a, min(a + ROWS_PER_CALL, table.height), scratch)
        with memoryview(scratch) as text:
            f.write(text[:n])


def header_line(table: pl.DataFrame | Columns) -> bytes:
    """The header line Polars writes for ``table``'s columns."""
    import polars as pl

    buf = io.BytesIO()
    pl.DataFrame({n: pl.Series(n, [], dtype=pl.Int8) for n in table.columns}).write_csv(buf, include_header=True)
    return buf.getvalue()


def columns(df: pl.DataFrame) -> list | None:
    """The core's (kind, values, null mask, cells) of each column, or None when a column's type is not one it writes:
    the DataFrame taken apart into plain columns (:func:`edgeprof.columns.from_series`), then :func:`plain_columns`."""
    from ..columns import Columns, from_series

    return plain_columns(Columns({s.name: from_series(s) for s in df.get_columns()}))


def plain_columns(table: Columns) -> list | None:
    """The core's (kind, values, null mask, cells) of plain columns (:mod:`edgeprof.columns`): integers widened to
    int64, float64 and booleans as they are, text as its codes and a cell per distinct value; None when a column is
    of another type."""
    import numpy as np

    from ..columns import Text

    out: list[tuple] = []
    dtype: type[np.number]
    for c in table.columns.values():
        if isinstance(c, Text):
            out.append((_CODES, np.ascontiguousarray(c.codes, dtype=np.uint32), None, cells(c.values)))
            continue
        v = c.values
        if v.dtype == np.float64:
            kind, dtype = _FLOAT, np.float64
        elif v.dtype.kind == "b":
            kind, dtype = _BOOL, np.uint8
        elif v.dtype.kind == "i" or (v.dtype.kind == "u" and (v.dtype.itemsize < 8 or not v.size
                                                               or int(v.max()) <= np.iinfo(np.int64).max)):
            kind, dtype = _INT, np.int64
        else:  # float32 (Polars prints its own shortest form), dates, UInt64 past Int64: Polars writes the table
            return None
        mask = None if c.nulls is None or not c.nulls.any() else np.ascontiguousarray(c.nulls).view(np.uint8)
        out.append((kind, np.ascontiguousarray(v, dtype=dtype), mask, None))
    return out


def cells(values: list) -> list[bytes]:
    """The CSV cell of each text value (None: a null, an empty cell): the spreadsheet guard, then Polars' quoting."""
    import polars as pl

    shown = guarded_text(pl.DataFrame({"v": values}, schema={"v": pl.String})).to_series().to_list()
    return [b"" if v is None else quoted(v) for v in shown]


def quoted(text: str) -> bytes:
    """One text cell as Polars writes it: in quotes (quotes doubled) when empty or holding a comma, a quote or a line
    break; as it is otherwise."""
    if text == "" or any(c in text for c in ',"\n\r'):
        text = '"' + text.replace('"', '""') + '"'
    return text.encode("utf-8")


def guarded_text(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with every text cell a spreadsheet would evaluate given its leading apostrophe (the rule of
    :func:`edgeprof.conventions.csv_cell`, as one Polars expression per text column); numeric columns, and text
    columns holding no such cell (the usual case: a categorical column is checked by its distinct values), are
    left as they are."""
    import polars as pl

    from ..conventions import CSV_FORMULA, CSV_NUMBER

    fixes = []
    for name, dtype in df.schema.items():
        if dtype == pl.String:
            distinct = df[name]
        elif dtype == pl.Categorical or isinstance(dtype, (pl.Categorical, pl.Enum)):
            distinct = df[name].unique().cast(pl.String)
        else:
            continue
        if not distinct.str.contains(CSV_FORMULA).any():
            continue
        text = pl.col(name).cast(pl.String)
        fixes.append(pl.when(text.str.contains(CSV_FORMULA) & ~text.str.contains(CSV_NUMBER))
                     .then(pl.lit("'") + text).otherwise(text).alias(name))
    return df.with_columns(fixes) if fixes else df
