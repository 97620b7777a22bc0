"""The README's figures from the bundled example are what the commands it shows print now
(tools/readme_figures.py regenerates them: `python tools/readme_figures.py --write`)."""

from __future__ import annotations

import sys

from testdata import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import readme_figures as rf


def test_the_readme_figures_are_current():
    shown = rf.in_readme(rf.README.read_text())
    now = rf.figures()
    assert set(shown) == set(now), "every figure marker in the README has a producer, and every producer a marker"
    stale = {k: (shown[k], now[k]) for k in now if shown[k] != now[k]}
    assert not stale, f"README figures differ from the commands' output (python tools/readme_figures.py --write): {stale}"


def test_the_writer_replaces_only_the_marked_text():
    text = "a <!-- figure:x -->old<!-- /figure --> b <!-- figure:y -->keep<!-- /figure -->"
    assert rf.write(text, {"x": "new"}) == "a <!-- figure:x -->new<!-- /figure --> b <!-- figure:y -->keep<!-- /figure -->"
