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

ETDUMP_SUFFIXES = (".etdump", ".etdp")
_THREADS = re.compile(r"_t(\d{1,6})$")
_SEP = "._-"
ANCESTORS = 5  # how far above an ETDump to look for its ETRecord (runs/<platform>/<experiment>/ sits 3 deep)


@dataclass(frozen=True)
class RunFile:
    path: Path
    stem: str
    model: str | None = None
    experiment: str | None = None
    platform: str | None = None
    threads: int | None = None


def find_etdumps(inputs) -> list[Path]:
    """ETDump files named by ``inputs`` (files as given; folders searched recursively), sorted, unique."""
    out: list[Path] = []
    seen = set()
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.suffix in ETDUMP_SUFFIXES and f.is_file()
                           and not any(part.startswith(".") for part in f.relative_to(p).parts))
        else:
            found = [p]
        for f in found:
            key = f.resolve()
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out


def output_prefix(etdump: Path) -> str:
    """The kit's CSV prefix: ``<stem>_exec``, or ``<stem>_xtrace`` for ``*_xtrace`` ETDumps."""
    stem = etdump.stem
    return stem[: -len("_xtrace")] + "_xtrace" if stem.endswith("_xtrace") else stem + "_exec"


def analysis_files(etdump: Path, ext: str = ".csv") -> dict[str, str]:
    """The names ``analyze`` writes for an ETDump (the kit's, shortened with a hash only beyond 255 bytes)."""
    from .files import fit_name

    prefix = output_prefix(etdump)
    return {"timeline_all": fit_name(prefix, f"_all_runs_timeline{ext}"),
            "timeline_run0": fit_name(prefix, f"_run0_timeline{ext}"),
            "ops_stats": fit_name(prefix, f"_ops_stats{ext}"),
            "robust_stats": fit_name(f"{prefix}_all_runs_timeline", "_robust_stats.json")}


def _pipeline_stems(folder: Path) -> list[str]:
    try:
        return sorted((f.name[: -len("_pipeline_summary.json")] for f in folder.glob("*_pipeline_summary.json")),
                      key=len, reverse=True)
    except OSError:
        return []


def describe(path: Path) -> RunFile:
    """Model, experiment, platform and threads from the kit's naming grammar (None where unknown)."""
    stem = path.stem
    m = _THREADS.search(stem)
    threads = int(m.group(1)) if m else None
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
        if experiment is None and m:
            experiment = base
    from .files import display

    def shown(v):
        return display(v) if v is not None else None

    return RunFile(path=path, stem=stem, model=shown(model), experiment=shown(experiment), platform=shown(platform),
                   threads=threads)


def read_manifest(run_dir: Path) -> tuple[dict | None, Path | None, str | None]:
    """``manifest.json`` in ``run_dir`` (or up to two levels above): (content, path, problem)."""
    from ..errors import InputError
    from .files import is_file, read_regular

    for d in (run_dir, run_dir.parent, run_dir.parent.parent):
        f = d / "manifest.json"
        if is_file(f):
            try:
                doc = json.loads(read_regular(f, 64 << 20, "manifest").decode("utf-8"))
            except InputError as e:
                return None, f, f"{e}; ignored"
            except (ValueError, RecursionError) as e:
                return None, f, f"{f}: unreadable manifest.json ({str(e)[:160]}); ignored"
            if not isinstance(doc, dict):
                return None, f, f"{f}: manifest.json is not a JSON object; ignored"
            return doc, f, None
    return None, None, None


def _prefix_len(record_stem: str, etdump_stem: str) -> int:
    """Length of ``record_stem`` if it is a prefix of ``etdump_stem`` ending at a separator, else 0."""
    if record_stem == etdump_stem:
        return len(record_stem) + 1
    if etdump_stem.startswith(record_stem) and etdump_stem[len(record_stem)] in _SEP:
        return len(record_stem)
    return 0


def _record_stem(p: Path) -> str:
    name = p.name[: -len(".etrecord")]
    return name.removesuffix(".pte")


def find_etrecord(etdump: Path, manifest: dict | None = None, manifest_path: Path | None = None) -> tuple[Path | None, str]:
    """Locate the ETRecord for ``etdump``: (path or None, how it was found).

    An ETRecord is taken only when its name is a prefix of the ETDump's (at a ``_``/``.``/``-``
    boundary), the longest such prefix in the nearest folder winning.
    """
    from .files import is_file

    if manifest and isinstance(manifest.get("model"), str) and 0 < len(manifest["model"]) < 4096:
        model = Path(manifest["model"])
        bases = [model] if model.is_absolute() else [b / model for b in
                                                     ([manifest_path.parent] if manifest_path else []) + [Path.cwd()]]
        for b in bases:
            try:
                cands = (Path(str(b) + ".etrecord"), b.with_suffix(".etrecord"))
            except ValueError:  # a name with no usable suffix
                cands = (Path(str(b) + ".etrecord"),)
            for cand in cands:
                if is_file(cand):
                    return cand, "manifest.json model"
    # beside the ETDump, in the folders above it, and in their artifacts/ folders (out_<model>/artifacts)
    folders = []
    d = etdump.parent
    for _ in range(ANCESTORS):
        folders.append(d)
        if (d / "artifacts").is_dir():
            folders.append(d / "artifacts")
        if d.parent == d:
            break
        d = d.parent
    best, best_len = None, 0
    for folder in folders:
        try:
            cands = sorted(folder.glob("*.etrecord"))
        except OSError:
            continue
        for c in cands:
            n = _prefix_len(_record_stem(c), etdump.stem)
            if n > best_len:
                best, best_len = c, n
        if best is not None:
            return best, "beside the ETDump" if folder == etdump.parent else f"in {folder}"
    return None, "none found"


# --------------------------------------------------------------------------------------------------
# SME2 on/off roles and XNNPACK trace logs
# --------------------------------------------------------------------------------------------------

SME2_OFF = ("sme2_off", "sme2-off", "sme2off", "nosme2", "no_sme2", "no-sme2")
SME2_ON = ("sme2_on", "sme2-on", "sme2on")
TRACE_SUFFIX = "_xnntrace"
_TRACE_PROBE = 16 << 20  # kernel lines come at start-up: look this far into other *.log files
_TRACE_EXTS = (".log", ".txt", ".gz")


def sme2_role(text: str) -> str | None:
    """``"off"``/``"on"`` when a name says so (``sme2_off`` wins over ``sme2_on`` inside it), else None."""
    low = text.lower()
    if any(t in low for t in SME2_OFF):
        return "off"
    if any(t in low for t in SME2_ON):
        return "on"
    return None


def display_path(p: Path, run_dir: Path) -> str:
    """``p`` as a user reads it from the run folder: relative, ``../x`` for a sibling folder, else absolute."""
    try:
        return p.resolve().relative_to(run_dir.resolve()).as_posix() or "."
    except ValueError:
        try:
            return "../" + p.resolve().relative_to(run_dir.resolve().parent).as_posix()
        except ValueError:
            return str(p)


def trace_folders(run_dir: Path) -> list[Path]:
    """Where trace logs of a run folder live: the folder itself and a sibling ``<platform>_trace``."""
    out = [run_dir]
    sib = run_dir.parent / f"{run_dir.name}_trace"
    if sib.is_dir():
        out.append(sib)
    return out


def _looks_like_trace(f: Path) -> bool:
    if f.name.endswith((TRACE_SUFFIX + ".log", TRACE_SUFFIX + ".log.gz", TRACE_SUFFIX + ".txt")):
        return True
    if f.suffix == ".gz":
        return False
    try:
        with open(f, "rb") as fh:
            return b"microkernel '" in fh.read(_TRACE_PROBE)
    except OSError:
        return False


def find_trace_logs(run_dir: Path) -> list[Path]:
    """XNNPACK trace logs below ``run_dir`` and its ``<platform>_trace`` sibling: ``*_xnntrace.log`` files, and
    other ``*.log``/``*.txt`` files that hold ``Using … microkernel`` lines."""
    out = []
    for folder in trace_folders(run_dir):
        for f in sorted(folder.rglob("*")):
            if (f.suffix in _TRACE_EXTS and f.is_file() and not any(p.startswith(".") for p in f.relative_to(folder).parts)
                    and _looks_like_trace(f)):
                out.append(f)
    return out


def find_kernel_tables(run_dir: Path) -> list[Path]:
    """Kernel tables (``*_kernels.csv``, edgeprof's or the Arm kit's) below ``run_dir`` and its trace sibling."""
    out = []
    for folder in trace_folders(run_dir):
        out += [f for f in sorted(folder.rglob("*_kernels.csv")) if f.is_file()
                and not any(p.startswith(".") for p in f.relative_to(folder).parts)]
    return out


def trace_stem(path: Path) -> str:
    """``<prefix>`` of ``<prefix>_xnntrace.log`` (or the plain stem of another log)."""
    name = path.name
    for ext in (".gz", ".log", ".txt"):
        name = name.removesuffix(ext)
    return name.removesuffix(TRACE_SUFFIX)


def manifest_sme2_roles(manifest: dict | None) -> dict[str, str]:
    """experiment → ``"on"``/``"off"`` for manifest results marked with ``sme2``/``sme2_enabled``/``sme2_on``."""
    roles = {}
    results = manifest.get("results") if isinstance(manifest, dict) else None
    for r in results if isinstance(results, list) else []:
        if not isinstance(r, dict) or not isinstance(r.get("experiment"), str):
            continue
        for holder in (r, r.get("metrics") if isinstance(r.get("metrics"), dict) else {},
                       r.get("config") if isinstance(r.get("config"), dict) else {}):
            for key in ("sme2", "sme2_enabled", "sme2_on"):
                if key in holder:
                    v = holder[key]
                    on = v if isinstance(v, bool) else str(v).strip().lower() in ("on", "true", "1", "yes", "enabled")
                    roles[r["experiment"]] = "on" if on else "off"
    return roles
