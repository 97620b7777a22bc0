"""Options defined once (edgeprof/options.py): the CLI's options are made from the records, the api's keyword
defaults are the records' defaults, and the MCP tools describe their arguments with the records' help — for
every option of every command the module lists. A default or help changed in one surface only fails here."""

from __future__ import annotations

import inspect

import pytest

from edgeprof import api
from edgeprof.cli import main
from edgeprof.options import COMMANDS, DISTINCT, THRESHOLD_OPTION, options
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
    for name in {o.name for opts in COMMANDS.values() for o in opts} - set(DISTINCT):
        seen = {(o.default, o.cli_default, o.kind, o.flag) for opts in COMMANDS.values() for o in opts if o.name == name}
        assert len(seen) == 1, name
    assert options("plan", "threshold")[0].default == options("compare", "threshold")[0].default


def test_the_mcp_tools_describe_the_records():
    assert ARGS["threshold"].startswith(THRESHOLD_OPTION.help) and THRESHOLD_OPTION.cli_default in ARGS["threshold"]
    from edgeprof.server.tools import compare

    tool = inspect.signature(compare).parameters
    assert {"threshold", "metric", "run_dir"} <= set(tool) and all(n in {o.name for o in COMMANDS["compare"]}
                                                                   for n in ("threshold", "metric", "run_dir"))


def test_the_mcp_history_tool_takes_its_arguments_from_the_records():
    from edgeprof.server.tools import history

    records = {o.name: o for o in COMMANDS["history"]}
    for name in inspect.signature(history).parameters:
        assert name in records, name
        if name not in ("threshold", "metric", "store"):
            assert ARGS[name] == records[name].help
    assert records["store"].help in ARGS["store"] and records["metric"].help in ARGS["metric"]


def test_history_takes_auto_for_the_measured_launch_sd(tmp_path):
    """The CLI's default --launch-cv is 'auto' for history as for compare: the measured SD, the same document as
    leaving it out; a bad value is a usage error (one line, exit 2), not a traceback."""
    import json

    from click.testing import CliRunner

    import history_truth as ht

    store = tmp_path / "h.duckdb"
    ht.write_store(store, ht.build(ht.Truth("step", 1.5, 6, 10, "c_quiet", "tel_xnn"), seed=1, name="m"))
    runs = [CliRunner().invoke(main, ["history", "--store", str(store), *extra, "--json"])
            for extra in ([], ["--launch-cv", "auto"], ["--launch-cv", "20%"])]
    assert [r.exit_code for r in runs] == [0, 0, 0], runs[0].output
    docs = [json.loads(r.output) for r in runs]
    assert docs[0] == docs[1] and docs[0]["series"] != docs[2]["series"]
    bad = CliRunner().invoke(main, ["history", "--store", str(store), "--launch-cv", "3"])
    assert bad.exit_code == 2 and "--launch-cv" in bad.output and "Traceback" not in bad.output
