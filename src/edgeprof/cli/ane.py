"""``edgeprof ane``: Apple Neural Engine reports (anemll-profile / ane-costplan)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..conventions import shown
from ._base import CONTEXT, echo_json, main, run_guarded, say

if TYPE_CHECKING:
    from collections.abc import Callable


class DefaultGroup(click.Group):
    """A group whose first argument, when it is not a subcommand, goes to a default subcommand
    (``edgeprof ane PROFILE.json`` = ``edgeprof ane findings PROFILE.json``; ``edgeprof ane diff A B``)."""

    default_command = "findings"

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


@main.group(cls=DefaultGroup, context_settings=CONTEXT, invoke_without_command=False)
def ane():
    """Apple Neural Engine reports (anemll-profile / ane-costplan -j JSON) as findings with evidence.

    \b
    edgeprof ane profile.json [--costplan costplan.json]   findings in the guide's order
    edgeprof ane diff BEFORE.json AFTER.json               two profiles or two cost plans
    edgeprof ane MODEL_FOLDER/                             one row per submodel report
    (`edgeprof ane findings --help` lists the options of the first and third form)
    """


def _output(result, md, show, as_json, markdown_out) -> None:
    from ..errors import InputErrors
    from ..writer import write_text

    if markdown_out == "-":
        say(md(result.data), nl=False, lines=True, rendered=True)
    elif markdown_out:  # a rendered document: whatever is still unsafe in it is shown, never written raw
        write_text(Path(markdown_out), shown(md(result.data), lines=True, rendered=True))
    if as_json:
        echo_json(result)
    elif markdown_out != "-":
        show(result.data)
    if result.get("errors"):
        raise InputErrors([e["error"] for e in result["errors"]])


_JSON = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
_MD = click.option("--markdown", "markdown_out", type=click.Path(path_type=str), default=None,
                   help="Write the result as a Markdown section to this file ('-' = stdout).")


@ane.command("findings", context_settings=CONTEXT, hidden=True)
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--costplan", type=click.Path(path_type=str), default=None,
              help="ane-costplan report of the same model, to cross-check against the profile.")
@click.option("--boundary-ms", type=float, default=None,
              help="Cost of one ANE↔CPU switch used to re-rank islands (default 0.2; the profile's own is 300).")
@click.option("--model", "model", type=click.Path(path_type=str), default=None,
              help="The Core ML model the profile measured (.mlpackage/.mlmodelc): joins its static FLOPs and bytes "
                   "(achieved GFLOP/s and GB/s per op type) and lists where the static placement estimate was wrong.")
@_JSON
@_MD
@run_guarded
def findings(inputs, costplan, boundary_ms, model, as_json, markdown_out):
    """Findings for an anemll-profile report (with --costplan: the cross-check), a cost plan, or a model folder.

    \b
    edgeprof ane profile.json [--costplan costplan.json]
    edgeprof ane MODEL_FOLDER/          (one analysis per submodel report found below it)
    """
    from .. import api
    from ..errors import UsageError
    from ..render import markdown, terminal

    md: Callable[[dict], str]  # the document's Markdown, and its terminal printer
    show: Callable[[dict], None]
    if (len(inputs) == 1 and not Path(inputs[0]).is_dir()) or api.is_model_bundle(inputs[0]):
        result = api.ane(inputs[0], costplan=costplan, boundary_ms=boundary_ms, model=model)
        md, show = markdown.ane_findings, terminal.print_ane
    else:
        if costplan or model:
            raise UsageError("--costplan and --model go with one profile, not a folder")
        result = api.ane_folder(list(inputs), boundary_ms=boundary_ms)
        md, show = markdown.ane_folder, terminal.print_ane_folder
    _output(result, md, show, as_json, markdown_out)


@ane.command("diff", context_settings=CONTEXT)
@click.argument("before", type=click.Path(path_type=str))
@click.argument("after", type=click.Path(path_type=str))
@_JSON
@_MD
@run_guarded
def diff(before, after, as_json, markdown_out):
    """Two anemll-profile reports (latency, interruptions, fallbacks, op-type shares) or two ane-costplan
    reports (total_cost, devices, per-type and per-op shares), before vs after a change.

    \b
    edgeprof ane diff before.json after.json
    """
    from .. import api
    from ..render import markdown, terminal

    _output(api.ane_diff(before, after), markdown.ane_diff, terminal.print_ane_diff, as_json, markdown_out)
