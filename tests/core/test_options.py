"""Options defined once (edgeprof/options.py): the CLI's options are made from the records, the api's keyword
defaults are the records' defaults, and the MCP tools describe their arguments with the records' help — for
every option of every command the module lists. A default or help changed in one surface only fails here."""

from __future__ import annotations

import inspect

import pytest

from edgeprof import api
from edgeprof.cli import main
from edgeprof.options import COMMANDS, THRESHOLD_OPTION, options
from edgeprof.server.tools import ARGS

CASES = [(command, o) for command, opts in COMMANDS.items() for o in opts]


@pytest.mark.parametrize("command, o", CASES, ids=[f"{c}:{o.name}" for c, o in CASES])
def test_the_cli_option_is_the_record(command, o):
    params = {p.name: p for p in main.commands[command].params}
    p = params[o.dest or o.name]
    assert p.help == o.help
    assert p.required == o.required
    if o.kind == "flag":
        assert p.default == o.default
    else:
        assert p.default == o.cli_default
    assert p.opts[0] == o.flag.split("/")[0]


@pytest.mark.parametrize("command, o", CASES, ids=[f"{c}:{o.name}" for c, o in CASES])
def test_the_api_default_is_the_record(command, o):
    param = inspect.signature(getattr(api, command)).parameters[o.name]
    if o.required:
        assert param.default is inspect.Parameter.empty
    else:
        assert param.default == o.default


def test_the_same_option_means_the_same_in_every_command():
    """An option two commands share has one default everywhere (plan's threshold is compare's: the power plan
    promises is that of compare's verdict); only its help may say what it does for that command."""
    for name in {o.name for opts in COMMANDS.values() for o in opts}:
        seen = {(o.default, o.cli_default, o.kind, o.flag) for opts in COMMANDS.values() for o in opts if o.name == name}
        assert len(seen) == 1, name
    assert options("plan", "threshold")[0].default == options("compare", "threshold")[0].default


def test_the_mcp_tools_describe_the_records():
    assert ARGS["threshold"].startswith(THRESHOLD_OPTION.help) and THRESHOLD_OPTION.cli_default in ARGS["threshold"]
    from edgeprof.server.tools import compare

    tool = inspect.signature(compare).parameters
    assert {"threshold", "metric", "run_dir"} <= set(tool) and all(n in {o.name for o in COMMANDS["compare"]}
                                                                   for n in ("threshold", "metric", "run_dir"))
