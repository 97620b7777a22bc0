"""The history store in an embedded DuckDB file (no server).

DuckDB takes an exclusive lock on the file for a writer, so two ingests at once serialize: the second waits (up
to ``lock_timeout`` seconds) and then says who holds the lock. A batch is one transaction: all its launches are
stored, or none. A DuckDB file whose objects are not exactly edgeprof's tables (a view in place of a table,
extra tables, macros, other columns) is refused — for reading and for writing — unless it is empty. A new store
is made whole under a temporary name and linked into place; a store a call created is removed again when its
first batch fails (:meth:`~edgeprof.store.base.Base.abandon_new`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path

from .. import access
from ..errors import InputError, OutputError
from .base import LOCK_TIMEOUT_DEFAULT, Base, _duckdb, _first_line, connect
from .dataset import write_parquet
from .schema import STORE_SCHEMA_VERSION, TABLES, columns, create_sql


class DuckStore(Base):
    kind = "duckdb"

    def __init__(self, path: Path, write: bool = False, lock_timeout: float = LOCK_TIMEOUT_DEFAULT):
        super().__init__(path, write, lock_timeout)
        from ..files import check_regular

        duckdb = _duckdb()
        self.staging = None  # the folder batches are staged in (writers only)
        if not os.path.lexists(path):
            if not write:
                raise InputError(path, "no such history store (create it with edgeprof ingest --store)")
            _create_store(path)
            self.created = True
        st = check_regular(path)  # a FIFO, a device, a folder, a link outside the roots: refused unopened
        if st.st_size and not _looks_like_duckdb(path):
            raise InputError(path, "not a DuckDB history store (unrecognised file header)")
        if write:
            self.staging = tempfile.mkdtemp(prefix="edgeprof-ingest-")
        allowed = [str(path.resolve().parent)] + ([self.staging] if self.staging else [])
        waited = 0.0
        while True:
            try:
                self.con = connect(str(path), read_only=not write, allowed=allowed)
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
                self._abandon()
                raise InputError(path, f"not a DuckDB history store ({str(e).splitlines()[0]})") from None
        try:
            objs = self._objects()
            if write and objs == {}:  # an empty DuckDB file: made a store
                create_tables(self.con)
                objs = None
            self._check(objs)
        except BaseException:
            self._abandon()
            raise

    def _objects(self) -> dict[str, str]:
        """Every user object of the database: name → kind (BASE TABLE, VIEW, MACRO, …)."""
        try:
            rows = self.con.execute("SELECT table_schema || '.' || table_name, table_type FROM information_schema.tables "
                                    "WHERE table_catalog = current_database()").fetchall()
            rows += self.con.execute("SELECT schema_name || '.' || function_name, 'MACRO' FROM duckdb_functions() "
                                     "WHERE NOT internal").fetchall()
            rows += self.con.execute("SELECT schema_name || '.' || sequence_name, 'SEQUENCE' FROM duckdb_sequences() "
                                     "WHERE NOT temporary").fetchall()
        except _duckdb().Error as e:
            raise InputError(self.path, f"cannot read the history store ({_first_line(e)})") from None
        return {name: kind for name, kind in rows}

    def _check(self, objs: dict[str, str] | None = None) -> None:
        """The database holds edgeprof's tables, as base tables with edgeprof's columns, and nothing else
        (``objs``: :meth:`_objects` when just read)."""
        objs = self._objects() if objs is None else objs
        want = {f"main.{t}": "BASE TABLE" for t in [*TABLES, "store_meta"]}
        if objs != want:
            odd = sorted(f"{n.removeprefix('main.')} ({k.lower()})" for n, k in objs.items() if want.get(n) != k)
            missing = sorted(n.removeprefix("main.") for n in want if n not in objs)
            what = (f"it holds {', '.join(odd[:4])}" + (" …" if len(odd) > 4 else "")) if odd else \
                f"it lacks {', '.join(missing[:4])}"
            raise InputError(self.path, f"not an edgeprof history store ({what}): refused")
        for t, cols in TABLES.items():
            got = self.rows("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'main' "
                            "AND table_name = ? ORDER BY ordinal_position", [t])
            if [(c, d) for c, d in got] != [(c, d) for c, d in cols]:
                raise InputError(self.path, f"not an edgeprof history store (table {t} has other columns): refused")
        v = self.rows("SELECT value FROM store_meta WHERE key = 'schema_version'")
        if not v or str(v[0][0]) != str(STORE_SCHEMA_VERSION):
            raise InputError(self.path, f"history store schema {v[0][0] if v else '?'} is not the one this edgeprof "
                                        f"reads ({STORE_SCHEMA_VERSION})")

    def _abandon(self) -> None:
        if self.con is not None:
            with contextlib.suppress(Exception):
                self.con.close()
            self.con = None
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
            self.staging = None

    def close(self) -> None:
        try:
            if self.con is not None:
                self.con.close()  # checkpoints: a full disk shows here
        except _duckdb().Error as e:
            raise OutputError(self.path, f"cannot write ({_first_line(e)})") from None
        finally:
            self.con = None
            self._abandon()

    def write(self, frames: dict) -> None:
        """One batch in one transaction (staged through Parquet files in a temporary folder)."""
        tmp = tempfile.mkdtemp(dir=self.staging)
        try:
            staged = {}
            for t, df in frames.items():
                f = Path(tmp) / f"{t}.parquet"
                write_parquet(df.select(columns(t)), f, self.path)
                staged[t] = f
            self.con.execute("BEGIN TRANSACTION")
            try:
                for t, f in staged.items():
                    cols = ", ".join(f'"{c}"' for c in columns(t))
                    self.con.execute(f'INSERT INTO "{t}" ({cols}) SELECT {cols} FROM read_parquet(?)', [str(f)])
                self.con.execute("COMMIT")
            except BaseException as e:
                with contextlib.suppress(Exception):  # a failed commit may already have ended the transaction
                    self.con.execute("ROLLBACK")
                if isinstance(e, _duckdb().Error):
                    raise OutputError(self.path, f"the batch could not be stored, nothing was ({_first_line(e)})") from None
                raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


    def relabel(self, updates: dict[str, dict]) -> None:
        """Give stored launches new labels (``{launch_id: {column: value}}``), all in one transaction."""
        if not updates:
            return
        self.con.execute("BEGIN TRANSACTION")
        try:
            for lid, new in updates.items():
                sets = ", ".join(f'"{c}" = ?' for c in new)
                self.con.execute(f"UPDATE launches SET {sets} WHERE launch_id = ?", [*new.values(), lid])
            self.con.execute("COMMIT")
        except BaseException as e:
            with contextlib.suppress(Exception):
                self.con.execute("ROLLBACK")
            if isinstance(e, _duckdb().Error):
                raise OutputError(self.path, f"the launches could not be relabelled, none was ({_first_line(e)})") from None
            raise


def create_tables(con) -> None:
    for t in TABLES:
        con.execute(create_sql(t))
    con.execute("CREATE TABLE IF NOT EXISTS store_meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    con.execute("INSERT OR IGNORE INTO store_meta VALUES ('schema_version', ?)", [str(STORE_SCHEMA_VERSION)])


def _create_store(path: Path) -> None:
    """A new, empty store at ``path``, made whole under a temporary name and then linked into place (never over
    a store another edgeprof created meanwhile): a full disk leaves nothing behind."""
    from ..errors import output_error

    if not access.inside(path.parent):
        raise OutputError(path, "cannot write: " + access.outside_message())
    tmp = path.with_name(f".{path.name[:40]}.edgeprof-{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        con = connect(str(tmp), allowed=[str(path.resolve().parent)])
        try:
            create_tables(con)
        finally:
            con.close()
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another ingest created it first: use that one
        except OSError:  # no hard links on this file system
            if not os.path.lexists(path):
                os.replace(tmp, path)
    except (OSError, _duckdb().Error) as e:
        raise output_error(path, e) from None
    finally:
        for f in (tmp, Path(str(tmp) + ".wal")):
            with contextlib.suppress(OSError):
                f.unlink()


def _looks_like_duckdb(path: Path) -> bool:
    from ..files import open_regular

    with open_regular(path) as fh:
        head = fh.read(16)
    return head[8:12] == b"DUCK"
