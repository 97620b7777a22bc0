"""Where an ETDump's ETRecord and program are: beside it, in the folders above it up to the one the user named
(each with its ``artifacts/``), the kit's ``<D>/artifacts``, and what ``manifest.json`` names — never outside the
folder the user named (under the agent server, its roots: :mod:`edgeprof.access`)."""

from __future__ import annotations

from pathlib import Path

from .. import access

SEP = "._-"  # what may follow a name that prefixes an ETDump's (``tel_xnn`` begins ``tel_xnn_t1_l1``)


def _prefix_len(record_stem: str, etdump_stem: str) -> int:
    """Length of ``record_stem`` if it is a prefix of ``etdump_stem`` ending at a separator, else 0."""
    if record_stem == etdump_stem:
        return len(record_stem) + 1
    if etdump_stem.startswith(record_stem) and etdump_stem[len(record_stem)] in SEP:
        return len(record_stem)
    return 0


def _record_stem(p: Path) -> str:
    name = p.name[: -len(".etrecord")]
    return name.removesuffix(".pte")


def _within(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except (ValueError, OSError):
        return False


def etrecord_folders(etdump: Path, root: Path | None = None) -> list[Path]:
    """Where an ETDump's ETRecord may be, nearest first, never outside the folder the user named (``root``;
    the ETDump's own folder when none): the ETDump's folder and each folder above it up to ``root``, each with
    its ``artifacts/``; and ``<D>/artifacts/`` when ``root`` lies inside ``<D>/runs/`` or inside ``out_<model>``
    (the kit's layout: ``<D>/runs/<platform>`` beside ``<D>/artifacts``), the same for every command. Under the
    agent server the roots bound it (:mod:`edgeprof.access`)."""
    from ..files import is_dir

    root = root if root is not None else etdump.parent
    if not is_dir(root):
        root = root.parent
    folders = []
    d = etdump.parent
    while True:
        folders.append(d)
        if is_dir(d / "artifacts"):
            folders.append(d / "artifacts")
        if not _within(d, root) or d.resolve() == root.resolve() or d.parent == d:
            break
        d = d.parent
    for up in [root, *root.resolve().parents]:
        # the kit's layout: <D>/runs/<platform> beside <D>/artifacts (D named out_<model> by the kit, anything
        # by edgeprof example / run)
        top = up.parent if up.name == "runs" else up if up.name.startswith("out_") else None
        if top is not None:
            if is_dir(top / "artifacts") and top / "artifacts" not in folders:
                folders.append(top / "artifacts")
            break
    return [f for f in folders if access.inside(f)]  # confined: never above the roots (then listed by the walk)


def _manifest_model(etdump: Path, manifest: dict | None) -> str | None:
    """The model ``manifest.json`` names for this ETDump: of a collection of several models (``models``: experiment
    → model, as ``edgeprof run`` writes it), the one of the experiment whose folder holds the ETDump or whose name
    begins the ETDump's; else the manifest's ``model``."""
    if not isinstance(manifest, dict):
        return None
    models = manifest.get("models")
    if isinstance(models, dict) and len(models) > 1:
        ok = {k: v for k, v in models.items() if isinstance(k, str) and isinstance(v, str) and 0 < len(v) < 4096}
        if etdump.parent.name in ok:
            return ok[etdump.parent.name]
        by_name = [k for k in ok if _prefix_len(k, etdump.stem)]
        if by_name:
            return ok[max(by_name, key=len)]
    model = manifest.get("model")
    return model if isinstance(model, str) and 0 < len(model) < 4096 else None


def find_etrecord(etdump: Path, manifest: dict | None = None, manifest_path: Path | None = None,
                  root: Path | None = None) -> tuple[Path | None, str]:
    """Locate the ETRecord for ``etdump``: (path or None, how it was found).

    ``manifest.json``'s model first (of several, the ETDump's own: :func:`_manifest_model`; an absolute path as
    recorded; a relative one from the manifest's folder, or its file name in the folders below) when the ETDump is
    named after it or no ETRecord is; else an ``.etrecord`` whose name is a prefix of the ETDump's (at a
    ``_``/``.``/``-`` boundary) in :func:`etrecord_folders`, the longest such prefix in the nearest folder winning.
    Nothing outside the folder the user named is looked at (not the current folder).
    """
    from ..files import glob, is_file

    folders = etrecord_folders(etdump, root)
    by_manifest = None
    named = _manifest_model(etdump, manifest)
    if named is not None:
        model = Path(named)
        bases = [model] if model.is_absolute() else \
            ([manifest_path.parent / model] if manifest_path else []) + [f / model.name for f in folders]
        by_manifest = next((c for b in bases for c in (Path(str(b) + ".etrecord"),
                                                       Path(str(b.with_name(b.stem)) + ".etrecord")) if is_file(c)),
                           None)
        if by_manifest is not None and _prefix_len(_record_stem(by_manifest), etdump.stem):
            return by_manifest, "manifest.json model"
    best, best_len, where = None, 0, ""
    for folder in folders:
        cands = [c for c in glob(folder, "*.etrecord") if is_file(c)]  # listed and probed from the root
        for c in cands:
            n = _prefix_len(_record_stem(c), etdump.stem)
            if n > best_len:
                best, best_len = c, n
        if best is not None:
            where = "beside the ETDump" if folder == etdump.parent else f"in {folder}"
            break
    # the manifest names the folder's model; an ETDump named after another model that has its own ETRecord
    # (two models profiled into one folder) gets that one
    if best is not None:
        return best, where
    if by_manifest is not None:
        return by_manifest, "manifest.json model"
    return None, "none found"


def find_program(etdump: Path, manifest: dict | None = None, manifest_path: Path | None = None,
                 root: Path | None = None) -> Path | None:
    """The ``.pte`` an ETDump was recorded from: a program ``manifest.json`` names (the kit's ``model``, or
    ``edgeprof run``'s experiments) whose name prefixes the ETDump's, else the ``.pte`` with the longest such
    prefix in :func:`etrecord_folders` (nearest folder first). Never outside the folder the user named."""
    from ..files import glob, is_file

    folders = etrecord_folders(etdump, root)
    named = []
    if isinstance(manifest, dict):
        named += [manifest.get("model")]
        exps = (manifest.get("config") or {}).get("experiments") if isinstance(manifest.get("config"), dict) else None
        named += [e.get("model") for e in exps or [] if isinstance(e, dict)]
    for m in named:
        if not isinstance(m, str) or not 0 < len(m) < 4096 or not m.endswith(".pte"):
            continue
        p = Path(m)
        bases = [p] if p.is_absolute() else ([manifest_path.parent / p] if manifest_path else []) + [f / p.name for f in folders]
        for b in bases:
            if _prefix_len(b.stem, etdump.stem) and is_file(b):
                return b
    for folder in folders:
        cands = [c for c in glob(folder, "*.pte") if is_file(c)]  # listed and probed from the root
        scored = [(_prefix_len(c.stem, etdump.stem), c) for c in cands]
        scored = [x for x in scored if x[0]]
        if scored:
            return max(scored, key=lambda x: x[0])[1]
    return None
