"""Commands that compare: latency (and its --compare), compare, plan; the options they share."""

from __future__ import annotations

import click

from ..conventions import OP_TYPES_REF
from ._base import (
    CONTEXT,
    ci_options,
    KIT,
    echo_json,
    info,
    say,
    int_option,
    main,
    on_github,
    options_of,
    run_guarded,
    taxonomy_option,
    warn,
    writes_files,
)

def _comparison_options(fn):
    """Options shared by compare and latency --compare (:mod:`edgeprof.options`), and the CLI's own."""
    for opt in reversed([
        options_of("compare", "threshold", "level", "warmup"),
        click.option("--fail-on", type=click.Choice(["regression", "fallback", "new-partition", "memory-regression"]),
                     default=None,
                     help="Exit 1 when the candidate is significantly slower by more than the threshold (regression), "
                          "an operator left its accelerator (fallback), or the candidate has more partitions "
                          "(new-partition; see `edgeprof placement`), or the candidate's peak memory during the timed "
                          "runs is larger by more than the threshold (memory-regression)."),
        options_of("compare", "categories", "launch_cv", "store", "metric", "allow_different"),
        taxonomy_option,
        ci_options,
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
@click.option("--output-dir", type=click.Path(path_type=str), default=None,
              help="Where to write the JSON (default: beside each input).")
@click.option("--no-write", is_flag=True, help="Do not write <timeline stem>_robust_stats.json.")
@click.option("--json", "as_json", is_flag=True, help="Print the reports as JSON on stdout (files only with --output-dir).")
@_kit_options
@_comparison_options
@run_guarded
def latency(inputs, run_dir, threads, name, seed, resamples, output_dir, no_write, as_json, kit_file, kit_reference,
            kit_name1, kit_name2, verbose, threshold, level, warmup, fail_on, categories, launch_cv, noise_store, metric,
            allow_different, taxonomy, ci, junit_out):
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
    from ..api.result_base import collection
    from ..errors import UsageError
    from ..render import terminal

    specs = list(inputs) + ([kit_file] if kit_file else [])
    if kit_reference and not kit_file and len(inputs) == 1:
        kit_file, specs = inputs[0], list(inputs)
    if kit_reference:
        specs.append(kit_reference)
    if not specs:
        raise UsageError("give a timeline CSV, an ETDump, a folder, or --timeline-csv FILE")
    ws = api.Workspace(run_dir, op_types=OP_TYPES_REF)
    reports = api.latency(specs, run_dir=run_dir, threads=threads, seed=seed, resamples=resamples,
                          names={kit_file: name or kit_name1, kit_reference: kit_name2} if kit_file else None,
                          name=None if kit_file else name, write=writes_files(as_json, no_write, output_dir),
                          output_dir=output_dir, ws=ws)
    cmp = None
    if kit_reference:
        if not kit_file or len(specs) != 2:
            raise UsageError("--compare needs exactly one other input (--timeline-csv FILE)")
        roles = api.kit_roles(kit_file, kit_reference, kit_name1 or name, kit_name2)
        cmp = _run_comparison(roles, run_dir=run_dir, threads=threads, threshold=threshold, level=level, seed=seed,
                              resamples=resamples, warmup=warmup, categories=categories, taxonomy=taxonomy,
                              output_dir=output_dir, out_file=None,
                              no_write=not writes_files(as_json, no_write, output_dir),
                              verbose=verbose, ws=ws,
                              launch_cv=launch_cv, store=noise_store, metric=metric, allow_different=allow_different)
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
        _gate(cmp, fail_on, ci, junit_out, as_json)


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
                    output_dir, out_file, no_write, verbose, ws=None, launch_cv=None, store=None, metric="median",
                    allow_different=False):
    """Compare the arms ``roles`` names, say which is the baseline, write the JSON; returns the result."""
    from .. import api

    wu = warmup if warmup == "auto" else int_option(warmup, "--warmup")
    for w in roles.warnings:
        warn(w)
    result = api.compare(roles.baseline, roles.candidate, run_dir=run_dir, threads=threads,
                         baseline_name=roles.baseline_name, candidate_name=roles.candidate_name, threshold=threshold,
                         level=level, seed=seed, resamples=resamples, warmup=wu, categories=categories,
                         taxonomy=taxonomy, roles=roles, write=not no_write, output_dir=output_dir,
                         out=out_file, launch_cv=launch_cv, store=store, metric=metric,
                         allow_different=allow_different, ws=ws)
    info(f"roles: baseline {result['baseline']['name']}, candidate {result['candidate']['name']} — {roles.note}; "
         "speedup = baseline / candidate")
    if verbose:
        from ..conventions import fmt_ms

        for arm in ("baseline", "candidate"):
            for launch in result[arm]["launches"]:
                d = launch["drift"]
                info(f"{arm} {result[arm]['name']}: {launch['source']} — {launch['runs']} runs, "
                     f"{launch['warmup_dropped']} warm-up left out, median {fmt_ms(launch['median_ms'])} ms; drift: "
                     + (d.get("note") or ("significant" if d["significant"] else "none")))
        if result.get("ci"):
            info(f"interval: {result['ci']['method']} — {result['ci']['scope']}")
        if result.get("written"):
            info(f"wrote {result['written']}")
    return result


def _checks(result, fail_on) -> list:
    """What ``--fail-on`` checks of a comparison (:class:`edgeprof.render.ci.Check`; none without it)."""
    from ..render.ci import Check

    line = result["summary_line"]
    if fail_on == "regression":
        verdict = result["verdict"]
        failure = (f"regression: {line}" if verdict == "slower" else f"cannot gate: {line}"
                   if verdict == "not_comparable" else None)
        return [Check("regression", failure, line)]
    if fail_on == "memory-regression":
        mem = result.get("memory")
        if not mem:
            why = ("cannot gate on memory: no launch of both arms recorded its memory (collect with edgeprof run)")
            return [Check(fail_on, why, why)]
        return [Check(fail_on, f"memory regression: {mem['statement']}" if mem["verdict"] == "larger" else None,
                      mem["statement"])]
    if fail_on in ("fallback", "new-partition"):
        from ..api import placement_gate as gate

        placed = result.get("placement")
        if not placed:
            why = ("cannot gate on placement: the comparison has no operator events (give profiles, and leave "
                   "--no-categories out)")
            return [Check(fail_on, why, why)]
        reason = gate(placed, fail_on)
        return [Check(fail_on, f"placement: {reason}" if reason else None, " ".join(placed["statements"]))]
    return []


def _gate(result, fail_on, ci="none", junit_out=None, as_json=False) -> None:
    """Report the gate's checks where the CI shows them (:mod:`edgeprof.cli.ci`), then exit 1 on a failed one."""
    if not (fail_on or junit_out or on_github(ci)):
        return
    from ..render.ci import comparison_summary
    from .ci import finish

    doc = result.to_json()
    checks = _checks(doc, fail_on)
    finish("compare", checks, comparison_summary(doc, checks), ci=ci, junit_out=junit_out, as_json=as_json)


@main.command(context_settings=CONTEXT)
@click.argument("inputs", nargs=-1, type=click.Path(path_type=str))
@click.option("--baseline", "-b", multiple=True, help="Baseline input(s): files, a folder, or an experiment of --run-dir. "
              "Repeat for several launches.")
@click.option("--candidate", "-c", multiple=True, help="Candidate input(s), as --baseline.")
@options_of("compare", "run_dir")
@click.option("--baseline-name", default=None, help="Name of the baseline in the output (default: experiment or file name).")
@click.option("--candidate-name", default=None)
@options_of("compare", "threads", "seed", "resamples")
@click.option("--output-dir", type=click.Path(path_type=str), default=None,
              help="Where to write <baseline>_vs_<candidate>_robust_comparison.json (default: beside the baseline).")
@click.option("--out", "out_file", type=click.Path(path_type=str), default=None, help="Write the JSON to this file instead.")
@click.option("--no-write", is_flag=True, help="Do not write the comparison JSON.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the comparison as JSON on stdout (the file only with --out/--output-dir).")
@_comparison_options
@_kit_options
@run_guarded
def compare(inputs, baseline, candidate, run_dir, baseline_name, candidate_name, threads, seed, resamples, output_dir,
            out_file, no_write, as_json, threshold, level, warmup, fail_on, categories, launch_cv, noise_store, metric,
            allow_different, taxonomy, ci, junit_out, kit_file, kit_reference, kit_name1, kit_name2, verbose):
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
                             output_dir=output_dir, out_file=out_file,
                             no_write=not writes_files(as_json, no_write, output_dir, out_file), verbose=verbose,
                             launch_cv=launch_cv, store=noise_store, metric=metric, allow_different=allow_different)
    if as_json:
        echo_json(result)
    else:
        terminal.print_compare(result)
    _gate(result, fail_on, ci, junit_out, as_json)


@main.command(context_settings=CONTEXT)
@click.argument("inputs", nargs=-1, type=click.Path(path_type=str))
@click.option("--from", "from_", multiple=True, type=click.Path(path_type=str),
              help="A run folder, experiment or files to measure the noise from (repeatable; or give them positionally).")
@options_of("plan")
@click.option("--no-write", is_flag=True, help="Do not write noise.json beside the run folder.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON on stdout (noise.json is not written).")
@run_guarded
def plan(inputs, from_, effect, threshold, power, level, run_dir, threads, launch_cv, noise_store, no_write, as_json):
    """How many launches per arm and runs per launch resolve a change of --effect, from the noise a run measured:
    the run-to-run noise within launches and the launch-to-launch variation between them.

    \b
    edgeprof plan --from out/runs/mac --effect 3%
    edgeprof plan model_t1_l1.etdump model_t1_l2.etdump model_t1_l3.etdump --effect 0.05
    """
    from .. import api
    from ..errors import UsageError

    specs = list(inputs) + list(from_)
    if not specs:
        raise UsageError("give a run folder, experiments or files (--from)")
    result = api.plan(specs, effect=effect, threshold=threshold, level=level, power=power, run_dir=run_dir,
                      threads=threads, launch_cv=launch_cv, store=noise_store, write=writes_files(as_json, no_write))
    if as_json:
        echo_json(result)
        return
    d = result.data
    for c in d["configurations"]:
        rec = c["recommended"]
        say(f"{c['name']}: {c['launches']} launch(es), within-launch SD {100 * c['within_sd']:.2f} %, "
            f"launch SD {100 * c['launch_sd']:.2f} % ({c['launch_sd_source']}) → "
            + (f"{rec['launches_per_arm']} launches × {rec['runs_per_launch']} runs" if rec else "not resolvable"
               " within 50 launches × 1,000 runs"))
    say(d["statement"])
