"""What both history stores share: the DuckDB connection every query goes through, hardened for stores that
came from elsewhere, and the store interface (queries as Polars frames, the launches already stored, counts).

A store is data from elsewhere, so DuckDB opens it with file access limited to the store's folder and the
staging folder (``allowed_directories``, then ``enable_external_access = false``, the configuration locked, no
extension loaded or installed): a view or macro that reads another file cannot.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError, UsageError
from .schema import TABLES

if TYPE_CHECKING:
    from collections.abc import Sequence

    import duckdb

LOCK_TIMEOUT_DEFAULT = 60.0


def _duckdb():
    try:
        import duckdb
    except ImportError:  # pragma: no cover - a core dependency; a broken install only
        raise UsageError("the history store needs DuckDB: pip install duckdb") from None
    return duckdb


class Base:
    kind = ""

    def __init__(self, path: Path, write: bool, lock_timeout: float):
        self.path = path
        self.lock_timeout = lock_timeout
        self.con: duckdb.DuckDBPyConnection | None = None  # open from the subclass's opening until close()
        self.created = False  # this call made the store (removed again if its first batch fails)
        self.created_id: tuple[int, int] | None = None  # what it made: device and inode

    def execute(self, sql: str, params=None):
        """``con.execute``, a damaged store's error as one line naming the store."""
        assert self.con is not None  # open until close()
        try:
            return self.con.execute(sql, params or [])
        except _duckdb().Error as e:
            raise InputError(self.path, f"cannot read the history store ({_first_line(e)})") from None

    def rows(self, sql: str, params=None) -> list[tuple]:
        assert self.con is not None  # open until close()
        try:
            return self.con.execute(sql, params or []).fetchall()
        except _duckdb().Error as e:
            raise InputError(self.path, f"cannot read the history store ({_first_line(e)})") from None

    def query(self, sql: str, params=None):
        """A query's result as a Polars frame (through numpy: no pyarrow needed)."""
        import polars as pl

        cur = self.execute(sql, params)
        names = [d[0] for d in cur.description]
        try:
            data = cur.fetchnumpy()
        except _duckdb().Error as e:
            raise InputError(self.path, f"cannot read the history store ({_first_line(e)})") from None
        return pl.DataFrame([_column(n, data[n], str(d[1])) for n, d in zip(names, cur.description)])

    def existing(self, launch_ids: list[str]) -> set[str]:
        if not launch_ids:
            return set()
        got = self.rows("SELECT launch_id FROM launches WHERE launch_id IN (SELECT unnest(?))",
                        [list(launch_ids)])
        return {r[0] for r in got}

    def verify(self) -> None:
        """Every value of every table read once (DuckDB checks each block's checksum as it reads it; a Parquet
        file is decoded whole): a damaged store is one error naming it, before anything is written into it."""
        assert self.con is not None  # open until close()
        for t in TABLES:
            try:
                self.con.execute(f'SELECT count(*), bit_xor(hash(COLUMNS(*))) FROM "{t}"').fetchall()
            except _duckdb().Error as e:
                raise InputError(self.path, f"the history store is damaged ({_first_line(e)}); refused before writing "
                                            "into it: nothing was stored") from None

    def counts(self) -> dict[str, int]:
        return {t: int(self.rows(f'SELECT count(*) FROM "{t}"')[0][0]) for t in TABLES}

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None

    def abandon_new(self) -> None:
        """After a failure: a store this call created (and so holds nothing) is removed again — only what this
        process made, each file checked by device and inode before it is unlinked (never a file found by name)."""
        if not self.created:
            return
        wal = self.own_wal()  # taken while the store is still held (a writer holds DuckDB's lock)
        with contextlib.suppress(Exception):
            self.close()
        if wal is not None:
            remove_own(*wal)
        if self.kind == "parquet":
            self.remove_made()
        else:
            remove_own(self.path, self.created_id)

    def own_wal(self):
        return None

    def remove_made(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if exc_type is not None:
            self.abandon_new()
        self.close()


def remove_own(path, key: tuple[int, int] | None) -> None:
    """Unlink ``path`` when it is the regular file ``key`` (device, inode) this process made; with ``key`` None,
    a regular file (never a link) at a name only this process uses (its pid and a random part)."""
    try:
        st = os.stat(path, follow_symlinks=False)
        if stat.S_ISREG(st.st_mode) and (key is None or (st.st_dev, st.st_ino) == tuple(key)):
            os.unlink(path)
    except OSError:
        pass


def connect(database: str, *, read_only: bool = False, allowed: Sequence[str] = ()) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection that may touch only ``allowed`` folders (besides its own database file): external
    access off, no extension autoloading or installing, configuration locked."""
    duckdb = _duckdb()
    con = duckdb.connect(database, read_only=read_only, config={"autoinstall_known_extensions": False,
                                                                "autoload_known_extensions": False})
    try:
        con.execute("SET allowed_directories = ?", [[os.path.realpath(a).rstrip(os.sep) + os.sep for a in allowed]])
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except BaseException:
        con.close()
        raise
    return con


def _first_line(e: Exception) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0][:200]


def _column(name: str, arr, duck_type: str):
    """A Polars column of the DuckDB type ``duck_type`` (so an empty or all-NULL result keeps its type)."""
    import polars as pl

    types: dict[str, pl.DataType | type[pl.DataType]] = {
        "VARCHAR": pl.Utf8, "DOUBLE": pl.Float64, "FLOAT": pl.Float64, "BIGINT": pl.Int64, "INTEGER": pl.Int64,
        "HUGEINT": pl.Int64, "SMALLINT": pl.Int64, "BOOLEAN": pl.Boolean, "TIMESTAMP": pl.Datetime("us")}
    dtype = types.get(duck_type)
    values = _plain(arr)
    if dtype is None:
        return pl.Series(name, values)
    if dtype == pl.Utf8 or len(values) == 0:
        values = list(values) if not isinstance(values, list) else values
    return pl.Series(name, values, dtype=dtype, strict=False)


def _plain(arr):
    """numpy column from DuckDB → something Polars takes (masked arrays become lists with None)."""
    import numpy as np

    if isinstance(arr, np.ma.MaskedArray):
        if arr.mask is np.ma.nomask or not np.any(arr.mask):
            return arr.data
        return [None if m else v for v, m in zip(arr.data.tolist(), np.ma.getmaskarray(arr).tolist())]
    return arr
