"""``edgeprof example`` and ``edgeprof schema``."""

from __future__ import annotations

import click

from ._base import CONTEXT, echo_json, main, run_guarded, say


@main.command(context_settings=CONTEXT)
@click.argument("dest", required=False, default="edgeprof-example", type=click.Path(path_type=str))
@click.option("--force", is_flag=True, help="Copy even if DEST exists and is not empty.")
@click.option("--json", "as_json", is_flag=True, help="Print the copied files as JSON.")
@run_guarded
def example(dest, force, as_json):
    """Copy the bundled example run folder (real ExecuTorch profiles of a small CNN) to DEST."""
    from .. import api

    result = api.example(dest, force=force)
    if as_json:
        echo_json(result)
    else:
        say(f"copied {len(result['files'])} files to {dest}/ — next: edgeprof analyze {dest}")


@main.command(context_settings=CONTEXT)
@click.argument("kind", required=False)
@click.option("--list", "as_list", is_flag=True, help="Print the document kinds, one per line.")
@run_guarded
def schema(kind, as_list):
    """The JSON Schema (draft 2020-12) of each --json document kind: every kind as {kind: schema}, or one KIND.

    \b
    edgeprof schema comparison > comparison.schema.json
    edgeprof schema --list
    """
    import json

    from ..conventions import KINDS
    from ..errors import UsageError
    from ..render import json_schema

    if as_list:
        say("\n".join(KINDS), lines=True)
        return
    if kind is not None and kind not in KINDS:
        raise UsageError(f"schema: unknown document kind '{kind}'; the kinds: {', '.join(KINDS)}")
    doc = json_schema.schema(kind) if kind else json_schema.schemas()
    say(json.dumps(doc, indent=2, ensure_ascii=False), lines=True, rendered=True)
