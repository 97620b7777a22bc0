"""What a collection wrote into its run folder — and only that — so ``edgeprof run --force`` can replace a
collection without touching anything else the folder holds (the user's notes, a model kept there).

The manifest keeps the SHA-256 of every file ``run`` wrote (``files``: the launches' ETDumps, debug buffers, logs,
kernel logs and the outputs set aside after a failure, the generated inputs in ``inputs/``, the ETRecords copied to
``artifacts/``, ``noise.json``, and with ``--report`` the analysis outputs and the report). ``--force`` removes:

* ``manifest.json`` and ``metrics.json`` — the record itself, replaced by the new collection's;
* each recorded file that is still a regular file (never a link) inside the folder with the recorded content;
* the analysis outputs ``analyze`` derives by name from a recorded ETDump whose content was verified
  (``<stem>_exec_all_runs_timeline.csv`` …), also when a later ``analyze`` wrote them: a timeline CSV left
  beside the new collection would otherwise be read as a measurement of it.

Anything else stays — a path a forged manifest names without the recorded content, a link, a file whose content
changed, a report written later by hand — and is named in a warning. A manifest without hashes (an older
edgeprof's) is not replaced at all. Before a collection writes (:func:`nothing_in_the_way`), every folder it
writes into must be a real folder of the run folder (or not there yet), every file it is about to write must be
absent, and ``inputs/`` (where the generated inputs go) empty: a file, link or folder link left in the way is
refused, never written through or read. Its processes write only into private folders; the parent puts each file
in place (:mod:`edgeprof.collect.staging`) and records the SHA-256 of what it wrote.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path, PurePosixPath

from ..collect.staging import INPUTS_FOLDER, in_the_way, real_folder
from ..errors import UsageError
from ..files import display, is_dir, is_file
from ..io.runfolder import MANIFEST, METRICS, NOISE, SUMMARY, analysis_files, read_manifest_file

RECORD = (MANIFEST, METRICS)                           # the collection's record: always replaced
DERIVED = (NOISE, SUMMARY, "report.md", "report.html")  # written beside the launches by run/analyze/report
FAILED_SUFFIX = ".failed"                               # a launch that did not finish: its outputs set aside so
FILES = "files"                                         # the manifest's key: {relative POSIX path: sha256}


def digest(path: Path) -> str | None:
    """SHA-256 of the regular file at ``path``, opened without following a link; None for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        h = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


def _relative(p: Path, run_dir: Path) -> str | None:
    """``p`` as a POSIX path relative to ``run_dir`` when it lies inside (by name, no ``..``), else None."""
    try:
        rel = PurePosixPath(Path(os.path.abspath(p)).relative_to(os.path.abspath(run_dir)).as_posix())
    except ValueError:
        return None
    return None if not rel.parts or ".." in rel.parts else str(rel)


def _inside(rel: object, run_dir: Path) -> Path | None:
    """The path a manifest's relative name stands for, or None when it is not a plain path inside ``run_dir``
    (absolute, ``..``, empty, not text) or its folder leads outside through a link."""
    if not isinstance(rel, str) or not rel or "\x00" in rel:
        return None
    pp = PurePosixPath(rel)
    if pp.is_absolute() or ".." in pp.parts or pp.parts in ((), (".",)):
        return None
    p = run_dir.joinpath(*pp.parts)
    top, parent = os.path.realpath(run_dir), os.path.realpath(p.parent)
    if parent != top and not parent.startswith(top.rstrip(os.sep) + os.sep):
        return None
    return p


def recorded(run_dir: Path, written: dict) -> dict[str, str]:
    """``{relative path: sha256}`` of ``{path: sha256 of what was written there}`` (paths inside ``run_dir``)."""
    out = {}
    for p, h in written.items():
        rel = _relative(Path(p), run_dir)
        if rel is not None:
            out[rel] = h
    return out


def record(run_dir: Path, paths) -> dict[str, str]:
    """``{relative path: sha256}`` of the regular files among ``paths`` inside ``run_dir`` (links and absent
    files are left out)."""
    out = {}
    for p in paths:
        if p is None:
            continue
        rel = _relative(Path(p), run_dir)
        if rel is not None and (h := digest(Path(p))) is not None:
            out[rel] = h
    return out


def derived(run_dir: Path, etdumps) -> list[Path]:
    """The files ``analyze``, ``report`` and ``run`` write by name for these ETDumps and beside them."""
    from ..io.timeline_csv import op_types_file

    named = [run_dir / f for f in DERIVED]
    named += sorted(p for p in run_dir.glob("report_t*") if p.suffix in (".md", ".html"))  # one per thread count
    for e in etdumps:
        for ext in (".csv", ".parquet"):
            files = analysis_files(e, ext)
            named += [e.parent / n for n in files.values()]
            if ext == ".csv":  # the op-type lists the timelines refer to
                named += [op_types_file(e.parent / files[k]) for k in ("timeline_all", "timeline_run0")]
    return named


def verified(run_dir: Path, manifest: dict) -> tuple[list[Path], list[str]]:
    """(the recorded files present with their recorded content, the recorded names that are not)."""
    files = manifest.get(FILES)
    ok, not_ok = [], []
    for rel, h in (files.items() if isinstance(files, dict) else ()):
        p = _inside(rel, run_dir)
        if p is not None and isinstance(h, str) and digest(p) == h:
            ok.append(p)
        elif p is None or os.path.lexists(p):
            not_ok.append(str(rel)[:200])
    return ok, not_ok


def written_files(run_dir: Path, manifest: dict) -> list[Path]:
    """The files of the collection described by ``manifest`` that ``--force`` removes, sorted."""
    ok, _ = verified(run_dir, manifest)
    named = set(ok) | {run_dir / f for f in RECORD}
    etdumps = [p for p in ok if p.suffix in (".etdump", ".etdp")]
    for p in derived(run_dir, etdumps):
        if p.parent != run_dir:  # per-ETDump outputs; the folder's own (report.md …) only when recorded
            named.add(p)
    out = []
    for p in named:
        try:
            if stat.S_ISREG(os.lstat(p).st_mode) and _inside(_relative(p, run_dir), run_dir) is not None:
                out.append(p)
        except (OSError, ValueError):
            continue
    return sorted(out)


def clear(run_dir: Path, manifest: dict) -> tuple[list[Path], list[str]]:
    """Remove the collection's files (:func:`written_files`), then the folders they leave empty; anything else
    stays. Returns (what was removed, the recorded names that were kept because their content or kind is not
    what was recorded)."""
    _, kept = verified(run_dir, manifest)
    removed = []
    for p in written_files(run_dir, manifest):
        try:
            p.unlink()
            removed.append(p)
        except FileNotFoundError:
            pass
    folders = sorted({p.parent for p in removed}, key=lambda d: len(d.parts), reverse=True)
    for d in folders:
        while d != run_dir and _inside(_relative(d, run_dir), run_dir) is not None:
            try:
                d.rmdir()  # only when empty
            except OSError:
                break
            d = d.parent
    return removed, kept


def blocked(paths) -> Path | None:
    """The first of ``paths`` that exists (a file, a link — even a dangling one — or anything else)."""
    return next((Path(p) for p in paths if p is not None and os.path.lexists(p)), None)


def prepare_folder(run_dir: Path, force: bool, check=None) -> list[str]:
    """An empty or absent folder is used as it is; a collection edgeprof wrote is replaced with ``--force`` —
    only the files its manifest recorded with their content (:mod:`edgeprof.api.run_outputs`), never the rest of
    the folder. ``check(gone)`` is called before anything is removed, with the set of files that will be (a
    refusal there leaves the folder as it was). Returns warnings (recorded files kept because they changed)."""
    check = check or (lambda gone: None)
    if not os.path.lexists(run_dir):
        check(set())
        return []
    if not is_dir(run_dir):
        raise UsageError(f"{display(run_dir)} exists and is not a folder")
    if not any(run_dir.iterdir()):
        check(set())
        return []
    if not force:
        raise UsageError(f"{display(run_dir)} exists and is not empty: give --force to replace the collection in it, "
                         "or another --out")
    manifest, _, _ = read_manifest_file(run_dir / MANIFEST) if is_file(run_dir / MANIFEST) else (None, None, None)
    if not (isinstance(manifest, dict) and manifest.get("tool") == "edgeprof"):
        raise UsageError(f"{display(run_dir)} is not empty and holds no collection edgeprof wrote (no manifest.json of "
                         "edgeprof's): not replaced, even with --force")
    if not isinstance(manifest.get(FILES), dict):
        raise UsageError(f"{display(run_dir)}: its manifest.json records no file contents (an older edgeprof wrote it): "
                         "not replaced, even with --force; remove the folder yourself or choose another --out")
    check(set(written_files(run_dir, manifest)))
    _, kept = clear(run_dir, manifest)
    if not kept:
        return []
    return [f"--force kept {len(kept)} file(s) the previous manifest names but whose content or kind is not what it "
            f"recorded: {', '.join(kept[:5])}{' …' if len(kept) > 5 else ''}"]


def planned(cfg, launches, run_dir: Path) -> list[Path]:
    """Every file of a name known beforehand the collection is about to write into the run folder (its processes
    write into private folders only; the generated inputs' names depend on the models, see
    :func:`nothing_in_the_way`)."""
    out = [run_dir / f for f in (*RECORD, NOISE)]
    out += [run_dir / "artifacts" / f"{e.model.stem}.etrecord" for e in cfg.experiments]
    for ln in launches:
        out += ln.outputs()
        if ln.etdump is not None:
            out += [ln.etdump.with_suffix(".bin"), ln.etdump.with_name(ln.etdump.name + FAILED_SUFFIX)]
    return out


def generates_inputs(cfg) -> bool:
    """Whether the collection's workers generate inputs (cached in ``RUN_DIR/inputs``)."""
    return cfg.inputs is None and any(e.kind == "python" for e in cfg.experiments)


def nothing_in_the_way(cfg, launches, run_dir: Path, gone=frozenset()) -> None:
    """A collection writes only where nothing is: a link or non-folder where one of its folders belongs, a file or
    link left at one of its outputs (one ``--force`` does not remove because the previous collection did not record
    it: not in ``gone``), or anything else in ``inputs/`` when it generates inputs (a cache it did not write) is
    refused in one line, never written through, replaced or read."""
    folders = {run_dir / "artifacts", *(ln.folder for ln in launches)}
    if generates_inputs(cfg):
        folders.add(run_dir / INPUTS_FOLDER)
    for f in sorted(folders):
        real_folder(run_dir, f, make=False)
    p = blocked(q for q in planned(cfg, launches, run_dir) if q not in gone)
    if p is None and generates_inputs(cfg) and os.path.isdir(run_dir / INPUTS_FOLDER):
        p = next(iter(sorted(q for q in (run_dir / INPUTS_FOLDER).iterdir() if q not in gone)), None)
    if p is not None:
        raise in_the_way(p)


def put_in_place(run_dir: Path, launch, stage, written: dict, *, ok: bool, interrupted: bool = False) -> list[str]:
    """Put what the launch wrote in its staging folder in place (:func:`edgeprof.collect.staging.place`): its
    profile — under ``<name>.failed`` when the launch did not finish, so no analysis takes it for a measurement —,
    its debug buffer (the bytes the recording used), its log and xnntrace log; interrupted, only the profile (set
    aside) and the log not put in place yet. Adds {path: SHA-256} to ``written``; returns the names set aside."""
    from ..collect.staging import open_staged, place

    etd = launch.etdump
    buf = etd.with_suffix(".bin") if etd is not None else None
    aside = []
    for final in (etd, buf, launch.log, None if interrupted else launch.xnntrace):
        staged = stage.regular(final)
        if final is None or staged is None or (interrupted and final == buf):
            continue
        target = final.with_name(final.name + FAILED_SUFFIX) if final == etd and not ok else final
        if interrupted and (final in written or target in written):  # already in place
            continue
        limit = None
        if final == buf and ok:
            from ..io.debug_buffer import recorded_size

            limit = recorded_size(stage(etd))
        with open_staged(staged) as src:
            written[target] = place(run_dir, target, src, limit=limit)
        if target != final:
            aside.append(target.name)
    return aside


def publish_inputs(run_dir: Path, folder: Path, done: set) -> dict:
    """The inputs the workers generated (in the collection's private folder), put in ``RUN_DIR/inputs`` for the
    record — never read back from there. Returns {path: SHA-256}."""
    from ..collect.staging import INPUTS_FOLDER, cached_inputs, open_staged, place

    written = {}
    for p in cached_inputs(folder):
        if p.name not in done:
            target = run_dir / INPUTS_FOLDER / p.name
            with open_staged(p) as src:
                written[target] = place(run_dir, target, src)
            done.add(p.name)
    return written
