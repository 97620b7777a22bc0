"""Trap folders: a working folder holding a module named after every top-level module a Python process here could
import — every standard-library module, every module and package installed beside edgeprof (numpy, polars,
duckdb, dask, distributed, torch, executorch, onnxruntime, ai_edge_litert, …, extension modules such as
``_duckdb`` included), ``sitecustomize``/``usercustomize`` and an ``edgeprof/`` package. A trap that is imported
leaves a marker named after itself in a folder outside the trap folder, so :func:`fired` lists what ran.

The names are a superset of what edgeprof's children import (what they import is checked against them in
tests/security/test_children.py), so a planted module cannot escape by being one nobody listed.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

# the trap needs nothing imported: shadowing ``os`` or ``io``, it runs before they could be
TRAP = "open({marks!r} + '/' + {name!r}, 'a').close()\n"


def _found_in(dirs) -> set[str]:
    """Top-level module names in these folders (packages, modules, extension modules)."""
    names: set[str] = set()
    for d in dirs:
        try:
            entries = os.listdir(d)
        except OSError:
            continue
        for e in entries:
            if e.endswith((".dist-info", ".egg-info", ".pth", ".data")) or e in ("__pycache__", "site-packages"):
                continue
            name = e.split(".", 1)[0]
            if name and "/" not in name and name.replace("-", "_").isidentifier():
                names.add(name)
    return names


def installed_names() -> set[str]:
    """Top-level module names found in the interpreter's site-packages folders — what an import could find
    there."""
    paths = sysconfig.get_paths()
    return _found_in({paths["purelib"], paths["platlib"]} | {p for p in sys.path if p.endswith("site-packages")})


def names() -> set[str]:
    """Every name a trap folder holds a module for."""
    paths = sysconfig.get_paths()
    every = set(sys.stdlib_module_names) | set(sys.builtin_module_names) | installed_names()
    every |= _found_in({paths["stdlib"], paths["platstdlib"], os.path.join(paths["platstdlib"], "lib-dynload")})
    every |= {"edgeprof", "sitecustomize", "usercustomize"}
    return every - {"__main__"}


def plant(folder: Path, marks: Path, extra=()) -> int:
    """Fill ``folder`` with traps whose markers go to ``marks`` (made here; must lie outside ``folder``), one for
    each of :func:`names` and ``extra``. Returns the number of traps."""
    folder, marks = Path(folder), Path(marks)
    assert not str(marks.resolve()).startswith(str(folder.resolve()) + os.sep)
    folder.mkdir(parents=True, exist_ok=True)
    marks.mkdir(parents=True, exist_ok=True)
    every = names() | {n for n in extra if n.isidentifier()}
    for name in every:
        text = TRAP.format(marks=str(marks), name=name)
        if name == "edgeprof":  # a package folder, as a checkout or a copy of edgeprof would be
            (folder / name).mkdir(exist_ok=True)
            (folder / name / "__init__.py").write_text(text)
        else:
            (folder / f"{name}.py").write_text(text)
    return len(every)


def fired(marks: Path) -> list[str]:
    """The traps that ran (their names)."""
    return sorted(p.name for p in Path(marks).iterdir())
