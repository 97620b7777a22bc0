"""``edgeprof`` command line: parses arguments, calls :mod:`edgeprof.api`, picks a renderer.

Exit codes: 0 success · 1 a check or gate failed · 2 bad input or usage (one-line message on stderr;
``--debug`` shows the traceback).
"""

from __future__ import annotations

import sys

import click

from . import __version__
from .errors import EdgeprofError

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Ctx:
    def __init__(self, debug: bool):
        self.debug = debug


def _fail(err: Exception, debug: bool) -> None:
    if debug:
        raise err
    msg = str(err).replace("\n", " ")
    click.echo(f"edgeprof: error: {msg}", err=True)
    sys.exit(getattr(err, "exit_code", 2))


def _warn(msg: str) -> None:
    click.echo(f"edgeprof: warning: {msg}", err=True)


def run_guarded(fn):
    """Run a command body mapping edgeprof errors to one-line messages and exit codes."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        ctx = click.get_current_context()
        debug = bool(ctx.find_object(Ctx) and ctx.find_object(Ctx).debug)
        try:
            return fn(*args, **kwargs)
        except EdgeprofError as e:
            _fail(e, debug)
        except KeyboardInterrupt:
            click.echo("edgeprof: interrupted", err=True)
            sys.exit(130)

    return wrapper


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, prog_name="edgeprof")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.pass_context
def main(ctx, debug):
    """Profile analysis for on-device inference: ExecuTorch ETDumps, XNNPACK kernels, Apple Neural Engine.

    Start with `edgeprof example DIR` to get a small real run folder, then `edgeprof analyze DIR`.
    """
    ctx.obj = Ctx(debug)


@main.command(context_settings=CONTEXT)
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--etrecord", type=click.Path(path_type=str), default=None,
              help="ETRecord for every ETDump (default: manifest.json's model, or an .etrecord beside the ETDump/.pte).")
@click.option("--strict-etrecord", is_flag=True, help="A missing, unreadable or mismatched ETRecord is an error.")
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), default="csv", show_default=True)
@click.option("--output-dir", type=click.Path(path_type=str), default=None,
              help="Write outputs here (mirroring the run folder) instead of beside each ETDump.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=None, help="Files processed in parallel (default: CPU count).")
@click.option("--method", default=None, help="ETRecord method to use (default: forward).")
@click.option("--json", "as_json", is_flag=True, help="Print analysis_summary.json's content on stdout.")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when stderr is a terminal).")
@run_guarded
def analyze(inputs, etrecord, strict_etrecord, fmt, output_dir, jobs, method, as_json, progress):
    """Regenerate the per-ETDump CSVs and analysis_summary.json for a run folder (or ETDump files).

    Writes <stem>_exec_all_runs_timeline.csv, <stem>_exec_run0_timeline.csv and <stem>_exec_ops_stats.csv
    next to each ETDump, and analysis_summary.json in the run folder. A file that cannot be read is
    reported and skipped (exit code 2); the others are still processed.
    """
    from . import api
    from .render import terminal

    bar = terminal.progress_bar(enabled=progress)
    with bar:
        result = api.analyze(list(inputs), etrecord=etrecord, strict_etrecord=strict_etrecord, fmt=fmt,
                             output_dir=output_dir, jobs=jobs, method=method, progress=bar.update)
    if as_json:
        from .render import jsonfmt

        click.echo(jsonfmt.dumps(result.summary), nl=False)
    else:
        terminal.print_analyze(result)
    for w in result.summary.get("warnings", []):
        _warn(w)
    for e in result.summary["per_etdump"]:
        for w in e["warnings"]:
            _warn(f"{e['etdump']}: {w}")
    for f, msg in result.errors:
        click.echo(f"edgeprof: error: {msg}", err=True)
    if result.errors:
        sys.exit(2)


@main.command(context_settings=CONTEXT)
@click.argument("dest", required=False, default="edgeprof-example", type=click.Path(path_type=str))
@click.option("--force", is_flag=True, help="Copy even if DEST exists and is not empty.")
@click.option("--json", "as_json", is_flag=True, help="Print the copied files as JSON.")
@run_guarded
def example(dest, force, as_json):
    """Copy the bundled example run folder (real ExecuTorch profiles of a small CNN) to DEST."""
    from .examples import copy_example

    files = copy_example(dest, force=force)
    if as_json:
        from .render import jsonfmt

        click.echo(jsonfmt.dumps({"schema_version": jsonfmt.SCHEMA_VERSION, "dest": dest, "files": files}), nl=False)
    else:
        click.echo(f"copied {len(files)} files to {dest}/ — next: edgeprof analyze {dest}")


if __name__ == "__main__":  # pragma: no cover
    main()
