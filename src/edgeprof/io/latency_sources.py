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

WRAPPERS = ("OPERATOR_CALL", "DELEGATE_CALL", "Method::execute", "Method::init", "Program::load_method")


@dataclass
class LatencySeries:
    path: Path
    values_ms: np.ndarray
    run_indices: list[int]
    source: str  # method_execute | top_level_events | leaf_events
    experiment: str | None = None
    threads: int | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def timeline_stem(self) -> str:
        """The stem the Arm kit names derived files after (``<stem>_exec_all_runs_timeline``)."""
        if self.path.suffix in ETDUMP_SUFFIXES:
            return output_prefix(self.path) + "_all_runs_timeline"
        return self.path.stem


def from_etdump(path: Path) -> LatencySeries:
    from .etdump import read_etdump

    prof = read_etdump(path)
    values, source = prof.latency_ms(), prof.latency_source
    rf = describe(path)
    return LatencySeries(path, values, list(range(values.size)), source, rf.experiment, rf.threads, list(prof.warnings))


def from_timeline_csv(path: Path) -> LatencySeries:
    """Per-run latency from a timeline CSV: Σ ``Method::execute`` rows per ``run_index``.

    Without ``Method::execute`` rows: Σ of the top-level rows (``depth == 0``) when the file has our
    ``depth`` column, else Σ of the non-wrapper (leaf) rows, as the kit's report falls back to.
    """
    import polars as pl

    try:
        head = pl.read_csv(path, n_rows=0)
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError) as e:
        raise InputError(path, f"not a readable CSV ({str(e).splitlines()[0]})") from None
    missing = {"name", "duration_ms"} - set(head.columns)
    if missing:
        raise InputError(path, f"not a timeline CSV: missing column(s) {', '.join(sorted(missing))}")
    cols = [c for c in ("name", "duration_ms", "run_index", "depth") if c in head.columns]
    try:
        df = pl.read_csv(path, columns=cols, schema_overrides={"name": pl.String, "duration_ms": pl.Float64,
                                                               "run_index": pl.Int64, "depth": pl.Int64})
    except (pl.exceptions.PolarsError, OSError) as e:
        raise InputError(path, f"malformed timeline CSV ({str(e).splitlines()[0]})") from None
    if "run_index" not in df.columns:
        df = df.with_columns(pl.lit(0, dtype=pl.Int64).alias("run_index"))
    df = df.filter(pl.col("duration_ms").is_not_null() & pl.col("run_index").is_not_null())
    if df.height == 0:
        raise InputError(path, "timeline CSV holds no rows with durations")
    exec_rows = df.filter(pl.col("name") == "Method::execute")
    if exec_rows.height:
        sel, source = exec_rows, "method_execute"
    elif "depth" in df.columns:
        sel, source = df.filter(pl.col("depth") == 0), "top_level_events"
    else:
        sel, source = df.filter(~pl.col("name").is_in(list(WRAPPERS))), "leaf_events"
    per_run = sel.group_by("run_index").agg(pl.col("duration_ms").sum()).sort("run_index")
    warnings = [] if source == "method_execute" else [
        f"no Method::execute rows: per-run latency is the sum of the {source.replace('_', ' ')}"]
    rf = describe(Path(str(path).replace("_exec_all_runs_timeline.csv", ".etdump")))
    return LatencySeries(path, per_run["duration_ms"].to_numpy(), per_run["run_index"].to_list(), source,
                         rf.experiment, rf.threads, warnings)


def load(path) -> LatencySeries:
    path = Path(path)
    if not path.exists():
        raise InputError(path, "no such file")
    if path.suffix in ETDUMP_SUFFIXES:
        return from_etdump(path)
    if path.suffix == ".csv":
        return from_timeline_csv(path)
    raise InputError(path, "expected an ETDump (.etdump/.etdp) or a timeline CSV (*_all_runs_timeline.csv)")


def resolve(spec: str, run_dir: Path | None = None, threads: int | None = None) -> list[Path]:
    """Files named by one input: a file, a folder (every ETDump below it), or an experiment of ``run_dir``."""
    p = Path(spec)
    if p.is_file():
        return [p]
    if p.is_dir():
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
