"""Run folders as the Arm SME2 profiling kit lays them out, and the files around an ETDump.

Layouts understood (both appear in practice):

* nested: ``out_<model>/runs/<platform>/<experiment>/<stem>_<experiment>_t<threads>.etdump``
* flat:   ``out_<model>/runs/<platform>/<stem>_<experiment>_t<threads>.etdump``

plus ``manifest.json`` (its ``model`` names the ``.pte``), ``<stem>_pipeline_summary.json`` (names the
stem) and ETRecords next to the ETDump, its ``.pte``, or in ``out_<model>/artifacts/``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..conventions import ETDUMP_SUFFIXES, fit_name, profile_stem  # noqa: F401 - ETDUMP_SUFFIXES re-exported: readers and workspace name it
from .. import access
from .discovery import etrecord_folders, find_etrecord, find_program  # noqa: F401  (re-exported)
from .traces import trace_stem

_THREADS = re.compile(r"_t(\d{1,6})(?:_l(\d{1,6}))?$")  # ``_t<threads>``, and ``_l<launch>`` as edgeprof run names launches


@dataclass(frozen=True)
class RunFile:
    path: Path
    stem: str
    model: str | None = None
    experiment: str | None = None
    platform: str | None = None
    threads: int | None = None
    launch: int | None = None


def find_etdumps(inputs) -> list[Path]:
    """ETDump files named by ``inputs`` (files as given; folders searched recursively, a file that links outside
    the allowed roots not found), sorted, unique."""
    from ..files import is_dir, is_file, rglob
    from .formats import folder_tails

    out: list[Path] = []
    seen = set()
    for item in inputs:
        p = Path(item)
        if is_dir(p):
            tails = folder_tails()
            found = sorted(f for f in rglob(p) if f.name.lower().endswith(tails)
                           and is_file(f)
                           and not any(part.startswith(".") for part in f.relative_to(p).parts))
        else:
            found = [p]
        for f in found:
            key = f.resolve()
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out


MANIFEST = "manifest.json"  # the run's configuration, written by the collection step
NOISE = "noise.json"  # the launch-to-launch noise measured on the run's machine (edgeprof run / plan)
METRICS = "metrics.json"  # the runner's own latency figures
SUMMARY = "analysis_summary.json"  # what ``analyze`` found, one per analysed folder
TIMELINE_TAIL = "_all_runs_timeline.csv"  # the kit's full-timeline CSV: ``<stem>_exec_all_runs_timeline.csv``


def is_timeline_csv(path: Path) -> bool:
    return path.name.endswith(TIMELINE_TAIL)


def timeline_model_name(path: Path) -> str:
    """The model a kit file is named after: ``<model>_exec_all_runs_timeline.csv`` → ``<model>``."""
    return profile_stem(path).replace("_exec" + TIMELINE_TAIL[:-4], "")


def comparison_stem(baseline: str, candidate: str) -> str:
    """``<baseline>_vs_<candidate>_robust_comparison`` (the kit's comparison JSON, without ``.json``)."""
    return fit_name(f"{baseline}_vs_{candidate}", "_robust_comparison.json")[: -len(".json")]


def output_prefix(etdump: Path) -> str:
    """The kit's CSV prefix: ``<stem>_exec``, or ``<stem>_xtrace`` for ``*_xtrace`` ETDumps."""
    stem = profile_stem(etdump)
    return stem[: -len("_xtrace")] + "_xtrace" if stem.endswith("_xtrace") else stem + "_exec"


def analysis_files(etdump: Path, ext: str = ".csv") -> dict[str, str]:
    """The names ``analyze`` writes for an ETDump (the kit's, shortened with a hash only beyond 255 bytes)."""
    prefix = output_prefix(etdump)
    return {"timeline_all": fit_name(prefix, TIMELINE_TAIL.replace(".csv", ext)),
            "timeline_run0": fit_name(prefix, f"_run0_timeline{ext}"),
            "ops_stats": fit_name(prefix, f"_ops_stats{ext}"),
            "robust_stats": fit_name(f"{prefix}_all_runs_timeline", "_robust_stats.json")}


def breakdown_files(model: str, ext: str = ".csv") -> dict[str, str]:
    """The names ``breakdown`` writes: the kit's ``analyze_etdump_csv.py`` files, then ours."""
    return {"category_summary": fit_name(model, f"_category_summary{ext}"),
            "operator_details": fit_name(model, f"_operator_details{ext}"),
            "e2e_latency": fit_name(model, f"_e2e_latency{ext}"), "other_top_ops": fit_name(model, f"_other_top_ops{ext}"),
            "graph_breaks": fit_name(model, f"_graph_breaks{ext}"), "breakdown_json": fit_name(model, "_breakdown.json")}


def kernel_table_file(log: Path, ext: str = ".csv") -> str:
    """The name ``kernels`` writes for a log: ``<stem without _xnntrace>_kernels.csv``."""
    return fit_name(trace_stem(log), f"_kernels{ext}")


def _pipeline_stems(folder: Path) -> list[str]:
    from ..files import glob

    return sorted((f.name[: -len("_pipeline_summary.json")] for f in glob(folder, "*_pipeline_summary.json")),
                  key=len, reverse=True)


PLATFORMS = ("mac", "android", "linux")  # the kit's platforms: its experiments are named ``<platform>_<name>``
_KIT_EXPERIMENT = re.compile(r"^(.+)_(({})_[^/]+)$".format("|".join(PLATFORMS)))


def name_base(path: Path) -> str:
    """A launch file's name without the kit's suffixes: ``x_t4_l2.etdump``, ``x_t4_exec_all_runs_timeline.csv`` → ``x``."""
    stem = profile_stem(etdump_of_timeline(path) if is_timeline_csv(path) else path)
    m = _THREADS.search(stem)
    return (stem[: m.start()] if m else stem) or stem


def describe(path: Path) -> RunFile:
    """Model, experiment, platform and threads from the kit's naming grammar (None where unknown). A kit timeline
    CSV (``<prefix>_exec_all_runs_timeline.csv``) is named as its ETDump is; in a flat folder without a pipeline
    summary, ``<stem>_<platform>_<name>_t<T>`` splits at the last platform word (``gpt_xnn_mac_sme2_on_t1`` →
    model ``gpt_xnn``, experiment ``mac_sme2_on``, platform ``mac``)."""
    if is_timeline_csv(path):
        path = etdump_of_timeline(path)
    stem = profile_stem(path)
    m = _THREADS.search(stem)
    threads = int(m.group(1)) if m else None
    launch = int(m.group(2)) if m and m.group(2) else None
    base = stem[: m.start()] if m else stem
    parent = path.parent.name
    grand = path.parent.parent.name if path.parent.parent != path.parent else ""
    experiment = model = platform = None
    if parent and (base == parent or base.endswith("_" + parent)) and grand:
        experiment = parent  # nested layout
        model = base[: -len(parent) - 1] or None if base != parent else None
        platform = grand if path.parent.parent.parent.name == "runs" or grand in ("mac", "android", "linux") else None
    else:
        for s in _pipeline_stems(path.parent):
            if base.startswith(s + "_"):
                model, experiment = s, base[len(s) + 1:]
                break
        if grand == "runs":
            platform = parent
        kit = _KIT_EXPERIMENT.match(base) if experiment is None and m else None
        if kit:
            model, experiment, platform = kit.group(1), kit.group(2), platform or kit.group(3)
        elif experiment is None and m:
            experiment = base
    from ..files import display

    def shown(v):
        return display(v) if v is not None else None

    return RunFile(path=path, stem=stem, model=shown(model), experiment=shown(experiment), platform=shown(platform),
                   threads=threads, launch=launch)


def manifest_path(run_dir: Path, name: str = MANIFEST) -> Path | None:
    """Where ``manifest.json`` (or ``name``: ``noise.json``) of a run folder is: in it, or up to two levels above."""
    from ..files import is_file

    for d in (run_dir, run_dir.parent, run_dir.parent.parent):
        f = d / name
        if is_file(f):
            return f
    return None


def read_json_doc(f: Path, what: str = "JSON file") -> tuple[object, str | None]:
    """(parsed document, problem): an unreadable file is a problem to report, not an error."""
    from ..errors import InputError
    from ..files import read_regular

    try:
        return json.loads(read_regular(f, 64 << 20, what).decode("utf-8")), None
    except InputError as e:
        return None, str(e)
    except (ValueError, RecursionError) as e:
        return None, f"{f}: not valid JSON ({str(e)[:160]})"


def manifest_of(doc, f: Path, problem: str | None) -> tuple[dict | None, Path | None, str | None]:
    """(content, path, problem) of a manifest read by :func:`read_json_doc`."""
    if problem:
        return None, f, f"{problem}; ignored"
    if not isinstance(doc, dict):
        return None, f, f"{f}: manifest.json is not a JSON object; ignored"
    return doc, f, None


def read_manifest_file(f: Path) -> tuple[dict | None, Path | None, str | None]:
    """(content, path, problem): an unreadable manifest is a problem to report, not an error."""
    doc, problem = read_json_doc(f, "manifest")
    return manifest_of(doc, f, problem)


def read_manifest(run_dir: Path) -> tuple[dict | None, Path | None, str | None]:
    """``manifest.json`` in ``run_dir`` (or up to two levels above): (content, path, problem)."""
    f = manifest_path(run_dir)
    return read_manifest_file(f) if f is not None else (None, None, None)


TIMELINE_GLOB = "*" + TIMELINE_TAIL


def etdump_of_timeline(csv: Path) -> Path:
    """The ETDump a kit-named timeline CSV was made from (for its experiment and threads):
    ``<prefix>_exec_all_runs_timeline.csv`` (or the legacy ``<prefix>_all_runs_timeline.csv``) → ``<prefix>.etdump``."""
    name = csv.name
    for tail in ("_exec" + TIMELINE_TAIL, TIMELINE_TAIL):
        if name.endswith(tail) and len(name) > len(tail):
            return csv.with_name(name[: -len(tail)] + ".etdump")
    return csv


def resolve(spec: str, run_dir: Path | None = None, threads: int | None = None, ws=None) -> list[Path]:
    """Files named by one input: a file, a folder (every ETDump below it, else its timeline CSVs), or an
    experiment of ``run_dir`` (its ETDumps, else its timeline CSVs); one thread count only.

    ``threads`` has one meaning everywhere: the thread count the launches were measured with. Files whose name
    records another count (``_t<T>``) are left out of a folder, and a file named directly with another count is
    an error; files that record no count are taken as measured with ``threads``."""
    from ..errors import InputError, UsageError
    from ..files import check_regular, exists, is_dir, is_file, rglob

    def etdumps(folder: Path) -> list[Path]:
        return ws.etdumps(folder) if ws is not None else find_etdumps([folder])

    p = Path(spec)
    if is_file(p):
        named = describe(p).threads
        if threads is not None and named is not None and named != threads:
            raise UsageError(f"{p}: its name records {named} thread(s), not --threads {threads}")
        return [p]
    if exists(p) and not is_dir(p):
        check_regular(p)  # a FIFO, a device, a socket: refused with what it is
    if is_dir(p):
        files = etdumps(p) or [f for f in rglob(p, TIMELINE_GLOB) if is_file(f)]
        if not files:
            raise InputError(p, "no ETDump or timeline CSV below this folder")
        return _filter_threads(files, threads, p)
    if run_dir is not None:
        files = [f for f in etdumps(run_dir) if describe(f).experiment == spec]
        if not files:
            files = [f for f in rglob(run_dir, TIMELINE_GLOB) if is_file(f) and describe(f).experiment == spec]
        if not files:
            known = sorted({e for e in (describe(f).experiment for f in etdumps(run_dir)) if e})
            raise UsageError(f"no experiment '{spec}' in {run_dir}" + (f" (experiments: {', '.join(known)})" if known else ""))
        return _filter_threads(files, threads, run_dir)
    raise InputError(p, "no such file or folder" + _experiment_hint(spec))


def _experiment_hint(spec: str) -> str:
    """For a bare name that is no file: the run folders below the current folder (4 levels, hidden ones skipped,
    5,000 folders at most) holding an experiment of that name, as the --run-dir to give."""
    import os

    from ..files import subfolders

    if not spec or "/" in spec or os.sep in spec or spec.startswith("."):
        return ""
    found, frontier, budget = [], [Path(".")], 5000
    for _ in range(4):
        nxt = []
        for d in frontier:
            subs = [d / n for n in subfolders(d) if n[0] != "."]  # real folders, listed from the root
            found += [str(d) for x in subs if x.name == spec and access.inside(x)]
            nxt += subs
            budget -= len(subs)
            if budget <= 0 or len(found) >= 3:
                break
        frontier = nxt
        if budget <= 0 or len(found) >= 3 or not frontier:
            break
    if found:
        return f"; as an experiment name it needs --run-dir: {', '.join(sorted(found)[:3])} hold(s) one named so"
    return "; an experiment name needs --run-dir RUN_DIR"


def _filter_threads(files: list[Path], threads: int | None, where: Path) -> list[Path]:
    from ..errors import UsageError

    if threads is not None:  # the files measured with `threads`, and those that record no count
        files = [f for f in files if describe(f).threads in (threads, None)]
        if not files:
            raise UsageError(f"nothing measured with {threads} thread(s) in {where}")
        return files
    counts = {describe(f).threads for f in files}
    if len(counts) > 1:
        raise UsageError(f"{where} holds runs with different thread counts {sorted(c for c in counts if c)}: "
                         "choose one with --threads")
    return files


def display_path(p: Path, run_dir: Path) -> str:
    """``p`` as a user reads it from the run folder: relative, ``../x`` for a sibling folder, else absolute."""
    try:
        return p.resolve().relative_to(run_dir.resolve()).as_posix() or "."
    except ValueError:
        try:
            return "../" + p.resolve().relative_to(run_dir.resolve().parent).as_posix()
        except ValueError:
            return str(p)
