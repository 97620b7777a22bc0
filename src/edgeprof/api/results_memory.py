"""Typed result of ``edgeprof memory`` (see :mod:`.results`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .result_base import Result, _frame


@dataclass(frozen=True, init=False)
class MemoryReport(Result):
    """Planned versus measured memory per configuration, programs' memory plans, ONNX Runtime per-node sizes."""

    kind: ClassVar[str] = "memory"

    @property
    def phases(self):
        """One row per configuration and phase (median over its launches)."""
        return _frame([{"configuration": c["name"], **p} for c in self.doc["configurations"] for p in c["phases"]])

    @property
    def statements(self) -> list[str]:
        return self.doc["statements"]
