"""Typed results of the history commands: ``ingest``, ``history`` and ``export`` (see :mod:`edgeprof.api.results`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from .result_base import Result, _frame


# --------------------------------------------------------------------------------------------------
# history
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True, init=False)
class IngestResult(Result):
    """``edgeprof ingest``: launches added to the store, skipped (already stored), and inputs that failed."""

    kind: ClassVar[str] = "ingest"
    error_lines: list[str] = field(default_factory=list)

    @property
    def added(self) -> list[dict]:
        return list(self.doc["added"])

    @property
    def skipped(self) -> list[dict]:
        return list(self.doc["skipped"])


@dataclass(frozen=True, init=False)
class HistoryResult(Result):
    """``edgeprof history``: per series, one point per commit (time order) and the changes found."""

    kind: ClassVar[str] = "history"

    @property
    def series(self) -> list[dict]:
        return list(self.doc["series"])

    @property
    def changes(self) -> list[dict]:
        return [c for s in self.doc["series"] for c in s["changes"]]

    def points(self, i: int = 0):
        """The points of series ``i`` as a Polars frame."""
        return _frame(self.doc["series"][i]["points"])


@dataclass(frozen=True, init=False)
class ExportResult(Result):
    """``edgeprof export``: the store's tables written to another store (a Parquet dataset or a DuckDB file)."""

    kind: ClassVar[str] = "export"
