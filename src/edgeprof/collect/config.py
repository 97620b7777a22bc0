"""What to collect: experiments, from a configuration document or from command-line models.

One schema reads both edgeprof's configuration (TOML or JSON) and the Arm kit's pipeline JSON (``model``,
``output_root``, ``experiments[]`` with ``name``, ``runner_path``/``quiet_runner``, ``mode``, ``runs``,
``warmup``, ``threads``, ``extra_args``, ``cpu_affinity``; ``analysis.compare_pairs``), with the kit's
defaults (100 runs, 10 warm-up runs, one thread). edgeprof adds ``launches`` (processes per configuration,
interleaved; default 3), ``seed``, ``timeout``, ``inputs``, ``device`` and a per-experiment ``model``.
Unknown keys are refused (a misspelt key would silently change a measurement).

``runner``: ``python`` (the model's runtime in a worker process per launch: ExecuTorch's for a ``.pte``, ONNX
Runtime's for an ``.onnx``) or the path of an ``executor_runner``-style binary (``--model_path --num_executions
--cpu_threads --etdump_path``). ``device = "adb:SERIAL"`` runs that binary on an Android device through adb.
``providers`` (ONNX models): the execution providers of the session, in priority order (``["OpenVINOExecutionProvider"]``;
the CPU provider is always added last, as ONNX Runtime's fallback) — each list an experiment of its own.
``delegate`` (LiteRT models): ``xnnpack`` (LiteRT's default) or ``none`` (its builtin CPU kernels only).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError, UsageError

MODES = ("timing", "xnntrace")
PYTHON = "python"
if TYPE_CHECKING:
    from typing import TypedDict

    class _Defaults(TypedDict):
        runs: int
        warmup: int
        threads: tuple[int, ...]
        launches: int
        timeout: float
        seed: int

DEFAULTS: _Defaults = {"runs": 100, "warmup": 10, "threads": (1,), "launches": 3, "timeout": 600.0, "seed": 0}
_TOP = {"model", "output_root", "platform", "runs", "warmup", "threads", "launches", "timeout", "seed", "inputs",
        "device", "cpu_affinity", "experiments", "experiment", "analysis", "runner", "runner_path", "mode",
        "extra_args", "description", "providers", "delegate", "graph_optimization", "memory_arena"}
_EXP = {"name", "model", "runner", "runner_path", "quiet_runner", "mode", "runs", "warmup", "threads", "launches",
        "timeout", "extra_args", "cpu_affinity", "device", "description", "providers", "delegate", "graph_optimization",
        "memory_arena"}
CPU_PROVIDER = "CPUExecutionProvider"
DELEGATES = ("xnnpack", "none")  # LiteRT: its default XNNPACK delegate, or the builtin CPU kernels only
# ONNX Runtime's graph optimization levels (SessionOptions.graph_optimization_level), by the names it gives them
GRAPH_OPTIMIZATIONS = {"disable": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC", "extended": "ORT_ENABLE_EXTENDED",
                       "all": "ORT_ENABLE_ALL"}
# ONNX Runtime's CPU memory arena and memory pattern (SessionOptions.enable_cpu_mem_arena / enable_mem_pattern): on (its
# default) or off — they change a session's peak memory several-fold for the same model
MEMORY_ARENA = ("on", "off")
_PROVIDER = re.compile(r"^[A-Za-z][A-Za-z0-9]{0,63}ExecutionProvider$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$")
_MASK = re.compile(r"^(0x[0-9a-fA-F]{1,16}|[0-9]{1,5}(-[0-9]{1,5})?(,[0-9]{1,5}(-[0-9]{1,5})?)*)$")
_SERIAL = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


@dataclass(frozen=True)
class Experiment:
    name: str
    model: Path
    runner: str = PYTHON               # "python" or the path of an executor_runner-style binary
    mode: str = "timing"
    runs: int = DEFAULTS["runs"]
    warmup: int = DEFAULTS["warmup"]
    threads: tuple[int, ...] = DEFAULTS["threads"]
    launches: int = DEFAULTS["launches"]
    timeout: float = DEFAULTS["timeout"]
    extra_args: tuple[str, ...] = ()
    cpu_affinity: str | None = None    # Android: taskset mask
    device: str | None = None          # Android serial (adb -s)
    providers: tuple[str, ...] = ()    # ONNX Runtime execution providers, in priority order (CPU added last)
    delegate: str | None = None        # LiteRT: xnnpack (its default) or none
    graph_optimization: str | None = None  # ONNX Runtime: disable, basic, extended or all (its default)
    memory_arena: str | None = None  # ONNX Runtime: on (its default: CPU arena and memory pattern) or off

    @property
    def kind(self) -> str:
        """``python``, ``external`` (a binary on this machine) or ``adb``."""
        return "adb" if self.device else PYTHON if self.runner == PYTHON else "external"

    @property
    def runtime(self) -> str:
        """``onnxruntime`` for an ``.onnx`` model, ``litert`` for a ``.tflite``, else ``executorch``."""
        from ..runtimes import for_model

        return for_model(self.model).name

    @property
    def session_providers(self) -> tuple[str, ...]:
        """The providers an ONNX Runtime session is given: the experiment's, then the CPU provider."""
        return (*(p for p in self.providers if p != CPU_PROVIDER), CPU_PROVIDER)


@dataclass
class CollectionConfig:
    experiments: list[Experiment]
    output_root: Path | None = None
    platform: str | None = None
    seed: int = 0
    inputs: Path | None = None
    compare_pairs: list[tuple[str, str]] = field(default_factory=list)
    source: str | None = None          # the configuration file, when there is one
    debug_buffer: int = 0              # bytes of debug buffer per launch (ExecuTorch Python runtime): 0 = none

    def experiment(self, name: str) -> Experiment:
        return next(e for e in self.experiments if e.name == name)


# --------------------------------------------------------------------------------------------------
# checks
# --------------------------------------------------------------------------------------------------

def _given(v) -> str:
    """A value as a message quotes it: a string between quotes as it is (not its repr — the one escaping,
    :func:`edgeprof.conventions.shown`, happens where the message is shown), anything else as written."""
    return f"'{v}'" if isinstance(v, str) else str(v)


def _int(v, where: str, path, low: int = 0, high: int = 10**7) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
        raise InputError(path, f"{where}: must be a whole number from {low} to {high:,}, got {_given(v)}")
    return v


def _threads(v, where: str, path) -> tuple[int, ...]:
    vals = v if isinstance(v, list) else [v]
    if not vals:
        raise InputError(path, f"{where}: give at least one thread count")
    out = tuple(_int(x, where, path, 1, 1024) for x in vals)
    if len(set(out)) != len(out):
        raise InputError(path, f"{where}: thread counts repeat ({list(out)})")
    return out


def parse_providers(v, where: str, path) -> tuple[str, ...]:
    """A list of ONNX Runtime execution provider names (``OpenVINOExecutionProvider``), distinct."""
    vals = [x.strip() for x in v.split(",")] if isinstance(v, str) else v
    if not isinstance(vals, list) or not all(isinstance(x, str) and _PROVIDER.match(x) for x in vals) \
            or len(set(vals)) != len(vals):
        msg = f"{where}: execution provider names such as OpenVINOExecutionProvider (distinct), got {_given(v)}"
        raise InputError(path, msg) if path is not None else UsageError(msg)
    return tuple(vals)


def parse_graph_optimization(v, where: str, path) -> str | None:
    if v is None or v in GRAPH_OPTIMIZATIONS:
        return v
    msg = f"{where}: one of {', '.join(GRAPH_OPTIMIZATIONS)}, got {_given(v)}"
    raise InputError(path, msg) if path is not None else UsageError(msg)


def parse_memory_arena(v, where: str, path) -> str | None:
    if v is None or v in MEMORY_ARENA:
        return v
    msg = f"{where}: one of {', '.join(MEMORY_ARENA)}, got {_given(v)}"
    raise InputError(path, msg) if path is not None else UsageError(msg)


def parse_delegate(v, where: str, path) -> str | None:
    if v is None or v in DELEGATES:
        return v
    msg = f"{where}: one of {', '.join(DELEGATES)}, got {_given(v)}"
    raise InputError(path, msg) if path is not None else UsageError(msg)


def _str(v, where: str, path, limit: int = 4096) -> str:
    if not isinstance(v, str) or not v or len(v) > limit or "\x00" in v:
        raise InputError(path, f"{where}: must be a non-empty string")
    return v


def parse_device(v: str, where: str, path) -> str:
    """``adb:SERIAL`` (or a bare serial) → the serial."""
    serial = v[4:] if v.startswith("adb:") else v
    if not _SERIAL.match(serial):
        raise InputError(path, f"{where}: expected adb:SERIAL (letters, digits, . _ : -), got {_given(v)}")
    return serial


def _resolve(p: str, base: Path | None) -> Path:
    """A path as the kit resolves it (from the current folder), else from the configuration's folder."""
    q = Path(p).expanduser()
    if q.is_absolute() or base is None or q.exists():
        return q
    return base / q if (base / q).exists() else q


def _runner(v: str, base: Path | None) -> str:
    if v == PYTHON:
        return v
    q = Path(v).expanduser()
    if not q.is_absolute():
        for cand in (Path.cwd() / "executorch" / q, q, *([base / q] if base else [])):  # the kit's lookup first
            if cand.exists():
                return str(cand.absolute())
    return str(q.absolute())


# --------------------------------------------------------------------------------------------------
# documents
# --------------------------------------------------------------------------------------------------

def from_document(doc: dict, path) -> CollectionConfig:
    """A :class:`CollectionConfig` from a parsed configuration (edgeprof's or the Arm kit's)."""
    base = Path(path).resolve().parent if path is not None else None
    unknown = sorted(set(doc) - _TOP)
    if unknown:
        raise InputError(path, f"unknown key(s) {', '.join(map(_given, unknown))} (known: {', '.join(sorted(_TOP))})")
    exps = doc.get("experiments", doc.get("experiment"))
    if not isinstance(exps, list) or not exps:
        raise InputError(path, "experiments: give a list of experiments (each with a name)")
    top = {k: doc[k] for k in ("runs", "warmup", "threads", "launches", "timeout", "mode", "extra_args",
                               "cpu_affinity", "device", "runner", "runner_path", "model", "providers", "delegate",
                               "graph_optimization", "memory_arena")
           if k in doc}
    out, names = [], set()
    for i, e in enumerate(exps):
        where = f"experiments[{i}]"
        if not isinstance(e, dict):
            raise InputError(path, f"{where}: must be a table/object")
        bad = sorted(set(e) - _EXP)
        if bad:
            raise InputError(path, f"{where}: unknown key(s) {', '.join(map(_given, bad))} (known: {', '.join(sorted(_EXP))})")
        merged = {**top, **e}
        name = _str(merged.get("name"), f"{where}.name", path, 100)
        if not _NAME.match(name):
            raise InputError(path, f"{where}.name: {_given(name)} must be letters, digits, . _ + - (it names files)")
        if name in names:
            raise InputError(path, f"{where}.name: {_given(name)} is used twice")
        names.add(name)
        model = merged.get("model")
        if model is None:
            raise InputError(path, f"{where}: no model (give model at the top or in the experiment)")
        runner = merged.get("runner", merged.get("runner_path", merged.get("quiet_runner", PYTHON)))
        mode = merged.get("mode", "timing")
        if mode not in MODES:
            raise InputError(path, f"{where}.mode: must be one of {', '.join(MODES)}, got {_given(mode)}")
        extra = merged.get("extra_args", [])
        if not isinstance(extra, list) or not all(isinstance(a, str) and "\x00" not in a for a in extra):
            raise InputError(path, f"{where}.extra_args: must be a list of strings")
        timeout = merged.get("timeout", DEFAULTS["timeout"])
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 7 * 86400:
            raise InputError(path, f"{where}.timeout: must be seconds between 0 and a week, got {_given(timeout)}")
        mask = merged.get("cpu_affinity")
        if mask is not None and (not isinstance(mask, str) or not _MASK.match(mask)):
            raise InputError(path, f"{where}.cpu_affinity: a taskset mask such as 0x80 or a CPU list such as 4-7, "
                                   f"got {_given(mask)}")
        device = merged.get("device")
        out.append(Experiment(
            name=name, model=_resolve(_str(model, f"{where}.model", path), base).absolute(),
            runner=_runner(_str(runner, f"{where}.runner", path), base), mode=mode,
            runs=_int(merged.get("runs", DEFAULTS["runs"]), f"{where}.runs", path, 1),
            warmup=_int(merged.get("warmup", DEFAULTS["warmup"]), f"{where}.warmup", path, 0),
            threads=_threads(merged.get("threads", list(DEFAULTS["threads"])), f"{where}.threads", path),
            launches=_int(merged.get("launches", DEFAULTS["launches"]), f"{where}.launches", path, 1, 1000),
            timeout=float(timeout), extra_args=tuple(extra), cpu_affinity=mask,
            device=parse_device(_str(device, f"{where}.device", path), f"{where}.device", path) if device else None,
            providers=parse_providers(merged.get("providers", []), f"{where}.providers", path),
            delegate=parse_delegate(merged.get("delegate"), f"{where}.delegate", path),
            graph_optimization=parse_graph_optimization(merged.get("graph_optimization"),
                                                        f"{where}.graph_optimization", path),
            memory_arena=parse_memory_arena(merged.get("memory_arena"), f"{where}.memory_arena", path)))
    pairs = []
    analysis = doc.get("analysis", {})
    if not isinstance(analysis, dict):
        raise InputError(path, "analysis: must be a table/object")
    for i, pr in enumerate(analysis.get("compare_pairs", []) if isinstance(analysis.get("compare_pairs", []), list)
                           else [None]):
        where = f"analysis.compare_pairs[{i}]"
        if not isinstance(pr, dict):
            raise InputError(path, f"{where}: must be {{baseline, candidate}}")
        ends = []
        for role in ("baseline", "candidate"):
            v = pr.get(role)
            v = v.get("experiment") if isinstance(v, dict) else v
            if not isinstance(v, str) or v not in names:
                raise InputError(path, f"{where}.{role}: {_given(str(v)[:80])} is not an experiment name")
            ends.append(v)
        pairs.append((ends[0], ends[1]))
    seed = _int(doc.get("seed", DEFAULTS["seed"]), "seed", path, 0, 2**32 - 1)
    inputs = doc.get("inputs")
    platform = doc.get("platform")
    if platform is not None and (not isinstance(platform, str) or not _NAME.match(platform)):
        raise InputError(path, f"platform: letters, digits, . _ + - only, got {_given(platform)}")
    root = doc.get("output_root")
    return CollectionConfig(
        experiments=out, output_root=Path(_str(root, "output_root", path)).expanduser() if root is not None else None,
        platform=platform, seed=seed, inputs=_resolve(_str(inputs, "inputs", path), base) if inputs else None,
        compare_pairs=pairs, source=str(path) if path is not None else None)


def from_models(models, *, runner: str = PYTHON, device: str | None = None) -> CollectionConfig:
    """One experiment per model named on the command line, named after the model file (``toycnn_xnn``)."""
    exps: list[Experiment] = []
    seen: dict[str, int] = {}
    for m in models:
        p = Path(m)
        stem = re.sub(r"[^A-Za-z0-9._+-]", "_", p.stem) or "model"
        n = seen[stem] = seen.get(stem, 0) + 1
        name = stem if n == 1 else f"{stem}_{n}"
        exps.append(Experiment(name=name, model=p.absolute(), runner=_runner(runner, None),
                               device=parse_device(device, "--device", None) if device else None))
    if not exps:
        raise UsageError("give a model (.pte, .onnx or .tflite) or --config FILE")
    return CollectionConfig(experiments=exps)


def override(cfg: CollectionConfig, **given) -> CollectionConfig:
    """Command-line values (those not None) replace the configuration's, for every experiment."""
    exp_keys = {"runs", "warmup", "threads", "launches", "timeout", "mode", "cpu_affinity", "device", "providers",
                "delegate", "graph_optimization", "memory_arena"}
    per = {k: v for k, v in given.items() if k in exp_keys and v is not None}
    if "threads" in per:
        per["threads"] = tuple(per["threads"])
    if "providers" in per:
        per["providers"] = parse_providers(per["providers"], "--providers", None)
    if "delegate" in per:
        per["delegate"] = parse_delegate(per["delegate"], "--delegate", None)
    if "graph_optimization" in per:
        per["graph_optimization"] = parse_graph_optimization(per["graph_optimization"], "--graph-optimization", None)
    if "memory_arena" in per:
        per["memory_arena"] = parse_memory_arena(per["memory_arena"], "--memory-arena", None)
    if "device" in per:
        per["device"] = parse_device(per["device"], "--device", None)
    exps = [replace(e, **per) for e in cfg.experiments]
    top = {k: v for k, v in given.items() if k not in exp_keys and v is not None}
    return replace(cfg, experiments=exps, **top)


def parse_size(text) -> int:
    """``--debug-buffer 4MB``: bytes, with an optional KB/MB/GB suffix (powers of 1024)."""
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]i?B?|B)?\s*", str(text), re.IGNORECASE)
    if not m:
        raise UsageError(f"--debug-buffer: a size in bytes such as 4MB or 524288, got {_given(text)}")
    unit = (m.group(2) or "B").upper()[0]
    n = int(m.group(1)) * {"B": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[unit]
    if not 1 <= n <= 4 * 1024**3:
        raise UsageError(f"--debug-buffer: from 1 byte to 4 GB, got {_given(text)}")
    return n


def parse_threads(text: str) -> tuple[int, ...]:
    """``--threads 1,2,4``."""
    try:
        vals = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise UsageError(f"--threads: a comma-separated list of whole numbers, got {_given(text)}") from None
    if not vals or any(not 1 <= v <= 1024 for v in vals) or len(set(vals)) != len(vals):
        raise UsageError(f"--threads: distinct thread counts from 1 to 1024, got {_given(text)}")
    return vals
