"""Every `edgeprof …` command line in the README's and the skills' shell blocks parses against the CLI as it is
(options exist, values convert, required ones given): a documented command that does not parse is a bug. (The
blocks that run are run by tests/skills and the tests of each command; this catches the rest, including macOS-
and device-only commands, which cannot run here.)"""

from __future__ import annotations

import re
import shlex

import click
import pytest

from edgeprof.cli import main
from readme_lines import command_lines, inline_commands

LINES = [pytest.param(cmd, id=f"{label}:{cmd[:60]}") for label, _, cmd in command_lines()] + \
    [pytest.param(cmd, id=f"README-inline:{cmd[:60]}") for cmd in inline_commands()]


def _parse(line: str) -> None:
    line = re.sub(r"\$\{?[A-Za-z_][A-Za-z_0-9]*\}?", "X", line)  # shell variables: any value
    args = shlex.split(line)[1:]
    for i, a in enumerate(args):  # a redirection ends the command's arguments
        if a.startswith((">", "2>", "<")):
            args = args[:i]
            break
    ctx = main.make_context("edgeprof", list(args), resilient_parsing=False)
    cmd: click.Command = main
    rest = ctx.protected_args + ctx.args
    while isinstance(cmd, click.Group) and rest:
        name, cmd_obj, rest = cmd.resolve_command(ctx, rest)
        assert cmd_obj is not None, f"no command {name!r}"
        cmd = cmd_obj
        if "--help" in rest:
            return
        ctx = cmd.make_context(name, list(rest), parent=ctx)
        rest = ctx.protected_args + ctx.args if isinstance(cmd, click.Group) else []


def test_there_are_many():
    assert len(LINES) >= 60


MENTION = ("Missing argument", "Missing option", "requires an argument", "Usage:")


@pytest.mark.filterwarnings("ignore:'protected_args' is deprecated:DeprecationWarning")
@pytest.mark.parametrize("line", LINES)
def test_documented_command_parses(line, request):
    inline = request.node.callspec.id.startswith("README-inline")
    try:
        _parse(line)
    except click.exceptions.Exit:
        pass
    except click.UsageError as e:
        msg = e.format_message()
        # prose names a command or an option in passing (`edgeprof history`, `report --html`): only what it
        # does say must parse
        if inline and any(m in msg for m in MENTION):
            return
        pytest.fail(f"{line!r}: {msg}")
