"""The two history stores behind one interface.

* :class:`DuckStore` — an embedded DuckDB file (no server). DuckDB takes an exclusive lock on the file for a
  writer, so two ingests at once serialize: the second waits (up to ``lock_timeout`` seconds) and then says
  who holds the lock. A batch is one transaction: all its launches are stored, or none.
* :class:`ParquetStore` — a folder holding a Hive-partitioned Parquet dataset
  (``<table>/model=…/device=…/date=…/part-<batch>.parquet``), readable by DuckDB, Polars, Spark or Trino
  without edgeprof. Writers take ``.edgeprof.lock`` in the folder (an advisory ``flock``); a batch's files
  are written under hidden temporary names and renamed into place only when all are written (``launches``
  last), so a reader never sees a launch without its runs.

Both answer queries through DuckDB (the Parquet dataset as views), so the history analyses issue the same
SQL whichever store holds the data. Rows are staged through Parquet files (DuckDB reads them natively), which
keeps pyarrow out of the core install.

Each kind lives in its own module (:mod:`.duck`, :mod:`.dataset`) over what they share (:mod:`.base`: the
hardened DuckDB connection and the interface).
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import access
from .base import LOCK_TIMEOUT_DEFAULT
from .dataset import ParquetStore
from .duck import DuckStore

DUCKDB_SUFFIXES = (".duckdb", ".db", ".ddb")


def is_parquet_target(path) -> bool:
    """``DIR/`` (a trailing separator), an existing folder, or a name without a DuckDB suffix that does not exist
    as a file is a Parquet dataset; ``*.duckdb``/``*.db`` a DuckDB file."""
    s = os.fspath(path)
    p = Path(s)
    if s.endswith(("/", os.sep)) or p.is_dir():
        return True
    return p.suffix.lower() not in DUCKDB_SUFFIXES and not p.exists()


def open_store(path, *, write: bool = False, lock_timeout: float = LOCK_TIMEOUT_DEFAULT):
    """The store at ``path`` (see :func:`is_parquet_target`); ``write`` creates it when absent, and reads an
    existing store whole first (:meth:`~.base.Base.verify`): nothing is written into a damaged store."""
    access.check(path)
    kind = ParquetStore if is_parquet_target(path) else DuckStore
    st = kind(Path(path), write=write, lock_timeout=lock_timeout)
    if write and not st.created:
        try:
            st.verify()
        except BaseException:
            st.close()
            raise
    return st
