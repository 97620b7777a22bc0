"""The runtimes edgeprof reads and drives, one record each: what a runtime calls things (its run event, its own
CPU kernels, its accelerated parts, its profile, its profiler's overhead), which model files it runs, the worker
that collects with it and the extra that installs it, and the packages whose versions say which build ran.

The normalized profile (:class:`edgeprof.model.Profile`) keeps one structure for every runtime — a run's
end-to-end span, the kernels the runtime ran itself, the calls into an accelerated part — under internal names
(``Method::execute``, backend ``portable``); what a person or a document reads is said in the runtime's own words
through :func:`vocabulary`. A new runtime is one record here (and its input formats in
:mod:`edgeprof.io.formats`, its worker in :mod:`edgeprof.collect`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .conventions import LITERT_LAUNCH_TAIL

HOST_BACKEND = "portable"  # the normalized model's name of the kernels a runtime runs itself (its CPU kernels)


@dataclass(frozen=True)
class Runtime:
    name: str                     # the key: manifests, documents, --json
    title: str                    # its name in a sentence
    run_event: str                # the event that spans one run (inference) in its profile
    host_backend: str             # its own name for the kernels it runs itself
    accelerated: str              # what a part handed to an accelerator is called
    profile_noun: str             # what its profile is called
    node: str                     # what one step of its graph is called
    overhead: str                 # what the profiler's own cost is called
    model_suffixes: tuple[str, ...] = ()  # the model files `edgeprof run` runs with it
    worker: str | None = None     # the module of its collection worker (edgeprof.collect.<worker>)
    extra: tuple[str, str] | None = None  # (the module it needs, the edgeprof extra that installs it)
    profile_tail: str | None = None  # what a launch of it records, besides the ETDump name scheme
    packages: tuple[str, ...] = ()   # distributions whose versions identify the build that ran (manifest)
    event_names: tuple[tuple[str, str], ...] = ()  # (the normalized model's event name, its own) where they differ
    worker_title: str | None = None   # what its worker runs, in the manifest's runner_path (default: its title)
    options: tuple[str, ...] = ()     # the experiment options only it takes (edgeprof run)
    host_title: str = "Portable"      # a heading's name of its own kernels
    accelerated_title: str = "delegated"  # a heading's name of what it hands to accelerators
    fallback: str | None = None       # what a fallback is in its words (default: said from the words above)

    @property
    def fallback_means(self) -> str:
        """What a *fallback* is for this runtime: an operator that leaves an accelerator placement between two
        builds (``edgeprof placement --diff``)."""
        return self.fallback or (f"a {self.node} that ran in a {self.accelerated} in the baseline and runs on "
                                 f"{self.host_backend} — or in another {self.accelerated} — in the candidate")

    def versions(self, recorded: dict) -> str | None:
        """``name version`` of each of its packages a manifest recorded, or None."""
        got = [f"{k} {recorded[k]}" for k in self.packages if isinstance(recorded.get(k), str) and recorded[k]]
        return ", ".join(got) or None


EXECUTORCH = Runtime(
    name="executorch", title="ExecuTorch", run_event="Method::execute", host_backend="portable",
    accelerated="delegate", profile_noun="ETDump", node="instruction", overhead="ETDump tracing overhead",
    model_suffixes=(".pte",), worker="worker", extra=("executorch", "run"), packages=("executorch", "torch"),
    worker_title="ExecuTorch Python runtime", options=("debug_buffer",),
    fallback="an operator that ran inside a delegate (XNNPACK, Core ML, …) in the baseline and runs as an ExecuTorch "
             "portable (CPU) kernel — or in another delegate — in the candidate")
ONNXRUNTIME = Runtime(
    name="onnxruntime", title="ONNX Runtime", run_event="model_run", host_backend="CPUExecutionProvider",
    accelerated="execution provider", profile_noun="ONNX Runtime profile", node="node",
    overhead="profiler overhead (SessionOptions.enable_profiling)", model_suffixes=(".onnx",), worker="worker_ort",
    extra=("onnxruntime", "ort"), profile_tail=".ort.json", packages=("onnxruntime", "onnxruntime-openvino"),
    host_title="CPUExecutionProvider", accelerated_title="other execution providers",
    options=("providers", "graph_optimization", "memory_arena"),
    fallback="a node that ran on an execution provider other than CPUExecutionProvider in the baseline and runs on "
             "CPUExecutionProvider — or another provider — in the candidate",
    event_names=(("Method::execute", "model_run"), ("Method::init", "session_initialization"),
                 ("Program::load_method", "model_loading"), ("OPERATOR_CALL", "kernel_time"),
                 ("DELEGATE_CALL", "kernel_time")))
LITERT = Runtime(
    name="litert", title="LiteRT", run_event="Invoke", host_backend="builtin CPU kernels", accelerated="delegate",
    profile_noun="LiteRT op profile", node="op", overhead="op-profiling overhead", model_suffixes=(".tflite",),
    worker="worker_litert", extra=("ai_edge_litert", "litert"), profile_tail=LITERT_LAUNCH_TAIL,
    packages=("ai-edge-litert", "ai_edge_litert"), host_title="Builtin CPU kernels", options=("delegate",),
    fallback="an op that ran inside a delegate (XNNPACK, GPU, NNAPI, …) in the baseline and runs as a builtin CPU "
             "kernel — or in another delegate — in the candidate",
    event_names=(("Method::execute", "Invoke"), ("OPERATOR_CALL", "op"), ("DELEGATE_CALL", "delegate")))
COREML = Runtime(
    name="coreml", title="Core ML", run_event="prediction", host_backend="CPU", accelerated="compute unit",
    profile_noun="anemll-profile report", node="MIL op", overhead="profiling overhead",
    model_suffixes=(".mlpackage", ".mlmodelc", ".mlmodel"), packages=("coremltools",),
    fallback="a MIL op the compute plan placed on the Neural Engine (or the GPU) in the baseline and places on "
             "another compute unit in the candidate")

RUNTIMES: dict[str, Runtime] = {r.name: r for r in (EXECUTORCH, ONNXRUNTIME, LITERT, COREML)}


def runtime(name: str | None) -> Runtime:
    """The record of ``name`` (ExecuTorch when None: the runtime of ETDumps and timeline CSVs)."""
    return RUNTIMES.get(name or EXECUTORCH.name, EXECUTORCH)


def for_model(path) -> Runtime:
    """The runtime that runs a model file, by its suffix (ExecuTorch's ``.pte`` otherwise)."""
    from pathlib import Path

    suffix = Path(path).suffix.lower()
    return next((r for r in RUNTIMES.values() if suffix in r.model_suffixes and r.worker), EXECUTORCH)


def python_runner(name: str) -> str:
    """The manifest's ``runner_path`` of a launch in this runtime's Python worker."""
    r = runtime(name)
    return f"python -m edgeprof.collect.{r.worker} ({r.worker_title or r.title})"


def vocabulary(name: str | None) -> dict[str, str]:
    """The words a renderer uses for a profile of runtime ``name``: ``run_event``, ``host`` (its own kernels),
    ``accelerated``, ``profile``, ``node``, ``overhead``, ``title``."""
    r = runtime(name)
    return {"title": r.title, "run_event": r.run_event, "host": r.host_backend, "accelerated": r.accelerated,
            "profile": r.profile_noun, "node": r.node, "overhead": r.overhead, "host_title": r.host_title,
            "accelerated_title": r.accelerated_title}


def event_name(name: str, runtime_name: str | None) -> str:
    """An event of the normalized model as its runtime names it (ORT's ``model_run`` for ``Method::execute``)."""
    return dict(runtime(runtime_name).event_names).get(name, name)


def host_name(backend: str, runtime_name: str | None) -> str:
    """A backend as its runtime names it: the normalized ``portable`` is the runtime's own kernels."""
    return runtime(runtime_name).host_backend if backend == HOST_BACKEND else backend


def register(r: Runtime) -> Runtime:
    """Add a runtime (replacing one of the same name)."""
    RUNTIMES[r.name] = r
    return r


def unregister(name: str) -> None:
    RUNTIMES.pop(name, None)
