"""``edgeprof ingest``, ``edgeprof history`` and ``edgeprof export``."""

from __future__ import annotations

import click

from ..options import HISTORY_STORE
from ._base import (CONTEXT, ci_options, echo_json, fail_on_errors, main, on_github, options_of, run_guarded, say,
                    taxonomy_option, warn)

STORE_HELP = HISTORY_STORE.help
LOCK_HELP = "Seconds to wait for another ingest holding the store before giving up."


@main.command("ingest", context_settings=CONTEXT)
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--store", required=True, type=click.Path(path_type=str), help=STORE_HELP)
@click.option("--commit", default=None, help="Commit the launches measured [default: manifest.json, else --git].")
@click.option("--branch", default=None, help="Branch [default: manifest.json, else --git].")
@click.option("--model", default=None, help="Model name [default: manifest.json's model, else the file naming].")
@click.option("--device", default=None, help="Device name [default: manifest.json's device, else the platform folder].")
@click.option("--experiment", default=None, help="Experiment name [default: the run folder layout].")
@click.option("--threads", type=click.IntRange(1, 4096), default=None,
              help="The thread count the launches were measured with: a folder's files named with another _t<N> are "
                   "left out, files that record none are stored with it [default: _t<N> in the name].")
@click.option("--time", "when", default=None, help="ISO 8601 time of the measurement [default: manifest, git, now].")
@click.option("--label", "labels", multiple=True, help="KEY=VALUE stored with every launch (repeatable).")
@click.option("--git", "git_dir", type=click.Path(path_type=str), default=None,
              help="Take commit, branch and commit time from the git checkout at this folder.")
@click.option("--run-dir", type=click.Path(path_type=str), default=None, help="Run folder INPUTS are experiments of.")
@click.option("--etrecord", type=click.Path(path_type=str), default=None, help="ETRecord for every ETDump.")
@click.option("--workers", type=click.IntRange(1, 512), default=None,
              help="Read and summarise on a local Dask cluster of N worker processes (edgeprof[dask]).")
@click.option("--scheduler", default=None, help="Read and summarise on the workers of this Dask scheduler "
                                                "(tcp://HOST:PORT; the files must be readable there).")
@click.option("--dashboard", is_flag=True,
              help="With --workers: serve the local cluster's Dask dashboard, on 127.0.0.1 only [default: none].")
@click.option("--lock-timeout", type=click.FloatRange(0, 86400), default=60.0, show_default=True, help=LOCK_HELP)
@click.option("--relabel", is_flag=True,
              help="A launch stored already under other labels (commit, model, device, …) takes this ingest's "
                   "labels [default: such a conflict is an error and nothing is stored].")
@taxonomy_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
@run_guarded
def ingest_cmd(inputs, store, commit, branch, model, device, experiment, threads, when, labels, git_dir, run_dir,
               etrecord, workers, scheduler, dashboard, lock_timeout, relabel, taxonomy, as_json):
    """Store launches (ETDumps, timeline CSVs including the Arm kit's, run folders) in a history store.

    The same file ingested twice is stored once (keyed by its content's SHA-256); ingested again under other
    labels (another --commit, …) it is a conflict (exit 2, nothing stored) unless --relabel. A file that cannot
    be read is reported and skipped (exit 2); the others are stored, all in one transaction.

    \b
    edgeprof ingest out_model/runs/android --store history.duckdb --commit $GITHUB_SHA --branch main
    edgeprof ingest runs/ --store history.duckdb --git . --label runner=pixel8
    edgeprof ingest runs/ --store s3-mount/history/ --workers 8          (Parquet dataset, local cluster)
    edgeprof ingest /shared/runs --store /shared/history/ --scheduler tcp://10.0.0.5:8786
    """
    from .. import api
    from ..render.history import print_ingest

    result = api.ingest(inputs, store=store, commit=commit, branch=branch, model=model, device=device,
                        experiment=experiment, threads=threads, time=when, labels=labels, git=git_dir, run_dir=run_dir,
                        etrecord=etrecord, taxonomy=taxonomy, workers=workers, scheduler=scheduler,
                        lock_timeout=lock_timeout, relabel=relabel, dashboard=dashboard)
    for w in result.data["warnings"]:
        warn(w)
    if as_json:
        echo_json(result)
    else:
        print_ingest(result.data)
    fail_on_errors([(None, m) for m in result.error_lines])


@main.command("history", context_settings=CONTEXT)
@options_of("history")
@click.option("--fail-on", type=click.Choice(["regression", "fallback"]), default=None,
              help="Exit 1 when the newest confirmed change (since --since) of a series is a regression, or "
                   "(fallback) when an operator left its accelerator at a commit since --since.")
@click.option("--html", "html_out", type=click.Path(path_type=str), default=None,
              help="Write the trend page (self-contained HTML) here.")
@click.option("--markdown", "md_out", type=click.Path(path_type=str), default=None, help="Write it as Markdown here.")
@click.option("--last", type=click.IntRange(1, 10**6), default=15, show_default=True, help="Commits shown per series.")
@click.option("--lock-timeout", type=click.FloatRange(0, 86400), default=60.0, show_default=True, help=LOCK_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print every point and change as JSON on stdout.")
@ci_options
@run_guarded
def history_cmd(store, model, experiment, device, threads, branch, metric, threshold, eager, launch_cv, since, fail_on,
                html_out, md_out, last, lock_timeout, as_json, ci, junit_out):
    """A metric per commit from a history store, its change points and what moved at each.

    One series per model × experiment × device × thread count; one point per commit (time order) with a
    launch-aware 95 % interval. Changes are found by change-point detection (binary segmentation), gated by size
    (--threshold) and by a t interval on the levels either side, confirmed once two more commits show the new
    level (--eager: at once), and attributed to the categories and operators that moved.

    \b
    edgeprof history --store history.duckdb --model mobilenet_v3 --device pixel8 --html trend.html
    edgeprof history --store history.duckdb --metric category:GEMM --json
    edgeprof history --store history.duckdb --fail-on regression --since $BASE_SHA     (CI gate)
    """
    from .. import api
    from ..render import history as render
    from ..writer import write_text

    result = api.history(store, model=model, experiment=experiment, device=device, threads=threads, branch=branch,
                         metric=metric, threshold=threshold, eager=eager,
                         launch_cv=launch_cv, since=since,
                         lock_timeout=lock_timeout)
    d = result.data
    if html_out:
        write_text(html_out, render.html(d))
    if md_out:
        write_text(md_out, render.markdown(d))
    if as_json:
        echo_json(result)
    else:
        render.print_history(d, last=last)
    if not (fail_on or junit_out or on_github(ci)):
        return
    from ..render.ci import Check, history_summary
    from .ci import finish

    checks = []
    if fail_on:
        found = d["regressions"] if fail_on == "regression" else d["fallbacks"]
        since_ = f" since {d['since']}" if d.get("since") else ""
        checks.append(Check(fail_on, f"{fail_on}: " + "; ".join(found) if found else None,
                            "; ".join(found) if found else
                            f"no confirmed {fail_on}{since_} in {len(d['series'])} series"))
    finish("history", checks, history_summary(d, checks), ci=ci, junit_out=junit_out,
           as_json=as_json)


@main.command("export", context_settings=CONTEXT)
@click.option("--store", required=True, type=click.Path(path_type=str), help=STORE_HELP)
@click.option("--to", "target", required=True, type=click.Path(path_type=str),
              help="Target store: DIR/ (Parquet dataset) or a DuckDB file. Launches already there are skipped.")
@click.option("--lock-timeout", type=click.FloatRange(0, 86400), default=60.0, show_default=True, help=LOCK_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
@run_guarded
def export_cmd(store, target, lock_timeout, as_json):
    """Copy a history store's tables to a Parquet dataset (model=/device=/date=) or another DuckDB file.

    \b
    edgeprof export --store history.duckdb --to /shared/history/
    """
    from .. import api

    result = api.export(store, target, lock_timeout=lock_timeout)
    if as_json:
        echo_json(result)
    else:
        d = result.data
        say(f"{d['launches_copied']} launch(es) copied to {d['target']} ({d['target_kind']}); "
            f"{d['launches_already_there']} were there already")
