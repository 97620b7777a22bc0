"""``edgeprof example``: the bundled example run folder."""

from __future__ import annotations

from ..files import command
from .results import ExampleResult


@command
def example(dest="edgeprof-example", *, force: bool = False) -> ExampleResult:
    """Copy the bundled example run folder (real ExecuTorch profiles of a small CNN) to ``dest``."""
    from ..examples import copy_example

    return ExampleResult({"dest": str(dest), "files": copy_example(dest, force=force)})
