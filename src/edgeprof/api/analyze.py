"""``edgeprof analyze``: every ETDump of a run folder → the Arm kit's CSVs and ``analysis_summary.json``."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .._memory import release_free_memory
from ..conventions import OP_TYPES_ID, OP_TYPES_INLINE, OP_TYPES_MODES, OP_TYPES_REF, profile_stem
from ..errors import ETRecordError, InputError, UsageError
from ..files import command, display, exists
from ..io.runfolder import SUMMARY
from ..io.workspace import Workspace
from ..model import ReadWhole
from ._common import KeptStream, as_list, common_root, rel, taxonomy_of, workspace
from .results import AnalyzeResult


def _targets(out_dir: Path, names: dict) -> dict:
    return {"csv_timeline_all": out_dir / names["timeline_all"], "csv_timeline": out_dir / names["timeline_run0"],
            "csv_stats": out_dir / names["ops_stats"]}


def _planned(f: Path, out_dir: Path, fmt: str, op_types: str) -> list[Path]:
    """Every file :func:`_analyze_one` may write for ``f`` (the op-type lists beside each timeline included)."""
    from ..io.runfolder import analysis_files
    from ..io.timeline_csv import op_types_file
    from ..render.tables import suffix

    t = _targets(out_dir, analysis_files(f, suffix(fmt)))
    if (fmt, op_types) != ("csv", OP_TYPES_REF):
        return list(t.values())
    return [*t.values(), *(op_types_file(t[k]) for k in ("csv_timeline_all", "csv_timeline"))]


class _Planned:
    """An output not opened yet, as :func:`edgeprof.outputs.conflict` looks at it (its folder by descriptor)."""

    store, again = None, False

    def __init__(self, target: Path, dir_fd: int):
        self.target, self.name, self.dir_fd = target, target.name, dir_fd


def _check_outputs(files: list[Path], plan: list[tuple[str, list[Path]]]) -> None:
    """The output rule for the whole command before anything is written, wherever the writing happens (threads
    in any order; Dask workers, whose scope knows only their own file): every input is noted first, then each
    planned output is checked by the writer's own rule (:func:`edgeprof.outputs.conflict`: not an input, not a
    store, not written already) and against every other planned output (two inputs mapping to one name).
    ``plan``: (whose output, the targets) pairs. An :class:`~edgeprof.errors.OutputError` names the first."""
    import stat

    from .. import access
    from ..errors import OutputError
    from ..files import note_input, open_fd
    from ..outputs import DIRFD, close_fd, conflict, key_of

    for f in files:  # noted as inputs of the command by their status (each is opened once, by its reader; one
        try:             # that cannot be read is reported then)
            st = os.stat(f)
        except (OSError, ValueError):
            continue
        if stat.S_ISREG(st.st_mode):
            note_input(f, st)
    by_folder: dict[Path, list[tuple[str, Path]]] = {}
    for owner, targets in plan:
        for t in targets:
            by_folder.setdefault(t.parent, []).append((owner, t))
    seen: dict[tuple, str] = {}
    for parent, planned in by_folder.items():  # one folder open at a time
        try:
            fd = open_fd(parent, DIRFD)
        except (OSError, ValueError, InputError):
            fd = None  # no such folder yet: nothing there can be an input
        try:
            folder = key_of(os.fstat(fd)) if fd is not None else (os.path.abspath(parent),)
            for owner, t in planned:
                other = seen.setdefault((*folder, t.name), owner)
                if other != owner:
                    raise OutputError(t, f"cannot write: this command already writes this file (for another "
                                         f"input, {other}), so it would be replaced: refused — give each output "
                                         "its own name")
                if fd is None:
                    continue
                try:
                    held: os.stat_result | None = os.stat(t.name, dir_fd=fd, follow_symlinks=access.roots() is None)
                except OSError:
                    held = None
                why = conflict(_Planned(t, fd), held if held is not None and not stat.S_ISDIR(held.st_mode) else None)
                if why:
                    raise OutputError(t, why)
        finally:
            close_fd(fd)


# the event columns the statistics after the timelines read (a file read in blocks keeps only these)
STATS_COLUMNS = ("run_index", "name", "kind", "duration_ns", "self_ns", "parent", "delegate_backend", "timing_source",
                 "op_types")


def _stream_timelines(ws: Workspace, path: Path, model_id: str, mode: str, fmt: str, batch, targets,
                      block_events: int | None):
    """The timelines of an ETDump written block by block of runs (``block_events`` events at a time), holding
    only the statistics' columns of the events seen (:data:`STATS_COLUMNS`, :class:`KeptStream`). Returns (the
    profile with those columns, timeline rows, the op-type lists table or None); raises :class:`ReadWhole` where
    the numbering of the whole file could differ (runs that do not repeat their group's first run, an ETRecord
    that attaches differently to different blocks)."""
    import numpy as np
    import polars as pl

    from ..analysis.inspector_order import StreamOrder
    from ..analysis.timeline import Timeline
    from ..render.tables import write_table

    stream = KeptStream(ws, path, STATS_COLUMNS, block_events)
    op_type_ids: dict[str, int]
    order, op_type_ids, run0 = StreamOrder(), {}, None

    def tables():
        nonlocal run0
        for block, first_row in stream:
            nodes = order.node_ids(block)
            if nodes is None:
                raise ReadWhole
            timeline = Timeline(block, model_id, nodes, mode, op_type_ids, first_row=first_row)
            if run0 is None and (block.events["run_index"].to_numpy() == 0).any():
                run0 = timeline.columns(run_index=0)
            yield timeline.columns()
            del block, timeline

    n_rows = write_table(tables(), batch.path(targets["csv_timeline_all"]), fmt)
    prof = stream.profile()
    if run0 is not None:
        write_table(run0, batch.path(targets["csv_timeline"]), fmt)
    else:
        targets["csv_timeline"] = None
    lists = (pl.DataFrame({OP_TYPES_ID: np.arange(len(op_type_ids), dtype=np.int32), "op_types": list(op_type_ids)})
             if op_type_ids else None)
    return prof, n_rows, lists


def _analyze_one(ws: Workspace, path: Path, *, run_dir: Path, out_dir: Path, fmt: str, taxonomy,
                 op_types: str, block_events: int | None = None) -> tuple[dict, list]:
    import polars as pl

    from ..analysis.breakdown import summary_split
    from ..analysis.inspector_order import inspector_order
    from ..analysis.kernels import executed_from_profile
    from ..analysis.latency import framework_times_ms
    from ..analysis.stats import summarize
    from ..analysis.timeline import Timeline, ops_stats_table
    from ..io.readers import input_format
    from ..io.runfolder import analysis_files
    from ..io.timeline_csv import op_types_file
    from ..writer import Batch
    from ..render.tables import suffix, write_table

    rf = ws.describe(path)
    model_id = display(profile_stem(path))
    names = analysis_files(path, suffix(fmt))
    # Parquet stores a repeated list once per distinct value (a dictionary): the reference form is for CSV
    mode = op_types if fmt == "csv" else OP_TYPES_INLINE
    with Batch() as batch:
        prof = None
        if block_events != 0 and input_format(path).streams:  # block by block: never held whole
            targets = _targets(out_dir, names)
            try:
                prof, n_rows, lists = _stream_timelines(ws, path, model_id, mode, fmt, batch, targets, block_events)
            except ReadWhole:
                batch.discard()
        if prof is None:
            targets = _targets(out_dir, names)
            prof = ws.profile(path, keep=False)
            # one stage at a time, giving freed memory back in between: the peak stays low on large files
            timeline = Timeline(prof, model_id, inspector_order(prof)["node_id"].to_numpy(), mode)
            lists = timeline.op_types_table()
            release_free_memory()
            n_rows = write_table(timeline.chunks(), batch.path(targets["csv_timeline_all"]), fmt)
            if prof.run(0).height > 0:
                write_table(timeline.columns(run_index=0), batch.path(targets["csv_timeline"]), fmt)
            else:
                targets["csv_timeline"] = None
            del timeline
        sidecars = [op_types_file(t) for t in (targets["csv_timeline_all"], targets["csv_timeline"])
                    if t is not None and lists is not None]
        for t in sidecars:  # the op-type lists the timelines refer to, beside each
            write_table(lists, batch.path(t), "csv")
        release_free_memory()
        write_table(ops_stats_table(prof, model_id), batch.path(targets["csv_stats"]), fmt)
        written = batch.commit()
    valid = prof.valid_runs()  # statistics use the runs with a valid end-to-end time; timelines keep every event
    split = summary_split(valid, taxonomy)
    ev = executed_from_profile(valid, taxonomy)
    d = summarize(valid.latency_ms())
    lat_summary = {k: d.get(k) for k in ("count", "mean_ms", "median_ms", "min_ms", "max_ms", "std_dev_ms")}
    lat_summary.update(p90_ms=(d.get("percentiles") or {}).get("p90"), source=prof.latency_source)
    n_dcalls = valid.execute_events().filter(pl.col("kind") == "delegate_call").height
    entry = {
        "etdump": rel(path, run_dir), "model_id": model_id, "model": rf.model, "experiment": rf.experiment,
        "platform": rf.platform, "threads": rf.threads,
        "etrecord": rel(prof.etrecord.path, run_dir) if prof.etrecord and prof.etrecord.path else None,
        "etrecord_status": prof.etrecord.status if prof.etrecord else "absent",
        "runs": prof.n_runs, "runs_invalid": valid.runs_invalid, "events": prof.n_events, "rows": n_rows,
        "latency_ms": lat_summary, **framework_times_ms(prof),
        "delegate_calls_per_run": n_dcalls / max(valid.n_runs, 1),
        "categories_ms": split["categories_ms"], "backends_ms": split["backends_ms"],
        "kernel_evidence": {k: ev[k] for k in ("evidence", "sme_executed", "kleidiai_executed", "sme_ms_per_run",
                                               "qp8_ms_per_run", "gemm_conv_ms_per_run", "kleidiai_share_of_gemm_conv",
                                               "statement")} | {"operators": [o["op"] for o in ev["operators"]]},
        "csv_timeline": rel(targets["csv_timeline"], run_dir), "csv_timeline_all": rel(targets["csv_timeline_all"], run_dir),
        "csv_stats": rel(targets["csv_stats"], run_dir),
        "csv_op_types": [rel(t, run_dir) for t in sidecars], "warnings": list(prof.warnings),
    }
    return entry, written


@command
def _remote(path: str, run_dir: str, out_dir: str, read, fmt: str, taxonomy, op_types: str, block_events=None):
    """A Dask worker's task: analyse one file with the client's read options, writing its outputs from the
    worker; an unreadable file comes back as a value (one bad file does not fail the batch)."""
    try:
        ws = Workspace(run_dir, read, op_types=OP_TYPES_REF)
        return _analyze_one(ws, Path(path), run_dir=Path(run_dir), out_dir=Path(out_dir), fmt=fmt, taxonomy=taxonomy,
                            op_types=op_types, block_events=block_events), None
    except InputError as e:
        return None, str(e)


def _on_dask(files, run_dir: Path, out_dirs, read, fmt, tax, op_types, workers, scheduler, progress) -> list:
    """Each file analysed on a worker of a Dask cluster (``scheduler``, or a local one of ``workers`` processes)."""
    from ..collect.cluster import dask_client

    with dask_client(workers=workers, scheduler=scheduler) as (client, _):
        from distributed import as_completed  # importable once dask_client has found the extra

        futures = client.map(_remote, [str(f) for f in files], [str(run_dir)] * len(files),
                             [str(d) for d in out_dirs], read=read, fmt=fmt, taxonomy=tax, op_types=op_types, pure=False)
        index = {fut.key: i for i, fut in enumerate(futures)}
        results: list = [None] * len(files)
        for done, fut in enumerate(as_completed(futures), 1):
            results[index[fut.key]] = fut.result()  # (result, None) or (None, the one-line error)
            if progress:
                progress(done, len(files), files[index[fut.key]])
        return results


@command
def analyze(inputs, *, etrecord=None, strict_etrecord: bool = False, fmt: str = "csv", output_dir=None,
            jobs: int | None = None, method: str | None = None, progress=None, write_summary: bool = True,
            taxonomy=None, op_types: str = OP_TYPES_REF, workers: int | None = None, scheduler: str | None = None,
            ws: Workspace | None = None, block_events: int | None = None) -> AnalyzeResult:
    """Analyse every ETDump under ``inputs`` (a run folder, or files) and write the kit's CSVs.

    Writes ``<stem>_exec_all_runs_timeline``, ``<stem>_exec_run0_timeline`` and ``<stem>_exec_ops_stats``
    (CSV or Parquet) next to each ETDump (or under ``output_dir``, mirroring the folder structure), then
    ``analysis_summary.json`` in the run folder (or ``output_dir``). A file that cannot be read is reported
    in ``errors`` and skipped; nothing is written for it. ``progress(done, total, path)`` is called after each
    file. ``op_types`` (CSV): each event's op-type list as an id into ``<timeline>_op_types.csv``, written beside
    each timeline (``ref``, the default), or the list in every row (``inline``, the column ``op_types``).
    ``jobs``: files analysed at once in threads of this process; ``workers`` (a local Dask cluster of that many
    processes) or ``scheduler`` (``tcp://HOST:PORT``): each file analysed on a Dask worker, which reads it and
    writes its outputs (the ``dask`` extra; the files and the output folder must be at the same paths there).
    ``block_events``: an ETDump is read and written block by block of whole runs of about this many events
    (default :data:`~edgeprof.io.etdump_read.BLOCK_EVENTS`), holding only what the statistics need of the events
    already seen; ``0`` reads each file whole. The outputs are the same either way.
    """
    from ..render import jsonfmt
    from ..writer import write_text
    from ..render.tables import FORMATS

    if fmt not in FORMATS:
        raise UsageError(f"unknown format '{fmt}' (choose from {', '.join(FORMATS)})")
    if op_types not in OP_TYPES_MODES:
        raise UsageError(f"unknown op-types form '{op_types}' (choose from {', '.join(OP_TYPES_MODES)})")
    paths = [Path(p) for p in as_list(inputs)]
    for p in paths:
        if not exists(p):
            raise InputError(p, "no such file or folder")
    run_dir = common_root(paths)
    ws = workspace(ws, run_dir, etrecord=etrecord, strict_etrecord=strict_etrecord, method=method)
    files = [f for p in paths for f in (ws.etdumps(p) if p.is_dir() else [p])]
    files = list(dict.fromkeys(files))
    if not files:
        raise InputError(run_dir, "no .etdump or .etdp files found")
    if etrecord is not None and not exists(etrecord) and strict_etrecord:
        raise ETRecordError(etrecord, "no such ETRecord file")
    _, _, manifest_problem = ws.manifest(run_dir)
    out_root = Path(output_dir) if output_dir is not None else None
    tax = taxonomy_of(taxonomy)

    def out_dir_for(f: Path) -> Path:
        if out_root is None:
            return f.parent
        try:
            return out_root / f.parent.resolve().relative_to(run_dir.resolve())
        except ValueError:
            return out_root

    def job(f: Path):
        try:
            return _analyze_one(ws, f, run_dir=run_dir, out_dir=out_dir_for(f), fmt=fmt, taxonomy=tax,
                                op_types=op_types, block_events=block_events), None
        except InputError as e:
            return None, e

    # every output is checked before any is written: the same refusals for threads in any order and Dask workers
    plan = [(str(f), _planned(f, out_dir_for(f), fmt, op_types)) for f in files]
    if write_summary:
        plan.append((SUMMARY, [(out_root or run_dir) / SUMMARY]))
    _check_outputs(files + ([Path(etrecord)] if etrecord is not None else []), plan)
    n_jobs = max(1, min(jobs or (os.cpu_count() or 1), len(files)))
    results = []
    if workers is not None or scheduler is not None:
        results = _on_dask(files, run_dir, [out_dir_for(f) for f in files], ws.options, fmt, tax, op_types, workers,
                           scheduler, progress)
    elif n_jobs == 1:
        for i, f in enumerate(files):
            results.append(job(f))
            if progress:
                progress(i + 1, len(files), f)
    else:
        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            futures = [pool.submit(job, f) for f in files]
            for i, fut in enumerate(futures):
                results.append(fut.result())
                if progress:
                    progress(i + 1, len(files), files[i])
    csv_files: list[str]
    per, errors, outputs, csv_files = [], [], [], []
    for f, (res, err) in zip(files, results):
        if err is not None:
            errors.append((str(f), str(err)))
            continue
        entry, written = res
        per.append(entry)
        outputs.extend(written)
        csv_files.extend(e for e in (entry["csv_timeline_all"], entry["csv_stats"]) if e)
    used = {e["etrecord"] for e in per}
    summary = {
        "tool": "edgeprof", "run_dir": str(run_dir.resolve()),
        "etrecord": (rel(etrecord, run_dir) if etrecord is not None else (next(iter(used)) if len(used) == 1 else None)),
        "etdump_count": len(files), "analysed_count": len(per), "format": fmt, "taxonomy_version": tax.version,
        "per_etdump": per, "csv_files": csv_files,
        "errors": [{"etdump": rel(f, run_dir), "error": msg} for f, msg in errors],
        "warnings": [manifest_problem] if manifest_problem else [],
    }
    result = AnalyzeResult(summary, errors=errors)
    summary_path = None
    if write_summary and per:
        summary_path = (out_root or run_dir) / SUMMARY
        write_text(summary_path, jsonfmt.dumps(result.to_json()))
        outputs.append(summary_path)
    return AnalyzeResult(result.doc, errors=errors, summary_path=summary_path, outputs=outputs)
