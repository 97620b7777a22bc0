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

ROWS_PER_CALL = 32768  # rows formatted per call into the core (a few MB of text)

_INT, _FLOAT, _BOOL, _CODES, _NULL = range(5)


def write_csv(df: "pl.DataFrame", f, *, header: bool) -> None:
    """Append ``df`` as CSV to the binary file ``f`` (its header line first when ``header``); empty cells for nulls."""
    from ..compiled import module

    core = module()
    cols = columns(df) if core is not None and df.width else None
    if cols is None:
        guarded_text(df).write_csv(f, include_header=header, null_value="")
        return
    if header:
        f.write(header_line(df))
    for a in range(0, df.height, ROWS_PER_CALL):
        f.write(core.csv_rows(cols, a, min(a + ROWS_PER_CALL, df.height)))


def header_line(df: "pl.DataFrame") -> bytes:
    """The header line Polars writes for ``df``'s columns."""
    buf = io.BytesIO()
    df.clear().write_csv(buf, include_header=True)
    return buf.getvalue()


def columns(df: "pl.DataFrame") -> list | None:
    """The core's (kind, values, null mask, cells) of each column, or None when a column's type is not one it writes."""
    import numpy as np
    import polars as pl

    out = []
    for s in df.get_columns():
        dt = s.dtype
        mask = s.is_null().to_numpy().view(np.uint8) if s.null_count() else None
        if dt == pl.Null:
            out.append((_NULL, None, None, None))
        elif dt.is_integer():
            if dt == pl.UInt64 and s.len() and (s.max() or 0) > np.iinfo(np.int64).max:
                return None
            v = s.fill_null(0) if mask is not None else s
            out.append((_INT, np.ascontiguousarray(v.to_numpy(), dtype=np.int64), mask, None))
        elif dt == pl.Float64:
            v = s.fill_null(0.0) if mask is not None else s
            out.append((_FLOAT, np.ascontiguousarray(v.to_numpy(), dtype=np.float64), mask, None))
        elif dt == pl.Boolean:
            v = s.fill_null(False) if mask is not None else s
            out.append((_BOOL, np.ascontiguousarray(v.to_numpy(), dtype=np.uint8), mask, None))
        elif dt == pl.String or isinstance(dt, (pl.Categorical, pl.Enum)):
            out.append(_text_column(s))
        else:
            return None
    return out


def _text_column(s: "pl.Series") -> tuple:
    import numpy as np
    import polars as pl

    from .._ids import distinct_ids

    ids, first = distinct_ids(s)
    values = s.gather(first).cast(pl.String)
    shown = guarded_text(pl.DataFrame({"v": values})).to_series().to_list()
    cells = [b"" if v is None else quoted(v) for v in shown]  # a null is an empty cell
    return _CODES, np.ascontiguousarray(ids, dtype=np.uint32), None, cells


def quoted(text: str) -> bytes:
    """One text cell as Polars writes it: in quotes (quotes doubled) when empty or holding a comma, a quote or a line
    break; as it is otherwise."""
    if text == "" or any(c in text for c in ',"\n\r'):
        text = '"' + text.replace('"', '""') + '"'
    return text.encode("utf-8")


def guarded_text(df: "pl.DataFrame") -> "pl.DataFrame":
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
