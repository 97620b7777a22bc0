"""The documentation's figures from the bundled example (README and docs/) are what the commands it shows print now
(tools/readme_figures.py regenerates them: `python tools/readme_figures.py --write`)."""

from __future__ import annotations

import sys

from testdata import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import readme_figures as rf


def test_the_documented_figures_are_current():
    shown = rf.in_docs()
    now = rf.figures()
    assert set(shown) == set(now), "every figure marker in the pages has a producer, and every producer a marker"
    stale = {k: (shown[k], now[k]) for k in now if any(b != now[k] for b in shown[k])}
    assert not stale, f"documented figures differ from the commands' output (python tools/readme_figures.py --write): {stale}"


def test_the_readme_opens_with_its_two_commands_and_no_figure():
    """The README's first screen: the two set-up commands, each said in one line, and no generated figure."""
    text = rf.ROOT.joinpath("README.md").read_text()
    assert text.startswith("```bash\npython3 -m venv .venv")
    assert len(text.splitlines()) <= 200
    head = text[:text.index("\n# edgeprof\n")]
    assert head.count("```bash") == 2 and "<!--" not in head


def test_the_writer_replaces_only_the_marked_text():
    text = "a <!-- figure:x -->old<!-- /figure --> b <!-- figure:y -->keep<!-- /figure -->"
    assert rf.write(text, {"x": "new"}) == "a <!-- figure:x -->new<!-- /figure --> b <!-- figure:y -->keep<!-- /figure -->"
