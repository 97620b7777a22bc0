"""Where a collection writes: its processes into private folders, the parent alone into the run folder.

Every process a launch starts writes into a **staging folder** the parent made for that launch — a fresh folder
only this user can enter (0700, under ``TMPDIR``, :func:`edgeprof.child.private_folder`), so nothing can have
been placed in it: a Python worker runs in it (its working folder) and writes its profile, debug buffer,
scratch files and report there; an ``executor_runner``-style binary runs in its launch folder, as the Arm kit
runs it, but its ``--etdump_path`` and its output (``_latency.log``, ``_xnntrace.log``) point into the staging
folder; ``adb pull`` lands there. Each file there carries the name it will have in the run folder. Generated
inputs are cached in the collection's own private folder (:func:`inputs_folder`), which only its workers read
and write.

The parent then puts each file in place (:func:`place`) and removes the staging folder whole — it made it, so
nothing is found by name. A dry run has no staging folder: its commands show the names the files end up under.

Every file that reaches the run folder — a launch's files, the generated inputs, the ETRecords copied to
``artifacts/``, the manifest — is put there by :func:`place`:

* into a **real folder of the run folder** (:func:`real_folder`): walked from the run folder one component at a
  time without following a link (made when missing); a link or a file where a folder belongs is refused in one
  line — the collection never writes into a folder outside through a link;
* through **the one writer** (:mod:`edgeprof.writer`), told which folder it checked: atomic, the content linked
  into place from a descriptor; a different folder found there by then, or a link, FIFO or device at the name,
  is refused — never written through;
* under a name where nothing is (the manifest excepted: the collection rewrites it as it goes): a file or link
  left there is refused (:func:`in_the_way`), never replaced;
* with the SHA-256 of the bytes written, which the manifest records (``files``; what ``run --force`` may remove).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path
from typing import overload

from .. import child
from ..errors import UsageError
from ..files import display

_WALK = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)

INPUTS = re.compile(r"inputs_[0-9a-f]{16}\.npz")  # a generated-inputs cache, as the workers name it
INPUTS_FOLDER = "inputs"  # where the parent puts them in the run folder


class Stage:
    """The staging folder of one launch (None in a dry run: paths are then the final ones)."""

    def __init__(self, launch, *, dry: bool = False):
        self.launch = launch
        self.folder = None if dry else Path(child.private_folder("edgeprof-launch-"))

    @overload
    def __call__(self, final: Path) -> Path: ...
    @overload
    def __call__(self, final: Path | None) -> Path | None: ...
    def __call__(self, final: Path | None) -> Path | None:
        """Where the launch's processes write the file that ends up at ``final``."""
        if final is None or self.folder is None:
            return final
        return self.folder / final.name

    @property
    def result(self) -> Path:
        """The Python worker's report (read by the parent, never put in the run folder)."""
        ln = self.launch
        name = f".{ln.stem}{'' if ln.etdump_on else '_noetdump'}.worker.json"
        return ln.folder / name if self.folder is None else self.folder / name

    def regular(self, final: Path | None) -> Path | None:
        """The staged file for ``final`` when the launch wrote one (a regular file), else None."""
        p = self(final)
        try:
            return p if p is not None and stat.S_ISREG(os.lstat(p).st_mode) else None
        except OSError:
            return None

    def remove(self) -> None:
        child.remove_folder(str(self.folder) if self.folder else None)
        self.folder = None


def inputs_folder(dry: bool, run_dir: Path) -> Path:
    """Where the workers cache generated inputs: the collection's private folder (a dry run shows
    ``RUN_DIR/inputs``, where the parent puts them)."""
    return run_dir / INPUTS_FOLDER if dry else Path(child.private_folder("edgeprof-inputs-"))


def cached_inputs(folder: Path) -> list[Path]:
    """The generated-inputs caches the workers wrote in ``folder`` (regular files named as they name them)."""
    out: list[Path] = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for n in names:
        try:
            if INPUTS.fullmatch(n) and stat.S_ISREG(os.lstat(folder / n).st_mode):
                out.append(folder / n)
        except OSError:
            continue
    return out


def in_the_way(p: Path) -> UsageError:
    """The refusal of a name the collection writes where something already is."""
    kind = "a symbolic link" if os.path.islink(p) else \
        "a file that is not the previous collection's (not in its record, or changed since)"
    return UsageError(f"{display(p)}: {kind} is where the collection writes: not replaced; move it away or "
                      "choose another --out")


def _not_a_folder(p: Path) -> UsageError:
    kind = "a symbolic link" if os.path.islink(p) else "not a folder"
    return UsageError(f"{display(p)}: {kind} where the collection writes a folder of its run folder: not followed; "
                      "move it away or choose another --out")


def real_folder(run_dir: Path, folder: Path, *, make: bool = True) -> tuple[int, int] | None:
    """The (dev, ino) of ``folder`` — ``run_dir`` itself (as the user named it) or a folder inside it — walked from
    ``run_dir`` without following a link (:func:`edgeprof.outputs.folder_beneath`); missing folders are made
    (``make``; else None at the first missing one). A link or a non-folder on the way is refused (one line)."""
    from ..outputs import folder_beneath

    return folder_beneath(run_dir, folder, make=make, refuse=_not_a_folder)


def place(run_dir: Path, target: Path, src, *, again: bool = False, limit: int | None = None) -> str:
    """Write the content of the binary file ``src`` (at most ``limit`` bytes) at ``target`` in ``run_dir`` (see the
    module's text); returns its SHA-256. ``again``: the collection's own record, rewritten as it goes."""
    from ..writer import atomic_path

    folder = real_folder(run_dir, target.parent)
    if not again and os.path.lexists(target):
        raise in_the_way(target)
    h = hashlib.sha256()
    left = limit
    with atomic_path(target, again=again, folder=folder) as tmp, open(tmp, "wb") as dst:
        while left is None or left > 0:
            chunk = src.read(1 << 20 if left is None else min(1 << 20, left))
            if not chunk:
                break
            h.update(chunk)
            dst.write(chunk)
            left = None if left is None else left - len(chunk)
    return h.hexdigest()


def open_staged(p: Path):
    """A staged file, opened for reading without following a link."""
    return os.fdopen(os.open(p, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)), "rb")
