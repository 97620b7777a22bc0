"""The optional capabilities — the extras of pyproject.toml: the modules each one provides, and whether it is installed
in this environment (the error that says which to install: :class:`edgeprof.errors.MissingExtraError`)."""

from __future__ import annotations

import importlib.util

# extra → the modules it installs that edgeprof (or its test suite) imports
PROVIDES: dict[str, tuple[str, ...]] = {
    "run": ("executorch", "torch"),
    "ort": ("onnxruntime", "onnx"),
    "litert": ("ai_edge_litert",),
    "coreml": ("coremltools",),
    "dask": ("distributed", "cryptography"),
    "mcp": ("mcp",),
    "docs": ("mkdocs", "material", "mkdocs_click"),
    "lint": ("ruff", "mypy"),
}


def missing(extra: str) -> tuple[str, ...]:
    """The modules of ``extra`` this environment lacks (empty: installed)."""
    return tuple(m for m in PROVIDES.get(extra, ()) if importlib.util.find_spec(m) is None)

