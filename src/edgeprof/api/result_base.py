"""The base of the API's typed results: a command's ``Result`` over its JSON document, an ``Interval``, the
header of a document that holds several results, and the frame constructor the results share."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from ..conventions import SCHEMA_VERSION
from ..documents_base import Document


@dataclass(frozen=True)
class Interval:
    low: float | None
    high: float | None
    level: float | None = None

    def __contains__(self, x: float) -> bool:
        return self.low is not None and self.high is not None and self.low <= x <= self.high


@dataclass(frozen=True, init=False)
class Result:
    """A command's result: ``doc``, its typed JSON document (a frozen :class:`~edgeprof.documents_base.Document`
    of the type :data:`edgeprof.documents.DOCUMENTS` declares for :attr:`kind`), and — in subclasses — what the
    command has beside it that is not JSON (the Profile, the series, the files written). Made from the
    document's JSON-shaped fields as an analysis built them; ``to_json()`` is the command's ``--json``."""

    doc: Document
    kind: ClassVar[str] = ""

    def __init__(self, data, **extra):
        if not isinstance(data, Document):
            data, more = self._split(dict(data))
            extra = {**more, **extra}
            data = self.document_type(data).from_json({k: v.body() if isinstance(v, Result) else v
                                                      for k, v in data.items()})
        object.__setattr__(self, "doc", data)
        _checked(data)
        own = {f.name: f for f in dataclasses.fields(self) if f.name != "doc"}
        bad = sorted(set(extra) - set(own))
        if bad:
            raise TypeError(f"{type(self).__name__}: unexpected {', '.join(bad)}")
        for name, f in own.items():
            value = extra[name] if name in extra else (
                f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default)
            object.__setattr__(self, name, value)

    def _split(self, data: dict) -> tuple[dict, dict]:
        """(the document's fields, the result's other attributes) of what a command built; a subclass moves the
        values that are not part of the document into its own attributes here."""
        return data, {}

    def document_type(self, data: dict) -> type[Document]:
        """The document type of this result (the first shape its kind declares)."""
        from ..documents import DOCUMENTS

        return DOCUMENTS[self.kind][0]

    def with_(self, **changes):
        """The same result with document fields changed (a result is frozen: e.g. ``written`` once written)."""
        other = copy.copy(self)
        object.__setattr__(other, "doc", self.doc.replace(**changes))
        return other

    @property
    def data(self) -> dict:
        """The document's fields, as a new dict (changing it does not change the result)."""
        return self.doc.fields()

    def to_json(self) -> dict:
        """The JSON document: ``schema_version`` and ``kind`` first, then the fields (through :meth:`body`, which
        a result nested in another also gives)."""
        return {"schema_version": SCHEMA_VERSION, **self.body()}

    to_dict = to_json  # the name of earlier versions

    def body(self) -> dict:
        """The document as nested in another (a collection, a report): ``kind`` and the fields, the schema
        version being the enclosing document's."""
        return self.doc.body()

    # read-only mapping access, for code that reads the documents
    def __getitem__(self, key: str) -> Any:
        return self.doc[key]

    def __contains__(self, key: str) -> bool:
        return key in self.doc

    def get(self, key: str, default=None):
        return self.doc.get(key, default)

    @property
    def warnings(self) -> list[str]:
        return list(self.doc.get("warnings") or [])


def _checked(doc: Document) -> None:
    """With ``EDGEPROF_CHECK`` (or ``EDGEPROF_CHECK_JSON``) set, every result's document passes the invariant walk
    when it is made — written or not (:mod:`edgeprof.invariants`; the test suite sets it)."""
    import os

    from ..conventions import CHECK_ENV, CHECK_JSON_ENV

    if any(os.environ.get(e, "") not in ("", "0") for e in (CHECK_ENV, CHECK_JSON_ENV)):
        from .. import invariants
        from ..render.jsonfmt import clean

        invariants.check(clean(doc.to_json()))


def _frame(rows: list[dict]):
    import polars as pl

    from ..documents_base import Record

    rows = [r.to_json() if isinstance(r, Record) else r for r in rows]
    return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()


def collection(kind: str, key: str, items: list, **extra) -> dict:
    """The JSON of a command that returns several results (``{"reports": [...]}``), with the shared header."""
    return {"schema_version": SCHEMA_VERSION, "kind": kind,
            key: [x.body() if isinstance(x, Result) else x for x in items], **extra}
