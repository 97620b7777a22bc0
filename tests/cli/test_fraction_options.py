"""One parser for every fraction option (issue: `plan --effect 3` was silently 300 %, `--threshold 5%` refused):
every option that takes a relative amount accepts ``3%`` and ``0.03`` alike and refuses a bare number above 1
with the hint — found by walking the whole command tree, so a new option cannot slip past."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from edgeprof.cli import main
from edgeprof.cli._base import Fraction

FRACTION_NAMES = {"--threshold", "--level", "--power", "--launch-cv", "--effect", "--tolerance"}


def _walk(group, path=()):
    for name, cmd in group.commands.items():
        if isinstance(cmd, click.Group):
            yield from _walk(cmd, (*path, name))
        else:
            yield (*path, name), cmd


def test_every_fraction_option_uses_the_one_parser():
    seen = []
    for path, cmd in _walk(main):
        for p in cmd.params:
            if isinstance(p, click.Option) and set(p.opts) & FRACTION_NAMES:
                # --launch-cv of compare/plan also takes "auto" (a callback over the same parser); --effect is parsed
                # by the api (the same parser): both are plain strings here
                assert isinstance(p.type, Fraction) or p.callback is not None or p.opts == ["--effect"], (path, p.opts)
                seen.append((path, p.opts[0]))
    assert len(seen) >= 10 and ("history", "--threshold") in [(c[-1], o) for c, o in seen]


@pytest.mark.parametrize("text, value", [("3%", 0.03), ("3 %", 0.03), ("0.03", 0.03), ("0", 0.0), ("100%", None)])
def test_the_parser_at_its_boundaries(text, value):
    t = Fraction()
    if value is None:
        with pytest.raises(click.BadParameter, match="below 100 %"):
            t.convert(text, None, None)
    else:
        assert t.convert(text, None, None) == pytest.approx(value)
    with pytest.raises(click.BadParameter, match=r"write 3% for 3 percent, or 0\.03"):
        t.convert("3", None, None)
    assert Fraction(upper=2.0).convert("150%", None, None) == pytest.approx(1.5)
    with pytest.raises(click.BadParameter, match="at least 50 %"):
        Fraction(lower=0.5).convert("0.4", None, None)


def test_in_commands(tmp_path):
    r = CliRunner()
    store = tmp_path / "none.duckdb"
    res = r.invoke(main, ["history", "--store", str(store), "--threshold", "5"])
    assert res.exit_code == 2 and "5 would be 500 %" in res.output + (res.stderr or "")
    res = r.invoke(main, ["history", "--store", str(store), "--threshold", "5%"])
    assert res.exit_code == 2 and "no such history store" in res.stderr  # the threshold itself was accepted
    res = r.invoke(main, ["plan", "x", "--effect", "3"])
    assert res.exit_code == 2 and "3 would be 300 %" in res.stderr
