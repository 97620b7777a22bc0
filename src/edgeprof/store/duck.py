"""The history store in an embedded DuckDB file (no server).

DuckDB takes an exclusive lock on the file for a writer, so two ingests at once serialize: the second waits (up
to ``lock_timeout`` seconds) and then says who holds the lock. A batch is one transaction: all its launches are
stored, or none. A DuckDB file whose objects are not exactly edgeprof's tables (a view in place of a table,
extra tables, macros, other columns) is refused — for reading and for writing — unless it is empty. A new store
is made whole under a temporary name and linked into place; a store a call created is removed again when its
first batch fails (:meth:`~edgeprof.store.base.Base.abandon_new`) — only while it is still the file this call
made.

DuckDB opens its database by name (and reopens ``/proc/self/fd/N`` by the name it resolves to, and makes its
``.wal`` by name), so the open rule of :mod:`edgeprof.files` — the file checked is the file used — is kept
another way: the store is opened and checked once through :func:`~edgeprof.files.open_regular`, and then

* **confined, for reading** (``history`` under ``edgeprof mcp``): DuckDB reads a private copy made from that
  descriptor (with its ``.wal``, if any) in a folder of this process's own, removed when the store is closed —
  one copy of the store's bytes per call;
* **otherwise** (the CLI, the API, and writing a store — ``ingest`` — which is the documented exception): DuckDB
  opens the name, and the store is used only when a descriptor DuckDB holds is that same file (device and inode,
  read from ``/proc/self/fd``); a name swapped in between is refused.

Either way the store (and its ``.wal``) is noted in the command's scope: no output of the command may replace it.

**The write-ahead log.** DuckDB opens ``<store>.wal`` by name, following a link: it replays it when it opens the
store (a FIFO there would block forever) and creates and writes it at a write (through a link: over the file it
names, which may be an input of the command; a dangling link makes DuckDB create its target). So
(:func:`check_wal`) before DuckDB opens a store, and again right before each write transaction, ``<store>.wal``
must be absent or a regular file with one name (never a link, a hard link, a FIFO, a device) that is no input of
the command — else one line, exit 2; and after each write the log DuckDB holds is audited as the store is: the
regular file at that name, held by this process. What remains is a race no check by name can close: someone who
may write into the store's folder swapping a link in between the last check and DuckDB's open of the log in the
same transaction (microseconds) — the audit then reports it, after the fact. A store folder others may write
into should have the sticky bit (Linux then refuses to follow their links there: ``fs.protected_symlinks``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import time
import uuid
from pathlib import Path

from .. import access
from ..errors import InputError, OutputError
from ..files import note_store, open_regular
from .base import LOCK_TIMEOUT_DEFAULT, Base, _duckdb, _first_line, connect, remove_own
from .dataset import write_parquet
from .schema import ADDED_SINCE, STORE_SCHEMA_VERSION, TABLES, check_definitions, columns, create_sql


class DuckStore(Base):
    kind = "duckdb"

    def __init__(self, path: Path, write: bool = False, lock_timeout: float = LOCK_TIMEOUT_DEFAULT):
        super().__init__(path, write, lock_timeout)
        duckdb = _duckdb()
        self.write_mode = write
        self.staging = None  # the folder batches are staged in (writers only)
        self.private = None  # confined readers: the folder holding the private copy DuckDB reads
        if not os.path.lexists(path):
            if not write:
                raise InputError(path, "no such history store (create it with edgeprof ingest --store)")
            self.created_id = _create_store(path)
            self.created = True
        with open_regular(path) as fh:  # a FIFO, a device, a folder, a link outside the roots: refused unopened
            st = os.fstat(fh.fileno())
            if st.st_size and fh.read(16)[8:12] != b"DUCK":
                raise InputError(path, "not a DuckDB history store (unrecognised file header)")
            note_store(path, st, sidecars=(".wal",))
            try:
                check_wal(path)  # DuckDB replays it when it opens the store
            except InputError:
                if self.created:  # the empty store this call made goes again (only while it is that file)
                    remove_own(path, self.created_id)
                raise
            key = (st.st_dev, st.st_ino)
            if access.roots() is not None and not write:
                self.private = _private_copy(fh, path)
        if write:
            self.staging = tempfile.mkdtemp(prefix="edgeprof-ingest-")
        if self.private is not None:
            database, allowed = os.path.join(self.private, "store.duckdb"), [self.private]
        else:
            database, allowed = str(path), [str(path.resolve().parent)] + ([self.staging] if self.staging else [])
        waited = 0.0
        while True:
            try:
                self.con = connect(database, read_only=not write, allowed=allowed)
                break
            except duckdb.IOException as e:
                msg = str(e)
                if "lock" not in msg.lower():
                    self._abandon()
                    raise InputError(path, f"cannot open the history store ({msg.splitlines()[0]})") from None
                if waited >= lock_timeout:
                    self._abandon()
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
            if self.private is None and _holds(key) is False:
                raise InputError(path, "changed while it was opened (the file DuckDB opened is not the one checked): "
                                       "refused")
            objs: dict[str, str] | None = self._objects()
            if write and objs == {}:  # an empty DuckDB file: made a store
                with self.writing():
                    create_tables(self.con)
                objs = None
            self._check(objs)
        except BaseException:
            self._abandon()
            raise

    def _objects(self) -> dict[str, str]:
        """Every user object of the database: name → kind (BASE TABLE, VIEW, MACRO, …)."""
        assert self.con is not None  # open until close()
        try:
            rows = self.con.execute("SELECT table_schema || '.' || table_name, table_type FROM information_schema.tables "
                                    "WHERE table_catalog = current_database()").fetchall()
            rows += self.con.execute("SELECT schema_name || '.' || function_name, 'MACRO' FROM duckdb_functions() "
                                     "WHERE NOT internal").fetchall()
            rows += self.con.execute("SELECT schema_name || '.' || sequence_name, 'SEQUENCE' FROM duckdb_sequences() "
                                     "WHERE NOT temporary").fetchall()
        except _duckdb().Error as e:
            raise InputError(self.path, f"cannot read the history store ({_first_line(e)})") from None
        return dict(rows)

    def _check(self, objs: dict[str, str] | None = None) -> None:
        """The database holds edgeprof's tables, as base tables with edgeprof's columns, and nothing else
        (``objs``: :meth:`_objects` when just read). A store of an older schema that lacks only the tables added
        since (:data:`~edgeprof.store.schema.ADDED_SINCE`) is upgraded when opened for writing, and read with those
        tables empty otherwise."""
        objs = self._objects() if objs is None else objs
        want = {f"main.{t}": "BASE TABLE" for t in [*TABLES, "store_meta"]}
        lacking: tuple[str, ...] = ()
        older_version = STORE_SCHEMA_VERSION
        older = self._older(objs, want)
        if older is not None:
            older_version, lacking = older
            assert self.con is not None  # open until close()
            if self.write_mode:
                with self.writing():
                    for t in lacking:
                        self.con.execute(create_sql(t))
                    self.con.execute("UPDATE store_meta SET value = ? WHERE key = 'schema_version'",
                                     [str(STORE_SCHEMA_VERSION)])
                objs, lacking = self._objects(), ()
            else:
                for t in lacking:  # this connection only: the file is not touched
                    self.con.execute(create_sql(t).replace("CREATE TABLE IF NOT EXISTS", "CREATE TEMP TABLE")
                                     .replace(" PRIMARY KEY", ""))
                objs = {**objs, **{f"main.{t}": "BASE TABLE" for t in lacking}}
        if objs != want:
            odd = sorted(f"{n.removeprefix('main.')} ({k.lower()})" for n, k in objs.items() if want.get(n) != k)
            missing = sorted(n.removeprefix("main.") for n in want if n not in objs)
            what = (f"it holds {', '.join(odd[:4])}" + (" …" if len(odd) > 4 else "")) if odd else \
                f"it lacks {', '.join(missing[:4])}"
            raise InputError(self.path, f"not an edgeprof history store ({what}): refused")
        for t, cols in TABLES.items():
            if t in lacking:
                continue
            got = self.rows("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'main' "
                            "AND table_name = ? ORDER BY ordinal_position", [t])
            if [(c, d) for c, d in got] != [(c, d) for c, d in cols]:
                raise InputError(self.path, f"not an edgeprof history store (table {t} has other columns): refused")
        check_definitions(self.con, self.path, create_tables, lacking)  # generated columns, defaults, constraints, indexes
        v = self.rows("SELECT value FROM store_meta WHERE key = 'schema_version'")
        ok = str(STORE_SCHEMA_VERSION) if not lacking else str(older_version)
        if not v or str(v[0][0]) != ok:
            raise InputError(self.path, f"history store schema {v[0][0] if v else '?'} is not the one this edgeprof "
                                        f"reads ({STORE_SCHEMA_VERSION})")

    def _older(self, objs: dict[str, str], want: dict[str, str]) -> tuple[int, tuple[str, ...]] | None:
        """(its schema version, the tables it lacks) when the store is of an older schema lacking exactly the tables
        added since; None otherwise."""
        missing = {n.removeprefix("main.") for n in want if n not in objs}
        if not missing or any(n not in want for n in objs):
            return None
        try:
            v = self.rows("SELECT value FROM store_meta WHERE key = 'schema_version'")
        except _duckdb().Error:
            return None
        version = int(v[0][0]) if v and str(v[0][0]).isdigit() else None
        added = tuple(t for old, ts in ADDED_SINCE.items() if version is not None and old >= version for t in ts)
        return (version, added) if version is not None and missing == set(added) else None

    def _abandon(self) -> None:
        if self.con is not None:
            with contextlib.suppress(Exception):
                self.con.close()
            self.con = None
        for attr in ("staging", "private"):  # folders this process made for itself (mkdtemp, mode 0700)
            if getattr(self, attr) is not None:
                shutil.rmtree(getattr(self, attr), ignore_errors=True)
                setattr(self, attr, None)

    @contextlib.contextmanager
    def writing(self):
        """A write to the store: the ``.wal`` checked right before (:func:`check_wal`) and audited after — the log
        DuckDB holds is the regular file at ``<store>.wal`` (when there is one now), held by this process."""
        check_wal(self.path)
        yield
        st = check_wal(self.path, audit=True)
        if st is not None and _holds((st.st_dev, st.st_ino)) is False:
            raise OutputError(self.path, "the write-ahead log DuckDB wrote is not the file at "
                                         f"{os.path.basename(self.path)}.wal (a link or another file was put in its "
                                         "place while the batch was stored): stopped — check the store's folder")

    def own_wal(self):
        """(the ``.wal`` path, its device and inode) while this process holds a store it created, else None."""
        wal = Path(str(self.path) + ".wal")
        try:
            st = os.stat(wal, follow_symlinks=False)
        except OSError:
            return None
        return wal, (st.st_dev, st.st_ino)

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
            with self.writing():
                self._insert(staged)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _insert(self, staged: dict) -> None:
        assert self.con is not None  # open until close()
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

    def relabel(self, updates: dict[str, dict]) -> None:
        """Give stored launches new labels (``{launch_id: {column: value}}``), all in one transaction."""
        if not updates:
            return
        with self.writing():
            self._relabel(updates)

    def _relabel(self, updates: dict[str, dict]) -> None:
        assert self.con is not None  # open until close()
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


def _create_store(path: Path) -> tuple[int, int]:
    """A new, empty store at ``path``, made whole under a temporary name and then linked into place (never over
    a store another edgeprof created meanwhile): a full disk leaves nothing behind. Returns the device and inode
    of the file made (what :meth:`~edgeprof.store.base.Base.abandon_new` may remove again)."""
    from ..errors import output_error

    if not access.inside(path.parent):
        raise OutputError(path, "cannot write: " + access.outside_message())
    tmp = path.with_name(f".{path.name[:40]}.edgeprof-{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    made: dict[Path, tuple[int, int]] = {}  # what this call made, by device and inode
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        con = connect(str(tmp), allowed=[str(path.resolve().parent)])
        try:
            check_wal(tmp)
            create_tables(con)
            for f in (tmp, Path(str(tmp) + ".wal")):
                with contextlib.suppress(OSError):
                    st = os.stat(f, follow_symlinks=False)
                    made[f] = (st.st_dev, st.st_ino)
        finally:
            con.close()
        key = made[tmp]
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another ingest created it first: use that one
        except OSError:  # no hard links on this file system
            if not os.path.lexists(path):
                os.replace(tmp, path)
        return key
    except (OSError, _duckdb().Error) as e:
        raise output_error(path, e) from None
    finally:  # the temporary names are this call's (its pid and a random part): only its own files go
        for f in (tmp, Path(str(tmp) + ".wal")):
            remove_own(f, made.get(f))


def check_wal(path, *, audit: bool = False) -> os.stat_result | None:
    """The rule for ``<path>.wal``, which DuckDB opens by name and follows: absent (None), or a regular file with one
    name that is no input of the running command — its status, noted in the command's scope as part of the store
    (no output may replace it). Else one line (exit 2). Looked at through its folder's descriptor, never followed
    (confined: the folder walked from the root). ``audit``: after a write (the error says what DuckDB did)."""
    from ..files import open_fd, scopes
    from ..outputs import DIRFD, close_fd

    wal = Path(f"{os.fspath(path)}.wal")
    shown = os.fsdecode(os.fspath(wal))
    try:
        fd = open_fd(wal.parent, DIRFD)
    except OSError:
        return None  # no folder to look in: DuckDB will not find one either
    try:
        st = os.stat(wal.name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise InputError(path, f"cannot look at its write-ahead log {wal.name} ({e.strerror or e})") from None
    finally:
        close_fd(fd)
    why = None
    if stat.S_ISLNK(st.st_mode):
        why = "is a symbolic link"
    elif not stat.S_ISREG(st.st_mode):
        why = "is not a regular file (a FIFO, device, socket or folder)"
    elif st.st_nlink > 1:
        why = f"has {st.st_nlink} names (hard links)"
    else:
        key = (st.st_dev, st.st_ino)
        for s in scopes():
            with s.lock:
                inp = s.inputs.get(key)
            if inp is not None and inp != shown:
                why = f"is an input of this command ({inp})"
    if why is not None:
        did = "and DuckDB opened it by name as it wrote: stopped" if audit else "and DuckDB opens it by name: refused"
        raise InputError(path, f"its write-ahead log {wal.name} {why}, {did}")
    note_store(wal, st)
    return st


def _holds(key: tuple[int, int]) -> bool | None:
    """Whether a descriptor of this process is the file ``key`` (device, inode): DuckDB's, once it opened the
    store by name. None where there is no ``/proc`` to tell."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return None
    for n in names:
        try:
            st = os.stat(f"/proc/self/fd/{n}")
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == key:
            return True
    return False


def _private_copy(fh, path: Path) -> str:
    """A folder of this process's own holding ``store.duckdb`` copied from the open store ``fh`` (and its
    ``.wal``, opened the same way, when there is one): what a confined reader lets DuckDB open."""
    from ..errors import output_error
    from ..files import exists

    folder = tempfile.mkdtemp(prefix="edgeprof-store-")
    try:
        _copy(fh, os.path.join(folder, "store.duckdb"))
        wal = Path(str(path) + ".wal")
        if exists(wal):  # (a link or another file in its place: refused by check_wal before)
            with open_regular(wal) as w:
                _copy(w, os.path.join(folder, "store.duckdb.wal"))
    except OSError as e:
        shutil.rmtree(folder, ignore_errors=True)
        raise output_error(folder, e) from None
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder


def _copy(src, dst: str) -> None:
    src.seek(0)
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    with os.fdopen(fd, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
