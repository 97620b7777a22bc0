"""A taxonomy override file (TOML, ``--taxonomy``) read and checked: :func:`edgeprof.taxonomy.from_document`
says what it may contain."""

from __future__ import annotations

from ..taxonomy import Taxonomy, from_document
from .documents import read_document


def read_taxonomy(path) -> Taxonomy:
    return from_document(read_document(path, "taxonomy file", fmt="toml"), path)
