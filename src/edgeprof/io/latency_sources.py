"""Per-run end-to-end latencies from any input a user has: an ETDump, an Arm-style timeline CSV
(``*_all_runs_timeline.csv``, the kit's or ours), or a run folder and an experiment name.

Each file gives one *launch* (one process that ran the model N times): a :class:`LatencySeries`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError, UsageError
from .runfolder import ETDUMP_SUFFIXES, describe, find_etdumps, output_prefix



@dataclass
class LatencySeries:
    path: Path
    values_ms: np.ndarray
    run_indices: list[int]
    source: str  # method_execute | top_level_events
    experiment: str | None = None
    threads: int | None = None
    warnings: list[str] = field(default_factory=list)
    profile: object = None  # the Profile it came from (for category comparisons)

    @property
    def timeline_stem(self) -> str:
        """The stem the Arm kit names derived files after (``<stem>_exec_all_runs_timeline``)."""
        if self.path.suffix in ETDUMP_SUFFIXES:
            return output_prefix(self.path) + "_all_runs_timeline"
        return self.path.stem


def _series(path: Path, prof, rf, warnings: list[str]) -> LatencySeries:
    """The valid runs of a profile as a series (runs without a valid end-to-end time are left out and counted
    in the profile's warnings); run indices are the recorded ones."""
    all_ms = prof.latency_ms()
    ok = np.isfinite(all_ms) & (all_ms > 0)
    valid = prof.valid_runs()
    return LatencySeries(path, all_ms[ok], np.flatnonzero(ok).tolist(), prof.latency_source, rf.experiment, rf.threads,
                         warnings, valid)


def from_etdump(path: Path) -> LatencySeries:
    from .etdump import read_etdump

    prof = read_etdump(path)
    return _series(path, prof, describe(path), list(prof.warnings))


def from_timeline_csv(path: Path) -> LatencySeries:
    """Per-run latency from a timeline CSV (read as a profile: see :mod:`edgeprof.io.timeline_csv`)."""
    from .timeline_csv import read_timeline_csv

    prof = read_timeline_csv(path)
    warnings = list(prof.warnings)
    if prof.latency_source != "method_execute":
        warnings.append("no Method::execute rows: per-run latency is the sum of each run's top-level events")
    rf = describe(Path(str(path).replace("_exec_all_runs_timeline.csv", ".etdump")))
    return _series(path, prof, rf, warnings)


def load(path) -> LatencySeries:
    from .files import check_regular

    path = Path(path)
    check_regular(path)
    if path.suffix in ETDUMP_SUFFIXES:
        return from_etdump(path)
    if path.suffix == ".csv":
        return from_timeline_csv(path)
    raise InputError(path, "expected an ETDump (.etdump/.etdp) or a timeline CSV (*_all_runs_timeline.csv)")


def resolve(spec: str, run_dir: Path | None = None, threads: int | None = None) -> list[Path]:
    """Files named by one input: a file, a folder (every ETDump below it), or an experiment of ``run_dir``."""
    from .files import check_regular, exists, is_dir, is_file

    p = Path(spec)
    if is_file(p):
        return [p]
    if exists(p) and not is_dir(p):
        check_regular(p)  # a FIFO, a device, a socket: refused with what it is
    if is_dir(p):
        files = find_etdumps([p])
        if not files:
            files = sorted(p.rglob("*_all_runs_timeline.csv"))
        if not files:
            raise InputError(p, "no ETDump or timeline CSV below this folder")
        return _filter_threads(files, threads, p)
    if run_dir is not None:
        files = [f for f in find_etdumps([run_dir]) if describe(f).experiment == spec]
        if not files:
            csvs = [f for f in sorted(run_dir.rglob("*_all_runs_timeline.csv"))
                    if describe(Path(str(f).replace("_exec_all_runs_timeline.csv", ".etdump"))).experiment == spec]
            files = csvs
        if not files:
            known = sorted({e for e in (describe(f).experiment for f in find_etdumps([run_dir])) if e})
            raise UsageError(f"no experiment {spec!r} in {run_dir}" + (f" (experiments: {', '.join(known)})" if known else ""))
        return _filter_threads(files, threads, run_dir)
    raise InputError(p, "no such file or folder")


def _filter_threads(files: list[Path], threads: int | None, where: Path) -> list[Path]:
    if threads is not None:
        files = [f for f in files if describe(f).threads == threads]
        if not files:
            raise UsageError(f"nothing measured with {threads} thread(s) in {where}")
    counts = {describe(f).threads for f in files}
    if len(counts) > 1:
        raise UsageError(f"{where} holds runs with different thread counts {sorted(c for c in counts if c)}: "
                         "choose one with --threads")
    return files
