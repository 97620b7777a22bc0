"""The bundled example: a small, real run folder (ExecuTorch ETDumps of a toy CNN, three variants).

Layout (the Arm SME2 profiling kit's nested form)::

    artifacts/toycnn_<experiment>.etrecord        ETRecords, trimmed to the JSON members edgeprof reads
    artifacts/toycnn_<experiment>.pte             the programs (for ``edgeprof run``)
    runs/linux/<experiment>/toycnn_<experiment>_t1.etdump    20 execute() calls each

Experiments: ``portable`` (no delegation), ``xnnpack_fp32`` and ``xnnpack_int8`` (XNNPACK delegate).
Recorded with executorch 1.5.1 on Linux x86_64 (2 cores); see the README's "Example data" section.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ..errors import UsageError

NAME = "toycnn"


def example_root() -> Path:
    return Path(str(resources.files(__name__) / NAME))


def copy_example(dest, *, force: bool = False) -> list[str]:
    """Copy the example run folder to ``dest``; returns the copied files (relative paths)."""
    from ..outputs import folder_beneath
    from ..writer import atomic_path

    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())) and not force:
        raise UsageError(f"{dest} exists and is not empty (use --force to copy into it anyway)")
    src = example_root()
    chosen = [f for f in sorted(src.rglob("*"))
              if f.is_file() and f.name != "__init__.py" and "__pycache__" not in f.parts]
    # every folder first: real folders of dest, walked from it without following a link (a link where a folder
    # belongs is refused before anything is written) ...
    folders = {}
    for f in chosen:
        parent = (dest / f.relative_to(src)).parent
        if parent not in folders:
            folders[parent] = folder_beneath(dest, parent)
    files = []
    for f in chosen:
        rel = f.relative_to(src)
        # ... then each file through the one writer, told the folder found: a different one there by then, or a
        # link, FIFO or device at the file's name, is refused — never written through
        with atomic_path(dest / rel, folder=folders[(dest / rel).parent]) as tmp, open(tmp, "wb") as out:
            out.write(f.read_bytes())
        files.append(rel.as_posix())
    return files
