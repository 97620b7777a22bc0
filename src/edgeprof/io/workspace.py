"""A command's inputs, each discovered and read once.

A :class:`Workspace` is made from what the user named (a run folder, files, experiments of a run folder)
and the options that decide how inputs are read (an ETRecord for every ETDump, strictness, the ETRecord
method). Every reader call goes through it and is memoized by the file's real path: ``report`` reads each
ETDump once for its configuration tables, its comparison and its validation; each trace log once for the
kernel tables, the kernel view and validation; ``manifest.json`` once. ETRecords are found the same way
for every command (:func:`edgeprof.io.discovery.find_etrecord`, bounded by the folder the user named) and
parsed once each. ``reads`` counts the reads per kind, for tests and ``--verbose``.

Thread-safe: ``analyze`` reads several ETDumps in parallel threads; a file is still read once.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..conventions import OP_TYPES_ID, OP_TYPES_INLINE, OP_TYPES_MODES, OP_TYPES_REF, PROFILE_TAILS
from ..errors import ETRecordError, UsageError
from ..model import ETRecordInfo, Profile
from . import discovery, formats, runfolder, traces
from ..files import display

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

ETDUMP_SUFFIXES = runfolder.ETDUMP_SUFFIXES


@dataclass(frozen=True)
class ReadOptions:
    """How a command's inputs are read — one set per :class:`Workspace`, which owns it: the ETRecord given for
    every ETDump (``etrecord``), whether a missing or mismatched one is an error (``strict_etrecord``), the
    ETRecord's method, whether an ETRecord is looked for beside an ETDump when none is given
    (``discover_etrecord``), and whether an ETDump without runs is accepted (``allow_empty``)."""

    etrecord: Path | None = None
    strict_etrecord: bool = False
    method: str | None = None
    discover_etrecord: bool = True
    allow_empty: bool = False

    def __post_init__(self):
        if self.etrecord is not None and not isinstance(self.etrecord, Path):
            object.__setattr__(self, "etrecord", Path(self.etrecord))

    def conflicts(self, **asked) -> list[tuple[str, object, object]]:
        """The options in ``asked`` (None or a field's default: not asked) that differ from these, each as
        (name, asked, have)."""
        out = []
        for f in dataclasses.fields(self):
            if f.name not in asked:
                continue
            value = asked[f.name]
            if value is None or value == f.default:
                continue
            have = getattr(self, f.name)
            if (Path(value) if f.name == "etrecord" else value) != have:
                out.append((f.name, value, have))
        unknown = sorted(set(asked) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise TypeError(f"unknown read option(s) {', '.join(unknown)}")
        return out


@dataclass
class LatencySeries:
    """One launch (one process that ran the model N times): its valid per-run latencies and where they came
    from; ``profile`` is the profile of those runs (for category comparisons)."""

    path: Path
    values_ms: np.ndarray
    run_indices: list[int]
    source: str  # method_execute | top_level_events
    experiment: str | None = None
    threads: int | None = None
    warnings: list[str] = field(default_factory=list)
    profile: Profile | None = None

    @property
    def timeline_stem(self) -> str:
        """The stem the Arm kit names derived files after (``<stem>_exec_all_runs_timeline``)."""
        if self.path.suffix in ETDUMP_SUFFIXES or self.path.name.endswith(PROFILE_TAILS):
            return runfolder.output_prefix(self.path) + "_all_runs_timeline"
        return self.path.stem


class Workspace:
    """The inputs of one command, read at most once each (see the module docstring)."""

    def __init__(self, root=None, options: ReadOptions | None = None, *, op_types: str = OP_TYPES_INLINE, **read):
        """``options``, or the :class:`ReadOptions` fields as keywords (``etrecord=…``) — not both. ``op_types``: how
        the profiles hold an ETRecord's op-type lists — a list per event (``inline``: events column ``op_types``) or
        an id per event into :attr:`~edgeprof.model.Profile.op_type_lists` (``ref``: column ``op_types_id``; the
        commands' workspaces, whose analyses read the lists through ``Profile.op_type_groups``)."""
        if options is not None and read:
            raise TypeError("give the read options as ReadOptions or as keywords, not both")
        if op_types not in OP_TYPES_MODES:
            raise ValueError(f"op_types must be one of {', '.join(OP_TYPES_MODES)}, got {op_types!r}")
        self.op_types = op_types
        self.root = Path(root) if root is not None else None
        self.options = options if options is not None else ReadOptions(**read)
        self.reads: Counter = Counter()
        self._memo: dict = {}
        self._locks: dict = {}
        self._guard = threading.Lock()

    # the read options, by the names the readers use
    etrecord_path = property(lambda self: self.options.etrecord)
    strict_etrecord = property(lambda self: self.options.strict_etrecord)
    method = property(lambda self: self.options.method)
    discover_etrecord = property(lambda self: self.options.discover_etrecord)
    allow_empty = property(lambda self: self.options.allow_empty)

    # -- memoization --------------------------------------------------------------------------------
    def _once(self, kind: str, key, make, keep: bool = True):
        k = (kind, key)
        with self._guard:
            if k in self._memo:
                return self._memo[k]
            lock = self._locks.setdefault(k, threading.Lock())
        with lock:
            with self._guard:
                if k in self._memo:
                    return self._memo[k]
            self.reads[kind] += 1
            value = make()
            if keep:
                with self._guard:
                    self._memo[k] = value
            return value

    @staticmethod
    def key(path) -> str:
        return os.path.realpath(path)

    def root_for(self, path: Path) -> Path:
        """The folder the user named that holds ``path`` (its own folder for a file named directly)."""
        if self.root is not None:
            try:
                path.resolve().relative_to(self.root.resolve())
                return self.root
            except (ValueError, OSError):
                pass
        return path.parent

    # -- discovery ----------------------------------------------------------------------------------
    def etdumps(self, folder) -> list[Path]:
        return self._once("find_etdumps", self.key(folder), lambda: runfolder.find_etdumps([Path(folder)]))

    def trace_logs(self, run_dir) -> list[Path]:
        return self._once("find_trace_logs", self.key(run_dir), lambda: traces.find_trace_logs(Path(run_dir)))

    def kernel_tables(self, run_dir) -> list[Path]:
        return self._once("find_kernel_tables", self.key(run_dir), lambda: traces.find_kernel_tables(Path(run_dir)))

    def json_doc(self, path) -> tuple[object, str | None]:
        """A small JSON file (manifest, metrics, analysis summary): (document, problem) — never an error."""
        return self._once("json", self.key(path), lambda: runfolder.read_json_doc(Path(path)))

    def manifest(self, folder) -> tuple[dict | None, Path | None, str | None]:
        """``manifest.json`` of a run folder (or up to two levels above it): (content, path, problem)."""
        found = runfolder.manifest_path(Path(folder))
        if found is None:
            return None, None, None
        doc, problem = self.json_doc(found)
        return runfolder.manifest_of(doc, found, problem)

    def noise_profile(self, folder) -> tuple[dict | None, Path | None]:
        """``noise.json`` beside a run folder (in it or up to two levels above): (document, path); a missing,
        unreadable or foreign file is (None, path or None)."""
        found = runfolder.manifest_path(Path(folder), runfolder.NOISE)
        if found is None:
            return None, None
        doc, problem = self.json_doc(found)
        if problem is None and isinstance(doc, dict) and doc.get("kind") == "noise_profile":
            return doc, found
        return None, found

    def resolve(self, spec, run_dir=None, threads: int | None = None) -> list[Path]:
        """Files named by one input: a file, a folder (every ETDump below it, else its timeline CSVs), or an
        experiment of ``run_dir``; one thread count only."""
        return runfolder.resolve(str(spec), Path(run_dir) if run_dir is not None else None, threads, self)

    # -- reads --------------------------------------------------------------------------------------
    def etrecord(self, path, method: str | None = None):
        from .etrecord import read_etrecord

        m = method or self.method
        return self._once("etrecord", (self.key(path), m), lambda: read_etrecord(path, method=m))

    def etrecord_for(self, etdump: Path) -> tuple[Path | None, str]:
        """The ETRecord of an ETDump: the one given for every ETDump, else found beside/above it."""
        if self.etrecord_path is not None:
            return self.etrecord_path, "given"
        if not self.discover_etrecord:
            return None, "not looked for"
        manifest, mpath, _ = self.manifest(etdump.parent)
        return discovery.find_etrecord(etdump, manifest, mpath, root=self.root_for(etdump))

    def program_for(self, etdump: Path):
        """(the .pte the ETDump was recorded from, read) or None when none is found (see find_program)."""
        manifest, mpath, _ = self.manifest(etdump.parent)
        p = discovery.find_program(etdump, manifest, mpath, root=self.root_for(etdump))
        if p is None:
            return None

        def read():
            from .pte import read_pte
            return read_pte(p)
        return self._once("program", self.key(p), read)

    def profile(self, path, *, keep: bool = True, etrecord: bool = True) -> Profile:
        """An ETDump (its ETRecord attached) or a timeline CSV as a Profile, every run kept; see
        :meth:`valid_profile` for the runs statistics use. ``keep=False`` does not hold it in memory;
        ``etrecord=False`` gives the file's events as recorded, with no ETRecord looked for or read (the file
        is read once either way)."""
        path = Path(path)
        key = self.key(path)
        if not etrecord:
            with self._guard:  # the profile with its ETRecord holds the same events: serve it
                if ("profile", key) in self._memo:
                    return self._memo[("profile", key)]
            return self._once("profile_read", key, lambda: self._read_profile(path), keep=keep)

        def make():
            prof = self._with_etrecord(path, self.profile(path, keep=keep, etrecord=False),
                                       by_reference=self.op_types == OP_TYPES_REF)
            with self._guard:  # one copy of the events in memory: the bare one is no longer needed
                if ("profile_read", key) in self._memo:
                    self._memo[("profile_read", key)] = prof
            return prof

        return self._once("profile", key, make, keep=keep)

    def profile_blocks(self, path, max_events: int | None = None):
        """An ETDump in blocks of whole runs (:class:`~edgeprof.io.etdump_read.ETDumpBlocks`), each with the
        ETRecord attached as :meth:`profile` attaches it to the whole file, the op-type lists by reference
        (:attr:`~edgeprof.model.Profile.op_type_lists`: no list column): (the iterable of blocks, the reader
        whose ``warnings``/``sha256`` describe the file once the blocks are exhausted). Not memoized: this is
        for one pass over a file too large to hold."""
        from .etdump_read import BLOCK_EVENTS, ETDumpBlocks

        path = Path(path)
        reader = ETDumpBlocks(path, max_events or BLOCK_EVENTS)
        self.reads["profile_read"] += 1  # one read of the file, as a whole read is
        return (self._with_etrecord(path, block, by_reference=True) for block in reader), reader

    def same_measurement(self, a, b) -> bool:
        """Whether two inputs hold the same runs: files of one size whose profiles are equal event for event
        (a copy of a file, or the same runs written twice). Read through the workspace, so no extra read."""
        a, b = Path(a), Path(b)
        try:
            if os.path.getsize(a) != os.path.getsize(b):
                return False
        except OSError:
            return False
        pa, pb = self.profile(a), self.profile(b)
        etrecord_columns = ("delegate_backend", "backend_source", "op_types", OP_TYPES_ID, "module_path")
        return pa.runs.equals(pb.runs) and pa.events.drop(etrecord_columns, strict=False).equals(
            pb.events.drop(etrecord_columns, strict=False))

    def debug_profile(self, path, buffer=None) -> Profile:
        """:meth:`profile` with the tensors of its debug events read from its debug buffer (``buffer``, else
        ``<stem>.bin`` beside it: :mod:`edgeprof.io.debug_buffer`); ``debug_data`` stays None when there is none."""
        from .debug_buffer import debug_tensors, find_debug_buffer, read_debug_buffer

        path = Path(path)

        def make():
            prof = self.profile(path)
            buf_path = Path(buffer) if buffer is not None else find_debug_buffer(path)
            if buf_path is None:
                return prof
            self.reads["debug_buffer"] += 1
            buf = read_debug_buffer(buf_path)
            data = debug_tensors(prof.debug_events, buf, buf_path)
            return dataclasses.replace(prof, debug_data=data, warnings=list(prof.warnings))

        return self._once("debug_profile", (self.key(path), str(buffer)), make)

    def valid_profile(self, path, *, etrecord: bool = True) -> Profile:
        """The runs of :meth:`profile` with a valid end-to-end time (the others left out and counted)."""
        return self._once("valid_profile" if etrecord else "valid_profile_read", self.key(path),
                          lambda: self.profile(path, etrecord=etrecord).valid_runs())

    def _read_profile(self, path: Path) -> Profile:
        from .readers import read_profile

        return read_profile(path, allow_empty=self.allow_empty)

    def _with_etrecord(self, path: Path, prof: Profile, by_reference: bool = False) -> Profile:
        if not formats.by_name(prof.format).takes_program:
            return prof
        rec, how = self.etrecord_for(path)
        if rec is None:
            if self.strict_etrecord and self.discover_etrecord:
                raise ETRecordError(path, "no ETRecord found for this ETDump (--strict-etrecord)")
            return dataclasses.replace(prof, etrecord=ETRecordInfo(path=None, status="absent", message=how),
                                       warnings=list(prof.warnings))
        return self.attach(prof, rec, by_reference)

    def attach(self, prof: Profile, rec_path, by_reference: bool = False) -> Profile:
        """``prof`` with the ETRecord at ``rec_path`` attached (a warning, or an error when strict, if it cannot be);
        ``by_reference``: its op-type lists by id (:func:`~edgeprof.io.etrecord.enrich`)."""
        from .etrecord import enrich

        try:
            rec = self.etrecord(rec_path)
        except ETRecordError as e:
            if self.strict_etrecord:
                raise
            info = ETRecordInfo(path=str(rec_path), status="unreadable", message=e.message)
            return dataclasses.replace(prof, etrecord=info, warnings=[*prof.warnings, f"{e}; continuing without it"])
        return enrich(prof, rec, strict=self.strict_etrecord, by_reference=by_reference)

    def series(self, path) -> LatencySeries:
        """One launch's latency series (its valid runs, with the recorded run indices)."""
        path = Path(path)

        def make():
            import numpy as np

            prof = self.profile(path)
            from .litert_profile import require_runs

            require_runs(prof, path)  # an op profile of averages has no runs to put in a series
            warnings = list(prof.warnings)
            if path.suffix == ".csv" and prof.latency_source != "method_execute":
                warnings.append("no Method::execute rows: per-run latency is the sum of each run's top-level events")
            all_ms = prof.latency_ms()
            ok = np.isfinite(all_ms) & (all_ms > 0)
            rf = runfolder.describe(path)
            return LatencySeries(path, all_ms[ok], np.flatnonzero(ok).tolist(), prof.latency_source, rf.experiment,
                                 rf.threads, warnings, self.valid_profile(path))

        return self._once("series", self.key(path), make)

    def kernel_log(self, path):
        from .xnnlog import read_xnnlog

        return self._once("kernel_log", self.key(path), lambda: read_xnnlog(path))

    def kernel_csv(self, path) -> list[dict]:
        from .xnnlog import read_kernel_csv

        return self._once("kernel_csv", self.key(path), lambda: read_kernel_csv(path))

    def ane_json(self, path):
        """A parsed JSON document (anemll-profile or ane-costplan report, or any other JSON)."""
        from .anemll import load_json

        return self._once("ane_json", self.key(path), lambda: load_json(path))

    def ane_report(self, path):
        from .anemll import report_from_doc

        return self._once("ane_report", self.key(path), lambda: report_from_doc(self.ane_json(path), str(path)))

    def describe(self, path):
        return runfolder.describe(Path(path))


def specs_of(inputs) -> list[str]:
    if isinstance(inputs, (str, os.PathLike)):
        return [os.fspath(inputs)]
    out = [os.fspath(x) for x in inputs]
    if not out:
        raise UsageError("no input given")
    return out


__all__ = ["LatencySeries", "Workspace", "display", "specs_of"]
