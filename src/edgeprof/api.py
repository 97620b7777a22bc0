"""The public Python API. The CLI is a thin layer over these functions.

>>> import edgeprof
>>> prof = edgeprof.load_etdump("model.etdp", etrecord="model.etrecord")
>>> prof.events            # Polars DataFrame, one row per event occurrence
>>> prof.latency_ms()      # end-to-end latency per run
"""

from __future__ import annotations

import os
import warnings as _warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ._memory import release_free_memory
from .errors import EdgeprofWarning, ETRecordError, InputError, UsageError
from .io.files import display
from .model import ETRecordInfo, Profile


def _attach_etrecord(prof: Profile, etrecord, strict: bool, method: str | None) -> Profile:
    import dataclasses

    from .io.etrecord import ETRecord, enrich, read_etrecord

    try:
        rec = etrecord if isinstance(etrecord, ETRecord) else read_etrecord(etrecord, method=method)
    except ETRecordError as e:
        if strict:
            raise
        info = ETRecordInfo(path=str(etrecord), status="unreadable", message=e.message)
        return dataclasses.replace(prof, etrecord=info, warnings=prof.warnings + [f"{e}; continuing without it"])
    return enrich(prof, rec, strict=strict)


def load_etdump(path, etrecord=None, *, strict_etrecord: bool = False, method: str | None = None,
                allow_empty: bool = False, warn: bool = True) -> Profile:
    """Read an ETDump (``.etdump``/``.etdp``) into a :class:`~edgeprof.model.Profile`.

    ``etrecord``: a path (or a parsed ETRecord) to attach op types and backend names. A missing,
    unreadable or mismatched ETRecord gives a warning and the profile without it, unless
    ``strict_etrecord`` (then :class:`~edgeprof.errors.ETRecordError`). Problems with the ETDump itself
    raise :class:`~edgeprof.errors.InputError` subclasses naming the file and byte offset.
    """
    from .io.etdump import read_etdump

    prof = read_etdump(path, allow_empty=allow_empty)
    if etrecord is not None:
        prof = _attach_etrecord(prof, etrecord, strict_etrecord, method)
    else:
        prof.etrecord = ETRecordInfo(path=None, status="absent")
    if warn:
        for w in prof.warnings:
            _warnings.warn(f"{prof.source}: {w}", EdgeprofWarning, stacklevel=2)
    return prof


# --------------------------------------------------------------------------------------------------
# analyze: ETDumps → Arm-kit CSVs + analysis_summary.json
# --------------------------------------------------------------------------------------------------

@dataclass
class AnalyzeResult:
    summary: dict
    summary_path: Path | None
    outputs: list[Path] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def _taxonomy_version() -> str:
    from .taxonomy import TAXONOMY_VERSION

    return TAXONOMY_VERSION


def _rel(p: Path | str | None, base: Path) -> str | None:
    if p is None:
        return None
    p = Path(p)
    try:
        return p.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return str(p.resolve())


def _analyze_one(path: Path, *, run_dir: Path, out_dir: Path, etrecord, strict: bool, fmt: str,
                 manifest, manifest_path, method, taxonomy=None) -> tuple[dict, list[Path]]:
    import polars as pl

    from .analysis.breakdown import summary_split
    from .analysis.inspector_order import inspector_order
    from .analysis.kernels import executed_from_profile
    from .analysis.latency import framework_times_ms
    from .analysis.stats import summarize
    from .analysis.timeline import Timeline, ops_stats_table
    from .io.etdump import read_etdump
    from .io.runfolder import analysis_files, describe, find_etrecord
    from .render.atomic import Batch
    from .render.tables import suffix, write_table
    from .taxonomy import DEFAULT

    rf = describe(path)
    prof = read_etdump(path)
    found = "given" if etrecord is not None else None
    er = etrecord
    if er is None:
        er, found = find_etrecord(path, manifest, manifest_path)
    if er is not None:
        prof = _attach_etrecord(prof, er, strict, method)
    else:
        prof.etrecord = ETRecordInfo(path=None, status="absent", message=found or "")
    model_id = display(path.stem)
    has_run0 = prof.run(0).height > 0
    names = analysis_files(path, suffix(fmt))
    targets = {
        "csv_timeline_all": out_dir / names["timeline_all"],
        "csv_timeline": out_dir / names["timeline_run0"],
        "csv_stats": out_dir / names["ops_stats"],
    }
    with Batch() as batch:
        # one stage at a time, giving freed memory back in between: the peak stays low on large files
        timeline = Timeline(prof, model_id, inspector_order(prof)["node_id"].to_numpy())
        release_free_memory()
        n_rows = write_table(timeline.chunks(), batch.path(targets["csv_timeline_all"]), fmt)
        if has_run0:
            write_table(timeline.table(run_index=0), batch.path(targets["csv_timeline"]), fmt)
        else:
            targets["csv_timeline"] = None
        del timeline
        release_free_memory()
        write_table(ops_stats_table(prof, model_id), batch.path(targets["csv_stats"]), fmt)
        written = batch.commit()
    valid = prof.valid_runs()  # statistics use the runs with a valid end-to-end time; timelines keep every event
    split = summary_split(valid, taxonomy or DEFAULT)
    ev = executed_from_profile(valid, taxonomy or DEFAULT)
    lat, source = valid.latency_ms(), prof.latency_source
    d = summarize(lat)
    lat_summary = {k: d.get(k) for k in ("count", "mean_ms", "median_ms", "min_ms", "max_ms", "std_dev_ms")}
    lat_summary.update(p90_ms=(d.get("percentiles") or {}).get("p90"), source=source)
    n_dcalls = valid.execute_events().filter(pl.col("kind") == "delegate_call").height
    entry = {
        "etdump": _rel(path, run_dir),
        "model_id": model_id,
        "model": rf.model,
        "experiment": rf.experiment,
        "platform": rf.platform,
        "threads": rf.threads,
        "etrecord": _rel(prof.etrecord.path, run_dir) if prof.etrecord and prof.etrecord.path else None,
        "etrecord_status": prof.etrecord.status if prof.etrecord else "absent",
        "runs": prof.n_runs,
        "runs_invalid": valid.runs_invalid,
        "events": prof.n_events,
        "rows": n_rows,
        "latency_ms": lat_summary,
        **framework_times_ms(prof),
        "delegate_calls_per_run": n_dcalls / max(valid.n_runs, 1),
        "categories_ms": split["categories_ms"],
        "backends_ms": split["backends_ms"],
        "kernel_evidence": {k: ev[k] for k in ("evidence", "sme_executed", "kleidiai_executed", "sme_ms_per_run",
                                               "qp8_ms_per_run", "gemm_conv_ms_per_run", "kleidiai_share_of_gemm_conv",
                                               "statement")} | {"operators": [o["op"] for o in ev["operators"]]},
        "csv_timeline": _rel(targets["csv_timeline"], run_dir),
        "csv_timeline_all": _rel(targets["csv_timeline_all"], run_dir),
        "csv_stats": _rel(targets["csv_stats"], run_dir),
        "warnings": list(prof.warnings),
    }
    return entry, written


def analyze(inputs, *, etrecord=None, strict_etrecord: bool = False, fmt: str = "csv", output_dir=None,
            jobs: int | None = None, method: str | None = None, progress=None,
            write_summary: bool = True, taxonomy=None) -> AnalyzeResult:
    """Analyse every ETDump under ``inputs`` (a run folder, or files) and write the kit's CSVs.

    Writes ``<stem>_exec_all_runs_timeline``, ``<stem>_exec_run0_timeline`` and ``<stem>_exec_ops_stats``
    (CSV or Parquet) next to each ETDump (or under ``output_dir``, mirroring the folder structure), then
    ``analysis_summary.json`` in the run folder (or ``output_dir``). A file that cannot be read is reported
    in ``errors`` and skipped; nothing is written for it.
    ``progress(done, total, path)`` is called after each file.
    """
    from .io.runfolder import find_etdumps, read_manifest
    from .render import jsonfmt
    from .render.atomic import write_text
    from .render.tables import FORMATS

    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
    inputs = [Path(p) for p in ([inputs] if isinstance(inputs, (str, os.PathLike)) else inputs)]
    if not inputs:
        raise UsageError("nothing to analyse: give a run folder or ETDump files")
    for p in inputs:
        if not p.exists():
            raise InputError(p, "no such file or folder")
    if len(inputs) == 1 and inputs[0].is_dir():
        run_dir = inputs[0]
    else:
        parents = [p if p.is_dir() else p.parent for p in inputs]
        run_dir = Path(os.path.commonpath([str(p.resolve()) for p in parents]))
    files = find_etdumps(inputs)
    if not files:
        raise InputError(run_dir, "no .etdump or .etdp files found")
    if etrecord is not None and not Path(etrecord).exists():
        if strict_etrecord:
            raise ETRecordError(etrecord, "no such ETRecord file")
    manifest, manifest_path, manifest_problem = read_manifest(run_dir)
    out_root = Path(output_dir) if output_dir is not None else None

    def out_dir_for(f: Path) -> Path:
        if out_root is None:
            return f.parent
        try:
            return out_root / f.parent.resolve().relative_to(run_dir.resolve())
        except ValueError:
            return out_root

    def job(f: Path):
        try:
            return _analyze_one(f, run_dir=run_dir, out_dir=out_dir_for(f), etrecord=etrecord, strict=strict_etrecord,
                                fmt=fmt, manifest=manifest, manifest_path=manifest_path, method=method,
                                taxonomy=taxonomy), None
        except InputError as e:
            return None, e

    n_jobs = max(1, min(jobs or (os.cpu_count() or 1), len(files)))
    results = []
    if n_jobs == 1:
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
        "schema_version": jsonfmt.SCHEMA_VERSION,
        "tool": "edgeprof",
        "run_dir": str(run_dir.resolve()),
        "etrecord": (_rel(etrecord, run_dir) if etrecord is not None else (next(iter(used)) if len(used) == 1 else None)),
        "etdump_count": len(files),
        "analysed_count": len(per),
        "format": fmt,
        "taxonomy_version": (taxonomy.version if taxonomy is not None else _taxonomy_version()),
        "per_etdump": per,
        "csv_files": csv_files,
        "errors": [{"etdump": _rel(f, run_dir), "error": msg} for f, msg in errors],
        "warnings": [manifest_problem] if manifest_problem else [],
    }
    summary_path = None
    if write_summary and per:
        summary_path = (out_root or run_dir) / "analysis_summary.json"
        write_text(summary_path, jsonfmt.dumps(summary))
        outputs.append(summary_path)
    return AnalyzeResult(summary=summary, summary_path=summary_path, outputs=outputs, errors=errors)


# --------------------------------------------------------------------------------------------------
# latency and compare: robust statistics of end-to-end latency
# --------------------------------------------------------------------------------------------------

def _files(specs, run_dir=None, threads=None) -> list[Path]:
    from .io.latency_sources import resolve

    run_dir = Path(run_dir) if run_dir is not None else None
    if isinstance(specs, (str, os.PathLike)):
        specs = [specs]
    files = [f for spec in specs for f in resolve(str(spec), run_dir, threads)]
    if not files:
        raise UsageError("no input files")
    return files


def _series(specs, run_dir=None, threads=None):
    from .io.latency_sources import load

    return [load(f) for f in _files(specs, run_dir, threads)]


def _arm_name(series, given: str | None) -> str:
    if given:
        return given
    exps = {s.experiment for s in series}
    if len(exps) == 1 and None not in exps:
        return exps.pop()
    stems = [s.path.stem for s in series]
    common = os.path.commonprefix(stems).rstrip("._-")
    return common or stems[0]


def latency(inputs, *, run_dir=None, threads: int | None = None, name: str | None = None, seed: int = 0,
            resamples: int = 2000, names: dict | None = None) -> list[tuple[object, dict]]:
    """Robust latency statistics for each launch (file) named by ``inputs``: [(series, report), …].

    ``inputs``: ETDumps, timeline CSVs, folders, or experiment names of ``run_dir``. ``name`` names every
    report; ``names`` maps an input (as given) to its report's name.
    """
    from .analysis.latency import robust_latency
    from .io.latency_sources import load, resolve

    run_dir = Path(run_dir) if run_dir is not None else None
    specs = [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs)
    out = []
    for spec in specs:
        given = (names or {}).get(spec) or name
        for f in resolve(str(spec), run_dir, threads):
            s = load(f)
            rep = robust_latency(s.values_ms, name=given or display(s.timeline_stem), run_indices=s.run_indices, seed=seed,
                                 resamples=resamples, source=s.source)
            rep["schema_version"] = 1
            rep["input"] = str(s.path)
            rep["warnings"] = list(s.warnings)
            out.append((s, rep))
    if not out:
        raise UsageError("no input files")
    return out


@dataclass
class Roles:
    """Which inputs are the baseline and which the candidate, their names, and why (one line)."""

    baseline: list[str]
    candidate: list[str]
    baseline_name: str | None = None
    candidate_name: str | None = None
    note: str = ""
    warnings: list[str] = field(default_factory=list)


def _role(paths, name: str | None) -> str | None:
    """The SME2 role of an arm: from its files' paths when they agree on one, else from its name."""
    from .io.runfolder import sme2_role

    found = {sme2_role(str(p)) for p in paths}
    if len(found) == 1 and None not in found:
        return found.pop()
    return sme2_role(name) if name else None


SME2_NOTE = "the SME2-off input is the baseline whatever the order given"


def assign_roles(inputs: list[str], baseline_name: str | None = None, candidate_name: str | None = None) -> Roles:
    """Two positional inputs: by ``sme2_off``/``sme2_on`` in their names when that decides it, else in the order
    given (first = baseline)."""
    if len(inputs) != 2:
        raise UsageError("give two inputs (baseline then candidate), or --baseline and --candidate")
    r0, r1 = _role([inputs[0]], None), _role([inputs[1]], None)
    if r0 == "on" and r1 == "off":
        return Roles([inputs[1]], [inputs[0]], baseline_name, candidate_name, f"by name: {SME2_NOTE}")
    if r0 == "off" and r1 == "on":
        return Roles([inputs[0]], [inputs[1]], baseline_name, candidate_name, f"by name: {SME2_NOTE}")
    return Roles([inputs[0]], [inputs[1]], baseline_name, candidate_name, "in the order given (first = baseline)")


def kit_roles(changed: str, reference: str, changed_name: str | None = None,
              reference_name: str | None = None) -> Roles:
    """The Arm kit's ``--timeline-csv CHANGED --compare REFERENCE --name1 … --name2 …``: the ``--compare`` input
    is the reference (baseline) unless SME2 names say which is SME2-off; each name stays with its file."""
    rc, rr = _role([changed], changed_name), _role([reference], reference_name)
    if rc == "off" and rr == "on":
        return Roles([changed], [reference], changed_name, reference_name, f"by name: {SME2_NOTE}")
    if rc == "on" and rr == "off":
        return Roles([reference], [changed], reference_name, changed_name, f"by name: {SME2_NOTE}")
    return Roles([reference], [changed], reference_name, changed_name,
                 "the --compare input is the reference (baseline), --timeline-csv the candidate")


def explicit_roles(baseline: list[str], candidate: list[str], baseline_name: str | None = None,
                   candidate_name: str | None = None) -> Roles:
    """--baseline/--candidate as given; a warning when the names say the roles look reversed."""
    rb, rc = _role(baseline, baseline_name), _role(candidate, candidate_name)
    warnings = []
    if rb == "on" and rc == "off":
        warnings.append("the baseline looks like an SME2-on run and the candidate like an SME2-off run; kept as given "
                        "(speedup = baseline / candidate, so > 1 means the SME2-off candidate is faster)")
    return Roles(baseline, candidate, baseline_name, candidate_name, "as given (--baseline/--candidate)", warnings)


def _same_inputs(b_files: list[Path], c_files: list[Path]) -> None:
    """A usage error when a file (or a byte-identical copy of it) is in both arms."""
    import hashlib

    def digest(p: Path) -> tuple[int, str]:
        h = hashlib.blake2b(digest_size=16)
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return p.stat().st_size, h.hexdigest()

    rb = {f.resolve(): f for f in b_files}
    for f in c_files:
        if f.resolve() in rb:
            raise UsageError(f"{f} is in both the baseline and the candidate: a comparison needs two different arms")
    sizes_b = {}
    for f in b_files:
        sizes_b.setdefault(f.stat().st_size, []).append(f)
    for f in c_files:
        same_size = sizes_b.get(f.stat().st_size, [])
        if same_size:
            d = digest(f)
            for g in same_size:
                if digest(g) == d:
                    raise UsageError(f"{f} and {g} hold the same bytes: the baseline and the candidate are the same "
                                     "measurement")


def compare(baseline, candidate, *, run_dir=None, threads: int | None = None, baseline_name: str | None = None,
            candidate_name: str | None = None, threshold: float = 0.02, level: float = 0.95, seed: int = 0,
            resamples: int = 2000, warmup="auto", categories: bool = True, taxonomy=None, top: int = 20) -> dict:
    """Compare end-to-end latency: speedup = baseline / candidate with its interval and a verdict; with
    profiles (ETDumps or timeline CSVs) also by category and operator, with the bottleneck statement.

    ``baseline``/``candidate``: one or more inputs each (several files = several process launches).
    """
    from .analysis.compare import Arm, compare_latency

    if not 0 <= threshold < 1:
        raise UsageError(f"threshold must be in [0, 1), got {threshold}")
    if not 0.5 < level < 1:
        raise UsageError(f"level must be in (0.5, 1), got {level}")
    from .io.latency_sources import load

    b_files, c_files = _files(baseline, run_dir, threads), _files(candidate, run_dir, threads)
    _same_inputs(b_files, c_files)
    bs, cs = [load(f) for f in b_files], [load(f) for f in c_files]
    b_arm = Arm(_arm_name(bs, baseline_name), [s.values_ms for s in bs], [str(s.path) for s in bs])
    c_arm = Arm(_arm_name(cs, candidate_name), [s.values_ms for s in cs], [str(s.path) for s in cs])
    if b_arm.name == c_arm.name:
        b_arm.name, c_arm.name = f"{b_arm.name} (baseline)", f"{c_arm.name} (candidate)"
    result = compare_latency(b_arm, c_arm, threshold=threshold, level=level, seed=seed, resamples=resamples,
                             warmup=warmup)
    result["warnings"] = [w for s in bs + cs for w in (f"{s.path.name}: {x}" for x in s.warnings)] + result["warnings"]
    stem_b = bs[0].timeline_stem if len(bs) == 1 else b_arm.name
    stem_c = cs[0].timeline_stem if len(cs) == 1 else c_arm.name
    from .io.files import fit_name

    result["output_stem"] = fit_name(f"{stem_b}_vs_{stem_c}", "_robust_comparison.json")[: -len(".json")]
    result["inputs"] = {"baseline": [str(s.path) for s in bs], "candidate": [str(s.path) for s in cs]}
    if categories and all(s.profile is not None for s in bs + cs):
        from .analysis.compare_ops import compare_categories
        from .taxonomy import DEFAULT

        result["by_category"] = compare_categories(
            [s.profile for s in bs], [s.profile for s in cs], b_name=b_arm.name, c_name=c_arm.name,
            b_skip=[x["warmup_dropped"] for x in result["baseline"]["launches"]],
            c_skip=[x["warmup_dropped"] for x in result["candidate"]["launches"]],
            taxonomy=taxonomy or DEFAULT, level=level, seed=seed, resamples=resamples, threshold=threshold, top=top)
    return result


# --------------------------------------------------------------------------------------------------
# breakdown: where the time goes
# --------------------------------------------------------------------------------------------------

def load_profile(path, *, etrecord=None, strict_etrecord: bool = False, method: str | None = None) -> Profile:
    """An ETDump (with its ETRecord, given or found as ``analyze`` finds it) or a timeline CSV as a Profile."""
    from .io.runfolder import ETDUMP_SUFFIXES, find_etrecord, read_manifest
    from .io.timeline_csv import read_timeline_csv

    path = Path(path)
    if path.suffix == ".csv":
        return read_timeline_csv(path).valid_runs()
    if path.suffix not in ETDUMP_SUFFIXES and path.exists() and not path.is_dir():
        raise InputError(path, "expected an ETDump (.etdump/.etdp) or a timeline CSV")
    if etrecord is None:
        manifest, mpath, _ = read_manifest(path.parent)
        etrecord, _ = find_etrecord(path, manifest, mpath)
    return load_etdump(path, etrecord=etrecord, strict_etrecord=strict_etrecord, method=method, warn=False).valid_runs()


def breakdown(path, *, etrecord=None, strict_etrecord: bool = False, taxonomy=None, top: int = 15,
              model_name: str | None = None) -> tuple[Profile, dict]:
    """Category accounting, top and OTHER operators, backends, portable hotspots and graph breaks of one profile."""
    from .analysis.breakdown import breakdown as run_breakdown
    from .io.runfolder import describe
    from .taxonomy import DEFAULT

    prof = load_profile(path, etrecord=etrecord, strict_etrecord=strict_etrecord)
    name = model_name or display(Path(path).stem.replace("_exec_all_runs_timeline", ""))
    result = run_breakdown(prof, taxonomy=taxonomy or DEFAULT, top=top, name=name)
    result["input"] = str(path)
    result["etrecord_status"] = prof.etrecord.status if prof.etrecord else "absent"
    result["experiment"] = describe(Path(path)).experiment
    result["warnings"] = list(prof.warnings)
    return prof, result


# --------------------------------------------------------------------------------------------------
# kernels: XNNPACK kernel evidence, kernel view, run-folder validation
# --------------------------------------------------------------------------------------------------

def _kernel_input_name(path: Path) -> str:
    from .io.runfolder import trace_stem

    if path.suffix == ".csv":
        return path.stem.removesuffix("_kernels")
    return trace_stem(path)


def _log_facts(log) -> dict:
    dts: dict[str, int] = {}
    for a in log.assumed_datatypes:
        dts[a["datatype"]] = dts.get(a["datatype"], 0) + 1
    return {"lines": log.lines, "xnnpack_lines": log.xnnpack_lines, "formats": log.formats,
            "truncated_last_line": log.truncated_last_line, "hardware": log.hardware,
            "assumed_datatypes": dts, "inlined_lhs_packing": log.inlined_lhs_packing,
            "operators_run": log.operators_run, "operators_skipped": log.operators_skipped,
            "gemm_tiles": log.tiles[:50], "messages": log.messages}


def kernels(path, *, model_id: str | None = None) -> dict:
    """The kernel table of one XNNPACK log (or kernels CSV): the Arm kit's columns then ours, a summary by ISA
    family and kind, and the operators the log shows running on SME/KleidiAI datatype paths."""
    from .analysis.kernels import (
        executed_from_operators,
        kernel_table,
        summarize_kernels,
        table_from_records,
    )
    from .io.xnnlog import read_kernel_csv, read_xnnlog

    path = Path(path)
    mid = model_id or display(_kernel_input_name(path))
    if path.suffix == ".csv":
        rows, log = table_from_records(read_kernel_csv(path), mid), None
    else:
        log = read_xnnlog(path)
        rows = kernel_table(log, mid)
    result = {"schema_version": 1, "input": str(path), "model_id": mid, "kernels": rows,
              "summary": summarize_kernels(rows), "warnings": []}
    if log is not None:
        result["log"] = _log_facts(log)
        result["executed"] = executed_from_operators(log.operators_run)
        if not log.registrations:
            result["warnings"].append(
                "no 'Using … microkernel' lines: XNNPACK logs kernels only when built with XNN_LOG_LEVEL ≥ 4"
                if log.xnnpack_lines == 0 else "XNNPACK lines but no kernel registrations (the kernel lines go to "
                "stderr; capture both streams with 2>&1)")
        if log.truncated_last_line:
            result["warnings"].append("the last line is cut off mid-message; it was not used")
    unknown = result["summary"]["unknown_isa"]
    if unknown:
        result["warnings"].append(f"{len(unknown)} kernel(s) with an ISA this version does not know: "
                                  + ", ".join(unknown[:5]))
    return result


def executed_evidence(path, *, etrecord=None) -> dict:
    """Which XNNPACK operators of an ETDump (or timeline CSV) ran on SME/KleidiAI datatype paths (PF32, PF16,
    PQS8, QP8) and the time they cover: evidence = executed."""
    from .analysis.kernels import executed_from_profile

    prof = load_profile(path, etrecord=etrecord)
    result = executed_from_profile(prof)
    result.update(schema_version=1, input=str(path))
    return result


def kernel_view(baseline, candidate, *, baseline_name: str | None = None, candidate_name: str | None = None,
                filter_op: str | None = None) -> dict:
    """Baseline vs candidate kernels (each a log or a kernels CSV), with a summary and a GEMM/IGEMM verdict."""
    from .analysis.kernels import kernel_view as view

    b, c = Path(baseline), Path(candidate)
    bn = baseline_name or _kernel_input_name(b)
    cn = candidate_name or _kernel_input_name(c)
    if bn == cn:
        bn, cn = f"{bn} (baseline)", f"{cn} (candidate)"
    kb, kc = kernels(b), kernels(c)
    result = view(kb["kernels"], kc["kernels"], base_name=bn, cand_name=cn, filter_op=filter_op)
    result["inputs"] = {"baseline": str(b), "candidate": str(c)}
    result["warnings"] = [f"{b.name}: {w}" for w in kb["warnings"]] + [f"{c.name}: {w}" for w in kc["warnings"]]
    return result


def _mtime(p: Path) -> float | None:
    try:
        return p.stat().st_mtime
    except OSError:
        return None


def _json_facts(path: Path, required_keys: dict):
    import json

    from .analysis.validate import JsonFacts

    facts = JsonFacts(path=str(path), exists=path.is_file())
    if not facts.exists:
        return facts, None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as e:
        facts.problems.append(f"not valid JSON ({e})")
        return facts, None
    if not isinstance(doc, dict):
        facts.problems.append("not a JSON object")
        return facts, None
    for key, typ in required_keys.items():
        if not isinstance(doc.get(key), typ):
            facts.problems.append(f"'{key}' missing or not a {typ.__name__}")
    return facts, doc


def validate(run_dir, *, require=(), require_sme2_kernels: bool = False, analysis_dir=None,
             tolerance: float = 0.01) -> dict:
    """Check a run folder: ETDumps parse; the CSVs and analysis_summary.json exist, are fresh and agree with the
    ETDumps (run counts, mean latency within ``tolerance``); ``require`` adds ``manifest`` (manifest.json and
    metrics.json), ``metrics``, ``robust-stats`` or ``trace``; ``require_sme2_kernels`` checks the XNNPACK trace
    logs (in the folder or a sibling ``<platform>_trace``): SME2-on ones register an SME2 GEMM/IGEMM kernel,
    SME2-off ones none. Returns the report (``ok`` false when a check failed)."""
    import numpy as np

    from .analysis.kernels import executed_from_profile, kernel_table, table_from_records
    from .analysis.validate import (
        REQUIRABLE,
        EtdumpFacts,
        OutputFile,
        SummaryFacts,
        TraceFacts,
        run_checks,
    )
    from .io.etdump import read_etdump
    from .io.runfolder import (
        analysis_files,
        describe,
        display_path,
        find_etdumps,
        find_kernel_tables,
        find_trace_logs,
        manifest_sme2_roles,
        sme2_role,
        trace_folders,
        trace_stem,
    )
    from .io.timeline_csv import execute_latency_ms
    from .io.xnnlog import read_kernel_csv, read_xnnlog

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise InputError(run_dir, "no such folder" if not run_dir.exists() else "not a folder")
    bad = sorted(set(require) - set(REQUIRABLE))
    if bad:
        raise UsageError(f"unknown --require {', '.join(bad)} (choose from {', '.join(REQUIRABLE)})")
    out_root = Path(analysis_dir) if analysis_dir is not None else None
    manifest_facts, manifest = _json_facts(run_dir / "manifest.json", {"model": str, "results": list})
    metrics_facts, _ = _json_facts(run_dir / "metrics.json", {"results": list})
    exp_roles = manifest_sme2_roles(manifest)

    def disp(p: Path) -> str:
        return display_path(p, run_dir)

    def role_of(p: Path) -> tuple[str | None, str]:
        r = sme2_role(disp(p))
        if r:
            return r, "name"
        for exp, role in exp_roles.items():
            if exp in str(p):
                return role, "manifest.json"
        return None, ""

    facts = []
    etdumps = find_etdumps([run_dir])
    for f in etdumps:
        rel = _rel(f, run_dir)
        rf = describe(f)
        e = EtdumpFacts(path=rel, key=str(f.resolve()), experiment=rf.experiment, role=role_of(f)[0])
        try:
            prof = read_etdump(f)
            lat = prof.latency_ms()
            e.runs, e.events = prof.n_runs, prof.n_events
            e.mean_ms = float(np.nanmean(lat)) if lat.size and np.isfinite(lat).any() else None
            e.evidence = executed_from_profile(prof)
            del prof
        except InputError as err:
            e.error = err.message + (f" (at byte offset {err.offset})" if err.offset is not None else "")
        if not e.error:
            base = (out_root / f.parent.resolve().relative_to(run_dir.resolve())) if out_root else f.parent
            t0 = _mtime(f)
            for key in ("timeline_all", "timeline_run0", "ops_stats"):
                cand = [base / analysis_files(f, ext)[key] for ext in (".csv", ".parquet")]
                p = next((c for c in cand if c.is_file()), cand[0])
                o = OutputFile(key=key, path=_rel(p, run_dir), exists=p.is_file())
                if o.exists:
                    o.newer = (_mtime(p) or 0) >= (t0 or 0)
                    if key == "timeline_all":
                        try:
                            per = execute_latency_ms(p)
                            o.runs = int(per.size)
                            o.mean_ms = float(per.mean()) if per.size else None
                        except InputError as err:
                            o.error = err.message
                e.outputs.append(o)
            rs = base / analysis_files(f)["robust_stats"]
            e.outputs.append(OutputFile(key="robust_stats", path=_rel(rs, run_dir), exists=rs.is_file(),
                                        newer=(_mtime(rs) or 0) >= (t0 or 0) if rs.is_file() else None))
        facts.append(e)
    # analysis_summary.json of this folder, or of a folder above it that was analysed as a whole
    homes = [out_root] if out_root else [run_dir, run_dir.parent, run_dir.parent.parent, run_dir.parent.parent.parent]
    spath = next((h / "analysis_summary.json" for h in homes if (h / "analysis_summary.json").is_file()),
                 homes[0] / "analysis_summary.json")
    summary = SummaryFacts(path=disp(spath), exists=spath.is_file())
    if summary.exists:
        sfacts, doc = _json_facts(spath, {"per_etdump": list})
        if sfacts.problems:
            summary.error = "; ".join(sfacts.problems)
        else:
            newest = max((_mtime(f) or 0 for f in etdumps), default=0)
            summary.newer = (_mtime(spath) or 0) >= newest
            for ent in doc["per_etdump"]:
                if isinstance(ent, dict) and isinstance(ent.get("etdump"), str):
                    lat = ent.get("latency_ms") if isinstance(ent.get("latency_ms"), dict) else {}
                    key = str((spath.parent / ent["etdump"]).resolve())
                    summary.entries[key] = {"runs": ent.get("runs"), "mean_ms": lat.get("mean_ms")}
    traces = []
    for t in find_trace_logs(run_dir):
        role, how = role_of(t)
        tf = TraceFacts(path=disp(t), role=role, role_source=how)
        try:
            log = read_xnnlog(t)
            tf.rows, tf.truncated = kernel_table(log, trace_stem(t)), log.truncated_last_line
        except InputError as err:
            tf.error = err.message
        traces.append(tf)
    for t in find_kernel_tables(run_dir):
        role, how = role_of(t)
        tf = TraceFacts(path=disp(t), role=role, role_source=how, source="kernel table")
        try:
            tf.rows = table_from_records(read_kernel_csv(t), t.stem.removesuffix("_kernels"))
        except InputError as err:
            tf.error = err.message
        traces.append(tf)
    if not etdumps and not traces:
        raise InputError(run_dir, "nothing to validate: no ETDumps, XNNPACK trace logs or kernel CSVs in this folder"
                         + (" or its <platform>_trace sibling" if run_dir.name and not run_dir.name.endswith("_trace")
                            else ""))
    searched = [disp(d) or "." for d in trace_folders(run_dir)]
    report = run_checks(facts, summary, manifest_facts, metrics_facts, traces, require=set(require),
                        require_sme2_kernels=require_sme2_kernels, tolerance=tolerance, searched=searched)
    report["run_dir"] = str(run_dir.resolve())
    report["trace_logs"] = [{"path": t.path, "role": t.role, "role_source": t.role_source,
                             "kernels": len(t.rows or []), "error": t.error} for t in traces]
    return report


# --------------------------------------------------------------------------------------------------
# Apple Neural Engine: anemll-profile and ane-costplan reports
# --------------------------------------------------------------------------------------------------

def load_ane_report(path):
    """An anemll-profile or ane-costplan JSON report (by content) as AneProfile / AneCostPlan."""
    from .io.anemll import read_report

    return read_report(path)


BUNDLE_SUFFIXES = (".mlpackage", ".mlmodelc", ".mlmodel")


def is_model_bundle(path) -> bool:
    """A Core ML model (bundle or file) rather than a report."""
    return Path(path).suffix.lower() in BUNDLE_SUFFIXES


def _bundle_hint(path) -> str:
    p = Path(path)
    compiled = p.with_suffix(".mlmodelc").name
    return (f"a Core ML model, not a report: on a Mac run `anemll-profile -j profile.json {p.name}` (and "
            f"`ane-costplan -j costplan.json {compiled}` on the compiled model), then "
            "`edgeprof ane profile.json --costplan costplan.json`")


def ane(path, *, costplan=None, boundary_ms: float | None = None) -> dict:
    """Findings for one anemll-profile report (with an optional ane-costplan report to cross-check), or the
    plan's findings for a cost plan alone."""
    from .analysis.ane import DEFAULT_BOUNDARY_MS, analyze_plan, analyze_profile
    from .model import AneCostPlan, AneProfile

    for p in (path, costplan):
        if p is not None and is_model_bundle(p):
            raise InputError(p, _bundle_hint(p))
    b = DEFAULT_BOUNDARY_MS if boundary_ms is None else boundary_ms
    if b < 0:
        raise UsageError("--boundary-ms must not be negative")
    rep = load_ane_report(path)
    plan = load_ane_report(costplan) if costplan else None
    if plan is not None and not isinstance(plan, AneCostPlan):
        raise InputError(costplan, "expected an ane-costplan report here (this is an anemll-profile report)")
    if isinstance(rep, AneProfile):
        return analyze_profile(rep, plan, boundary_ms=b)
    if plan is not None:
        raise UsageError("--costplan goes with an anemll-profile report; the first input is a cost plan")
    return analyze_plan(rep)


def ane_diff(before, after) -> dict:
    """Two anemll-profile reports, or two ane-costplan reports, before vs after."""
    from .analysis.ane_diff import diff_plans, diff_profiles
    from .model import AneProfile

    a, b = load_ane_report(before), load_ane_report(after)
    if type(a) is not type(b):
        raise UsageError("ane diff needs two reports of the same kind (two profiles or two cost plans)")
    return diff_profiles(a, b) if isinstance(a, AneProfile) else diff_plans(a, b)


def ane_folder(inputs, *, boundary_ms: float | None = None) -> dict:
    """Every report below the inputs, one analysis per submodel (cost plans paired with their profile by model
    name), and one summary table. A folder is never analysed as one model."""
    from .analysis.ane import DEFAULT_BOUNDARY_MS, analyze_plan, analyze_profile
    from .analysis.ane_diff import PIPELINE_ORDER, model_stem, role_of
    from .io.anemll import detect, load_json
    from .model import AneProfile

    files = []
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            files += sorted(f for f in p.rglob("*.json") if f.is_file()
                            and not any(x.startswith(".") or is_model_bundle(x) for x in f.relative_to(p).parts))
        elif p.exists():
            files.append(p)
        else:
            raise InputError(p, "no such file or folder")
    profiles, plans, skipped, errors = [], [], [], []
    for f in files:
        try:
            if detect(load_json(f)) is None:
                skipped.append(str(f))
                continue
            rep = load_ane_report(f)
        except InputError as e:
            errors.append({"file": str(f), "error": str(e)})
            continue
        (profiles if isinstance(rep, AneProfile) else plans).append((f, rep))
    if not profiles and not plans:
        bundles = [b for item in inputs for b in sorted(Path(item).glob("*")) if is_model_bundle(b)] \
            if Path(inputs[0]).is_dir() else []
        raise InputError(inputs[0], "no anemll-profile or ane-costplan reports found"
                         + (f" ({len(skipped)} other JSON file(s) skipped)" if skipped else "")
                         + (f"; it holds {len(bundles)} Core ML model(s) ({', '.join(b.name for b in bundles[:4])}): "
                            "profile each submodel on a Mac with `anemll-profile -j <name>.profile.json <model>` and "
                            "`ane-costplan -j <name>.costplan.json <model>.mlmodelc`, then run edgeprof ane on this "
                            "folder" if bundles else ""))

    def stems(f, rep):
        name = rep.model.get("display_name") or rep.model.get("input_path") or "" if isinstance(rep, AneProfile) \
            else rep.model
        return {s for s in (model_stem(name), model_stem(f.name)) if s}

    b = DEFAULT_BOUNDARY_MS if boundary_ms is None else boundary_ms
    results, used = [], set()
    for f, rep in profiles:
        mine = stems(f, rep)
        plan = next(((pf, pr) for pf, pr in plans if pf not in used and stems(pf, pr) & mine), None)
        if plan:
            used.add(plan[0])
        r = analyze_profile(rep, plan[1] if plan else None, boundary_ms=b)
        r["file"] = str(f)
        results.append(r)
    for f, rep in plans:
        if f not in used:
            r = analyze_plan(rep)
            r["file"] = str(f)
            results.append(r)
    order = {role: i for i, role in enumerate(PIPELINE_ORDER)}
    for r in results:
        # one name per submodel — its bundle's (the report's model), else the report file's — and the role read
        # from that same name, so a row never pairs one file's role with another bundle's name
        file_stem = model_stem(Path(r["file"]).name)
        name = model_stem(r["model"]) or file_stem
        role = role_of(name)
        if not role and role_of(file_stem):
            name, role = file_stem, role_of(file_stem)
        r["summary"].update(model=name, role=role, file=r["file"], headline=r["headline"])
    results.sort(key=lambda r: (order.get(r["summary"]["role"], 99), r["summary"]["model"], r["file"]))
    return {"schema_version": 1, "reports": results, "summary": [r["summary"] for r in results],
            "skipped": skipped, "errors": errors,
            "note": "each report is one submodel; nothing is summed across them"}


# --------------------------------------------------------------------------------------------------
# report: everything above, as one document
# --------------------------------------------------------------------------------------------------

_DEVICE_KEYS = ("device", "device_name", "device_model", "soc", "chip", "cpu_model", "hardware")


def _recorded_device(manifest: dict | None) -> tuple[str | None, str | None]:
    """(device, where) as the run recorded it — never the analysis host."""
    if not isinstance(manifest, dict):
        return None, None
    for holder, where in ((manifest, "manifest.json"), (manifest.get("config"), "manifest.json config"),
                          (manifest.get("metadata"), "manifest.json metadata")):
        if isinstance(holder, dict):
            for k in _DEVICE_KEYS:
                v = holder.get(k)
                if isinstance(v, (str, int, float)) and str(v).strip():
                    return str(v), f"{where} ({k})"
                if isinstance(v, dict) and v:
                    return ", ".join(f"{a}={b}" for a, b in v.items() if isinstance(b, (str, int, float))), f"{where} ({k})"
    return None, None


def _runners(manifest: dict | None) -> dict:
    cfg = manifest.get("config") if isinstance(manifest, dict) else None
    out = {}
    if isinstance(cfg, dict):
        for k, v in cfg.items():
            if "runner" in k.lower() and isinstance(v, str):
                out[k] = v
        for exp in cfg.get("experiments", []) if isinstance(cfg.get("experiments"), list) else []:
            if isinstance(exp, dict) and isinstance(exp.get("runner_path"), str):
                out[str(exp.get("name", len(out)))] = exp["runner_path"]
    return out


def report(inputs=(), *, baseline=(), candidate=(), baseline_name: str | None = None, candidate_name: str | None = None,
           threads: int | None = None, seed: int = 0, resamples: int = 2000, threshold: float = 0.02, top: int = 15,
           taxonomy=None) -> dict:
    """Everything about a run folder (or one or two ETDumps / timeline CSVs) for the Markdown/HTML report:
    metadata as recorded, latency per configuration, the comparison and categories when there is a
    baseline and a candidate, breakdowns, kernel evidence, validation and the findings. What is missing is
    listed rather than guessed."""
    from . import __version__
    from .analysis.kernels import executed_from_profile, registered_vs_executed, summarize_kernels
    from .analysis.latency import robust_latency
    from .analysis.report import findings, representative_run, run_lanes
    from .conventions import EVIDENCE_NAMES
    from .io.latency_sources import resolve
    from .io.runfolder import (
        describe,
        display_path,
        find_etdumps,
        find_trace_logs,
        read_manifest,
        sme2_role,
    )
    from .taxonomy import DEFAULT, TAXONOMY_VERSION

    inputs = [str(x) for x in inputs]
    run_dir = Path(inputs[0]) if len(inputs) == 1 and Path(inputs[0]).is_dir() else None
    for x in inputs:
        if not Path(x).exists():
            raise InputError(x, "no such file or folder")
    missing: list[str] = []
    sme2_pair = False
    if baseline or candidate:
        if not (baseline and candidate):
            raise UsageError("give both --baseline and --candidate")
        arms = [("baseline", list(baseline)), ("candidate", list(candidate))]
    elif run_dir is None and len(inputs) == 2:
        r = assign_roles(inputs)
        sme2_pair = r.note.startswith("by name")
        arms = [("baseline", r.baseline), ("candidate", r.candidate)]
    elif run_dir is None and len(inputs) == 1:
        arms = [(None, inputs)]
    elif run_dir is not None:
        exps: dict[str, list[Path]] = {}
        for f in find_etdumps([run_dir]):
            rf = describe(f)
            if threads is None or rf.threads == threads:
                exps.setdefault(rf.experiment or f.stem, []).append(f)
        if not exps:
            raise InputError(run_dir, "no .etdump or .etdp files found" + (f" with {threads} thread(s)" if threads else ""))
        roles = {e: sme2_role(e) for e in exps}
        off = [e for e, r in roles.items() if r == "off"]
        on = [e for e, r in roles.items() if r == "on"]
        if len(off) == 1 and len(on) == 1:
            sme2_pair = True
            arms = [("baseline", [str(p) for p in exps[off[0]]]), ("candidate", [str(p) for p in exps[on[0]]])]
        else:
            arms = [(None, [str(p) for p in v]) for _, v in sorted(exps.items())]
            if len(exps) > 1:
                missing.append("no baseline/candidate pair: each experiment is reported on its own "
                               "(give --baseline and --candidate to compare two)")
    else:
        raise UsageError("give a run folder, one or two ETDumps/timeline CSVs, or --baseline and --candidate")
    if baseline and candidate:
        sme2_pair = sme2_role(" ".join(baseline)) == "off" and sme2_role(" ".join(candidate)) == "on"

    configs = []
    for role, specs in arms:
        files = [f for s in specs for f in resolve(s, run_dir, threads)]
        name = (baseline_name if role == "baseline" else candidate_name if role == "candidate" else None)
        first = files[0]
        rf = describe(first)
        prof = load_profile(first)
        if not name:
            name = rf.experiment or (first.stem if len(files) == 1 else os.path.commonprefix([f.stem for f in files]))
        lat = prof.latency_ms()
        latency_rep = robust_latency(lat, name=name, seed=seed, resamples=resamples, source=prof.latency_source)
        # every table and chart of the report uses the same runs: the steady runs after the detected warm-up
        skip = (latency_rep.get("warmup") or {}).get("count", 0)
        steady = prof.without_leading_runs(skip)
        bd = _breakdown_for(steady, name, taxonomy or DEFAULT, top)
        rep_run = representative_run(steady.latency_ms().tolist(), 0)
        configs.append({
            "name": name, "role": role, "files": [str(f) for f in files], "threads": rf.threads,
            "experiment": rf.experiment, "platform": rf.platform,
            "sme2_role": sme2_role(" ".join([rf.experiment or "", name, str(first)])),
            "evidence": "timeline_csv" if first.suffix == ".csv" else "etdump",
            "etrecord": prof.etrecord.status if prof.etrecord else "absent",
            "latency": latency_rep, "breakdown": bd,
            "runs_used": {"first": skip, "count": steady.n_runs, "total": prof.n_runs},
            "kernel_evidence": executed_from_profile(steady, taxonomy or DEFAULT),
            "lanes": {"run_index": rep_run + skip, "segments": run_lanes(steady, rep_run)},
            "launches": len(files),
        })
        del steady
        if configs[-1]["etrecord"] != "attached" and first.suffix != ".csv":
            missing.append(f"{name}: no ETRecord attached — op types and backend names are inferred from event names")
        del prof
    comparison = None
    pair = [c for c in configs if c["role"] in ("baseline", "candidate")]
    if len(pair) == 2:
        b, c = pair
        comparison = compare(b["files"], c["files"], baseline_name=b["name"], candidate_name=c["name"],
                             threshold=threshold, seed=seed, resamples=resamples, taxonomy=taxonomy, top=top)
    manifest, mpath, _ = read_manifest(run_dir if run_dir else Path(configs[0]["files"][0]).parent)
    device, device_src = _recorded_device(manifest)
    if device is None:
        missing.append("device: not recorded in the run (no device in manifest.json); edgeprof does not report the "
                       "analysis host as the device")
    kernels_part = None
    if run_dir is not None:
        logs = []
        traces = find_trace_logs(run_dir)
        for t in traces:
            k = kernels(t)
            logs.append({"path": display_path(t, run_dir), "role": sme2_role(display_path(t, run_dir)),
                         "summary": summarize_kernels(k["kernels"])})
        view = None
        on = [t for t in traces if sme2_role(display_path(t, run_dir)) == "on"]
        off = [t for t in traces if sme2_role(display_path(t, run_dir)) == "off"]
        if len(on) == 1 and len(off) == 1:
            view = kernel_view(off[0], on[0])
        kernels_part = {"logs": logs, "view": view, "registered_vs_executed": []}
        for role_ in ("on", "off"):
            regs = [x["summary"] for x in logs if x["role"] == role_]
            ran = [c["kernel_evidence"] for c in configs if c["sme2_role"] == role_ and c.get("kernel_evidence")]
            why = registered_vs_executed(regs, ran) if regs and ran else None
            if why:
                kernels_part["registered_vs_executed"].append({"role": role_, "statement": why,
                                                               "logs": [x["path"] for x in logs if x["role"] == role_],
                                                               "configs": [c["name"] for c in configs
                                                                           if c["sme2_role"] == role_]})
        if not logs:
            missing.append("no XNNPACK trace log in the run folder or a sibling `<platform>_trace` folder: kernel evidence "
                           "is the executed tier (op names) only")
    else:
        missing.append("no run folder: validation and trace-log kernel evidence are not part of this report")
    validation = validate(run_dir) if run_dir is not None else None
    data = {
        "schema_version": 1, "tool": "edgeprof", "version": __version__, "taxonomy_version": TAXONOMY_VERSION,
        "title": (f"{comparison['candidate']['name']} vs {comparison['baseline']['name']}" if comparison
                  else ", ".join(c["name"] for c in configs)),
        "metadata": {
            "run_dir": str(run_dir) if run_dir else None, "manifest": str(mpath) if mpath else None,
            "model": (manifest or {}).get("model") if isinstance((manifest or {}).get("model"), str) else
            describe(Path(configs[0]["files"][0])).model,
            "device": device, "device_source": device_src, "runners": _runners(manifest),
            "executorch": (manifest or {}).get("executorch") if isinstance((manifest or {}).get("executorch"), dict) else None,
        },
        "configs": configs, "comparison": comparison, "sme2_pair": sme2_pair, "kernels": kernels_part,
        "validation": validation, "missing": missing,
        "latency_evidence": "timeline_csv" if all(c["evidence"] == "timeline_csv" for c in configs) else "etdump",
    }
    data["findings"] = findings(data)
    data["evidence_names"] = EVIDENCE_NAMES
    return data


def _breakdown_for(prof, name, taxonomy, top):
    from .analysis.breakdown import breakdown as run_breakdown

    bd = run_breakdown(prof, taxonomy=taxonomy, top=top, name=name)
    bd.pop("operators_all", None)
    return bd
