"""Launch records (identity + the summary's rows) as one Polars frame per table, typed by :mod:`.schema`."""

from __future__ import annotations

from .schema import TABLES, columns, polars_schema


def frames(records: list[tuple[dict, dict]]) -> dict:
    """``records``: (identity, rows) per launch — identity holds ``launches``' columns that are not metrics
    (launch_id, model, device, date, commit, …); rows is :func:`edgeprof.analysis.launch_summary.launch_record`.
    Returns table name → frame with exactly the schema's columns (missing values null)."""
    import polars as pl

    out: dict[str, list[dict]] = {t: [] for t in TABLES}
    for ident, rec in records:
        lid = ident["launch_id"]
        out["launches"].append({**rec["launch"], **ident})
        for table in ("runs", "categories", "operators", "kernels", "placements", "memory"):
            out[table].extend({**r, "launch_id": lid} for r in rec.get(table, ()))
    result = {}
    for table, rows in out.items():
        schema = polars_schema(table)
        cols = columns(table)
        data = {c: [r.get(c) for r in rows] for c in cols}
        result[table] = pl.DataFrame(data, schema=schema)
    return result


def with_partitions(table: str, frame, launches):
    """A child table's frame with the partition keys of its launch (for the Parquet dataset)."""
    if table == "launches":
        return frame
    return frame.join(launches.select("launch_id", "model", "device", "date"), on="launch_id", how="left")
