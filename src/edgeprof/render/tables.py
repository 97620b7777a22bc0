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

    Chunks are appended one by one to a CSV, so a large timeline never sits whole in memory; the compiled core
    writes the CSV text where it is built (:mod:`edgeprof.render.csv_text`), Polars where not — the same bytes.
    """
    import polars as pl

    from .csv_text import write_csv

    chunks = [table] if isinstance(table, pl.DataFrame) else table
    rows = 0
    if fmt == "csv":
        with open(path, "wb") as f:
            for i, chunk in enumerate(chunks):
                write_csv(chunk, f, header=(i == 0))
                rows += chunk.height
    elif fmt == "parquet":
        df = pl.concat(list(chunks), how="vertical") if not isinstance(table, pl.DataFrame) else table
        df.write_parquet(path, compression="zstd", statistics=False)
        rows = df.height
    else:  # pragma: no cover - guarded by the CLI
        raise ValueError(f"unknown table format {fmt!r}")
    return rows
