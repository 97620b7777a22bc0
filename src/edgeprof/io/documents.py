"""Small configuration documents (JSON or TOML) read whole: bounded in size, UTF-8, one-line errors with the
line where the text is broken. What a document must contain is checked by its consumer."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from ..errors import InputError
from ..files import read_regular

MAX_BYTES = 16 << 20


def _toml():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib


def _no_constants(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def read_document(path, what: str = "configuration file", fmt: str | None = None) -> dict:
    """The top-level table of a JSON (``.json``) or TOML (``.toml``; any other suffix: JSON, else TOML)
    document."""
    path = Path(path)
    raw = read_regular(path, MAX_BYTES, what)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(path, f"{what} is not UTF-8 text", offset=e.start) from None
    fmt = fmt or {".json": "json", ".toml": "toml"}.get(path.suffix.lower())
    if fmt is None:
        fmt = "json" if text.lstrip()[:1] in ("{", "[") else "toml"
    try:
        doc = json.loads(text, parse_constant=_no_constants) if fmt == "json" else _toml().loads(text)
    except json.JSONDecodeError as e:
        raise InputError(path, f"not valid JSON ({e.msg})", line=e.lineno) from None
    except RecursionError:
        raise InputError(path, f"{what} nested too deeply") from None
    except ValueError as e:  # TOMLDecodeError is a ValueError: "… (at line 3, column 7)"
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        m = re.search(r"\(at line (\d+), column \d+\)", msg)
        kind = "TOML" if fmt == "toml" else "JSON"
        raise InputError(path, f"not valid {kind} ({msg[:m.start()].strip() if m else msg[:200]})",
                         line=int(m.group(1)) if m else None) from None
    if not isinstance(doc, dict):
        raise InputError(path, f"{what} must be a table/object at the top level")
    return doc
