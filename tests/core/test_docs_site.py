"""The documentation site builds with MkDocs in strict mode (every warning an error: a broken link, an anchor that
is not there, a page the nav leaves out), its command reference is generated from the click commands themselves, and
the README fits on a few screens with the pages carrying the rest."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from testdata import ROOT, needs

from edgeprof.cli import main

sys.path.insert(0, str(ROOT / "tools"))
import docs_pages


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    pages = docs_pages.pages()
    assert all(p.is_file() for p in pages)
    nav = (ROOT / "mkdocs.yml").read_text().split("\nnav:\n", 1)[1]
    listed = len(re.findall(r"\.md\s*$", nav, re.M))
    assert listed == len(pages) - 1  # every page of docs/ but the README, which is not on the site


def test_the_site_builds_strict_and_documents_every_command(tmp_path):
    needs("mkdocs", "docs")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")], cwd=ROOT,
                       capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    assert not [ln for ln in r.stderr.splitlines() if ln.startswith("WARNING")], r.stderr
    reference = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    documented = set(re.findall(r'<h3 id="edgeprof-([a-z-]+)"', reference))
    assert documented == set(main.commands), set(main.commands) ^ documented
    # each command's options, as click declares them (a sample of a command's own and a shared one)
    for option in ("--fail-on", "--junit", "--threshold", "--run-dir"):
        assert option in reference


def test_the_readme_is_short_and_links_only_to_pages_that_exist():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", text)
    assert links and all((ROOT / link).exists() for link in links), [x for x in links if not (ROOT / x).exists()]
