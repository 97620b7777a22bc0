"""Fuzz target for history stores handed to edgeprof: a DuckDB file and the Parquet parts of a dataset.

    python fuzz/fuzz_store.py [SECONDS]

The property: any bytes in the store file (or in one Parquet part of a dataset) give a history or one typed
error naming the store — never another exception, a hang or a crash. A failure writes the input to
fuzz/crashes/ and exits 1.

A fifth of the DuckDB cases keep every table's column names and types but redefine one column (tests/helpers/
hostile_round3.py): generated (its expression would run on every read), with a default, with a CHECK, NOT NULL or
UNIQUE: edgeprof must refuse each, naming the store, without running the expression.
"""

from __future__ import annotations

import gzip
import random
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "fuzz"))
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

from fuzz_etdump import fuzz_loop, mutate

from edgeprof.errors import InputError, UsageError


def seeds() -> tuple[bytes, dict[str, bytes]]:
    """A real DuckDB store of three fixture launches (three commits), and its Parquet export's part files."""
    from edgeprof import api

    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        for i, name in enumerate(("toycnn_xnn.N20", "tel_xnn.N20", "toycnn_xnnq8.N20")):
            p = d / f"{name}.etdp"
            p.write_bytes(gzip.decompress((ROOT / "tests" / "data" / "etdump" / f"{name}.etdp.gz").read_bytes()))
            api.ingest([p], store=d / "h.duckdb", commit=f"c{i}", model="m", device="d", experiment="e", threads=1,
                       time=f"2026-01-0{i + 1}T00:00:00")
        api.export(d / "h.duckdb", f"{d / 'ds'}/")
        parts = {str(p.relative_to(d / "ds")): p.read_bytes() for p in (d / "ds").rglob("*.parquet")}
        return (d / "h.duckdb").read_bytes(), parts


DB, PARTS = seeds()


def _ok(e: Exception, store: Path) -> None:
    assert isinstance(e, (InputError, UsageError)), f"{type(e).__name__}: {e}"
    assert "\n" not in str(e) and str(store) in str(e), str(e)


def _history(data: bytes, tmp: Path) -> tuple[Path, Exception | None]:
    """``history`` of a store holding ``data``: (the store, the edgeprof error it gave or None)."""
    from edgeprof import api

    f = tmp / "h.duckdb"
    for leftover in tmp.glob("h.duckdb*"):
        leftover.unlink()
    f.write_bytes(data)
    try:
        api.history(f)
    except Exception as e:  # noqa: BLE001 - checked
        _ok(e, f)
        return f, e
    return f, None


def check_db(data: bytes, tmp: Path) -> None:
    _history(data, tmp)


def check_part(data: bytes, tmp: Path, rel: str) -> None:
    from edgeprof import api

    ds = tmp / "ds"
    shutil.rmtree(ds, ignore_errors=True)
    for name, content in PARTS.items():
        (ds / name).parent.mkdir(parents=True, exist_ok=True)
        (ds / name).write_bytes(data if name == rel else content)
    try:
        api.history(f"{ds}/")
    except Exception as e:  # noqa: BLE001 - checked
        _ok(e, ds)


TABLES = {"launches": ["median_ms", "mean_ms", "model", "n_runs", "time"], "runs": ["latency_ms", "run_index"],
          "categories": ["share_pct", "category"], "operators": ["mean_ms", "operator"], "kernels": ["op"],
          "store_meta": ["value"]}


def redefined(rng: random.Random, tmp: Path) -> bytes:
    """The seed store with one column redefined, its name and type kept."""
    import duckdb
    import hostile_round3 as h3

    src = tmp / "seed.duckdb"
    src.write_bytes(DB)
    table = rng.choice(sorted(TABLES))
    column = rng.choice(TABLES[table])
    con = duckdb.connect(str(src))
    try:
        dtype = con.execute("SELECT data_type FROM duckdb_columns() WHERE table_name = ? AND column_name = ?",
                            [table, column]).fetchone()[0]
    finally:
        con.close()
    other = next(c for c in TABLES[table] + ["launch_id", "key"] if c != column) if table != "store_meta" else "key"
    definition = rng.choice([
        f"{dtype} GENERATED ALWAYS AS (CAST(length(repeat('x', 1000)) AS {dtype})) VIRTUAL",
        f"{dtype} GENERATED ALWAYS AS (CAST(\"{other}\" AS {dtype})) VIRTUAL",
        f"{dtype} DEFAULT (CAST(1 AS {dtype}))", f"{dtype} NOT NULL", f"{dtype} UNIQUE",
        f"{dtype} CHECK (\"{column}\" IS NOT NULL OR true)"])
    dst = tmp / "redefined.duckdb"
    for leftover in tmp.glob("redefined.duckdb*"):
        leftover.unlink()
    try:
        h3.store_with(src, dst, table, column, definition)
    except duckdb.Error:  # a definition the data cannot take (NOT NULL over NULLs, UNIQUE over repeats): plain bytes
        return DB
    finally:
        for leftover in tmp.glob("seed.duckdb*"):
            leftover.unlink()
    return dst.read_bytes()


def check_redefined(data: bytes, tmp: Path) -> None:
    _, e = _history(data, tmp)
    if e is not None:
        assert data == DB or "not an edgeprof history store" in str(e), str(e)  # refused from the catalog
        return
    assert data == DB, "a store with a redefined column was read"


def next_case(rng: random.Random, tmp: Path):
    r = rng.random()
    if r < 0.1:
        return "store-redefined", check_redefined, redefined(rng, tmp), (tmp,)
    if r < 0.5:
        return "store-duckdb", check_db, mutate(rng, DB), (tmp,)
    rel = rng.choice(sorted(PARTS))
    return "store-parquet", check_part, mutate(rng, PARTS[rel]), (tmp, rel)


if __name__ == "__main__":
    sys.exit(fuzz_loop(float(sys.argv[1]) if len(sys.argv) > 1 else 60, 4242, next_case))
