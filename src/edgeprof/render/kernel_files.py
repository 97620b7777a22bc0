"""A kernel table (``kernels``) as the Arm kit's ``*_kernels.csv`` (its columns first) or Parquet."""

from __future__ import annotations

from pathlib import Path

_INTS = ("count", "has_sme", "has_sme2", "asm", "tile_mr", "tile_nr", "tile_kr", "kleidiai", "first_line")


def write_kernel_table(rows: list[dict], columns: tuple[str, ...], target: Path, fmt: str = "csv") -> None:
    import polars as pl

    from ..writer import atomic_path
    from .tables import write_table

    df = pl.DataFrame({c: [r[c] if r[c] != "" else None for r in rows] for c in columns},
                      schema={c: (pl.Int64 if c in _INTS else pl.String) for c in columns})
    with atomic_path(target) as tmp:
        write_table(df, tmp, fmt)
