"""``edgeprof program``: what is inside an ExecuTorch program."""

from __future__ import annotations

import click

from ._base import CONTEXT, main, run_guarded
from .ane import _JSON, _MD, _output


@main.command("program", context_settings=CONTEXT)
@click.argument("programs", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--etrecord", type=click.Path(path_type=str), default=None,
              help="The program's ETRecord: op types and module paths per instruction and per XNNPACK node.")
@_JSON
@_MD
@run_guarded
def program(programs, etrecord, as_json, markdown_out):
    """What is inside a .pte, without torch: bytes by part (adding up to the file size), constants and their
    users, the memory plan, the instruction list and what each XNNPACK delegate holds. Two programs: what
    changed between them.

    \b
    edgeprof program model.pte [--etrecord model.etrecord] [--json] [--markdown FILE]
    edgeprof program fp32.pte int8.pte
    """
    from .. import api
    from ..errors import UsageError
    from ..render import program_md, terminal

    if len(programs) > 2:
        raise UsageError("edgeprof program takes one program, or two to compare")
    if len(programs) == 2:
        if etrecord:
            raise UsageError("--etrecord goes with one program")
        result = api.program_diff(*programs)
        md = program_md.program_diff_markdown
    else:
        result = api.program(programs[0], etrecord=etrecord)
        md = program_md.program_markdown
    _output(result, md, terminal.print_markdown(md), as_json, markdown_out)
