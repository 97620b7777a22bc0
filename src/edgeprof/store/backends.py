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
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
import urllib.parse
import uuid
from pathlib import Path

from ..errors import InputError, OutputError, UsageError
from .rows import with_partitions
from .schema import PARTITIONS, STORE_SCHEMA_VERSION, TABLES, columns, create_sql, stored_columns

DUCKDB_SUFFIXES = (".duckdb", ".db", ".ddb")
LOCK_TIMEOUT_DEFAULT = 60.0


def _duckdb():
    try:
        import duckdb
    except ImportError:  # pragma: no cover - a core dependency; a broken install only
        raise UsageError("the history store needs DuckDB: pip install duckdb") from None
    return duckdb


def is_parquet_target(path) -> bool:
    """``DIR/`` (a trailing separator), an existing folder, or a name without a DuckDB suffix that does not exist
    as a file is a Parquet dataset; ``*.duckdb``/``*.db`` a DuckDB file."""
    s = os.fspath(path)
    p = Path(s)
    if s.endswith(("/", os.sep)) or p.is_dir():
        return True
    return p.suffix.lower() not in DUCKDB_SUFFIXES and not p.exists()


def open_store(path, *, write: bool = False, lock_timeout: float = LOCK_TIMEOUT_DEFAULT):
    """The store at ``path`` (see :func:`is_parquet_target`); ``write`` creates it when absent."""
    if is_parquet_target(path):
        return ParquetStore(Path(path), write=write, lock_timeout=lock_timeout)
    return DuckStore(Path(path), write=write, lock_timeout=lock_timeout)


class _Base:
    kind = ""

    def __init__(self, path: Path, write: bool, lock_timeout: float):
        self.path = path
        self.lock_timeout = lock_timeout
        self.con = None

    def execute(self, sql: str, params=None):
        """``con.execute``, a damaged store's error as one line naming the store."""
        try:
            return self.con.execute(sql, params or [])
        except _duckdb().Error as e:
            raise InputError(self.path, f"cannot read the history store ({_first_line(e)})") from None

    def rows(self, sql: str, params=None) -> list[tuple]:
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
        return pl.DataFrame({n: _plain(data[n]) for n in names})

    def existing(self, launch_ids: list[str]) -> set[str]:
        if not launch_ids:
            return set()
        got = self.rows("SELECT launch_id FROM launches WHERE launch_id IN (SELECT unnest(?))",
                        [list(launch_ids)])
        return {r[0] for r in got}

    def counts(self) -> dict[str, int]:
        return {t: int(self.rows(f'SELECT count(*) FROM "{t}"')[0][0]) for t in TABLES}

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _first_line(e: Exception) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0][:200]


def _plain(arr):
    """numpy column from DuckDB → something Polars takes (masked arrays become lists with None)."""
    import numpy as np

    if isinstance(arr, np.ma.MaskedArray):
        if arr.mask is np.ma.nomask or not np.any(arr.mask):
            return arr.data
        return [None if m else v for v, m in zip(arr.data.tolist(), arr.mask.tolist())]
    return arr


# --------------------------------------------------------------------------------------------------
# DuckDB file
# --------------------------------------------------------------------------------------------------

class DuckStore(_Base):
    kind = "duckdb"

    def __init__(self, path: Path, write: bool = False, lock_timeout: float = LOCK_TIMEOUT_DEFAULT):
        super().__init__(path, write, lock_timeout)
        duckdb = _duckdb()
        if not write and not path.exists():
            raise InputError(path, "no such history store (create it with edgeprof ingest --store)")
        if path.exists() and path.is_file() and path.stat().st_size and not _looks_like_duckdb(path):
            raise InputError(path, "not a DuckDB history store (unrecognised file header)")
        waited = 0.0
        while True:
            try:
                self.con = duckdb.connect(str(path), read_only=not write)
                break
            except duckdb.IOException as e:
                msg = str(e)
                if "lock" not in msg.lower():
                    raise InputError(path, f"cannot open the history store ({msg.splitlines()[0]})") from None
                if waited >= lock_timeout:
                    holder = msg.split("Conflicting lock is held in", 1)[-1].strip().rstrip(".") if \
                        "Conflicting lock" in msg else "another process"
                    raise InputError(path, f"the store is locked by another edgeprof ({holder}); waited "
                                           f"{waited:.0f} s (--lock-timeout)") from None
                time.sleep(0.2)
                waited += 0.2
            except duckdb.Error as e:
                raise InputError(path, f"not a DuckDB history store ({str(e).splitlines()[0]})") from None
        if write:
            self._create()
        else:
            self._check()

    def _create(self) -> None:
        for t in TABLES:
            self.execute(create_sql(t))
        self.execute("CREATE TABLE IF NOT EXISTS store_meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
        self.execute("INSERT OR IGNORE INTO store_meta VALUES ('schema_version', ?)", [str(STORE_SCHEMA_VERSION)])
        self._check()

    def _check(self) -> None:
        try:
            v = self.con.execute("SELECT value FROM store_meta WHERE key = 'schema_version'").fetchone()
        except _duckdb().Error:
            raise InputError(self.path, "a DuckDB file, but not an edgeprof history store (no store_meta table)") from None
        if v is None or str(v[0]) != str(STORE_SCHEMA_VERSION):
            raise InputError(self.path, f"history store schema {v[0] if v else '?'} is not the one this edgeprof "
                                        f"reads ({STORE_SCHEMA_VERSION})")

    def write(self, frames: dict) -> None:
        """One batch in one transaction (staged through Parquet files in a temporary folder)."""
        with tempfile.TemporaryDirectory(prefix="edgeprof-ingest-") as tmp:
            staged = {}
            for t, df in frames.items():
                f = Path(tmp) / f"{t}.parquet"
                df.select(columns(t)).write_parquet(f)
                staged[t] = f
            self.con.execute("BEGIN TRANSACTION")
            try:
                for t, f in staged.items():
                    cols = ", ".join(f'"{c}"' for c in columns(t))
                    self.con.execute(f'INSERT INTO "{t}" ({cols}) SELECT {cols} FROM read_parquet(?)', [str(f)])
                self.con.execute("COMMIT")
            except BaseException as e:
                self.con.execute("ROLLBACK")
                if isinstance(e, _duckdb().Error):
                    raise OutputError(self.path, f"the batch could not be stored, nothing was ({str(e).splitlines()[0]})") from None
                raise


def _looks_like_duckdb(path: Path) -> bool:
    with open(path, "rb") as fh:
        head = fh.read(16)
    return head[8:12] == b"DUCK"


# --------------------------------------------------------------------------------------------------
# Hive-partitioned Parquet dataset
# --------------------------------------------------------------------------------------------------

def partition_dir(table: str, model: str, device: str, date: str) -> str:
    q = lambda v: urllib.parse.quote(str(v if v is not None else "unknown"), safe=" ")  # noqa: E731
    return f"{table}/model={q(model)}/device={q(device)}/date={q(date)}"


class ParquetStore(_Base):
    kind = "parquet"

    def __init__(self, path: Path, write: bool = False, lock_timeout: float = LOCK_TIMEOUT_DEFAULT):
        super().__init__(path, write, lock_timeout)
        if path.exists() and not path.is_dir():
            raise InputError(path, "not a folder: a Parquet history dataset is a folder (DIR/)")
        if not path.exists():
            if not write:
                raise InputError(path, "no such history dataset (create it with edgeprof ingest --store DIR/)")
            try:
                path.mkdir(parents=True)
            except OSError as e:
                raise OutputError(path, f"cannot create the dataset folder ({e.strerror or e})") from None
        self.con = _duckdb().connect()
        self._defined: dict[str, str] = {}
        self.refresh()

    def refresh(self) -> None:
        """(Re)define one view per table over the dataset's files (an empty table when it has none)."""
        for t in TABLES:
            kind = self._defined.pop(t, None)
            if kind:
                self.execute(f'DROP {kind} "{t}"')
            files = list((self.path / t).glob("**/*.parquet"))
            if not files:
                self.execute(create_sql(t).replace(" PRIMARY KEY", ""))
                self._defined[t] = "TABLE"
                continue
            cols = ", ".join(f'"{c}"' for c in columns(t))
            glob = str(self.path / t / "**" / "*.parquet").replace("'", "''")
            hive = ", ".join(f"'{p}': 'VARCHAR'" for p in PARTITIONS)
            self.execute(f"CREATE VIEW \"{t}\" AS SELECT {cols} FROM read_parquet('{glob}', hive_partitioning = true, "
                             f"union_by_name = true, hive_types = {{{hive}}})")
            self._defined[t] = "VIEW"

    @contextlib.contextmanager
    def lock(self):
        """The dataset's writer lock (waits up to ``lock_timeout`` seconds, then says so)."""
        import fcntl

        f = open(self.path / ".edgeprof.lock", "a+")
        waited = 0.0
        try:
            while True:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if waited >= self.lock_timeout:
                        raise InputError(self.path, f"the dataset is locked by another edgeprof; waited {waited:.0f} s "
                                                    "(--lock-timeout)") from None
                    time.sleep(0.2)
                    waited += 0.2
            yield
        finally:
            f.close()

    def write(self, frames: dict, batch: str | None = None) -> None:
        commit_parts(stage_parts(dataset_parts(self.path, frames, batch or uuid.uuid4().hex[:16])))
        self.refresh()


def dataset_parts(root: Path, frames: dict, batch: str) -> list[tuple[Path, object]]:
    """(final path, frame) for every partition of every table of one batch, ``launches`` last."""
    launches = frames["launches"]
    out = []
    for t in [x for x in TABLES if x != "launches"] + ["launches"]:
        df = with_partitions(t, frames[t], launches)
        if df.height == 0:
            continue
        for key, part in df.group_by(list(PARTITIONS), maintain_order=True):
            model, device, date = key
            target = root / partition_dir(t, model, device, date) / f"part-{batch}.parquet"
            out.append((target, part.select(stored_columns(t, partitioned=True))))
    return out


def stage_parts(parts: list[tuple[Path, object]]) -> list[tuple[Path, Path]]:
    """Write every part under a hidden temporary name beside its final place: [(temporary, final)]. On a failure
    the temporaries written so far are removed and an output error names the file."""
    temps: list[tuple[Path, Path]] = []
    try:
        for target, df in parts:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
            temps.append((tmp, target))
            df.write_parquet(tmp)
    except BaseException as e:
        discard_parts(temps)
        if isinstance(e, OSError):
            raise OutputError(getattr(e, "filename", None) or temps[-1][1], f"cannot write ({e.strerror or e})") from None
        raise
    return temps


def discard_parts(temps: list[tuple[Path, Path]]) -> None:
    for tmp, _ in temps:
        with contextlib.suppress(OSError):
            tmp.unlink()


def commit_parts(temps: list[tuple[Path, Path]]) -> None:
    """Rename staged parts into place, in order (``launches`` last)."""
    for tmp, target in temps:
        os.replace(tmp, target)
