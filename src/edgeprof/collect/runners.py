"""How one launch runs, per kind of runner: the commands, their environment and where their output goes.

Every process writes into the launch's staging folder (:mod:`edgeprof.collect.staging`), never into the run
folder; the parent puts the files in place afterwards.

* ``python`` — ``edgeprof.collect.worker`` (the ExecuTorch Python runtime), ``…worker_ort`` (ONNX Runtime, for
  an ``.onnx`` model) or ``…worker_litert`` (LiteRT, for a ``.tflite``), in a process of its own, started as
  every child is (:mod:`edgeprof.child`: an isolated interpreter running this edgeprof, with an allow-listed
  environment), working in the staging folder — every path it is given is absolute.
* ``external`` — an ``executor_runner``-style binary, as the Arm kit's ``perf_runner.py`` runs it: a warm-up
  process (``--num_executions W``; a failure only warns), then the timed process (``--num_executions N
  --cpu_threads T --etdump_path …``) with ``XNN_LOG_LEVEL=0``, its stdout and stderr in ``_latency.log``;
  xnntrace mode runs one execution with ``XNN_LOG_LEVEL=5`` into ``_xnntrace.log``.
* ``adb`` — the same binary on an Android device (``adb -s SERIAL``): model and runner pushed once per
  experiment to ``/data/local/tmp/edgeprof``, run through ``adb shell`` (``LD_LIBRARY_PATH`` set, optional
  ``taskset`` mask), the ETDump pulled back and removed from the device; xnntrace mode clears logcat, runs,
  and writes ``logcat -d -s XNNPACK`` and the runner's output to ``_xnntrace.log`` (the kit's layout).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..child import python_argv
from .execute import Outcome, tail
from .plan import Launch
from .staging import Stage, real_folder

DEVICE_DIR = "/data/local/tmp/edgeprof"
_EXECUTED = re.compile(r"model executed successfully\s+(\d+)\s+time\(s\)\s+in\s+([0-9]+(?:\.[0-9]+)?)\s*ms", re.I)


@dataclass
class LaunchRun:
    """What running one launch gave: the commands' outcomes, the main one, and what the runner said."""

    outcomes: list[Outcome] = field(default_factory=list)
    main: Outcome | None = None
    worker: dict | None = None        # the Python worker's own report (wall times per run, versions, inputs)
    memory: dict | None = None        # the runner's memory, measured from outside it (on a device)
    runner_total_ms: float | None = None
    runner_executions: int | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        m = self.main
        if m is None:
            return "not run"
        if m.timed_out:
            return "timeout"
        return "ok" if m.rc == 0 else "crashed"

    @property
    def error(self) -> str | None:
        m = self.main
        if m is None or m.ok:
            return None
        if m.timed_out:
            return f"timed out after {m.seconds:.0f} s (stopped)"
        return f"exit code {m.rc}"


@dataclass
class Context:
    run_dir: Path
    seed: int
    inputs: Path | None
    inputs_dir: Path | None = None     # where the workers cache generated inputs (the collection's private folder)
    python: str = sys.executable
    debug_buffer: int = 0              # bytes: record intermediate tensors (ExecuTorch Python runtime)
    prepared: set = field(default_factory=set)  # experiments whose model and runner are on the device


def _parse_runner_times(text: str, run: LaunchRun) -> None:
    hits = _EXECUTED.findall(text)
    if hits:
        n, ms = hits[-1]
        run.runner_executions, run.runner_total_ms = int(n), float(ms)


def _python(launch: Launch, sh, ctx: Context, stage: Stage) -> LaunchRun:
    e = launch.experiment
    result = stage.result
    ort = e.runtime == "onnxruntime"
    from ..runtimes import runtime

    worker = runtime(e.runtime).worker
    argv = ["--model", os.path.abspath(e.model), "--runs", e.runs, "--warmup", e.warmup, "--threads", launch.threads,
            "--seed", ctx.seed, "--result", os.path.abspath(result),
            "--inputs-dir", os.path.abspath(ctx.inputs_dir or ctx.run_dir / "inputs")]
    argv += ["--etdump", os.path.abspath(stage(launch.etdump))] if launch.etdump else ["--no-etdump"]
    if ort:
        argv += ["--providers", ",".join(e.session_providers)]
    if e.runtime == "litert":
        argv += ["--delegate", e.delegate or "xnnpack"]
    if ort and e.graph_optimization:
        argv += ["--graph-optimization", e.graph_optimization]
    if ort and e.memory_arena:
        argv += ["--memory-arena", e.memory_arena]
    if ctx.inputs is not None:
        argv += ["--inputs", os.path.abspath(ctx.inputs)]
    if ctx.debug_buffer and launch.etdump and worker == "worker":
        argv += ["--debug-buffer-size", str(ctx.debug_buffer)]
    run = LaunchRun()
    o = sh.run(python_argv(f"edgeprof.collect.{worker}", *argv, python=ctx.python), out=stage(launch.log),
               timeout=e.timeout, cwd=stage.folder)
    run.outcomes.append(o)
    run.main = o
    if not sh.dry and o.ok:
        try:
            run.worker = json.loads(result.read_text())
        except (OSError, ValueError) as err:
            run.warnings.append(f"the worker's report is unreadable ({err})")
    return run


def _runner_args(launch: Launch, executions: int, model: str, etdump: str | None) -> list[str]:
    e = launch.experiment
    args = ["--model_path", model, "--num_executions", str(executions), "--cpu_threads", str(launch.threads)]
    if etdump:
        args += ["--etdump_path", etdump]
    return args + list(e.extra_args)


def _external(launch: Launch, sh, ctx: Context, stage: Stage) -> LaunchRun:
    e = launch.experiment
    run = LaunchRun()
    model = str(e.model)
    if not sh.dry:  # the runner runs in its launch folder: a real folder of the run folder, never a link
        real_folder(ctx.run_dir, launch.folder)
    if e.mode == "xnntrace":
        o = sh.run([e.runner, *_runner_args(launch, 1, model, None)], env={"XNN_LOG_LEVEL": "5"},
                   out=stage(launch.xnntrace), timeout=e.timeout, cwd=launch.folder)
        run.outcomes.append(o)
        run.main = o
        return run
    if e.warmup > 0:
        w = sh.run([e.runner, *_runner_args(launch, e.warmup, model, None)], env={"XNN_LOG_LEVEL": "0"},
                   timeout=e.timeout, cwd=launch.folder)
        run.outcomes.append(w)
        if not w.ok:
            run.warnings.append(f"warm-up process failed ({'timed out' if w.timed_out else f'exit code {w.rc}'}): "
                                f"{tail(w.output, 300).strip()}")
    # the runner runs in the launch's folder and writes into the staging folder: an absolute path
    etd = os.path.abspath(stage(launch.etdump)) if launch.etdump else None
    o = sh.run([e.runner, *_runner_args(launch, e.runs, model, etd)], env={"XNN_LOG_LEVEL": "0"},
               out=stage(launch.log), timeout=e.timeout, cwd=launch.folder)
    run.outcomes.append(o)
    run.main = o
    _parse_runner_times(o.output, run)
    return run


def _adb(serial: str) -> list[str]:
    return ["adb", "-s", serial]


# the timed runner's memory on a device: its shell reads the runner's /proc/PID/status every MEMORY_SAMPLE_S while it
# runs (VmHWM is the process's high-water mark, so a sample misses only what it grows in its last interval)
MEMORY_SAMPLE_S = 0.2
_MEMORY_LINE = re.compile(r"^edgeprof-memory: VmHWM:\s*(\d+) kB VmRSS:\s*(\d+) kB\s*$", re.M)


def device_command(launch: Launch, executions: int, etdump: str | None, xnn_log_level: int | None,
                   memory: bool = False) -> str:
    """The ``adb shell`` command line of one runner process on the device (``memory``: sampled, see above)."""
    e = launch.experiment
    q = shlex.quote  # every word: names come from files and configs, and this line runs in the device's shell
    parts = [f"cd {q(DEVICE_DIR)}", f"export LD_LIBRARY_PATH={q(DEVICE_DIR)}"]
    if xnn_log_level is not None:
        parts.append(f"export XNN_LOG_LEVEL={int(xnn_log_level)}")
    cmd = " ".join(([f"taskset {q(e.cpu_affinity)}"] if e.cpu_affinity else []) + [
        q(f"./executor_runner_{e.name}"), *(q(a) for a in _runner_args(launch, executions, e.model.name, etdump))])
    if memory:
        cmd = (f"{{ {cmd} & p=$!; m=; while kill -0 $p 2>/dev/null; do s=$(grep -E '^Vm(HWM|RSS):' /proc/$p/status "
               f"2>/dev/null) && m=$s; sleep {MEMORY_SAMPLE_S:g}; done; wait $p; rc=$?; echo \"edgeprof-memory: "
               f"$(echo $m)\"; exit $rc; }}")
    return " && ".join([*parts, cmd])


def device_memory(output: str) -> dict | None:
    """The runner's memory as the device shell sampled it (:func:`device_command`), None when it printed none."""
    m = _MEMORY_LINE.findall(output)
    if not m:
        return None
    hwm, rss = (int(x) * 1024 for x in m[-1])
    return {"source": f"the device's /proc/PID/status, sampled every {MEMORY_SAMPLE_S:g} s by its shell while the "
                      "runner ran (VmHWM: the whole process's peak)", "peak_scope": "process",
            "phases": [{"phase": "process", "peak_rss_bytes": hwm, "rss_bytes": rss, "pss_bytes": None}],
            "cost_ms": 0.0, "options": {}}


def _android(launch: Launch, sh, ctx: Context, stage: Stage) -> LaunchRun:
    e = launch.experiment
    assert e.device is not None  # an adb experiment names its device
    adb = _adb(e.device)
    run = LaunchRun()

    def step(argv, **kw) -> Outcome:
        o = sh.run(argv, timeout=kw.pop("timeout", e.timeout), **kw)
        run.outcomes.append(o)
        return o

    key = (e.device, e.name)
    if key not in ctx.prepared:
        for argv in ([*adb, "shell", f"mkdir -p {shlex.quote(DEVICE_DIR)}"],
                     [*adb, "push", os.path.abspath(e.model), f"{DEVICE_DIR}/{e.model.name}"],  # runs no shell
                     [*adb, "push", os.path.abspath(e.runner), f"{DEVICE_DIR}/executor_runner_{e.name}"],
                     [*adb, "shell", f"chmod 755 {shlex.quote(f'{DEVICE_DIR}/executor_runner_{e.name}')}"]):
            o = step(argv, timeout=min(e.timeout, 600))
            if not o.ok:
                run.main = o
                return run
        ctx.prepared.add(key)
    if e.mode == "xnntrace":
        step([*adb, "logcat", "-c"], timeout=60)
        o = step([*adb, "shell", device_command(launch, 1, None, 5)])
        run.main = o
        if not sh.dry:
            time.sleep(0.5)
        lc = step([*adb, "logcat", "-d", "-s", "XNNPACK"], timeout=120)
        if not sh.dry:
            trace = stage(launch.xnntrace)
            assert trace is not None  # an xnntrace launch
            trace.write_text(f"=== XNNPACK Logcat Output ===\n{lc.output}\n\n=== Runner stdout ===\n{o.output}\n",
                             encoding="utf-8")
        return run
    if e.warmup > 0:
        w = step([*adb, "shell", device_command(launch, e.warmup, None, None)])
        if not w.ok:
            run.warnings.append(f"warm-up failed on the device ({'timed out' if w.timed_out else f'exit code {w.rc}'})")
    name = f"{launch.stem}.etdump" if launch.etdump else None
    o = step([*adb, "shell", device_command(launch, e.runs, name, 0, memory=True)], out=stage(launch.log))
    run.main = o
    _parse_runner_times(o.output, run)
    run.memory = device_memory(o.output)
    if name and launch.etdump:  # pulled even after a crash: a partial ETDump says how far it got
        p = step([*adb, "pull", f"{DEVICE_DIR}/{name}", os.path.abspath(stage(launch.etdump))], timeout=600)
        if not p.ok and o.ok:
            run.warnings.append(f"adb pull failed: {tail(p.output, 300).strip()}")
        step([*adb, "shell", f"rm -f {shlex.quote(f'{DEVICE_DIR}/{name}')}"], timeout=60)
    return run


def run_launch(launch: Launch, sh, ctx: Context, stage: Stage) -> LaunchRun:
    """Run ``launch``; its processes write into ``stage`` (the parent puts the files in place afterwards)."""
    kind = launch.experiment.kind
    how = _python if kind == "python" else _android if kind == "adb" else _external
    return how(launch, sh, ctx, stage)
