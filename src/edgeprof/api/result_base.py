"""The base of the API's typed results: a command's ``Result`` over its JSON document, an ``Interval``, the
header of a document that holds several results, and the frame constructor the results share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..conventions import SCHEMA_VERSION


@dataclass(frozen=True)
class Interval:
    low: float | None
    high: float | None
    level: float | None = None

    def __contains__(self, x: float) -> bool:
        return self.low is not None and self.high is not None and self.low <= x <= self.high


@dataclass
class Result:
    """A command's result: ``data`` is its JSON document (without ``schema_version``/``kind``)."""

    data: dict
    kind: ClassVar[str] = ""

    def to_dict(self) -> dict:
        """The JSON document: ``schema_version`` and ``kind`` first, then the data."""
        return {"schema_version": SCHEMA_VERSION, **self.body()}

    def body(self) -> dict:
        """The document as nested in another (a collection, a report): ``kind`` and the data, the schema
        version being the enclosing document's."""
        doc = dict(self.data)
        doc.pop("schema_version", None)
        doc.pop("kind", None)
        return {"kind": self.kind, **doc}

    # mapping access, for code that reads the documents
    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.data[key] = value

    def __contains__(self, key: str) -> bool:
        return key in self.data

    def get(self, key: str, default=None):
        return self.data.get(key, default)

    @property
    def warnings(self) -> list[str]:
        return list(self.data.get("warnings", []))


def _frame(rows: list[dict]):
    import polars as pl

    return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()


def collection(kind: str, key: str, items: list, **extra) -> dict:
    """The JSON of a command that returns several results (``{"reports": [...]}``), with the shared header."""
    return {"schema_version": SCHEMA_VERSION, "kind": kind,
            key: [x.body() if isinstance(x, Result) else x for x in items], **extra}
