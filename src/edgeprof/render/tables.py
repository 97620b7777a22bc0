"""Tables to CSV or Parquet (atomically, via :mod:`edgeprof.writer`).

Floats are written in their shortest round-trip form; analyses round what needs rounding (ms values
derived from integer nanoseconds are exact already). In a CSV, a text cell a spreadsheet would evaluate (an
operator named ``=cmd|' /C calc'!A0``) is written with a leading apostrophe (:func:`edgeprof.conventions.csv_cell`,
undone by edgeprof's readers); numeric columns and Parquet files are written as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl

FORMATS = ("csv", "parquet")


def suffix(fmt: str) -> str:
    return "." + fmt


def write_table(table: "pl.DataFrame | Iterable[pl.DataFrame]", path: Path, fmt: str = "csv") -> int:
    """Write a table, or an iterable of same-schema chunks, to ``path``; returns the row count.

    Chunks are appended one by one to a CSV, so a large timeline never sits whole in memory.
    """
    import polars as pl

    chunks = [table] if isinstance(table, pl.DataFrame) else table
    rows = 0
    if fmt == "csv":
        with open(path, "wb") as f:
            for i, chunk in enumerate(chunks):
                guarded_text(chunk).write_csv(f, include_header=(i == 0), null_value="")
                rows += chunk.height
    elif fmt == "parquet":
        df = pl.concat(list(chunks), how="vertical") if not isinstance(table, pl.DataFrame) else table
        df.write_parquet(path, compression="zstd", statistics=False)
        rows = df.height
    else:  # pragma: no cover - guarded by the CLI
        raise ValueError(f"unknown table format {fmt!r}")
    return rows


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
