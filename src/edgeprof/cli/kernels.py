"""Commands on XNNPACK kernel evidence and run folders: kernels, kernel-view, validate."""

from __future__ import annotations

import click

from ._base import CONTEXT, KIT, Fraction, echo_json, main, run_guarded, say, warn, writes_files


@main.command(context_settings=CONTEXT)
@click.argument("inputs", nargs=-1, type=click.Path(path_type=str))
@click.option("--out", "out_file", type=click.Path(path_type=str), default=None,
              help="Write the kernel table here (one log only; default: <log stem>_kernels.csv beside the log).")
@click.option("--output-dir", type=click.Path(path_type=str), default=None, help="Write the kernel tables here.")
@click.option("--model-id", default=None, help="model_id column (default: the log's stem without _xnntrace).")
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), default="csv", show_default=True)
@click.option("--no-write", is_flag=True, help="Do not write kernel tables.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the results as JSON on stdout (tables only with --out/--output-dir).")
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
    from .. import api
    from ..api.result_base import collection
    from ..errors import UsageError
    from ..render import terminal

    files = list(inputs) + ([kit_log] if kit_log else [])
    if not files:
        raise UsageError("give an XNNPACK log (or --xnntrace LOG), a kernels CSV, an ETDump or a folder")
    tables, evidence = api.kernel_evidence(files, model_id=model_id,
                                           write=writes_files(as_json, no_write, out_file, output_dir), out=out_file,
                                           output_dir=output_dir, fmt=fmt)
    if as_json:
        echo_json(collection("kernels", "logs", tables, executed=[e.body() for e in evidence]))
    else:
        for t in tables:
            terminal.print_kernels(t)
        for e in evidence:
            terminal.print_evidence(e)
    for t in tables:
        for w in t.warnings:
            warn(f"{t['input']}: {w}")


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
    edgeprof kernel-view --sme2-off off_kernels.csv --sme2-on on_kernels.csv --out kernel_view.md   (Arm kit spelling)
    """
    from pathlib import Path

    from .. import api
    from ..errors import CheckFailed, UsageError
    from ..render import markdown
    from ..writer import write_text

    baseline, candidate = baseline or kit_off, candidate or kit_on
    if not baseline or not candidate:
        raise UsageError("need --baseline and --candidate (logs or kernels CSVs)")
    view = api.kernel_view(baseline, candidate, baseline_name=baseline_name, candidate_name=candidate_name,
                           filter_op=filter_op)
    md = markdown.kernel_view(view.data, title)
    if out_file:
        write_text(Path(out_file), md)
        view = view.with_(written=out_file)
    if as_json:
        echo_json(view)
    elif out_file:
        say(view["verdict"])
        say(f"wrote {out_file}")
    else:
        say(md, nl=False, lines=True, rendered=True)
    for w in view.warnings:
        warn(w)
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
@click.option("--tolerance", type=Fraction(), default="1%", show_default=True,
              help="Relative difference allowed between latencies in the outputs and in the ETDump (1% or 0.01).")
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
    from .. import api
    from ..errors import CheckFailed, UsageError
    from ..render import terminal

    if not (run_dir or kit_results):
        raise UsageError("give the run folder to check")
    report = api.validate(run_dir or kit_results, require=require, require_sme2_kernels=require_sme2_kernels,
                          analysis_dir=analysis_dir, tolerance=tolerance)
    if as_json:
        echo_json(report)
    else:
        terminal.print_validate(report)
    if not report.ok:
        raise CheckFailed(f"validation failed: {report['counts']['fail']} check(s) failed")
