"""The documentation's pages in reading order: the README, then the site's pages (``docs/``) in the order of
``mkdocs.yml``'s ``nav``, then any page the nav leaves out. The tests that run every documented command and the
figures script (tools/readme_figures.py) read the same list."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
_NAV_PAGE = re.compile(r"^\s*-\s+(?:[^:\n]+:\s+)?([\w./-]+\.md)\s*$")


def pages() -> list[Path]:
    nav, in_nav = (ROOT / "mkdocs.yml").read_text().split("\nnav:\n", 1)[1], []
    for line in nav.splitlines():
        if line and not line.startswith(" "):
            break  # the next top-level key
        m = _NAV_PAGE.match(line)
        if m:
            in_nav.append(DOCS / m.group(1))
    rest = sorted(p for p in DOCS.rglob("*.md") if p not in in_nav)
    return [README, *in_nav, *rest]


def text() -> str:
    """Every page's text, in order (one string, for what the documentation states anywhere)."""
    return "\n".join(p.read_text() for p in pages())
