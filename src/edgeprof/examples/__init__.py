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
    from ..writer import write_bytes

    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())) and not force:
        raise UsageError(f"{dest} exists and is not empty (use --force to copy into it anyway)")
    src = example_root()
    files = []
    for f in sorted(src.rglob("*")):
        if f.is_file() and f.name != "__init__.py" and "__pycache__" not in f.parts:
            rel = f.relative_to(src)
            write_bytes(dest / rel, f.read_bytes())  # the one writer: never through a link found in dest
            files.append(rel.as_posix())
    return files
