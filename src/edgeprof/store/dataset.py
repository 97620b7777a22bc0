"""The history store as a folder holding a Hive-partitioned Parquet dataset
(``<table>/model=…/device=…/date=…/part-<batch>.parquet``), readable by DuckDB, Polars, Spark or Trino without
edgeprof.

Writers take ``.edgeprof.lock`` in the folder (an advisory ``flock``); a batch's files are written through the
one writer (:class:`~edgeprof.writer.Batch`: each held by its descriptor, linked into place only when all
are written, ``launches`` last), so a reader never sees a launch without its runs. Reads go through DuckDB views
over the files listed by name (the store's path is never a glob pattern), none of which may lead outside the
store; confined (``edgeprof mcp``), the files are listed and opened by the walk from the root and DuckDB reads
private copies made from those descriptors (one copy of the dataset's bytes per call). The folder is noted in
the command's scope: no other output of the command may be written inside it.

A Dask ingest stages parts in the workers under hidden names (``.part-….parquet.<random>.tmp``) that the client
renames into place or removes (:func:`stage_parts`, :func:`commit_parts`, :func:`discard_parts`): names this
ingest made, in another process — the one exception to descriptor-held temporaries.
"""

from __future__ import annotations

import contextlib
import os
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from .. import access
from ..errors import InputError, OutputError
from ..files import is_file, note_store
from .base import LOCK_TIMEOUT_DEFAULT, Base, connect
from .rows import with_partitions
from .schema import PARTITIONS, TABLES, columns, create_sql, polars_schema, stored_columns

if TYPE_CHECKING:
    import polars as pl


def write_parquet(df, f: Path, target: Path) -> None:
    """``df.write_parquet(f)``; a failure (a full disk) is one output error naming ``target``."""
    import polars as pl

    try:
        df.write_parquet(f)
    except (OSError, pl.exceptions.PolarsError) as e:
        from ..errors import output_error

        raise output_error(target, e) from None


def partition_dir(table: str, model: str, device: str, date: str) -> str:
    q = lambda v: urllib.parse.quote(str(v if v is not None else "unknown"), safe=" ")  # noqa: E731
    return f"{table}/model={q(model)}/device={q(device)}/date={q(date)}"


class ParquetStore(Base):
    kind = "parquet"

    def __init__(self, path: Path, write: bool = False, lock_timeout: float = LOCK_TIMEOUT_DEFAULT):
        super().__init__(path, write, lock_timeout)
        from ..files import exists, is_dir, probe

        self.private = None  # confined: the folder holding the copies DuckDB reads
        self.lock_id: tuple[int, int] | None = None  # the lock file, when this process made it
        if exists(path) and not is_dir(path):
            raise InputError(path, "not a folder: a Parquet history dataset is a folder (DIR/)")
        if not exists(path):
            if not write:
                raise InputError(path, "no such history dataset (create it with edgeprof ingest --store DIR/)")
            from ..outputs import make_folder

            try:
                self.created_id = make_folder(path)
            except OSError as e:
                raise OutputError(path, f"cannot create the dataset folder ({e.strerror or e})") from None
            self.created = True
        st = probe(path)
        if st is None:
            raise InputError(path, "no such history dataset")
        self.key = (st.st_dev, st.st_ino)  # the folder this store is: other outputs of the command stay out of it
        note_store(path, st, folder=True)
        if access.roots() is not None:
            import tempfile

            self.private = tempfile.mkdtemp(prefix="edgeprof-dataset-")
        self.con = connect(":memory:", allowed=[self.private or str(path)])
        self._defined: dict[str, str] = {}
        self.refresh()

    def refresh(self) -> None:
        """(Re)define one view per table over the dataset's files (an empty table when it has none)."""
        for t in TABLES:
            kind = self._defined.pop(t, None)
            if kind:
                self.execute(f'DROP {kind} "{t}"')
            # the files listed here (the store's path is a name, never a glob pattern), none leading outside
            files = self._sources(t)
            if not files:
                self.execute(create_sql(t).replace(" PRIMARY KEY", ""))
                self._defined[t] = "TABLE"
                continue
            cols = ", ".join(f'"{c}"' for c in columns(t))
            listed = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
            hive = ", ".join(f"'{p}': 'VARCHAR'" for p in PARTITIONS)
            self.execute(f"CREATE VIEW \"{t}\" AS SELECT {cols} FROM read_parquet([{listed}], hive_partitioning = true, "
                             f"union_by_name = true, hive_types = {{{hive}}})")
            self._defined[t] = "VIEW"

    @contextlib.contextmanager
    def lock(self):
        """The dataset's writer lock (waits up to ``lock_timeout`` seconds, then says so)."""
        import fcntl

        f = self._lock_file()
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

    def _lock_file(self):
        """``.edgeprof.lock``, opened without following a link (made, and remembered as this process's, if absent)."""
        import stat

        from ..errors import output_error
        from ..files import open_fd

        name = self.path / ".edgeprof.lock"
        flags = os.O_RDWR | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
        try:
            try:
                fd = open_fd(name, flags | os.O_CREAT | os.O_EXCL)
                st = os.fstat(fd)
                self.lock_id = (st.st_dev, st.st_ino)
            except FileExistsError:
                fd = open_fd(name, flags)
        except OSError as e:
            raise output_error(name, e) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise InputError(name, "is not a regular file: refused")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "r+b")

    def remove_made(self) -> None:
        """A store this call created and that failed: its lock file and the folders left empty go; nothing else
        (a folder that holds anything stays)."""
        from .base import remove_own

        if self.lock_id is not None:
            remove_own(self.path / ".edgeprof.lock", self.lock_id)
        for d in sorted((p for p in self.path.rglob("*") if p.is_dir() and not p.is_symlink()),
                        key=lambda q: len(q.parts), reverse=True):
            with contextlib.suppress(OSError):
                d.rmdir()  # only an empty folder
        try:
            st = os.stat(self.path, follow_symlinks=False)
            if (st.st_dev, st.st_ino) == self.created_id:
                self.path.rmdir()
        except OSError:
            pass

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self.private is not None:
                import shutil

                shutil.rmtree(self.private, ignore_errors=True)  # this process's own folder (mkdtemp)
                self.private = None

    def _files(self, table: str) -> list[Path]:
        from ..files import rglob

        top = os.path.realpath(self.path)
        return [f for f in rglob(self.path / table, "*.parquet") if not f.name.startswith(".") and is_file(f)
                and (access.roots() is not None or access.within(os.path.realpath(f), top))]

    def _sources(self, table: str) -> list[Path]:
        """The files DuckDB reads for ``table``: the dataset's own, or (confined) private copies of them made
        from the descriptors the walk opened, in the same layout (the partitions are read from the paths)."""
        found = self._files(table)
        if self.private is None:
            return found
        import shutil

        from ..files import open_regular

        out = []
        for f in found:
            dst = Path(self.private, *f.relative_to(self.path).parts)
            dst.parent.mkdir(parents=True, exist_ok=True)
            with open_regular(f) as src, open(dst, "wb") as d:
                shutil.copyfileobj(src, d, 1 << 20)
            out.append(dst)
        return out

    def relabel(self, updates: dict[str, dict]) -> None:
        """Give stored launches new labels (``{launch_id: {column: value}}``): the files holding them are written
        again without them, and their rows (new labels, new partitions) as a new batch, ``launches`` last."""
        import polars as pl

        from ..files import open_regular
        from ..writer import Batch
        from .base import remove_own

        if not updates:
            return
        ids = list(updates)
        moved = {t: self.query(f'SELECT * FROM "{t}" WHERE launch_id IN (SELECT unnest(?))', [ids]) for t in TABLES}
        launches = moved["launches"]
        for col in {c for new in updates.values() for c in new}:
            launches = launches.with_columns(pl.col("launch_id").replace_strict(
                {lid: new.get(col) for lid, new in updates.items() if col in new}, default=pl.col(col),
                return_dtype=launches.schema[col]).alias(col))
        moved["launches"] = launches
        emptied = []  # the files now empty (each with its device and inode, as read)
        old, new = Batch(store=self.key), Batch(store=self.key)
        try:
            for t in [x for x in TABLES if x != "launches"] + ["launches"]:
                for f in self._files(t):  # the files that held the launches, written again without them
                    with open_regular(f) as fh:
                        st = os.fstat(fh.fileno())
                        df = pl.read_parquet(fh, hive_partitioning=False)
                    keep = df.filter(~pl.col("launch_id").is_in(ids))
                    if keep.height == df.height:
                        continue
                    if keep.height == 0:
                        emptied.append((f, (st.st_dev, st.st_ino)))
                        continue
                    write_parquet(keep, old.path(f), f)
            frames = {t: moved[t].select(columns(t)).cast(polars_schema(t)) for t in TABLES}
            for target, df in dataset_parts(self.path, frames, uuid.uuid4().hex[:16]):
                write_parquet(df, new.path(target), target)
            old.commit()  # the old rows go first: a crash leaves the launch missing, never twice
        except BaseException:
            old.discard()
            new.discard()
            raise
        for f, key in emptied:
            remove_own(f, key)
        new.commit()
        self.refresh()

    def write(self, frames: dict, batch: str | None = None) -> None:
        """One batch's parts through the one writer: all of them in place, ``launches`` last, or none."""
        from ..writer import Batch

        with Batch(store=self.key) as out:
            for target, df in dataset_parts(self.path, frames, batch or uuid.uuid4().hex[:16]):
                write_parquet(df, out.path(target), target)
        self.refresh()


def dataset_parts(root: Path, frames: dict, batch: str) -> list[tuple[Path, pl.DataFrame]]:
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


def stage_parts(parts: list[tuple[Path, pl.DataFrame]]) -> list[tuple[Path, Path]]:
    """Write every part under a hidden temporary name beside its final place: [(temporary, final)]. On a failure
    the temporaries written so far are removed and an output error names the file."""
    from ..errors import output_error

    temps: list[tuple[Path, Path]] = []
    try:
        for target, df in parts:
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise output_error(target.parent, e) from None
            tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
            temps.append((tmp, target))
            write_parquet(df, tmp, target)
    except BaseException:
        discard_parts(temps)
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
