"""A taxonomy override file (TOML, ``--taxonomy``) read and checked: :func:`edgeprof.taxonomy.from_document`
says what it may contain."""

from __future__ import annotations

import sys

from ..errors import InputError
from ..taxonomy import Taxonomy, from_document
from .files import read_regular

MAX_BYTES = 16 << 20


def read_taxonomy(path) -> Taxonomy:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    raw = read_regular(path, MAX_BYTES, "taxonomy file")
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise InputError(path, f"not valid TOML ({str(e).splitlines()[0][:200]})") from None
    return from_document(doc, path)
