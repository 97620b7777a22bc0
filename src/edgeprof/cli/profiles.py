"""Commands on ExecuTorch profiles: analyze, breakdown, report, trace."""

from __future__ import annotations

import gc

import click

from ..conventions import OP_TYPES_MODES, OP_TYPES_REF
from ._base import (
    CONTEXT,
    KIT,
    echo_json,
    fail_on_errors,
    main,
    options_of,
    run_guarded,
    say,
    taxonomy_option,
    warn,
    writes_files,
)


@main.command(context_settings=CONTEXT)
@click.argument("inputs", nargs=-1, type=click.Path(path_type=str))
@click.option("--run-dir", "run_dirs", multiple=True, type=click.Path(path_type=str),
              help=f"The run folder to analyse (the {KIT} of INPUTS).")
@click.option("--etrecord", type=click.Path(path_type=str), default=None,
              help="ETRecord for every ETDump (default: manifest.json's model, or an .etrecord beside the ETDump/.pte).")
@click.option("--strict-etrecord", is_flag=True, help="A missing, unreadable or mismatched ETRecord is an error.")
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), default="csv", show_default=True)
@click.option("--output-dir", type=click.Path(path_type=str), default=None,
              help="Write outputs here (mirroring the run folder) instead of beside each ETDump.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=None, help="Files processed in parallel (default: CPU count).")
@click.option("--workers", type=click.IntRange(1, 512), default=None,
              help="Analyse the files on a local Dask cluster of this many worker processes (edgeprof[dask]).")
@click.option("--scheduler", default=None, help="Analyse the files on the workers of this Dask scheduler (tcp://HOST:PORT); "
                                                "they read the inputs and write the outputs at the same paths.")
@click.option("--method", default=None, help="ETRecord method to use (default: forward).")
@click.option("--op-types", "op_types", type=click.Choice(OP_TYPES_MODES), default=OP_TYPES_REF, show_default=True,
              help="CSV timelines: each event's ETRecord op-type list as an id (op_types_id) into <timeline>_op_types.csv "
                   "written beside it (ref), or the list in every row (inline: the op_types column).")
@click.option("--json", "as_json", is_flag=True, help="Print analysis_summary.json's content on stdout.")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when stderr is a terminal).")
@taxonomy_option
@click.option("--quiet", is_flag=True, help=f"No table on stdout, only errors and warnings ({KIT}).")
@run_guarded
def analyze(inputs, run_dirs, etrecord, strict_etrecord, fmt, output_dir, jobs, workers, scheduler, method, op_types,
            as_json, progress, taxonomy, quiet):
    """Regenerate the per-ETDump CSVs and analysis_summary.json for a run folder (or ETDump files).

    Writes <stem>_exec_all_runs_timeline.csv, <stem>_exec_run0_timeline.csv and <stem>_exec_ops_stats.csv
    next to each ETDump, and analysis_summary.json in the run folder. A file that cannot be read is
    reported and skipped (exit code 2); the others are still processed.

    \b
    edgeprof analyze out_model/runs/mac
    edgeprof analyze --run-dir out_model/runs/mac        (Arm kit spelling)
    """
    from .. import api
    from ..errors import UsageError
    from ..render import terminal

    api.preload("analyze")  # imported before freezing (see run_guarded)

    inputs = list(inputs) + list(run_dirs)
    if not inputs:
        raise UsageError("give a run folder (or --run-dir DIR) or ETDump files")
    gc.freeze()
    bar = terminal.progress_bar(enabled=progress)
    with bar:
        result = api.analyze(inputs, etrecord=etrecord, strict_etrecord=strict_etrecord, fmt=fmt,
                             output_dir=output_dir, jobs=jobs, method=method, progress=bar.update,
                             taxonomy=taxonomy, op_types=op_types, workers=workers, scheduler=scheduler)
    if as_json:
        echo_json(result)
    elif result["per_etdump"] and not quiet:
        terminal.print_analyze(result)
    for w in result.get("warnings", []):
        warn(w)
    for e in result["per_etdump"]:
        for w in e["warnings"]:
            warn(f"{e['etdump']}: {w}")
    fail_on_errors(result.errors)


@main.command(context_settings=CONTEXT)
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--run-dir", type=click.Path(path_type=str), default=None, help="Run folder in which INPUTS name experiments.")
@click.option("--threads", type=int, default=None, help="Only runs with this thread count.")
@click.option("--etrecord", type=click.Path(path_type=str), default=None, help="ETRecord (default: found as analyze finds it).")
@click.option("--strict-etrecord", is_flag=True)
@taxonomy_option
@click.option("--top", type=click.IntRange(1, 1000), default=15, show_default=True, help="Rows in the operator tables.")
@click.option("--model-name", default=None, help="Name used in the output file names (default: the input's stem).")
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), default="csv", show_default=True)
@click.option("--output-dir", type=click.Path(path_type=str), default=None, help="Default: beside each input.")
@click.option("--no-write", is_flag=True, help="Do not write the files.")
@click.option("--program", type=click.Path(path_type=str), default=None,
              help="The .pte that ran: adds achieved GFLOP/s and GB/s per instruction and category, and the XNNPACK "
                   "node mix behind each delegate call; or the .onnx an ONNX Runtime profile ran (per node by name, "
                   "and per category; needs the ort extra).")
@click.option("--json", "as_json", is_flag=True, help="Print the breakdown(s) as JSON on stdout (files only with --output-dir).")
@run_guarded
def breakdown(inputs, run_dir, threads, etrecord, strict_etrecord, taxonomy, top, model_name, fmt, output_dir, no_write,
              program, as_json):
    """Where the time goes: categories, operators, portable vs delegated, hotspots, graph breaks.

    INPUT: an ETDump, a timeline CSV, a folder, or an experiment of --run-dir. Writes the Arm kit's
    <model>_category_summary, _operator_details, _e2e_latency and _other_top_ops files (its columns first),
    <model>_graph_breaks and <model>_breakdown.json.
    """
    from .. import api
    from ..api.result_base import collection
    from ..render import terminal

    docs = api.breakdowns(list(inputs), run_dir=run_dir, threads=threads, etrecord=etrecord,
                          strict_etrecord=strict_etrecord, taxonomy=taxonomy, top=top,
                          model_name=model_name, write=writes_files(as_json, no_write, output_dir),
                          output_dir=output_dir, fmt=fmt, program=program,
                          block_events=None)  # an ETDump block by block: the accounting's columns only
    for bd in docs:
        if not as_json:
            terminal.print_breakdown(bd)
            if bd.get("program"):
                from ..render import program_md

                terminal.print_markdown(program_md.program_join_markdown)(bd["program"])
        for w in bd.warnings:
            warn(f"{bd['input']}: {w}")
    if as_json:
        echo_json(collection("breakdown", "breakdowns", docs))


@main.command(context_settings=CONTEXT)
@click.argument("etdump", type=click.Path(path_type=str))
@click.option("--runs", default=None, help="Execute runs to export: N, A:B (B exclusive), or a comma list (default: all).")
@click.option("--no-init", is_flag=True, help="Leave out the load/init block.")
@click.option("--out", "out_file", type=click.Path(path_type=str), default=None,
              help="Output file (default: <ETDump stem>.trace.json beside it).")
@click.option("--etrecord", type=click.Path(path_type=str), default=None, help="ETRecord for op types (default: found).")
@click.option("--format", "fmt", type=click.Choice(["json"]), default="json", show_default=True,
              help="Chrome trace-event JSON (Perfetto UI and trace_processor load it).")
@click.option("--op-types", "op_types", type=click.Choice(OP_TYPES_MODES), default=OP_TYPES_REF, show_default=True,
              help="A slice's ETRecord op-type list as an op_types_id into otherData.op_types, each list once (ref), "
                   "or in every slice's args (inline).")
@click.option("--json", "as_json", is_flag=True, help="Print what was exported as JSON on stdout.")
@run_guarded
def trace(etdump, runs, no_init, out_file, etrecord, fmt, op_types, as_json):
    """Export a profile as a Chrome trace-event JSON for ui.perfetto.dev / trace_processor: an ETDump, a timeline
    CSV, an ONNX Runtime profile or a LiteRT op profile.

    One track per run, strictly nested slices (kernels in OPERATOR_CALL, XNNPACK ops in DELEGATE_CALL), args with
    kind, category, instruction id and op types. Open the file at https://ui.perfetto.dev.
    """
    from .. import api

    result = api.trace(etdump, runs=runs, include_init=not no_init, out=out_file, etrecord=etrecord,
                       op_types=op_types)
    if as_json:
        echo_json(result)
    else:
        say(f"wrote {result['written']}: {result['slices']} slices on {result['tracks']} track(s)"
            + (f", {result['adjusted']} clamped to nest" if result["adjusted"] else "")
            + " — open it at https://ui.perfetto.dev")


@main.command(context_settings=CONTEXT)
@click.argument("inputs", nargs=-1, type=click.Path(path_type=str))
@click.option("--baseline", "-b", multiple=True, help="Baseline experiment or file(s) (several = several launches).")
@click.option("--candidate", "-c", multiple=True, help="Candidate experiment or file(s).")
@click.option("--baseline-name", default=None, help="Name of the baseline in the report.")
@click.option("--candidate-name", default=None)
@options_of("compare", "threads")
@click.option("--out", "out_file", type=click.Path(path_type=str), default=None,
              help="Markdown report (default: RUN_DIR/report.md, or <first input stem>_report.md beside it).")
@click.option("--html", "html_file", type=click.Path(path_type=str), default=None,
              help="Also write a self-contained HTML report with charts here.")
@options_of("compare", "threshold", "seed")
@taxonomy_option
@click.option("--json", "as_json", is_flag=True, help="Print the report's data as JSON on stdout.")
@options_of("compare", "launch_cv", "store", "metric", "allow_different")
@run_guarded
def report(inputs, baseline, candidate, baseline_name, candidate_name, threads, out_file, html_file, threshold, seed,
           taxonomy, as_json, launch_cv, noise_store, metric, allow_different):
    """A report people read: Markdown (and --html with charts) for a run folder, one ETDump, or a pair.

    \b
    edgeprof report out/runs/mac                         (SME2-off/on experiments paired by name)
    edgeprof report out/runs/linux -b portable -c xnnpack_fp32 --html report.html
    edgeprof report base.etdp cand.etdp --out report.md
    Sections: run, latency (CIs, verdict), categories, bottleneck, portable vs delegated, top and OTHER
    operators, kernel evidence (tier), validation, findings (each naming its evidence), what was missing.
    """
    from .. import api

    data = api.report(list(inputs), baseline=baseline, candidate=candidate, baseline_name=baseline_name,
                      candidate_name=candidate_name, threads=threads, seed=seed, threshold=threshold,
                      taxonomy=taxonomy, out=out_file, html=html_file, write=True, launch_cv=launch_cv,
                      store=noise_store, metric=metric, allow_different=allow_different)
    if as_json:
        echo_json(data)
    else:
        cmp = data.get("comparison")
        if cmp:
            say(cmp["summary_line"])
        for f in data["findings"][:6]:
            say(f"- [{f['evidence_name']}] {f['text']}")
        say("wrote " + ", ".join(data["written"]))

