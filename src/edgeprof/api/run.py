"""``edgeprof run``: profile models and write the run folder the analysis reads.

Plans the collection (:mod:`edgeprof.collect.config`, :mod:`edgeprof.collect.plan`), runs each launch in its own
process in the interleaved order (:mod:`edgeprof.collect.runners`), its processes writing into a private staging
folder; reads back what each launch wrote (its ETDump, through the same reader as every command), puts its files
in place in the run folder (:func:`edgeprof.collect.staging.place`: the one writer, real folders of the run
folder, names where nothing is, the SHA-256 of what was written recorded), and keeps ``manifest.json`` and
``metrics.json`` — in the Arm kit's schema, plus the environment of every launch — up to date after every
launch, so an interrupted collection leaves a consistent folder whose manifest says ``partial``.
"""

from __future__ import annotations

import importlib.util
import io
import os
import platform as _platform
from datetime import datetime, timezone
from pathlib import Path

from .. import child
from ..errors import EdgeprofError, InputError, UsageError
from ..files import command, display, is_file
from ..runtimes import EXECUTORCH, RUNTIMES, python_runner, runtime
from .results import Collection
from .run_outputs import nothing_in_the_way, prepare_folder, publish_inputs, put_in_place


class Interrupted(EdgeprofError):
    """Ctrl-C during a collection: the folder is consistent and its manifest says ``partial``."""

    exit_code = 130


def host_platform() -> str:
    return {"Darwin": "mac", "Linux": "linux", "Windows": "windows"}.get(_platform.system(), _platform.system().lower())


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _plan(models, config, given: dict):
    from ..collect import config as cc
    from ..io.documents import read_document

    if config is not None and models:
        raise UsageError("give models or --config FILE, not both")
    if given.get("debug_buffer") is not None:
        given["debug_buffer"] = cc.parse_size(given["debug_buffer"])
    if isinstance(given.get("threads"), str):
        given["threads"] = cc.parse_threads(given["threads"])
    if config is not None:
        cfg = cc.from_document(read_document(config, "collection config"), config)
    else:
        cfg = cc.from_models(models, runner=given.pop("runner", None) or cc.PYTHON, device=given.get("device"))
    given.pop("runner", None)
    return cc.override(cfg, **given)


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a module blocked or half-installed
        return False


def _check(cfg, dry_run: bool) -> list[str]:
    """Usage errors for what cannot run; warnings for what the run should know."""
    warnings: list[str] = []
    for e in cfg.experiments:
        if not is_file(e.model):
            raise InputError(e.model, f"no such model (experiment {e.name})")
        if e.kind == "python":
            if e.mode == "xnntrace":
                raise UsageError(f"experiment {e.name}: xnntrace mode needs an executor_runner built with XNNPACK "
                                 "logging (runner = PATH); the Python runtime's XNNPACK does not log")
            if e.cpu_affinity:
                raise UsageError(f"experiment {e.name}: cpu_affinity applies to Android devices (taskset there)")
            given = {"providers": e.providers, "graph_optimization": e.graph_optimization, "delegate": e.delegate,
                     "memory_arena": e.memory_arena, "debug_buffer": cfg.debug_buffer}
            for option in (o for o, v in given.items() if v and o not in runtime(e.runtime).options):
                owner = next(r for r in RUNTIMES.values() if option in r.options)  # the runtime that takes it
                raise UsageError(f"experiment {e.name}: {option} is an option of {owner.title} "
                                 f"({', '.join(owner.model_suffixes)} models), not of {e.model.suffix or 'these'} models")
            if e.runtime != EXECUTORCH.name:  # ExecuTorch needs two packages, said below
                needs = runtime(e.runtime).extra
                assert needs is not None  # every runtime but ExecuTorch names its extra
                module, extra = needs
                if not _has(module) and not dry_run:
                    raise UsageError(f"edgeprof run of a {e.model.suffix} model needs {module}: "
                                     f"pip install 'edgeprof[{extra}]'")
                continue
            missing = [m for m in ("executorch", "torch") if not _has(m)]
            if missing and not dry_run:
                raise UsageError("edgeprof run with the ExecuTorch Python runtime needs " + " and ".join(missing)
                                 + ": pip install 'edgeprof[run]' (on CPU-only machines install torch's CPU wheel first)")
        elif cfg.debug_buffer:
            raise UsageError(f"experiment {e.name}: --debug-buffer needs the ExecuTorch Python runtime (runner = \"python\")")
        elif e.runtime != EXECUTORCH.name:
            raise UsageError(f"experiment {e.name}: a {e.model.suffix} model runs in its runtime here (runner = \"python\")")
        elif not is_file(e.runner):
            raise InputError(e.runner, f"no such runner binary (experiment {e.name})")
        elif e.kind == "external" and not (Path(e.runner).stat().st_mode & 0o111):
            raise InputError(e.runner, f"runner is not executable (experiment {e.name})")
    if cfg.inputs is not None and not is_file(cfg.inputs):
        raise InputError(cfg.inputs, "no such inputs file")
    return warnings


def _run_dir(cfg, out) -> Path:
    if out is not None:
        return Path(out)
    if cfg.output_root is not None:
        return cfg.output_root
    kinds = {e.kind for e in cfg.experiments}
    plat = cfg.platform or ("android" if kinds == {"adb"} else host_platform())
    return Path(f"out_{cfg.experiments[0].model.stem}") / "runs" / plat


def _inputs_inside(cfg, run_dir: Path) -> None:
    """A collection never writes where its inputs are: an output folder holding a model, a runner, the config or
    the inputs file is refused (``--force`` would replace the collection around them)."""
    top = os.path.realpath(run_dir)
    named = [e.model for e in cfg.experiments] + [Path(e.runner) for e in cfg.experiments if e.kind != "python"]
    named += [p for p in (cfg.inputs, Path(cfg.source) if cfg.source else None) if p is not None]
    for p in named:
        real = os.path.realpath(p)
        if real == top or real.startswith(top.rstrip(os.sep) + os.sep):
            raise UsageError(f"the output folder {display(run_dir)} holds an input ({display(p)}): choose another --out")


def _etrecords(cfg, run_dir: Path) -> tuple[dict[str, str], dict[Path, str]]:
    """ETRecords found beside the models (``m.etrecord``, ``m.pte.etrecord``), copied to ``RUN_DIR/artifacts``
    where the analysis finds them (read as a regular file, put in place as every file of the collection).
    Returns ({model stem: ETRecord}, {copy: its SHA-256})."""
    from ..collect.staging import place
    from ..files import open_regular

    out, written = {}, {}
    for e in cfg.experiments:
        for cand in (e.model.with_suffix(".etrecord"), Path(str(e.model) + ".etrecord")):
            if is_file(cand) and e.model.stem not in out:
                target = run_dir / "artifacts" / f"{e.model.stem}.etrecord"
                with open_regular(cand) as src:
                    written[target] = place(run_dir, target, src)
                out[e.model.stem] = str(cand)
    return out, written


class _Recorder:
    """The manifest and metrics of one collection, rewritten (atomically) after every launch."""

    def __init__(self, run_dir: Path, cfg, launches, machine: dict, extra: dict):
        from ..collect.fingerprint import describe_machine

        self.run_dir, self.cfg, self.launches = run_dir, cfg, launches
        first = cfg.experiments[0]
        self.doc = {
            "tool": "edgeprof", "generated_at": _now(), "status": "running",
            "model": str(first.model), "models": {e.name: str(e.model) for e in cfg.experiments},
            "device": describe_machine(next(iter(machine.values()))) if machine else None,
            "machines": machine,
            "config": {"path": cfg.source, "seed": cfg.seed, "inputs": str(cfg.inputs) if cfg.inputs else None,
                       "compare_pairs": [{"baseline": {"experiment": b}, "candidate": {"experiment": c}}
                                         for b, c in cfg.compare_pairs],
                       "experiments": [_experiment_doc(e) for e in cfg.experiments],
                       "launch_order": [ln.label for ln in launches]},
            "executorch": _executorch(cfg, machine),
            "results": [], "overhead_launches": [], **extra,
            "files": {},  # what this collection wrote, with its content's SHA-256 (run --force removes only these)
        }

    def track(self, paths) -> None:
        """Record the content of files this collection's analysis wrote (written into the manifest with the next
        write)."""
        from .run_outputs import record

        self.doc["files"].update(record(self.run_dir, paths))

    def keep(self, written: dict) -> None:
        """Record ``{path: SHA-256 of what was put there}`` (files the collection put in place)."""
        from .run_outputs import recorded

        self.doc["files"].update(recorded(self.run_dir, written))

    def add(self, entry: dict, overhead: bool) -> None:
        self.doc["overhead_launches" if overhead else "results"].append(entry)
        self.write()

    def write(self) -> None:
        from ..collect.staging import place
        from ..io.runfolder import MANIFEST, METRICS
        from ..render import jsonfmt

        self.doc["updated_at"] = _now()
        metrics = {"results": self.doc["results"], "overhead": self.doc.get("overhead")}
        for name, doc in ((MANIFEST, self.doc), (METRICS, metrics)):  # the record, rewritten as it goes
            data = jsonfmt.dumps(doc).encode("utf-8", "replace")
            place(self.run_dir, self.run_dir / name, io.BytesIO(data), again=True)


def _executorch(cfg, machines: dict) -> dict:
    """The kit's ``executorch`` block: the Python runtime's version (a runner binary's commit is not readable)."""
    v = ((machines.get("host") or {}).get("versions") or {}).get("executorch")
    py = any(e.kind == "python" for e in cfg.experiments)
    return {"present": bool(v) if py else None, "version": v if py else None, "sha": None, "dirty": None}




def _experiment_doc(e) -> dict:
    from ..collect.fingerprint import file_hash

    return {"name": e.name, "model": str(e.model), "model_sha256": file_hash(e.model)["sha256"],
            "runner_path": python_runner(e.runtime) if e.kind == "python" else e.runner, "runtime": e.runtime,
            "providers": list(e.session_providers) if e.runtime == "onnxruntime" else None,
            "graph_optimization": (e.graph_optimization or "all") if e.runtime == "onnxruntime" else None,
            "memory_arena": (e.memory_arena or "on") if e.runtime == "onnxruntime" else None,
            "delegate": (e.delegate or "xnnpack") if e.runtime == "litert" else None,
            "runner": None if e.kind == "python" else file_hash(e.runner),
            "kind": e.kind, "device": e.device, "mode": e.mode, "runs": e.runs, "warmup": e.warmup,
            "threads": list(e.threads), "launches": e.launches, "timeout_s": e.timeout, "extra_args": list(e.extra_args),
            "cpu_affinity": e.cpu_affinity}


def _shell_of(sh, serial: str):
    """``adb -s SERIAL shell CMD`` as a function returning its output ('' on failure)."""
    from ..collect.runners import _adb

    def run(cmd: str) -> str:
        o = sh.run([*_adb(serial), "shell", cmd], timeout=30)
        return o.output if o.ok else ""

    return run


def _state(sh, launch):
    from ..collect import fingerprint

    if launch.experiment.kind == "adb":
        return fingerprint.device_state(_shell_of(sh, launch.experiment.device))
    return fingerprint.host_state()


def _read_launch(launch, lr, stage) -> tuple[str, str | None, dict, list[str]]:
    """(status, error, metrics, warnings) of a finished launch, from what it wrote (in its staging folder;
    the metrics name the files where they are put)."""
    import numpy as np

    from ..io.readers import read_profile

    metrics: dict = {"runs": launch.experiment.runs, "threads": launch.threads, "log": str(launch.log),
                     "log_rel": _rel(launch.log, launch.folder.parent)}
    warnings = list(lr.warnings)
    if lr.worker:
        w = lr.worker
        metrics.update(wall_ms=w.get("wall_ms"), load_ms=w.get("load_ms"), threads_in_effect=w.get("threads"),
                       inputs=w.get("inputs"), versions=w.get("versions"))
        metrics.update({k: w[k] for k in ("providers", "delegate", "delegated", "graph_optimization", "memory")
                        if k in w})
        if w.get("threads") != launch.threads:
            warnings.append(f"asked for {launch.threads} thread(s), the runtime runs {w.get('threads')}")
    if lr.memory is not None:
        metrics["memory"] = lr.memory
    if lr.runner_total_ms is not None:
        metrics.update(runner_total_ms=lr.runner_total_ms, runner_executions=lr.runner_executions)
    status, error = lr.status, lr.error
    if launch.experiment.mode == "xnntrace":
        metrics["xnntrace_log"] = str(launch.xnntrace)
        if status == "ok" and stage.regular(launch.xnntrace) is None:
            status, error = "no output", "no xnntrace log written"
        return status, error, metrics, warnings
    if launch.etdump is None:  # an overhead-check launch
        return status, error, metrics, warnings
    metrics.update(etdump=str(launch.etdump), etdump_rel=_rel(launch.etdump, launch.folder.parent))
    if status != "ok":
        return status, error, metrics, warnings
    staged = stage.regular(launch.etdump)
    if staged is None:
        return "no ETDump", f"the runner exited 0 but wrote no ETDump at {launch.etdump}", metrics, warnings
    try:
        prof = read_profile(staged).valid_runs()
    except InputError as e:
        return "corrupt ETDump", str(e), metrics, warnings
    lat = prof.latency_ms()
    metrics.update(latency_ms=lat.tolist(), median_ms=float(np.median(lat)), mean_ms=float(np.mean(lat)),
                   min_ms=float(lat.min()), max_ms=float(lat.max()), runs_recorded=int(prof.n_runs))
    if prof.n_runs != launch.experiment.runs:
        warnings.append(f"the ETDump holds {prof.n_runs} valid run(s), {launch.experiment.runs} were asked for")
    return "ok", None, metrics, warnings


def _rel(p: Path, base: Path) -> str:
    try:
        return p.relative_to(base).as_posix()
    except ValueError:
        return str(p)


@command
def run(models=(), *, config=None, out=None, force: bool = False, dry_run: bool = False, overhead_check: bool = False,
        report: bool = False, progress=None, echo=None, verbose_echo=None, **given) -> Collection:
    """Profile ``models`` (or the experiments of ``config``) and write the run folder.

    ``given``: runs, warmup, threads, launches, timeout, seed, inputs, device, runner, mode, cpu_affinity — each
    replaces the configuration's value when not None. ``dry_run`` only lists the commands (``echo(line)``).
    ``progress(done, total, label)`` follows the launches. ``report`` runs ``analyze`` and writes
    ``report.md`` and ``report.html`` in the folder afterwards."""
    from ..collect import fingerprint
    from ..collect.execute import DryRun, Shell, tail
    from ..collect.plan import schedule
    from ..collect.runners import Context, run_launch
    from ..collect.staging import Stage, inputs_folder
    from .run_overhead import overhead_of

    if given.get("inputs") is not None:
        given["inputs"] = Path(given["inputs"])
    cfg = _plan(list(models), config, dict(given))
    warnings = _check(cfg, dry_run)
    run_dir = _run_dir(cfg, out)
    launches = schedule(cfg, run_dir, overhead_check=overhead_check)
    ctx = Context(run_dir=run_dir, seed=cfg.seed, inputs=cfg.inputs, debug_buffer=cfg.debug_buffer,
                  inputs_dir=inputs_folder(True, run_dir))
    if dry_run:
        lines: list[str] = []
        sh: Shell | DryRun = DryRun(lines.append)
        for ln in launches:
            lines.append(f"# {ln.position}/{len(launches)}: {ln.label}")
            run_launch(ln, sh, ctx, Stage(ln, dry=True))
        for line in lines:
            if echo:
                echo(line)
        return Collection({"run_dir": str(run_dir), "status": "dry run", "commands": lines,
                           "launches_planned": len(launches), "warnings": warnings})
    _inputs_inside(cfg, run_dir)
    warnings += prepare_folder(run_dir, force, lambda gone: nothing_in_the_way(cfg, launches, run_dir, gone))
    run_dir.mkdir(parents=True, exist_ok=True)
    sh = Shell(echo=verbose_echo)
    machines = {}
    for serial in sorted({e.device for e in cfg.experiments if e.kind == "adb"}):
        machines[f"adb:{serial}"] = fingerprint.device_facts(_shell_of(sh, serial))
    if any(e.kind != "adb" for e in cfg.experiments):
        machines["host"] = fingerprint.host_facts()
    etrecords, copies = _etrecords(cfg, run_dir)
    rec = _Recorder(run_dir, cfg, launches, machines, {"etrecords": etrecords})
    rec.keep(copies)
    rec.write()
    records: list[dict] = []
    ctx.inputs_dir = inputs_folder(False, run_dir)  # the workers' cache, private; put in RUN_DIR/inputs for the record
    published: set[str] = set()
    try:
        for i, ln in enumerate(launches):
            written: dict[Path, str]  # what was put in place: its SHA-256
            stage, written = Stage(ln), {}
            try:
                before = _state(sh, ln)
                lr = run_launch(ln, sh, ctx, stage)
                after = _state(sh, ln)
                status, error, metrics, lw = _read_launch(ln, lr, stage)
                entry = {"experiment": ln.experiment.name, "threads": ln.threads, "launch": ln.launch,
                         "round": ln.round, "position": ln.position, "status": status, "error": error,
                         "metrics": metrics, "warnings": lw, "seconds": round(sum(o.seconds for o in lr.outcomes), 3),
                         "fingerprint": {"before": before, "after": after}, "overhead": not ln.etdump_on}
                aside = put_in_place(run_dir, ln, stage, written, ok=status == "ok")
                if status != "ok":
                    entry["output_tail"] = tail(lr.main.output if lr.main else "", 2000)
                    entry["set_aside"] = aside
                rec.keep(written)
                rec.keep(publish_inputs(run_dir, ctx.inputs_dir, published))
            except KeyboardInterrupt:
                aside = put_in_place(run_dir, ln, stage, written, ok=False, interrupted=True)
                rec.keep(written)
                rec.doc.setdefault("interrupted", {"launch": ln.label, "set_aside": aside})
                raise
            finally:
                stage.remove()
            records.append(entry)
            rec.add(entry, overhead=not ln.etdump_on)
            if progress:
                progress(i + 1, len(launches), ln.label)
    except KeyboardInterrupt:
        rec.doc["status"] = "partial"
        rec.write()
        done = sum(1 for r in records if not r["overhead"])
        raise Interrupted(f"interrupted: {run_dir / 'manifest.json'} says partial ({done} of "
                          f"{sum(1 for ln in launches if ln.etdump_on)} launches recorded)") from None
    finally:
        child.remove_folder(str(ctx.inputs_dir))
    rec.doc["overhead"] = overhead_of(records, cfg.seed, {e.name: e.runtime for e in cfg.experiments}) \
        if overhead_check else None
    noise_file = _noise_profile(run_dir, records)
    rec.track([noise_file])
    failed = [r for r in records if r["status"] != "ok"]
    rec.doc["status"] = "complete"
    rec.doc["failed_launches"] = len(failed)
    rec.write()
    result = {"run_dir": str(run_dir), "status": "complete", "launches_planned": len(launches),
              "launches_ok": len(records) - len(failed), "failed": [
                  {"launch": f"{r['experiment']} t{r['threads']} launch {r['launch']}", "status": r["status"],
                   "error": r["error"]} for r in failed],
              "overhead": rec.doc["overhead"], "manifest": str(run_dir / "manifest.json"),
              "metrics": str(run_dir / "metrics.json"), "warnings": warnings, "report": None,
              "noise_profile": str(noise_file) if noise_file else None}
    if report:
        from .run_report import report_after_run

        result["report"] = report_after_run(run_dir, cfg)
        from .run_outputs import derived

        rec.track(derived(run_dir, [Path(r["metrics"]["etdump"]) for r in records
                                    if r["status"] == "ok" and (r.get("metrics") or {}).get("etdump")]))
        rec.write()
    return Collection(result)


def _noise_profile(run_dir: Path, records: list[dict]):
    """``noise.json``: the launch-to-launch noise of this collection's configurations (those with ≥ 2 launches),
    for the comparisons that later have one launch per arm on this machine."""
    import numpy as np

    from ..analysis.selection import select_runs
    from .plan import write_noise_profile

    configs: dict[str, list] = {}
    for r in records:
        lat = (r.get("metrics") or {}).get("latency_ms")
        if r["status"] == "ok" and not r["overhead"] and lat:
            x = np.asarray(lat, dtype=float)
            configs.setdefault(f"{r['experiment']} t{r['threads']}", []).extend(select_runs([x]).steady([x]))
    return write_noise_profile(run_dir, configs, "edgeprof run")
