"""The history store's tables, defined once for both backends (an embedded DuckDB file and a Hive-partitioned
Parquet dataset): column names, DuckDB types and the Polars types the Parquet files are written with.

One row of ``launches`` per launch (one ETDump or timeline CSV), keyed by ``launch_id`` — the SHA-256 of the
file's bytes, so the same profile ingested twice is stored once. The other tables hang off ``launch_id``.
Times are ms (column names say so); ``*_log`` is the natural log of the value and ``*_log_var`` the sampling
variance of that log within the launch (what a launch-aware interval per commit needs).
In the Parquet dataset every table is partitioned ``model=/device=/date=`` (``date`` = the launch's UTC date);
partition values are written percent-encoded (``/`` → ``%2F``) as Hive does.
"""

from __future__ import annotations

STORE_SCHEMA_VERSION = 3
# tables a store of an older schema may lack (version → the tables added after it): opened for writing, the store
# gains them (and the current version); opened for reading, they read as empty
ADDED_SINCE = {1: ("placements",), 2: ("memory",)}
PARTITIONS = ("model", "device", "date")

_D, _S, _I, _L, _B, _T = "DOUBLE", "VARCHAR", "INTEGER", "BIGINT", "BOOLEAN", "TIMESTAMP"

TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "launches": (
        ("launch_id", _S), ("model", _S), ("device", _S), ("date", _S), ("experiment", _S), ("platform", _S),
        ("fingerprint", _S), ("threads", _I), ("commit", _S), ("branch", _S), ("time", _T), ("labels", _S),
        ("source", _S), ("source_kind", _S), ("n_runs", _I), ("latency_source", _S),
        ("median_ms", _D), ("median_log", _D), ("median_log_var", _D),
        ("p90_ms", _D), ("p90_log", _D), ("p90_log_var", _D),
        ("mean_ms", _D), ("mean_log", _D), ("mean_log_var", _D),
        ("sme_executed", _B), ("kleidiai_executed", _B), ("kleidiai_share", _D),
        ("taxonomy_version", _S), ("edgeprof_version", _S), ("ingested_at", _T),
    ),
    "runs": (("launch_id", _S), ("run_index", _I), ("latency_ms", _D)),
    "categories": (("launch_id", _S), ("category", _S), ("mean_ms", _D), ("mean_log", _D), ("mean_log_var", _D),
                   ("share_pct", _D)),
    "operators": (("launch_id", _S), ("operator", _S), ("category", _S), ("backend", _S), ("calls_per_run", _D),
                  ("mean_ms", _D), ("mean_log", _D), ("mean_log_var", _D)),
    "kernels": (("launch_id", _S), ("op", _S), ("category", _S), ("marker", _S), ("implies", _S),
                ("calls_per_run", _D), ("ms_per_run", _D), ("evidence", _S), ("source", _S)),
    # where each operator ran (edgeprof placement): op_key pairs an operator across launches; fingerprint is the
    # launch's placement digest (the same on each of its rows)
    "placements": (("launch_id", _S), ("op_index", _I), ("op_key", _S), ("op_name", _S), ("placement", _S),
                   ("accelerated", _B), ("ms_per_run", _D), ("fingerprint", _S)),
    # what edgeprof run measured of the launch's process per phase (edgeprof.collect.procmem), in bytes
    "memory": (("launch_id", _S), ("phase_index", _I), ("phase", _S), ("peak_rss_bytes", _L), ("rss_bytes", _L),
               ("pss_bytes", _L)),
}
# the metrics ``history --metric`` takes besides ``category:NAME`` and ``op:NAME`` (launches' columns)
E2E_METRICS = ("median_ms", "p90_ms", "mean_ms")
# and the memory metrics (edgeprof.conventions.MEMORY_METRICS), from the memory table


def columns(table: str) -> list[str]:
    return [c for c, _ in TABLES[table]]


def stored_columns(table: str, partitioned: bool) -> list[str]:
    """The columns a table's files hold: in the Parquet dataset the partition keys live in the folder names."""
    return [c for c in columns(table) if not (partitioned and c in PARTITIONS)]


def polars_schema(table: str, partitioned: bool = False) -> dict:
    import polars as pl

    types = {_D: pl.Float64, _S: pl.String, _I: pl.Int32, _L: pl.Int64, _B: pl.Boolean, _T: pl.Datetime("us")}
    return {c: types[t] for c, t in TABLES[table] if not (partitioned and c in PARTITIONS)}


def create_sql(table: str) -> str:
    cols = ", ".join(f'"{c}" {t}' + (" PRIMARY KEY" if table == "launches" and c == "launch_id" else "")
                     for c, t in TABLES[table])
    return f'CREATE TABLE IF NOT EXISTS "{table}" ({cols})'


# What a DuckDB store's tables are, as its catalog says: every column's type, default, nullability and whether (and
# how) it is generated, every constraint, every index. A generated column's expression runs on every read and a
# default or CHECK expression on every write: a store is read only when this is exactly what edgeprof creates.
_COLUMNS_SQL = ("SELECT table_name, column_index, column_name, data_type, column_default, is_nullable, is_generated, "
                "generation_expression FROM duckdb_columns() WHERE database_name = current_database() "
                "AND schema_name = 'main' ORDER BY table_name, column_index")
_CONSTRAINTS_SQL = ("SELECT table_name, constraint_type, constraint_text FROM duckdb_constraints() "
                    "WHERE database_name = current_database() ORDER BY ALL")
_INDEXES_SQL = ("SELECT table_name, index_name FROM duckdb_indexes() WHERE database_name = current_database() "
                "ORDER BY ALL")
_expected: dict | None = None


def _catalog(con) -> dict:
    return {"columns": con.execute(_COLUMNS_SQL).fetchall(), "constraints": con.execute(_CONSTRAINTS_SQL).fetchall(),
            "indexes": con.execute(_INDEXES_SQL).fetchall()}


def _column_text(row) -> str:
    _, _, name, dtype, default, nullable, generated, expression = row
    out = f"{name} {dtype}"
    if generated:
        out += f" GENERATED ALWAYS AS ({expression})"
    elif default is not None:
        out += f" DEFAULT {default}"
    if not nullable:
        out += " NOT NULL"
    return out if len(out) <= 100 else out[:100] + "…"


def definition_problem(con, create_tables, lacking: tuple[str, ...] = ()) -> str | None:
    """Why the tables of the DuckDB store open on ``con`` are not defined as edgeprof defines them — a generated
    column, a default, a constraint or an index edgeprof does not create, a nullability that differs — or None.
    ``create_tables(con)`` makes edgeprof's tables: what they are is read from an in-memory database it made."""
    global _expected
    if _expected is None:
        import duckdb

        mem = duckdb.connect(":memory:")
        try:
            create_tables(mem)
            _expected = _catalog(mem)
        finally:
            mem.close()
    got = _catalog(con)
    expected = {k: [r for r in v if r[0] not in lacking] for k, v in _expected.items()}
    want_cols = {(r[0], r[1]): r for r in expected["columns"]}
    for row in got["columns"]:
        want = want_cols.get((row[0], row[1]))
        if want is None or tuple(row) != tuple(want):
            what = f"column {_column_text(row)}" + (f" where edgeprof has {_column_text(want)}" if want else "")
            return f"not an edgeprof history store (table {row[0]}: {what}): refused"
    if len(got["columns"]) != len(expected["columns"]):
        return "not an edgeprof history store (a table lacks columns): refused"
    for kind in ("constraints", "indexes"):
        extra = sorted(set(got[kind]) - set(expected[kind]))
        if extra or len(got[kind]) != len(expected[kind]):
            shown = ", ".join(" ".join(str(x) for x in r)[:80] for r in extra[:2]) or "other ones"
            return f"not an edgeprof history store ({kind} edgeprof does not create: {shown}): refused"
    return None


def check_definitions(con, path, create_tables, lacking: tuple[str, ...] = ()) -> None:
    """:func:`definition_problem` as the one-line input error naming the store."""
    import duckdb

    from ..errors import InputError

    try:
        why = definition_problem(con, create_tables, lacking)
    except duckdb.Error as e:
        raise InputError(path, f"cannot read the history store ({str(e).strip().splitlines()[0][:200]})") from None
    if why is not None:
        raise InputError(path, why)
