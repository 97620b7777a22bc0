"""``edgeprof example``."""

from __future__ import annotations

import click

from ._base import CONTEXT, echo_json, main, run_guarded


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
        click.echo(f"copied {len(result['files'])} files to {dest}/ — next: edgeprof analyze {dest}")
