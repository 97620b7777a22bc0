"""Tables to CSV or Parquet (atomically, via :mod:`edgeprof.writer`).

Floats are written in their shortest round-trip form; analyses round what needs rounding (ms values
derived from integer nanoseconds are exact already). In a CSV, a text cell a spreadsheet would evaluate (an
operator named ``=cmd|' /C calc'!A0``) is written with a leading apostrophe (:func:`edgeprof.conventions.csv_cell`,
undone by edgeprof's readers); numeric columns and Parquet files are written as they are.
"""

from __future__ import annotations

from pathlib import Path
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl

    from ..columns import Columns

FORMATS = ("csv", "parquet")


def suffix(fmt: str) -> str:
    return "." + fmt


def write_table(table: pl.DataFrame | Columns | Iterable[pl.DataFrame | Columns], path: Path, fmt: str = "csv") -> int:
    """Write a table, or an iterable of same-schema chunks (DataFrames or plain :class:`~edgeprof.columns.Columns`),
    to ``path``; returns the row count.

    Chunks are appended one by one to a CSV, so a large timeline never sits whole in memory; the compiled core
    writes the CSV text where it is built (:mod:`edgeprof.render.csv_text`), Polars where not — the same bytes.
    """
    import polars as pl

    from ..columns import Columns
    from .csv_text import write_csv

    whole = isinstance(table, (pl.DataFrame, Columns))
    chunks = [table] if isinstance(table, (pl.DataFrame, Columns)) else table
    rows = 0
    if fmt == "csv":
        scratch = bytearray()  # the core's text, one buffer for every chunk
        with open(path, "wb") as f:
            for i, chunk in enumerate(chunks):
                write_csv(chunk, f, header=(i == 0), scratch=scratch)
                rows += chunk.height
    elif fmt == "parquet":
        frames = [c.to_polars() if isinstance(c, Columns) else c for c in chunks]
        df = frames[0] if whole else pl.concat(frames, how="vertical")
        df.write_parquet(path, compression="zstd", statistics=False)
        rows = df.height
    else:  # pragma: no cover - guarded by the CLI
        raise ValueError(f"unknown table format {fmt!r}")
    return rows
