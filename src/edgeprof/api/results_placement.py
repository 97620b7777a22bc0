"""Typed results of ``edgeprof placement``: one input's placement, two builds diffed (see :mod:`.results`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .result_base import Result, _frame


@dataclass(frozen=True, init=False)
class PlacementInfo(Result):
    """Where each operator ran (``edgeprof placement``): operators, partitions, per-placement shares."""

    kind: ClassVar[str] = "placement"

    @property
    def operators(self):
        return _frame(self.doc["operators"])

    @property
    def partitions(self):
        return _frame([{k: v for k, v in p.items() if k != "op_keys"} for p in self.doc["partitions"]])

    @property
    def fingerprint(self) -> str:
        return self.doc["fingerprint"]


@dataclass(frozen=True, init=False)
class PlacementDiff(Result):
    """Two builds' placements (``edgeprof placement --diff``): moved operators, partitions, verdict."""

    kind: ClassVar[str] = "placement_diff"

    @property
    def moved(self):
        return _frame(self.doc["moved"])

    @property
    def verdict(self) -> str:
        return self.doc["verdict"]

    @property
    def statements(self) -> list[str]:
        return self.doc["statements"]
