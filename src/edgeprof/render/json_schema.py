"""JSON Schema (draft 2020-12) of every document kind, generated from the types of :mod:`edgeprof.documents`,
and the check behind ``EDGEPROF_CHECK_JSON=1``.

The mapping: ``str`` → string, ``int`` → integer, ``float`` → number or null (non-finite values are written as
null), ``bool`` → boolean, ``None`` → null, ``Any`` → anything, ``list[T]`` → array of T, ``dict[str, T]`` →
object of T, ``A | B`` → anyOf, ``Literal[...]`` → enum, a ``TypedDict`` → an object with exactly its fields
(its required keys required). A top-level document also holds ``schema_version``.
"""

from __future__ import annotations

import functools
import types
import typing

from ..conventions import CHECK_JSON_ENV, KINDS, SCHEMA_VERSION
from ..documents import DOCUMENTS
from ..documents_base import Document, document_fields
from ..errors import MissingExtraError

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _is_document(t) -> bool:
    return isinstance(t, type) and issubclass(t, Document)


def _of(t, defs: dict) -> dict:
    if t is typing.Any:
        return {}
    if t is type(None) or t is None:
        return {"type": "null"}
    if t is str:
        return {"type": "string"}
    if t is bool:
        return {"type": "boolean"}
    if t is int:
        return {"type": "integer"}
    if t is float:
        return {"type": ["number", "null"]}
    if _is_document(t):
        name = t.__name__
        if name not in defs:
            defs[name] = {}  # placed first: a type met again inside itself refers to this entry
            defs[name] = _object(t, defs)
        return {"$ref": f"#/$defs/{name}"}
    origin, args = typing.get_origin(t), typing.get_args(t)
    if origin is typing.Literal:
        return {"enum": list(args)} if len(args) > 1 else {"const": args[0]}
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [_of(a, defs) for a in args]}
    if origin is list:
        return {"type": "array", "items": _of(args[0], defs)} if args else {"type": "array"}
    if origin is dict:
        return {"type": "object", "additionalProperties": _of(args[1], defs)} if args else {"type": "object"}
    if t is list:
        return {"type": "array"}
    if t is dict:
        return {"type": "object"}
    raise TypeError(f"no JSON Schema for {t!r}")


def _object(doc: type[Document], defs: dict, *, top: bool = False) -> dict:
    fields = document_fields(doc)
    props = {k: _of(t, defs) for k, t, _ in sorted([*fields, ("kind", typing.Literal[doc.kind], True)])}
    required = sorted(["kind", *(k for k, _, req in fields if req)])
    if top:
        props["schema_version"] = {"const": SCHEMA_VERSION}
        required = sorted([*required, "schema_version"])
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def _documents(kinds) -> tuple[dict, dict]:
    """(the schema of a document of any of ``kinds``, the definitions it refers to)."""
    defs: dict = {}
    shapes = [_object(td, defs, top=True) for k in kinds for td in DOCUMENTS[k]]
    return (shapes[0] if len(shapes) == 1 else {"anyOf": shapes}), dict(sorted(defs.items()))


def _with_defs(doc: dict, defs: dict) -> dict:
    return {**doc, "$defs": defs} if defs else doc


def schema(kind: str) -> dict:
    """The JSON Schema of the documents of ``kind`` (every shape the kind takes)."""
    if kind not in DOCUMENTS:
        raise KeyError(kind)
    shape, defs = _documents([kind])
    return _with_defs({"$schema": DIALECT, "$id": f"urn:edgeprof:schema:{SCHEMA_VERSION}:{kind}",
                       "title": f"edgeprof {kind} document", **shape}, defs)


def tool_output_schema(kinds: tuple[str, ...]) -> dict:
    """The output schema of an MCP tool: ``{"summary": the last line a person reads, "result": a document of one of
    ``kinds``}``."""
    shape, defs = _documents(kinds)
    return _with_defs({"type": "object", "properties": {"summary": {"type": "string"}, "result": shape},
                       "required": ["result", "summary"], "additionalProperties": False}, defs)


def schemas() -> dict[str, dict]:
    """Every kind's schema, in the order of :data:`edgeprof.conventions.KINDS`."""
    return {k: schema(k) for k in KINDS}


def check(doc) -> None:
    """Raise ``ValueError`` naming the first place where ``doc`` (a cleaned JSON document) departs from its kind's
    schema. Needs the ``jsonschema`` package (a test dependency)."""
    if not isinstance(doc, dict) or doc.get("kind") not in DOCUMENTS or "schema_version" not in doc:
        return
    try:
        import jsonschema
    except ImportError:
        raise MissingExtraError("test", f"{CHECK_JSON_ENV}=1 (checking documents against their schemas)") from None
    err = jsonschema.exceptions.best_match(_validator(doc["kind"]).iter_errors(doc))
    if err is not None:
        where = "/".join(str(p) for p in err.absolute_path) or "(top)"
        raise ValueError(f"{doc['kind']} document departs from its schema at {where}: {err.message[:300]}")


@functools.cache
def _validator(kind: str):
    import jsonschema

    return jsonschema.Draft202012Validator(schema(kind))
