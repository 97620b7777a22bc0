"""Commands on ExecuTorch profiles: analyze, latency, compare, breakdown, report, trace."""

from __future__ import annotations

import gc

import click

from ._base import (
    CONTEXT,
    KIT,
    echo_json,
    fail_on_errors,
    info,
    int_option,
    main,
    run_guarded,
    taxonomy_option,
    warn,
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
@click.option("--method", default=None, help="ETRecord method to use (default: forward).")
@click.option("--json", "as_json", is_flag=True, help="Print analysis_summary.json's content on stdout.")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when stderr is a terminal).")
@taxonomy_option
@click.option("--quiet", is_flag=True, help=f"No table on stdout, only errors and warnings ({KIT}).")
@run_guarded
def analyze(inputs, run_dirs, etrecord, strict_etrecord, fmt, output_dir, jobs, method, as_json, progress, taxonomy,
            quiet):
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
                             taxonomy=taxonomy)
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


def _comparison_options(fn):
    """Options shared by compare and latency --compare."""
    for opt in reversed([
        click.option("--threshold", type=float, default=0.02, show_default=True,
                     help="δ: the smallest change that matters (0.02 = 2 %); sets the verdict and --fail-on."),
        click.option("--level", type=float, default=0.95, show_default=True, help="Confidence level of the intervals."),
        click.option("--warmup", default="auto", show_default=True,
                     help="Warm-up runs to leave out per launch: 'auto' (detected) or a number (0 keeps all)."),
        click.option("--fail-on", type=click.Choice(["regression"]), default=None,
                     help="Exit 1 when the candidate is significantly slower by more than the threshold."),
        click.option("--categories/--no-categories", default=True, show_default=True,
                     help="Also compare by operator category and operator (needs ETDumps or timeline CSVs)."),
        taxonomy_option,
    ]):
        fn = opt(fn)
    return fn


def _kit_options(fn):
    """The Arm kit's robust_latency_analysis.py / analyze_etdump_csv.py spellings."""
    for opt in reversed([
        click.option("--timeline-csv", "kit_file", default=None, type=click.Path(path_type=str),
                     help=f"The timeline (or ETDump) measured with the change ({KIT}; the candidate unless SME2 names "
                          "say otherwise)."),
        click.option("--compare", "kit_reference", default=None, type=click.Path(path_type=str),
                     help=f"The reference to compare with ({KIT}; the baseline unless SME2 names say otherwise)."),
        click.option("--name1", "kit_name1", default=None, help=f"Name of the --timeline-csv input ({KIT})."),
        click.option("--name2", "kit_name2", default=None, help=f"Name of the --compare input ({KIT})."),
        click.option("--verbose", "-v", is_flag=True, help="More detail on stderr (inputs, roles, per-launch warm-up)."),
    ]):
        fn = opt(fn)
    return fn


@main.command(context_settings=CONTEXT)
@click.argument("inputs", nargs=-1, type=click.Path(path_type=str))
@click.option("--run-dir", type=click.Path(path_type=str), default=None,
              help="Run folder in which INPUTS name experiments (e.g. mac_sme2_on).")
@click.option("--threads", type=int, default=None, help="Only runs with this thread count (_t<N> in the file name).")
@click.option("--name", default=None, help="Name recorded in the report (default: the timeline stem).")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed (results are deterministic).")
@click.option("--resamples", type=click.IntRange(100, 100000), default=2000, show_default=True)
@click.option("--output-dir", type=click.Path(path_type=str), default=None, help="Where to write the JSON (default: beside each input).")
@click.option("--no-write", is_flag=True, help="Do not write <timeline stem>_robust_stats.json.")
@click.option("--json", "as_json", is_flag=True, help="Print the reports as JSON on stdout.")
@_kit_options
@_comparison_options
@run_guarded
def latency(inputs, run_dir, threads, name, seed, resamples, output_dir, no_write, as_json, kit_file, kit_reference,
            kit_name1, kit_name2, verbose, threshold, level, warmup, fail_on, categories, taxonomy):
    """Robust end-to-end latency statistics of each launch (ETDump, timeline CSV, folder or experiment).

    Per-run latency is that run's Method::execute. Reports median with a bootstrap CI, mean/std/CV, MAD,
    percentiles, trimmed means, Tukey outliers (flagged, kept), warm-up runs, drift (Mann–Kendall,
    Theil–Sen) and a multimodality hint; writes <timeline stem>_robust_stats.json (the Arm kit's keys plus ours).

    \b
    edgeprof latency model_exec_all_runs_timeline.csv
    edgeprof latency --timeline-csv ON.csv --output-dir D --name SME2-On --verbose      (Arm kit spelling)
    edgeprof latency --timeline-csv ON.csv --compare OFF.csv --name1 SME2-On --name2 SME2-Off
                     (with --compare: also the comparison, as `edgeprof compare` makes it)
    """
    from .. import api
    from ..api.results import collection
    from ..errors import UsageError
    from ..render import terminal

    specs = list(inputs) + ([kit_file] if kit_file else [])
    if kit_reference and not kit_file and len(inputs) == 1:
        kit_file, specs = inputs[0], list(inputs)
    if kit_reference:
        specs.append(kit_reference)
    if not specs:
        raise UsageError("give a timeline CSV, an ETDump, a folder, or --timeline-csv FILE")
    ws = api.Workspace(run_dir)
    reports = api.latency(specs, run_dir=run_dir, threads=threads, seed=seed, resamples=resamples,
                          names={kit_file: name or kit_name1, kit_reference: kit_name2} if kit_file else None,
                          name=None if kit_file else name, write=not no_write, output_dir=output_dir, ws=ws)
    cmp = None
    if kit_reference:
        if not kit_file or len(specs) != 2:
            raise UsageError("--compare needs exactly one other input (--timeline-csv FILE)")
        roles = api.kit_roles(kit_file, kit_reference, kit_name1 or name, kit_name2)
        cmp = _run_comparison(roles, run_dir=run_dir, threads=threads, threshold=threshold, level=level, seed=seed,
                              resamples=resamples, warmup=warmup, categories=categories, taxonomy=taxonomy,
                              output_dir=output_dir, out_file=None, no_write=no_write, verbose=verbose, ws=ws)
    for rep in reports:
        for w in rep.warnings:
            warn(f"{rep['input']}: {w}")
        if verbose:
            _verbose_latency(rep)
    if as_json:
        doc = collection("latency", "reports", reports)
        if cmp is not None:
            doc["comparison"] = cmp.body()
        echo_json(doc)
    else:
        terminal.print_latency(reports)
        if cmp is not None:
            terminal.print_compare(cmp)
    if cmp is not None:
        _gate(cmp, fail_on)


def _verbose_latency(rep) -> None:
    info(f"{rep['name']}: {rep['input']} — {rep['count']} runs, latency from {rep['source'].replace('_', ' ')}")
    info("  per-run ms: " + ", ".join(f"{x:.4g}" for x in rep["latencies_ms"][:200])
         + (" …" if len(rep["latencies_ms"]) > 200 else ""))
    w, d = rep["warmup"], rep["drift"]
    info(f"  warm-up: {w['count']} run(s)" + (f" ({w['evidence']})" if w.get("evidence") else
                                                f" ({w['note']})" if w.get("note") else ""))
    info("  drift: " + (d.get("note") or f"Mann–Kendall p = {d['mann_kendall']['p_value']:.3g}, "
                                          f"{d['slope_percent_per_100_runs']:+.2f} % per 100 runs"))
    if rep.get("written"):
        info(f"  wrote {rep['written']}")


def _run_comparison(roles, *, run_dir, threads, threshold, level, seed, resamples, warmup, categories, taxonomy,
                    output_dir, out_file, no_write, verbose, ws=None):
    """Compare the arms ``roles`` names, say which is the baseline, write the JSON; returns the result."""
    from .. import api

    wu = warmup if warmup == "auto" else int_option(warmup, "--warmup")
    for w in roles.warnings:
        warn(w)
    result = api.compare(roles.baseline, roles.candidate, run_dir=run_dir, threads=threads,
                         baseline_name=roles.baseline_name, candidate_name=roles.candidate_name, threshold=threshold,
                         level=level, seed=seed, resamples=resamples, warmup=wu, categories=categories,
                         taxonomy=taxonomy, roles=roles, write=not no_write, output_dir=output_dir,
                         out=out_file, ws=ws)
    info(f"roles: baseline {result['baseline']['name']}, candidate {result['candidate']['name']} — {roles.note}; "
         "speedup = baseline / candidate")
    if verbose:
        for arm in ("baseline", "candidate"):
            for launch in result[arm]["launches"]:
                d = launch["drift"]
                info(f"{arm} {result[arm]['name']}: {launch['source']} — {launch['runs']} runs, "
                     f"{launch['warmup_dropped']} warm-up left out, median {launch['median_ms']:.4g} ms; drift: "
                     + (d.get("note") or ("significant" if d["significant"] else "none")))
        if result.get("ci"):
            info(f"interval: {result['ci']['method']} — {result['ci']['scope']}")
        if result.get("written"):
            info(f"wrote {result['written']}")
    return result


def _gate(result, fail_on) -> None:
    from ..errors import CheckFailed

    if fail_on == "regression" and result["verdict"] == "slower":
        raise CheckFailed(f"regression: {result['summary_line']}")


@main.command(context_settings=CONTEXT)
@click.argument("inputs", nargs=-1, type=click.Path(path_type=str))
@click.option("--baseline", "-b", multiple=True, help="Baseline input(s): files, a folder, or an experiment of --run-dir. "
              "Repeat for several launches.")
@click.option("--candidate", "-c", multiple=True, help="Candidate input(s), as --baseline.")
@click.option("--run-dir", type=click.Path(path_type=str), default=None, help="Run folder holding the experiments.")
@click.option("--baseline-name", default=None, help="Name of the baseline in the output (default: experiment or file name).")
@click.option("--candidate-name", default=None)
@click.option("--threads", type=int, default=None, help="Only runs with this thread count.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--resamples", type=click.IntRange(100, 100000), default=2000, show_default=True)
@click.option("--output-dir", type=click.Path(path_type=str), default=None,
              help="Where to write <baseline>_vs_<candidate>_robust_comparison.json (default: beside the baseline).")
@click.option("--out", "out_file", type=click.Path(path_type=str), default=None, help="Write the JSON to this file instead.")
@click.option("--no-write", is_flag=True, help="Do not write the comparison JSON.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON on stdout.")
@_comparison_options
@_kit_options
@run_guarded
def compare(inputs, baseline, candidate, run_dir, baseline_name, candidate_name, threads, seed, resamples, output_dir,
            out_file, no_write, as_json, threshold, level, warmup, fail_on, categories, taxonomy, kit_file,
            kit_reference, kit_name1, kit_name2, verbose):
    """Is the candidate faster than the baseline? speedup = baseline / candidate, with its CI and a verdict.

    \b
    Roles: an input named sme2_off is the baseline and sme2_on the candidate, whatever the order or flags;
    otherwise -b/-c as given, the first of two positional inputs, or the --compare input (the reference).
    edgeprof compare base.etdp cand.etdp
    edgeprof compare -b off1.etdp -b off2.etdp -c on1.etdp -c on2.etdp     (several launches per arm)
    edgeprof compare --run-dir out/runs/mac -b mac_sme2_off -c mac_sme2_on
    edgeprof compare --timeline-csv ON.csv --compare OFF.csv --name1 SME2-On --name2 SME2-Off   (Arm kit spelling)
    """
    from pathlib import Path

    from .. import api
    from ..errors import UsageError
    from ..render import terminal

    kit = bool(kit_file or kit_reference)
    if kit and (baseline or candidate):
        raise UsageError("give the inputs either with --timeline-csv/--compare or with --baseline/--candidate, not both")
    if kit:
        if inputs:
            raise UsageError("with --timeline-csv/--compare give no positional inputs")
        if not (kit_file and kit_reference):
            raise UsageError("--timeline-csv and --compare go together (the changed timeline and the reference)")
        roles = api.kit_roles(kit_file, kit_reference, kit_name1, kit_name2)
    elif inputs and not baseline and not candidate:
        if len(inputs) == 1 and Path(inputs[0]).is_dir() and run_dir is None:
            raise UsageError("a run folder needs --baseline and --candidate experiment names")
        roles = api.assign_roles(list(inputs), baseline_name, candidate_name)
    else:
        if inputs:
            if len(inputs) == 1 and run_dir is None and Path(inputs[0]).is_dir():
                run_dir = inputs[0]
            else:
                raise UsageError("give inputs either positionally (two) or with --baseline/--candidate, not both")
        if not baseline or not candidate:
            raise UsageError("need a baseline and a candidate")
        roles = api.explicit_roles(list(baseline), list(candidate), baseline_name, candidate_name)
    result = _run_comparison(roles, run_dir=run_dir, threads=threads, threshold=threshold, level=level, seed=seed,
                             resamples=resamples, warmup=warmup, categories=categories, taxonomy=taxonomy,
                             output_dir=output_dir, out_file=out_file, no_write=no_write, verbose=verbose)
    if as_json:
        echo_json(result)
    else:
        terminal.print_compare(result)
    _gate(result, fail_on)


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
@click.option("--json", "as_json", is_flag=True, help="Print the breakdown(s) as JSON on stdout.")
@run_guarded
def breakdown(inputs, run_dir, threads, etrecord, strict_etrecord, taxonomy, top, model_name, fmt, output_dir, no_write,
              as_json):
    """Where the time goes: categories, operators, portable vs delegated, hotspots, graph breaks.

    INPUT: an ETDump, a timeline CSV, a folder, or an experiment of --run-dir. Writes the Arm kit's
    <model>_category_summary, _operator_details, _e2e_latency and _other_top_ops files (its columns first),
    <model>_graph_breaks and <model>_breakdown.json.
    """
    from .. import api
    from ..api.results import collection
    from ..render import terminal

    docs = api.breakdowns(list(inputs), run_dir=run_dir, threads=threads, etrecord=etrecord,
                          strict_etrecord=strict_etrecord, taxonomy=taxonomy, top=top,
                          model_name=model_name, write=not no_write, output_dir=output_dir, fmt=fmt)
    for bd in docs:
        if not as_json:
            terminal.print_breakdown(bd)
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
@click.option("--json", "as_json", is_flag=True, help="Print what was exported as JSON on stdout.")
@run_guarded
def trace(etdump, runs, no_init, out_file, etrecord, fmt, as_json):
    """Export an ETDump (or timeline CSV) as a Chrome trace-event JSON for ui.perfetto.dev / trace_processor.

    One track per run, strictly nested slices (kernels in OPERATOR_CALL, XNNPACK ops in DELEGATE_CALL),
    args with kind, category, instruction id and op types. Open the file at https://ui.perfetto.dev.
    """
    from .. import api

    result = api.trace(etdump, runs=runs, include_init=not no_init, out=out_file, etrecord=etrecord)
    if as_json:
        echo_json(result)
    else:
        click.echo(f"wrote {result['written']}: {result['slices']} slices on {result['tracks']} track(s)"
                   + (f", {result['adjusted']} clamped to nest" if result["adjusted"] else "")
                   + " — open it at https://ui.perfetto.dev")


@main.command(context_settings=CONTEXT)
@click.argument("inputs", nargs=-1, type=click.Path(path_type=str))
@click.option("--baseline", "-b", multiple=True, help="Baseline experiment or file(s) (several = several launches).")
@click.option("--candidate", "-c", multiple=True, help="Candidate experiment or file(s).")
@click.option("--baseline-name", default=None, help="Name of the baseline in the report.")
@click.option("--candidate-name", default=None)
@click.option("--threads", type=int, default=None, help="Only runs with this thread count.")
@click.option("--out", "out_file", type=click.Path(path_type=str), default=None,
              help="Markdown report (default: RUN_DIR/report.md, or <first input stem>_report.md beside it).")
@click.option("--html", "html_file", type=click.Path(path_type=str), default=None,
              help="Also write a self-contained HTML report with charts here.")
@click.option("--threshold", type=float, default=0.02, show_default=True, help="δ for the comparison verdict.")
@click.option("--seed", type=int, default=0, show_default=True)
@taxonomy_option
@click.option("--json", "as_json", is_flag=True, help="Print the report's data as JSON on stdout.")
@run_guarded
def report(inputs, baseline, candidate, baseline_name, candidate_name, threads, out_file, html_file, threshold, seed,
           taxonomy, as_json):
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
                      taxonomy=taxonomy, out=out_file, html=html_file, write=True)
    if as_json:
        echo_json(data)
    else:
        cmp = data.get("comparison")
        if cmp:
            click.echo(cmp["summary_line"])
        for f in data["findings"][:6]:
            click.echo(f"- [{f['evidence_name']}] {f['text']}")
        click.echo("wrote " + ", ".join(data["written"]))
