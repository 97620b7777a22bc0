"""The base of edgeprof's typed documents: a frozen record type per document kind (:mod:`edgeprof.documents`) whose
fields are the document's top-level fields, made from the JSON-shaped values an analysis builds
(:meth:`Document.from_json`, which refuses a field the type does not declare and requires every field it does) and
turned back into JSON by the one :meth:`Document.to_json`.

An optional field (present in some documents of the kind, absent from others) defaults to :data:`ABSENT` and is
left out of the JSON when absent. Mapping access (``doc["verdict"]``, ``doc.get``, ``in``) reads the fields, for
renderers written against the JSON shape.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeGuard


class _Absent:
    """The value of an optional field a document does not have."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self):
        return (_Absent, ())


ABSENT: Any = _Absent()


class DocumentError(TypeError):
    """A document built with a field its type does not declare, or without one it requires."""


class Document:
    """One JSON document of kind :attr:`kind` (see the module docstring): a frozen record whose fields are the
    class's annotations (a default makes a field optional). Made without the ``dataclass`` decorator: the field
    list is read from the annotations when first used, so defining the ~50 document types costs nothing at import
    (every command imports them); instances behave as frozen dataclasses (keyword construction, equality by
    fields, ``FrozenInstanceError`` on assignment)."""

    kind: ClassVar[str] = ""

    def __init__(self, **fields):
        spec = _spec(type(self))
        _check(type(self), fields, spec)
        self._fill(fields, spec)

    def _fill(self, fields: Mapping, spec) -> None:
        for name in spec.names:
            object.__setattr__(self, name, fields[name] if name in fields else spec.defaults[name])

    def __setattr__(self, name, value):
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other):
        return type(other) is type(self) and self.fields() == other.fields()

    __hash__ = None  # type: ignore[assignment]  # fields hold lists and dicts

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.fields().items())})"

    # -- from and to JSON -----------------------------------------------------------------------------
    @classmethod
    def from_json(cls, doc: Mapping[str, Any]):
        """The typed document of the JSON-shaped ``doc`` (``schema_version`` and ``kind`` ignored); nested values
        declared as documents (or lists of them) become documents too."""
        given = {k: v for k, v in doc.items() if k not in ("schema_version", "kind")}
        spec = _spec(cls)
        _check(cls, given, spec)
        for name, sub in spec.nested.items():
            v = given.get(name)
            if isinstance(v, Mapping):
                given[name] = sub.from_json(v)
        for name, sub in spec.nested_lists.items():
            v = given.get(name)
            if isinstance(v, list):
                given[name] = [sub.from_json(x) if isinstance(x, Mapping) else x for x in v]
        new = cls.__new__(cls)  # checked above: filled without checking again
        new._fill(given, spec)
        return new

    def fields(self) -> dict[str, Any]:
        """The document's fields as a new dict (absent ones left out; nested documents as their bodies)."""
        return {k: _json(v) for k in _spec(type(self)).names if (v := getattr(self, k)) is not ABSENT}

    def body(self) -> dict[str, Any]:
        """The document as nested in another: ``kind`` and the fields (the schema version is the outer one's)."""
        return {"kind": self.kind, **self.fields()}

    def to_json(self) -> dict[str, Any]:
        """The JSON document: ``schema_version`` and ``kind`` (:mod:`edgeprof.conventions`), then the fields."""
        from .conventions import SCHEMA_VERSION

        return {"schema_version": SCHEMA_VERSION, **self.body()}

    def replace(self, **changes):
        """A copy with ``changes`` (declared fields only)."""
        names = _spec(type(self)).names
        bad = sorted(set(changes) - set(names))
        if bad:
            raise DocumentError(f"{type(self).__name__} ({self.kind}): undeclared field(s) {', '.join(bad)}")
        return type(self)(**{**{n: getattr(self, n) for n in names}, **changes})

    # -- mapping access (read-only) ---------------------------------------------------------------------
    def __getitem__(self, key: str) -> Any:
        if key == "kind":
            return self.kind
        v = getattr(self, key, ABSENT) if key in _spec(type(self)).names else ABSENT
        if v is ABSENT:
            raise KeyError(key)
        return v

    def get(self, key: str, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and (key == "kind" or self.get(key, ABSENT) is not ABSENT)

    def keys(self):
        return ["kind", *self.fields()]


def _json(v):
    if isinstance(v, Document):
        return v.body()
    if isinstance(v, list) and any(isinstance(x, Document) for x in v):
        return [x.body() if isinstance(x, Document) else x for x in v]
    return v


class _Spec(typing.NamedTuple):
    names: tuple[str, ...]
    required: tuple[str, ...]
    defaults: dict[str, Any]
    nested: dict[str, type[Document]]
    nested_lists: dict[str, type[Document]]


def _check(cls: type[Document], given: Mapping, spec: _Spec) -> None:
    unknown = sorted(set(given) - set(spec.names))
    missing = sorted(set(spec.required) - set(given))
    if unknown or missing:
        raise DocumentError(f"{cls.__name__} ({cls.kind}): "
                            + "; ".join(x for x in (unknown and f"undeclared field(s) {', '.join(unknown)}",
                                                    missing and f"missing field(s) {', '.join(missing)}") if x))


def _spec_of(cls: type) -> _Spec:
    """The fields of a document type: its annotations and its bases' (ClassVars left out), in declaration order,
    those with a class-level default optional."""
    import inspect

    hints = typing.get_type_hints(cls)
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        for name in inspect.get_annotations(klass):
            if name not in names and typing.get_origin(hints.get(name)) is not ClassVar:
                names.append(name)
    defaults = {n: getattr(cls, n) for n in names if hasattr(cls, n)}
    nested, lists = {}, {}
    for name in names:
        for t in _members(hints[name]):
            if _is_document(t):
                nested[name] = t
            elif typing.get_origin(t) is list and typing.get_args(t) and _is_document(typing.get_args(t)[0]):
                lists[name] = typing.get_args(t)[0]
    return _Spec(tuple(names), tuple(n for n in names if n not in defaults), defaults, nested, lists)


# typed as a plain callable: a document type is hashable (as any class), though its instances are not
_spec: Callable[[type], _Spec] = functools.cache(_spec_of)


def _members(t) -> tuple:
    import types

    return typing.get_args(t) if typing.get_origin(t) in (typing.Union, types.UnionType) else (t,)


def _is_document(t) -> TypeGuard[type[Document]]:
    return isinstance(t, type) and issubclass(t, Document)


def document_fields(cls: type) -> tuple[tuple[str, Any, bool], ...]:
    """(name, type, required) of each field of a document type, in declaration order — what the JSON Schema
    generator reads."""
    hints = typing.get_type_hints(cls)
    spec = _spec(cls)
    return tuple((n, hints[n], n in spec.required) for n in spec.names)


class Record:
    """A line of a document's table as a frozen record (a ``@dataclass(frozen=True)`` subclass): typed where it is
    made and read, plain JSON where it is written. Renderers written against the JSON shape read it as they read
    the JSON (``row["speedup"]``, ``row.get``, ``in``, ``keys``); :meth:`to_json` gives the row's dict (tuples as
    lists), which is what :func:`edgeprof.render.jsonfmt.clean` writes and what a document read back holds."""

    __slots__ = ()

    def _names(self) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(self))  # type: ignore[arg-type]

    def __getitem__(self, key: str) -> Any:
        if key not in self._names():
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default=None):
        return getattr(self, key) if key in self._names() else default

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._names()

    def keys(self):
        return list(self._names())

    def items(self):
        return [(k, getattr(self, k)) for k in self._names()]

    def to_json(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.items()}
