"""Deterministic JSON: sorted keys, floats in their shortest round-trip form, no NaN/Infinity.

A float is written as the shortest decimal that reads back as the same double (Python's ``repr``), so a
reader gets exactly the figure edgeprof computed: ``1.94e-07`` stays ``1.94e-07`` rather than becoming ``0.0``.
``-0.0`` is written ``0.0``.
"""

from __future__ import annotations

import json
import math
import os
import re

from ..conventions import CHECK_ENV, CHECK_JSON_ENV, UNSAFE_BEYOND_C0
from ..documents_base import Record

def clean(obj):
    """Recursively make ``obj`` JSON-safe and stable: NaN/inf → None, numpy scalars → Python, tuples → lists."""
    if isinstance(obj, float):
        if math.isnan(obj) or math.isinf(obj):
            return None
        return 0.0 if obj == 0 else obj
    if isinstance(obj, bool) or obj is None or isinstance(obj, (int, str)):
        return obj
    if isinstance(obj, dict):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    if isinstance(obj, Record):  # a typed line of a table: its JSON row
        return clean(obj.to_json())
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        return clean(obj.item())
    if hasattr(obj, "tolist"):
        return clean(obj.tolist())
    if hasattr(obj, "__fspath__"):
        return str(obj)
    raise TypeError(f"cannot serialize {type(obj).__name__}")


def dumps(obj, *, indent: int | None = 2) -> str:
    doc = clean(obj)
    schema = os.environ.get(CHECK_JSON_ENV, "") not in ("", "0")
    if schema:  # a document departing from its declared type is a bug
        from . import json_schema

        json_schema.check(doc)
    if schema or os.environ.get(CHECK_ENV, "") not in ("", "0"):  # so is one that contradicts itself
        from .. import invariants

        invariants.check(doc)
    text = json.dumps(doc, sort_keys=True, indent=indent, ensure_ascii=False, allow_nan=False) + "\n"
    # strings stay raw; the characters JSON itself leaves unescaped that a terminal or an editor would act on (DEL,
    # C1, bidirectional overrides, line separators) are written as \u escapes, which only occur inside strings
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


_UNSAFE = re.compile(f"[{UNSAFE_BEYOND_C0}]")
