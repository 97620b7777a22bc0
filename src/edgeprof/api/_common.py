"""Helpers the API modules share: paths relative to a run folder, the workspace of a call, the taxonomy."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import overload

from ..conventions import OP_TYPES_REF
from ..errors import UsageError
from ..io.workspace import ReadOptions, Workspace


@overload
def rel(p: None, base: Path) -> None: ...
@overload
def rel(p: str | os.PathLike, base: Path) -> str: ...
def rel(p, base: Path) -> str | None:
    """``p`` relative to ``base`` (POSIX), or absolute when it lies elsewhere."""
    if p is None:
        return None
    p = Path(p)
    try:
        return p.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return str(p.resolve())


def workspace(ws: Workspace | None, root=None, *, op_types: str = OP_TYPES_REF, **options) -> Workspace:
    """The workspace a call reads through: the one given (shared by the commands of a report), else a new one
    with these :class:`~edgeprof.io.workspace.ReadOptions`, holding op-type lists as ``op_types`` says (by id,
    for the analyses: no list column of the events' length; a call that hands its profile to the user keeps the
    lists inline). A read option asked of a call that the given workspace does not have is a usage error — the
    workspace reads every input once, with its own options, so the call's would be silently dropped."""
    if ws is None:
        return Workspace(root, ReadOptions(**{k: v for k, v in options.items() if v is not None}), op_types=op_types)
    for name, value, have in ws.options.conflicts(**options):
        raise UsageError(f"{name}={value!s} differs from the shared Workspace's "
                         f"({'none' if have is None else have}); give it when making the Workspace")
    return ws


def taxonomy_of(taxonomy):
    """The built-in taxonomy (None), a :class:`~edgeprof.taxonomy.Taxonomy`, or one read from a TOML file."""
    from ..taxonomy import DEFAULT, Taxonomy

    if taxonomy is None:
        return DEFAULT
    if isinstance(taxonomy, Taxonomy):
        return taxonomy
    from ..io.taxonomy_file import read_taxonomy

    return read_taxonomy(taxonomy)


def checked_threshold(threshold, upper: float = 1.0) -> float:
    """The verdict threshold δ of every command (compare, plan, report, history): a fraction in [0, ``upper``)."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold < upper:
        raise UsageError(f"threshold must be a fraction in [0, {upper:g}), got {threshold!r}")
    return float(threshold)


def as_list(inputs) -> list:
    if isinstance(inputs, (str, os.PathLike)):
        return [inputs]
    out = list(inputs)
    if not out:
        raise UsageError("no input given")
    return out


def common_root(paths: list[Path]) -> Path:
    """The folder the user named: the one folder given, else the deepest folder holding every input."""
    from ..files import is_dir

    if len(paths) == 1 and is_dir(paths[0]):
        return paths[0]
    parents = [p if is_dir(p) else p.parent for p in paths]
    return Path(os.path.commonpath([str(p.resolve()) for p in parents]))


def ane_boundary(boundary_ms: float | None) -> float:
    """The ANE analyses' island boundary in ms: the default when not given; a negative one is a usage error."""
    from ..analysis.ane import DEFAULT_BOUNDARY_MS

    b = DEFAULT_BOUNDARY_MS if boundary_ms is None else boundary_ms
    if b < 0:
        raise UsageError("--boundary-ms must not be negative")
    return b


class KeptStream:
    """An ETDump's blocks of runs, each with its ETRecord attached as to the whole file (iterate: (block, its first
    row in the file) pairs), of which only
    ``columns`` of the events are kept; once the blocks are exhausted :meth:`profile` is the file's profile with
    those columns (:class:`~edgeprof.model.BlockStack`). Raises :class:`~edgeprof.model.ReadWhole` when a block's ETRecord outcome
    (status, warnings) differs from the first block's: the whole file's outcome is then unknown block by block."""

    def __init__(self, ws: Workspace, path: Path, columns, block_events: int | None):
        from ..model import BlockStack

        self.ws, self.path = ws, Path(path)
        self.blocks, self.reader = ws.profile_blocks(self.path, block_events)
        self.kept = BlockStack(columns)
        self.attached: list = []  # (ETRecord info, its warnings) of the first block

    def __iter__(self):
        from ..model import ReadWhole

        reader = self.reader
        for block in self.blocks:
            state = (block.etrecord, block.warnings[len(reader.block_warnings):])
            if not self.attached:
                self.attached.append(state)
            elif state != self.attached[0]:
                raise ReadWhole
            yield block, reader.n_events - block.n_events
            self.kept.add(block)
            del block

    def profile(self):
        """The file's profile, the kept columns of every event (a no-run file refused as reading it whole would)."""
        import dataclasses

        from ..io.etdump_read import check_has_runs

        prof = self.kept.profile(self.reader.warnings + self.attached[0][1])
        prof = dataclasses.replace(prof, etrecord=self.attached[0][0])
        prof.sha256 = self.reader.sha256
        if not self.ws.allow_empty:
            check_has_runs(prof, self.path)
        return prof


LAUNCH_NUMBER = re.compile(r"[._-]l\d+$")  # ``_l<k>``: the launch number edgeprof run gives a profile's name


def shared_name(paths) -> str:
    """What the profiles' names share once their launch numbers are left out (``cnn_t1_l1``, ``cnn_t1_l2`` →
    ``cnn_t1``)."""
    from ..conventions import profile_stem

    stems = [LAUNCH_NUMBER.sub("", profile_stem(p)) for p in paths]
    return os.path.commonprefix(stems).rstrip("._-") or stems[0]  # noqa: RUF071 - stems are names: their common leading text


def launch_facts_of(ws: Workspace, f: Path) -> dict:
    """What the run recorded about the launch that wrote ``f`` (:func:`edgeprof.io.manifest.launch_facts`; a
    timeline CSV stands for the ETDump it was made from)."""
    from ..io.manifest import launch_facts
    from ..io.readers import input_format

    manifest, _, _ = ws.manifest(f.parent)
    fmt = input_format(f)
    return launch_facts(manifest, fmt.call("stands_for", f) if fmt.stands_for is not None else f)


def configurations(ws: Workspace, files: list[Path], *, unnamed: str = "together") -> dict[str, list[Path]]:
    """``files`` grouped by configuration (:func:`edgeprof.io.manifest.configuration`: experiment, program,
    runtime and its options, from the manifest where one records them, else from the names). Files that name no
    experiment and whose manifest records none are, with ``unnamed="together"``, the launches of one
    configuration, as ``compare -b FILES`` takes them; with ``"by_name"`` (a folder's files, as ``report``
    lists them) one configuration per name without its launch number (``m_l1``, ``m_l2`` → ``m``). Each group
    is named by its experiment, with its thread count when one experiment ran with several, else by what its
    files' names share."""
    from ..conventions import profile_stem
    from ..io.manifest import configuration

    keyed: dict[tuple, list[Path]] = {}
    for f in files:
        facts = launch_facts_of(ws, f)
        if facts.get("experiment") or facts.get("program"):
            key = configuration(facts)
        else:
            key = (("name", LAUNCH_NUMBER.sub("", profile_stem(f))),) if unnamed == "by_name" else ()
        keyed.setdefault(key, []).append(f)
    names: dict[str, list[Path]] = {}
    for key, fs in keyed.items():
        d = dict(key)
        exp = d.get("experiment")
        if exp is None:
            name = shared_name(fs)
        else:
            same = [k for k in keyed if dict(k).get("experiment") == exp]
            name = str(exp)
            if len(same) > 1 and d.get("threads") is not None:
                name += f" t{d['threads']}"
        while name in names:
            name += "'"
        names[name] = fs
    return names
