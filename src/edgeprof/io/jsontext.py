"""JSON written by others, parsed under one rule: a string escape that names half of a UTF-16 surrogate pair
(``"\\ud800"`` alone) is refused with its byte offset.

Python's ``json`` turns such an escape into a lone surrogate, a ``str`` that no UTF-8 writer, Polars column, terminal
or MCP answer can carry: left in, it fails far from the file, as a traceback. It is found in the raw bytes (only
when a ``\\uD8``–``\\uDF`` escape occurs at all, so ordinary documents cost one search), where its offset is known.
Raw UTF-8 bytes of a surrogate are not UTF-8 and already fail decoding, with their offset.
"""

from __future__ import annotations

import json
import re

from ..errors import InputError

_CANDIDATE = re.compile(rb"\\u[dD][89a-fA-F]")
# an escaped backslash (skipped), a surrogate pair (accepted), or a lone half (refused)
_ESCAPE = re.compile(rb"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
                     rb"|\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def lone_surrogate(data: bytes | str) -> int | None:
    """Byte (or character, for ``str``) offset of the first ``\\uXXXX`` escape in ``data`` that is half of a surrogate
    pair without its other half, or None."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    first = _CANDIDATE.search(raw)
    if first is None:
        return None
    for m in _ESCAPE.finditer(raw):
        if len(m.group()) == 6:
            return m.start() if isinstance(data, bytes) else len(raw[: m.start()].decode("utf-8", "surrogatepass"))
    return None


def check_surrogates(data: bytes | str, path, error=InputError, what: str = "JSON") -> None:
    """``error(path, …, offset)`` when ``data`` escapes a lone surrogate."""
    at = lone_surrogate(data)
    if at is not None:
        code = (data[at + 2:at + 6].decode("ascii") if isinstance(data, bytes) else data[at + 2:at + 6]).upper()
        raise error(path, f"{what} escapes a lone UTF-16 surrogate (U+{code} without its pair): no UTF-8 text can "
                          "hold it", offset=at)


def loads(data: bytes | str, path, error=InputError, what: str = "JSON", **kw):
    """``json.loads`` of a document from outside (``what`` names it in messages): lone surrogates, invalid UTF-8,
    nesting too deep and syntax errors are ``error(path, …)`` naming the offset or line."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise error(path, f"{what} is not UTF-8 text", offset=e.start) from None
    else:
        text = data
    check_surrogates(data, path, error, what)
    try:
        return json.loads(text, **kw)
    except RecursionError:
        raise error(path, f"{what} nested too deeply") from None
    except ValueError as e:
        msg = getattr(e, "msg", str(e))
        line = getattr(e, "lineno", None)
        raise error(path, f"{what} not valid JSON ({msg}" + (f", column {getattr(e, 'colno', None)})" if line else ")"),
                    line=line) from None
