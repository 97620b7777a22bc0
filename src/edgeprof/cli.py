"""``edgeprof`` command line: parses arguments, calls :mod:`edgeprof.api`, picks a renderer.

Exit codes: 0 success · 1 a check or gate failed · 2 bad input or usage (one-line message on stderr;
``--debug`` shows the traceback).
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import click

from . import __version__
from .errors import EdgeprofError
from .io.files import fit_name

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
TAXONOMY_HELP = "TOML file extending or overriding the operator taxonomy (see README)."


class Ctx:
    def __init__(self, debug: bool):
        self.debug = debug


def _fail(err: Exception, debug: bool) -> None:
    if debug:
        raise err
    from .io.files import display

    msg = display(str(err)).replace("\n", " ").replace("\r", " ")
    click.echo(f"edgeprof: error: {msg}", err=True)
    sys.exit(getattr(err, "exit_code", 2))


def _quiet_numerics():
    """numpy's RuntimeWarnings (an empty mean, a division by zero) are handled where they matter; they never
    reach the terminal as raw warnings."""
    import contextlib
    import warnings

    stack = contextlib.ExitStack()
    stack.enter_context(warnings.catch_warnings())
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    return stack


def _warn(msg: str) -> None:
    click.echo(f"edgeprof: warning: {msg}", err=True)


def run_guarded(fn):
    """Run a command body mapping edgeprof errors to one-line messages and exit codes."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        # A command runs once and exits: objects alive now (imported modules) never need collecting, and
        # leaving them to the cyclic GC makes every collection during the analysis walk them again.
        gc.freeze()
        ctx = click.get_current_context()
        debug = bool(ctx.find_object(Ctx) and ctx.find_object(Ctx).debug)
        try:
            with _quiet_numerics():
                return fn(*args, **kwargs)
        except EdgeprofError as e:
            _fail(e, debug)
        except KeyboardInterrupt:
            click.echo("edgeprof: interrupted", err=True)
            sys.exit(130)
        except OSError as e:  # one not met where it happened: still one line naming the file, exit 2
            if debug:
                raise
            from .io.files import display

            where = f"{display(e.filename)}: " if getattr(e, "filename", None) else ""
            _fail(EdgeprofError(f"{where}{(e.strerror or str(e)).lower()}"), False)
        except MemoryError:
            if debug:
                raise
            _fail(EdgeprofError("out of memory: the input is larger than this machine can analyse"), False)
        except RecursionError:
            if debug:
                raise
            _fail(EdgeprofError("input nested too deeply to analyse"), False)

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
    for stream in (sys.stdout, sys.stderr):  # a path that is not UTF-8 prints as U+FFFD, never a crash
        try:
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError):
            pass


KIT = "Arm kit spelling"


def _info(msg: str) -> None:
    click.echo(f"edgeprof: {msg}", err=True)


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
@click.option("--taxonomy", type=click.Path(path_type=str), default=None, help=TAXONOMY_HELP)
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
    from . import api
    from .analysis import breakdown, kernels, timeline  # noqa: F401 - imported before freezing (see run_guarded)
    from .errors import UsageError
    from .io import etdump  # noqa: F401
    from .render import terminal

    inputs = list(inputs) + list(run_dirs)
    if not inputs:
        raise UsageError("give a run folder (or --run-dir DIR) or ETDump files")
    gc.freeze()
    bar = terminal.progress_bar(enabled=progress)
    with bar:
        result = api.analyze(inputs, etrecord=etrecord, strict_etrecord=strict_etrecord, fmt=fmt,
                             output_dir=output_dir, jobs=jobs, method=method, progress=bar.update,
                             taxonomy=_taxonomy(taxonomy))
    if as_json:
        from .render import jsonfmt

        click.echo(jsonfmt.dumps(result.summary), nl=False)
    elif result.summary["per_etdump"] and not quiet:
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


def _taxonomy(path):
    if path is None:
        return None
    from .taxonomy import load_overrides

    return load_overrides(path)


def _write_json(doc: dict, path: Path) -> None:
    from .render import jsonfmt
    from .render.atomic import write_text

    write_text(path, jsonfmt.dumps(doc))


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
        click.option("--taxonomy", type=click.Path(path_type=str), default=None, help=TAXONOMY_HELP),
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
    from . import api
    from .errors import UsageError
    from .render import jsonfmt, terminal

    specs = list(inputs) + ([kit_file] if kit_file else [])
    if kit_reference and not kit_file and len(inputs) == 1:
        kit_file, specs = inputs[0], list(inputs)
    if kit_reference:
        specs.append(kit_reference)
    if not specs:
        raise UsageError("give a timeline CSV, an ETDump, a folder, or --timeline-csv FILE")
    reports = api.latency(specs, run_dir=run_dir, threads=threads, seed=seed, resamples=resamples,
                          names={kit_file: name or kit_name1, kit_reference: kit_name2} if kit_file else None,
                          name=None if kit_file else name)
    if not no_write:
        for s, rep in reports:
            target = (Path(output_dir) if output_dir else s.path.parent) / fit_name(s.timeline_stem, "_robust_stats.json")
            _write_json(rep, target)
            rep["written"] = str(target)
    cmp = None
    if kit_reference:
        if not kit_file or len(specs) != 2:
            raise UsageError("--compare needs exactly one other input (--timeline-csv FILE)")
        roles = api.kit_roles(kit_file, kit_reference, kit_name1 or name, kit_name2)
        cmp = _run_comparison(roles, run_dir=run_dir, threads=threads, threshold=threshold, level=level, seed=seed,
                              resamples=resamples, warmup=warmup, categories=categories, taxonomy=taxonomy,
                              output_dir=output_dir, out_file=None, no_write=no_write, verbose=verbose)
    for s, rep in reports:
        for w in rep.get("warnings", []):
            _warn(f"{s.path}: {w}")
        if verbose:
            _verbose_latency(s, rep)
    if as_json:
        doc = {"schema_version": 1, "reports": [r for _, r in reports]}
        if cmp is not None:
            doc["comparison"] = cmp
        click.echo(jsonfmt.dumps(doc), nl=False)
    else:
        terminal.print_latency(reports)
        if cmp is not None:
            terminal.print_compare(cmp)
    if cmp is not None:
        _gate(cmp, fail_on)


def _verbose_latency(s, rep: dict) -> None:
    _info(f"{rep['name']}: {s.path} — {rep['count']} runs, latency from {rep['source'].replace('_', ' ')}")
    _info("  per-run ms: " + ", ".join(f"{x:.4g}" for x in rep["latencies_ms"][:200])
          + (" …" if len(rep["latencies_ms"]) > 200 else ""))
    w, d = rep["warmup"], rep["drift"]
    _info(f"  warm-up: {w['count']} run(s)" + (f" ({w['evidence']})" if w.get("evidence") else
                                                 f" ({w['note']})" if w.get("note") else ""))
    _info("  drift: " + (d.get("note") or f"Mann–Kendall p = {d['mann_kendall']['p_value']:.3g}, "
                                           f"{d['slope_percent_per_100_runs']:+.2f} % per 100 runs"))
    if rep.get("written"):
        _info(f"  wrote {rep['written']}")


def _run_comparison(roles, *, run_dir, threads, threshold, level, seed, resamples, warmup, categories, taxonomy,
                    output_dir, out_file, no_write, verbose) -> dict:
    """Compare the arms ``roles`` names, say which is the baseline, write the JSON; returns the result."""
    from . import api

    wu = warmup if warmup == "auto" else _int_option(warmup, "--warmup")
    for w in roles.warnings:
        _warn(w)
    result = api.compare(roles.baseline, roles.candidate, run_dir=run_dir, threads=threads,
                         baseline_name=roles.baseline_name, candidate_name=roles.candidate_name, threshold=threshold,
                         level=level, seed=seed, resamples=resamples, warmup=wu, categories=categories,
                         taxonomy=_taxonomy(taxonomy))
    result["roles"] = roles.note
    _info(f"roles: baseline {result['baseline']['name']}, candidate {result['candidate']['name']} — {roles.note}; "
          "speedup = baseline / candidate")
    if not no_write:
        target = Path(out_file) if out_file else (
            Path(output_dir) if output_dir else Path(run_dir) if run_dir else Path(result["inputs"]["baseline"][0]).parent
        ) / f"{result['output_stem']}.json"
        _write_json(result, target)
        result["written"] = str(target)
    if verbose:
        for arm in ("baseline", "candidate"):
            for launch in result[arm]["launches"]:
                d = launch["drift"]
                _info(f"{arm} {result[arm]['name']}: {launch['source']} — {launch['runs']} runs, "
                      f"{launch['warmup_dropped']} warm-up left out, median {launch['median_ms']:.4g} ms; drift: "
                      + (d.get("note") or ("significant" if d["significant"] else "none")))
        if result.get("ci"):
            _info(f"interval: {result['ci']['method']} — {result['ci']['scope']}")
        if result.get("written"):
            _info(f"wrote {result['written']}")
    return result


def _gate(result: dict, fail_on) -> None:
    from .errors import CheckFailed

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
    from . import api
    from .errors import UsageError
    from .render import jsonfmt, terminal

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
        click.echo(jsonfmt.dumps(result), nl=False)
    else:
        terminal.print_compare(result)
    _gate(result, fail_on)


@main.command(context_settings=CONTEXT)
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--run-dir", type=click.Path(path_type=str), default=None, help="Run folder in which INPUTS name experiments.")
@click.option("--threads", type=int, default=None, help="Only runs with this thread count.")
@click.option("--etrecord", type=click.Path(path_type=str), default=None, help="ETRecord (default: found as analyze finds it).")
@click.option("--strict-etrecord", is_flag=True)
@click.option("--taxonomy", type=click.Path(path_type=str), default=None, help=TAXONOMY_HELP)
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
    from . import api
    from .io.latency_sources import resolve
    from .render import jsonfmt, terminal
    from .render.breakdown_files import write_breakdown

    files = [f for spec in inputs for f in resolve(spec, Path(run_dir) if run_dir else None, threads)]
    tax = _taxonomy(taxonomy)
    docs = []
    for f in files:
        prof, result = api.breakdown(f, etrecord=etrecord, strict_etrecord=strict_etrecord, taxonomy=tax, top=top,
                                     model_name=model_name if len(files) == 1 else None)
        if not no_write:
            out = Path(output_dir) if output_dir else f.parent
            result["written"] = [str(p) for p in write_breakdown(result, prof.latency_ms(), out, result["name"], fmt)]
        docs.append(result)
        if not as_json:
            terminal.print_breakdown(result)
        for w in result.get("warnings", []):
            _warn(f"{f}: {w}")
    if as_json:
        click.echo(jsonfmt.dumps({"schema_version": 1, "breakdowns": [
            {k: v for k, v in d.items() if k != "operators_all"} for d in docs]}), nl=False)


@main.command(context_settings=CONTEXT)
@click.argument("inputs", nargs=-1, type=click.Path(path_type=str))
@click.option("--out", "out_file", type=click.Path(path_type=str), default=None,
              help="Write the kernel table here (one log only; default: <log stem>_kernels.csv beside the log).")
@click.option("--output-dir", type=click.Path(path_type=str), default=None, help="Write the kernel tables here.")
@click.option("--model-id", default=None, help="model_id column (default: the log's stem without _xnntrace).")
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), default="csv", show_default=True)
@click.option("--no-write", is_flag=True, help="Do not write kernel tables.")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON on stdout.")
# the Arm kit's xnntrace_to_kernels.py spelling
@click.option("--xnntrace", "kit_log", default=None, type=click.Path(path_type=str),
              help=f"The XNNPACK log to read ({KIT} of INPUTS).")
@run_guarded
def kernels(inputs, out_file, output_dir, model_id, fmt, no_write, as_json, kit_log):
    """XNNPACK kernel evidence: which microkernels were set up (logs) and which SME/KleidiAI paths ran (ETDumps).

    \b
    LOG (stderr+stdout, logcat, .gz)  → <stem>_kernels.csv: the Arm kit's columns, then isa, isa_family,
                                        uarch, asm, tiles, kleidiai, evidence=registered
    ETDump or timeline CSV            → operators on PF32/PF16/PQS8 (SME/SME2) or QP8 (KleidiAI) paths and
                                        the time they cover (evidence=executed)
    folder                            → its trace logs (and a sibling <platform>_trace folder) and ETDumps
    """
    from . import api
    from .errors import UsageError
    from .io.runfolder import ETDUMP_SUFFIXES, find_etdumps, find_trace_logs, trace_stem
    from .render import jsonfmt, terminal

    files = list(inputs) + ([kit_log] if kit_log else [])
    if not files:
        raise UsageError("give an XNNPACK log (or --xnntrace LOG), a kernels CSV, an ETDump or a folder")
    logs, profiles = [], []
    for spec in files:
        p = Path(spec)
        if p.is_dir():
            logs += find_trace_logs(p)
            profiles += find_etdumps([p])
        elif p.suffix in ETDUMP_SUFFIXES or p.name.endswith("_all_runs_timeline.csv"):
            profiles.append(p)
        else:
            logs.append(p)
    if not logs and not profiles:
        raise UsageError("no XNNPACK logs, kernel CSVs or ETDumps in " + ", ".join(files))
    if out_file and len(logs) != 1:
        raise UsageError("--out needs exactly one log")
    results, evidence = [], []
    for log in logs:
        r = api.kernels(log, model_id=model_id)
        if not no_write and log.suffix != ".csv":
            from .render.tables import suffix

            target = Path(out_file) if out_file else (Path(output_dir) if output_dir else log.parent) / (
                fit_name(trace_stem(log), f"_kernels{suffix(fmt)}"))
            _write_kernel_table(r["kernels"], target, fmt)
            r["written"] = str(target)
        results.append(r)
    for prof in profiles:
        evidence.append(api.executed_evidence(prof))
    if as_json:
        click.echo(jsonfmt.dumps({"schema_version": 1, "logs": results, "executed": evidence}), nl=False)
    else:
        for r in results:
            terminal.print_kernels(r)
        for e in evidence:
            terminal.print_evidence(e)
    for r in results:
        for w in r["warnings"]:
            _warn(f"{r['input']}: {w}")


def _write_kernel_table(rows: list[dict], target: Path, fmt: str) -> None:
    import polars as pl

    from .analysis.kernels import COLUMNS
    from .render.atomic import atomic_path
    from .render.tables import write_table

    ints = ("count", "has_sme", "has_sme2", "asm", "tile_mr", "tile_nr", "tile_kr", "kleidiai", "first_line")
    df = pl.DataFrame({c: [r[c] if r[c] != "" else None for r in rows] for c in COLUMNS},
                      schema={c: (pl.Int64 if c in ints else pl.String) for c in COLUMNS})
    with atomic_path(target) as tmp:
        write_table(df, tmp, fmt)


@main.command("kernel-view", context_settings=CONTEXT)
@click.option("--baseline", "-b", default=None, help="Baseline XNNPACK log or kernels CSV (e.g. SME2 off).")
@click.option("--candidate", "-c", default=None, help="Candidate XNNPACK log or kernels CSV (e.g. SME2 on).")
@click.option("--baseline-name", default=None, help="Column label of the baseline (default: from its file name).")
@click.option("--candidate-name", default=None)
@click.option("--filter-op", default=None, help="Only kernels whose name contains this (case-insensitive), e.g. gemm.")
@click.option("--title", default=None, help="Title of the Markdown table.")
@click.option("--out", "out_file", type=click.Path(path_type=str), default=None,
              help="Write the Markdown here (default: print it).")
@click.option("--json", "as_json", is_flag=True, help="Print the view as JSON on stdout.")
@click.option("--require-sme2", is_flag=True,
              help="Exit 1 unless the candidate registers SME2 GEMM/IGEMM kernels and the baseline none.")
@click.option("--sme2-off", "kit_off", default=None, type=click.Path(path_type=str),
              help=f"The SME2-off log or kernels CSV: the baseline ({KIT}).")
@click.option("--sme2-on", "kit_on", default=None, type=click.Path(path_type=str),
              help=f"The SME2-on log or kernels CSV: the candidate ({KIT}).")
@run_guarded
def kernel_view(baseline, candidate, baseline_name, candidate_name, filter_op, title, out_file, as_json, require_sme2,
                kit_off, kit_on):
    """Kernels registered in a baseline vs a candidate, by ISA family and kind, with a GEMM/IGEMM verdict.

    \b
    edgeprof kernel-view -b mac_sme2_off_xnntrace.log -c mac_sme2_on_xnntrace.log --filter-op gemm --out kernel_view.md
    (the Arm kit's --sme2-off/--sme2-on spellings are accepted)
    """
    from . import api
    from .errors import CheckFailed, UsageError
    from .render import jsonfmt, markdown

    baseline, candidate = baseline or kit_off, candidate or kit_on
    if not baseline or not candidate:
        raise UsageError("need --baseline and --candidate (logs or kernels CSVs)")
    view = api.kernel_view(baseline, candidate, baseline_name=baseline_name, candidate_name=candidate_name,
                           filter_op=filter_op)
    md = markdown.kernel_view(view, title)
    if out_file:
        from .render.atomic import write_text

        write_text(Path(out_file), md)
        view["written"] = out_file
    if as_json:
        click.echo(jsonfmt.dumps(view), nl=False)
    elif out_file:
        click.echo(view["verdict"])
        click.echo(f"wrote {out_file}")
    else:
        click.echo(md, nl=False)
    for w in view["warnings"]:
        _warn(w)
    if require_sme2 and view["status"] != "sme2_in_candidate":
        raise CheckFailed(view["verdict"])


@main.command(context_settings=CONTEXT)
@click.argument("run_dir", required=False, type=click.Path(path_type=str))
@click.option("--require-sme2-kernels", is_flag=True,
              help="SME2-on trace logs must register an SME2 GEMM/IGEMM kernel, SME2-off ones none.")
@click.option("--require", "require", multiple=True, type=click.Choice(["manifest", "metrics", "robust-stats", "trace"]),
              help="Also require manifest.json+metrics.json, metrics.json, the robust-stats JSONs, or trace logs.")
@click.option("--analysis-dir", type=click.Path(path_type=str), default=None,
              help="Where analyze wrote its outputs (its --output-dir), if not beside the ETDumps.")
@click.option("--tolerance", type=float, default=0.01, show_default=True,
              help="Relative difference allowed between latencies in the outputs and in the ETDump.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout.")
@click.option("--results", "kit_results", default=None, type=click.Path(path_type=str),
              help=f"The folder to check ({KIT} of RUN_DIR): a run folder, or a <platform>_trace folder of trace "
                   "logs and kernel CSVs.")
@run_guarded
def validate(run_dir, require_sme2_kernels, require, analysis_dir, tolerance, as_json, kit_results):
    """Check a run folder: ETDumps parse; CSVs and analysis_summary.json exist, are fresh and agree with them.

    Exit code 1 when a check fails. manifest.json/metrics.json are checked only with --require manifest
    (the Arm pipeline never writes them). Trace logs are looked for in RUN_DIR and a sibling <platform>_trace.
    """
    from . import api
    from .errors import CheckFailed, UsageError
    from .render import jsonfmt, terminal

    if not (run_dir or kit_results):
        raise UsageError("give the run folder to check")
    report = api.validate(run_dir or kit_results, require=require, require_sme2_kernels=require_sme2_kernels,
                          analysis_dir=analysis_dir, tolerance=tolerance)
    if as_json:
        click.echo(jsonfmt.dumps(report), nl=False)
    else:
        terminal.print_validate(report)
    if not report["ok"]:
        raise CheckFailed(f"validation failed: {report['counts']['fail']} check(s) failed")


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


def _ane_output(result, md, show, as_json, markdown_out) -> None:
    if markdown_out == "-":
        click.echo(md(result), nl=False)
    elif markdown_out:
        from .render.atomic import write_text

        write_text(Path(markdown_out), md(result))
    if as_json:
        from .render import jsonfmt

        click.echo(jsonfmt.dumps(result), nl=False)
    elif markdown_out != "-":
        show(result)
    for e in result.get("errors", []):
        click.echo(f"edgeprof: error: {e['error']}", err=True)
    if result.get("errors"):
        sys.exit(2)


_ANE_JSON = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
_ANE_MD = click.option("--markdown", "markdown_out", type=click.Path(path_type=str), default=None,
                       help="Write the result as a Markdown section to this file ('-' = stdout).")


@ane.command("findings", context_settings=CONTEXT, hidden=True)
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--costplan", type=click.Path(path_type=str), default=None,
              help="ane-costplan report of the same model, to cross-check against the profile.")
@click.option("--boundary-ms", type=float, default=None,
              help="Cost of one ANE↔CPU switch used to re-rank islands (default 0.2; the profile's own is 300).")
@_ANE_JSON
@_ANE_MD
@run_guarded
def ane_findings(inputs, costplan, boundary_ms, as_json, markdown_out):
    """Findings for an anemll-profile report (with --costplan: the cross-check), a cost plan, or a model folder.

    \b
    edgeprof ane profile.json [--costplan costplan.json]
    edgeprof ane MODEL_FOLDER/          (one analysis per submodel report found below it)
    """
    from . import api
    from .errors import UsageError
    from .render import markdown, terminal

    if len(inputs) == 1 and not Path(inputs[0]).is_dir() or api.is_model_bundle(inputs[0]):
        result = api.ane(inputs[0], costplan=costplan, boundary_ms=boundary_ms)
        md, show = markdown.ane_findings, terminal.print_ane
    else:
        if costplan:
            raise UsageError("--costplan goes with one profile; in a folder, cost plans are paired by model name")
        result = api.ane_folder(list(inputs), boundary_ms=boundary_ms)
        show = terminal.print_ane_folder

        def md(folder):
            return "### Apple Neural Engine reports\n\n" + markdown.ane_summary(folder) + "\n" + "\n".join(
                markdown.ane_findings(r, level=4) for r in folder["reports"])
    _ane_output(result, md, show, as_json, markdown_out)


@ane.command("diff", context_settings=CONTEXT)
@click.argument("before", type=click.Path(path_type=str))
@click.argument("after", type=click.Path(path_type=str))
@_ANE_JSON
@_ANE_MD
@run_guarded
def ane_diff(before, after, as_json, markdown_out):
    """Two anemll-profile reports (latency, interruptions, fallbacks, op-type shares) or two ane-costplan
    reports (total_cost, devices, per-type and per-op shares), before vs after a change.

    \b
    edgeprof ane diff before.json after.json
    """
    from . import api
    from .render import markdown, terminal

    _ane_output(api.ane_diff(before, after), markdown.ane_diff, terminal.print_ane_diff, as_json, markdown_out)


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
    from . import api
    from .errors import UsageError
    from .render import jsonfmt
    from .render.trace import select_runs, write_trace

    prof = api.load_profile(etdump, etrecord=etrecord)
    try:
        chosen = select_runs(prof, runs)
    except ValueError as e:
        raise UsageError(f"--runs {runs!r}: {e}") from None
    p = Path(etdump)
    target = Path(out_file) if out_file else p.with_name(fit_name(p.name.split(".")[0], ".trace.json"))
    stats = write_trace(target, prof, runs=chosen, include_init=not no_init)
    info = {"schema_version": 1, "input": etdump, "written": str(target), **stats}
    if as_json:
        click.echo(jsonfmt.dumps(info), nl=False)
    else:
        click.echo(f"wrote {target}: {info['slices']} slices on {info['tracks']} track(s)"
                   + (f", {info['adjusted']} clamped to nest" if info["adjusted"] else "")
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
@click.option("--taxonomy", type=click.Path(path_type=str), default=None, help=TAXONOMY_HELP)
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
    from . import api
    from .errors import UsageError
    from .render import jsonfmt
    from .render import report as rep
    from .render.atomic import Batch

    run_dir = Path(inputs[0]) if len(inputs) == 1 and Path(inputs[0]).is_dir() else None
    if (baseline or candidate) and len(inputs) > 1:
        raise UsageError("with --baseline/--candidate give at most one run folder")
    if not inputs and not (baseline and candidate):
        raise UsageError("give a run folder, one or two ETDumps, or --baseline and --candidate")
    data = api.report(list(inputs), baseline=baseline, candidate=candidate, baseline_name=baseline_name,
                      candidate_name=candidate_name, threads=threads, seed=seed, threshold=threshold,
                      taxonomy=_taxonomy(taxonomy))
    if out_file:
        md_path = Path(out_file)
    elif run_dir:
        md_path = run_dir / "report.md"
    else:
        first = Path((list(inputs) or list(baseline))[0])
        md_path = first.with_name(fit_name(first.name.split(".")[0], "_report.md"))
    with Batch() as batch:
        batch.path(md_path).write_bytes(rep.markdown(data).encode("utf-8", "replace"))
        if html_file:
            batch.path(Path(html_file)).write_bytes(rep.html(data).encode("utf-8", "replace"))
    data["written"] = [str(md_path)] + ([html_file] if html_file else [])
    if as_json:
        click.echo(jsonfmt.dumps(data), nl=False)
    else:
        cmp = data.get("comparison")
        if cmp:
            click.echo(cmp["summary_line"])
        for f in data["findings"][:6]:
            click.echo(f"- [{f['evidence_name']}] {f['text']}")
        click.echo("wrote " + ", ".join(data["written"]))


def _int_option(value: str, name: str) -> int:
    from .errors import UsageError

    try:
        n = int(value)
    except ValueError:
        raise UsageError(f"{name} must be 'auto' or a whole number, got {value!r}") from None
    if n < 0:
        raise UsageError(f"{name} must not be negative")
    return n


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
