"""The history store as a folder holding a Hive-partitioned Parquet dataset
(``<table>/model=…/device=…/date=…/part-<batch>.parquet``), readable by DuckDB, Polars, Spark or Trino without
edgeprof.

Writers take ``.edgeprof.lock`` in the folder (an advisory ``flock``); a batch's files are written under hidden
temporary names and renamed into place only when all are written (``launches`` last), so a reader never sees a
launch without its runs. Reads go through DuckDB views over the files listed by name (the store's path is never
a glob pattern), none of which may lead outside the store.
"""

from __future__ import annotations

import contextlib
import os
import time
import urllib.parse
import uuid
from pathlib import Path

from .. import access
from ..errors import InputError, OutputError
from ..files import is_file
from .base import LOCK_TIMEOUT_DEFAULT, Base, connect
from .rows import with_partitions
from .schema import PARTITIONS, TABLES, columns, create_sql, polars_schema, stored_columns


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
        from ..files import exists, is_dir

        if exists(path) and not is_dir(path):
            raise InputError(path, "not a folder: a Parquet history dataset is a folder (DIR/)")
        if not exists(path):
            if not write:
                raise InputError(path, "no such history dataset (create it with edgeprof ingest --store DIR/)")
            try:
                path.mkdir(parents=True)
                self.created = True
            except OSError as e:
                raise OutputError(path, f"cannot create the dataset folder ({e.strerror or e})") from None
        self.con = connect(":memory:", allowed=[str(path)])
        self._defined: dict[str, str] = {}
        self.refresh()

    def refresh(self) -> None:
        """(Re)define one view per table over the dataset's files (an empty table when it has none)."""
        for t in TABLES:
            kind = self._defined.pop(t, None)
            if kind:
                self.execute(f'DROP {kind} "{t}"')
            # the files listed here (the store's path is a name, never a glob pattern), none leading outside
            files = self._files(t)
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

    def _files(self, table: str) -> list[Path]:
        return sorted(f for f in (self.path / table).glob("**/*.parquet") if not f.name.startswith(".") and is_file(f)
                      and access.within(os.path.realpath(f), os.path.realpath(self.path)))

    def relabel(self, updates: dict[str, dict]) -> None:
        """Give stored launches new labels (``{launch_id: {column: value}}``): the files holding them are written
        again without them, and their rows (new labels, new partitions) as a new batch, ``launches`` last."""
        import polars as pl

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
        rewritten = []  # (temporary, final) of the files that held the launches, and the files now empty
        emptied = []
        for t in [x for x in TABLES if x != "launches"] + ["launches"]:
            for f in self._files(t):
                df = pl.read_parquet(f, hive_partitioning=False)
                keep = df.filter(~pl.col("launch_id").is_in(ids))
                if keep.height == df.height:
                    continue
                if keep.height == 0:
                    emptied.append(f)
                    continue
                tmp = f.with_name(f".{f.name}.{uuid.uuid4().hex[:8]}.tmp")
                rewritten.append((tmp, f))
                write_parquet(keep, tmp, f)
        new = stage_parts(dataset_parts(self.path, {t: moved[t].select(columns(t)).cast(polars_schema(t))
                                                     for t in TABLES}, uuid.uuid4().hex[:16]))
        commit_parts(rewritten)  # the old rows go first: a crash leaves the launch missing, never twice
        for f in emptied:
            with contextlib.suppress(OSError):
                f.unlink()
        commit_parts(new)
        self.refresh()

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
