"""``edgeprof run``."""

from __future__ import annotations

import click

from ._base import CONTEXT, echo_json, info, main, run_guarded, say, warn


@main.command("run", context_settings=CONTEXT)
@click.argument("models", nargs=-1, type=click.Path(path_type=str))
@click.option("--config", type=click.Path(path_type=str), default=None,
              help="Experiments from a file: edgeprof's TOML/JSON or the Arm kit's pipeline JSON.")
@click.option("--runs", type=click.IntRange(1, 10**7), default=None, help="Timed runs per launch [default: 100].")
@click.option("--warmup", type=click.IntRange(0, 10**7), default=None,
              help="Warm-up runs per launch, not recorded [default: 10].")
@click.option("--threads", default=None, help="Thread counts, e.g. 1,2,4 (one configuration each) [default: 1].")
@click.option("--launches", type=click.IntRange(1, 1000), default=None,
              help="Processes per configuration, interleaved with the others [default: 3].")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=None,
              help="Seed of the generated inputs and of the launch order [default: 0].")
@click.option("--inputs", type=click.Path(path_type=str), default=None,
              help="Inputs for every configuration: .npy (one input), .npz (one array per input), .pt.")
@click.option("--runner", default=None,
              help="'python' (the ExecuTorch Python runtime, default) or an executor_runner-style binary.")
@click.option("--device", default=None, help="Run on an Android device: adb:SERIAL (the runner is pushed there).")
@click.option("--cpu-affinity", default=None, help="Android: taskset mask for the runner, e.g. 0x80.")
@click.option("--providers", default=None,
              help="ONNX models: ONNX Runtime execution providers in priority order, e.g. OpenVINOExecutionProvider "
                   "(the CPU provider is added last) [default: CPU only].")
@click.option("--graph-optimization", type=click.Choice(["disable", "basic", "extended", "all"]), default=None,
              help="ONNX models: ONNX Runtime's graph optimization level, an experiment variable recorded in the "
                   "manifest (disable = ORT_DISABLE_ALL: every node as the model has it) [default: all].")
@click.option("--memory-arena", type=click.Choice(["on", "off"]), default=None,
              help="ONNX models: ONNX Runtime's CPU memory arena and memory pattern (on: its default) or neither "
                   "(off), an experiment variable recorded in the manifest; they change its peak memory several-fold.")
@click.option("--delegate", type=click.Choice(["xnnpack", "none"]), default=None,
              help="LiteRT models: its XNNPACK delegate (default) or none (the builtin CPU kernels only).")
@click.option("--mode", type=click.Choice(["timing", "xnntrace"]), default=None,
              help="timing (ETDump) or xnntrace (one run with XNNPACK logging; external runners).")
@click.option("--timeout", type=click.FloatRange(0.1, 7 * 86400), default=None,
              help="Seconds a launch may take before it is stopped [default: 600].")
@click.option("--out", type=click.Path(path_type=str), default=None,
              help="Run folder [default: out_<model>/runs/<platform>].")
@click.option("--force", is_flag=True, help="Replace a collection edgeprof wrote earlier in --out.")
@click.option("--dry-run", is_flag=True, help="Print every command it would run; write nothing.")
@click.option("--overhead-check", is_flag=True,
              help="Also run launches without ETDump and state what tracing costs per run.")
@click.option("--report", "make_report", is_flag=True,
              help="Then analyze the folder and write report.md and report.html in it.")
@click.option("--debug-buffer", "debug_buffer", default=None, metavar="SIZE",
              help="Record every run's intermediate tensors too (ExecuTorch Python runtime): a debug buffer of SIZE "
                   "bytes (4MB, 512KB) holding all timed runs, kept as <stem>.bin beside each ETDump, for "
                   "`edgeprof numerics`. Warm-up runs are not recorded.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
@click.option("--progress/--no-progress", default=None, help="Progress bar over launches (default: on a terminal).")
@click.option("--verbose", is_flag=True, help="Print each command as it runs (stderr).")
@run_guarded
def run_cmd(models, config, runs, warmup, threads, launches, seed, inputs, runner, device, cpu_affinity, providers,
            graph_optimization, memory_arena,
            delegate, mode, timeout, out, force, dry_run, overhead_check, make_report, debug_buffer, as_json, progress,
            verbose):
    """Profile .pte models here (ExecuTorch Python runtime or an executor_runner) or on an Android device, .onnx
    models in ONNX Runtime or .tflite models in LiteRT, and write the run folder the analysis reads:
    out_<model>/runs/<platform>/<experiment>/<model>_<experiment>_t<T>_l<k>.etdump (.ort.json for ONNX; for
    LiteRT .litert.csv, the runs' times: its Python package has no op profiler),
    manifest.json and metrics.json (the Arm kit's schema, plus each launch's environment).

    Each launch is its own process; the launches of all configurations are interleaved in a seeded order, so
    drift hits every configuration alike. A launch that crashes, hangs (--timeout) or writes a corrupt ETDump is
    recorded and the collection goes on (exit 1 at the end); Ctrl-C leaves the folder consistent, its manifest
    saying partial (exit 130).

    \b
    edgeprof run toycnn_portable.pte toycnn_xnn.pte --runs 20 --launches 3 --report
    edgeprof run --config mac_config.json                       (the Arm kit's pipeline config)
    edgeprof run model.pte --runner cmake-out/executor_runner --threads 1,4
    edgeprof run model.pte --runner android/executor_runner --device adb:R5CX1234 --cpu-affinity 0x80
    edgeprof run model.onnx --threads 1,2 --runs 50 --launches 3        (pip install 'edgeprof[ort]')
    edgeprof run model.tflite --delegate none                            (pip install 'edgeprof[litert]')
    edgeprof run model.pte --dry-run
    edgeprof run fp32.pte int8.pte --runs 1 --warmup 0 --launches 1 --debug-buffer 4MB   (then edgeprof numerics)
    """
    from .. import api
    from ..errors import CheckFailed
    from ..render import terminal

    given = {"runs": runs, "warmup": warmup, "threads": threads, "launches": launches, "seed": seed, "inputs": inputs,
             "runner": runner, "device": device, "cpu_affinity": cpu_affinity, "mode": mode, "timeout": timeout,
             "providers": providers, "delegate": delegate, "debug_buffer": debug_buffer,
             "graph_optimization": graph_optimization, "memory_arena": memory_arena}
    bar = terminal.progress_bar(enabled=progress and not dry_run if progress is not None else None, label="run",
                                eta=True)
    with bar:
        result = api.run(models, config=config, out=out, force=force, dry_run=dry_run, overhead_check=overhead_check,
                         report=make_report, progress=bar.update, echo=(info if as_json else say),
                         verbose_echo=info if verbose else None, **given)
    if as_json:
        echo_json(result)
    d = result.data
    for w in d.get("warnings", []):
        warn(w)
    if dry_run:
        return
    if not as_json:
        say(f"{d['launches_ok']} of {d['launches_planned']} launches recorded in {d['run_dir']} "
            f"(manifest.json, metrics.json)")
        if d.get("overhead"):
            say(d["overhead"]["statement"])
        if d.get("report"):
            for r in d["report"].get("reports") or [d["report"]]:  # one per thread count of a sweep
                say(f"report: {r['markdown']}, {r['html']}"
                    + (f" — {r['summary_line']}" if r.get("summary_line") else ""))
    if d["failed"]:
        raise CheckFailed(f"{len(d['failed'])} launch(es) failed: "
                          + "; ".join(f"{f['launch']}: {f['status']} ({f['error']})" for f in d["failed"][:5])
                          + " — see manifest.json")
