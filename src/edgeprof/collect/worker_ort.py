"""One launch in ONNX Runtime: ``python -m edgeprof.collect.worker_ort --model M.onnx …`` (the ``ort`` extra).

Runs in a process of its own: opens an ``InferenceSession`` with ``--providers`` (in priority order; the CPU
provider last), ``intra_op_num_threads = --threads`` and, unless ``--no-etdump``, ``enable_profiling``; runs
``--warmup`` then ``--runs`` runs of one input (``time.perf_counter`` around each timed run), and writes ONNX
Runtime's profile to ``--etdump`` (``<stem>.ort.json``). ONNX Runtime cannot clear a profile mid-session, so
the warm-up runs' events (their ``model_run`` and the nodes inside it) are left out of the file written; every
other event is the runtime's, as it wrote it. What the launch did — wall time per run, session time, the
providers in effect, versions, the inputs — goes to ``--result`` as JSON.

Inputs as the ExecuTorch worker's (:func:`edgeprof.collect.worker.inputs_for`), from the session's input
types (symbolic dimensions taken as 1).
"""

from __future__ import annotations

import json
import os
import sys
import time

from .worker import arguments, digest, import_runtime, inputs_for, versions_of, write_result

# ONNX tensor element types → numpy dtype names
DTYPES = {"tensor(float)": "float32", "tensor(float16)": "float16", "tensor(double)": "float64",
          "tensor(int64)": "int64", "tensor(int32)": "int32", "tensor(int16)": "int16", "tensor(int8)": "int8",
          "tensor(uint8)": "uint8", "tensor(bool)": "bool"}
RUN = "model_run"


def _signature(session) -> list[tuple[str, tuple[int, ...]]]:
    return [(DTYPES.get(i.type, "float32"), tuple(d if isinstance(d, int) and d > 0 else 1 for d in i.shape))
            for i in session.get_inputs()]


def timed_events(events: list, warmup: int) -> list:
    """The profile without its first ``warmup`` runs: their ``model_run`` and every event inside them (what
    came before the first run — loading and initialization — stays)."""
    runs = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                  if isinstance(e, dict) and e.get("cat") == "Session" and e.get("name") == RUN)
    if warmup <= 0 or not runs:
        return events
    cut = runs[min(warmup, len(runs)) - 1][1]  # the end of the last warm-up run
    first = runs[0][0]
    return [e for e in events if not isinstance(e, dict) or not isinstance(e.get("ts"), (int, float))
            or e["ts"] < first or e["ts"] > cut]


def main(argv=None) -> int:
    from .procmem import Phases

    a = arguments("python -m edgeprof.collect.worker_ort", argv)
    mem = Phases()  # the process's memory per phase, read between phases (never inside the timed runs)
    got = import_runtime("onnxruntime", "ONNX", "ort")
    if got is None:
        return 2
    ort, import_s = got
    mem.end()
    providers = [p for p in a.providers.split(",") if p] or ["CPUExecutionProvider"]
    missing = [p for p in providers if p not in ort.get_available_providers()]
    if missing:
        print(f"edgeprof worker: {', '.join(missing)} not in this onnxruntime build (it has "
              f"{', '.join(ort.get_available_providers())})", file=sys.stderr)
        return 2
    profile = a.etdump if not a.no_etdump else None
    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    if a.graph_optimization:  # an experiment variable: the level the session optimizes its graph at
        from .config import GRAPH_OPTIMIZATIONS

        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, GRAPH_OPTIMIZATIONS[a.graph_optimization])
    if a.memory_arena == "off":  # an experiment variable: no CPU arena, no memory pattern (allocations as they come)
        so.enable_cpu_mem_arena = False
        so.enable_mem_pattern = False
    if profile is not None:
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(os.path.dirname(os.path.abspath(profile)), f".ort_profile_{os.getpid()}")
    mem.begin("init")  # ONNX Runtime loads and initializes in one call: the session's creation
    t0 = time.perf_counter()
    session = ort.InferenceSession(a.model, so, providers=providers)
    load_ms = (time.perf_counter() - t0) * 1e3
    mem.end()
    sig = _signature(session)
    mem.begin("inputs")  # the harness's own copies of the inputs: not the model's
    got = inputs_for(a, sig)
    if got is None:
        return 2
    arrays, source = got
    feed = {i.name: x for i, x in zip(session.get_inputs(), arrays)}
    mem.end()
    mem.begin("warmup")
    for _ in range(a.warmup):
        session.run(None, feed)
    mem.end()
    mem.begin("runs")
    wall = []
    for _ in range(a.runs):
        s = time.perf_counter()
        session.run(None, feed)
        wall.append((time.perf_counter() - s) * 1e3)
    mem.end()
    if profile is not None:
        written = session.end_profiling()
        with open(written) as f:
            events = json.load(f)
        tmp = profile + ".tmp"
        with open(tmp, "w") as f:
            json.dump(timed_events(events, a.warmup), f)
        os.replace(tmp, profile)  # never a half-written profile under the final name (the runtime's own file stays
        # in the staging folder, which the parent removes)
    report = {"wall_ms": wall, "load_ms": load_ms, "import_s": import_s, "threads": a.threads,
              "threads_requested": a.threads, "warmup": a.warmup, "runs": a.runs, "etdump": profile,
              "providers_requested": providers, "providers": session.get_providers(),
              "graph_optimization": str(so.graph_optimization_level).rsplit(".", 1)[-1],
              "inputs": {"source": source, "sha256": digest(arrays),
                         "signature": [f"{d}[{'x'.join(map(str, s))}]" for d, s in sig]},
              "versions": versions_of("onnxruntime", "onnxruntime-openvino", "numpy"), "pid": os.getpid(),
              "memory": mem.report({"enable_cpu_mem_arena": bool(so.enable_cpu_mem_arena),
                                    "enable_mem_pattern": bool(so.enable_mem_pattern),
                                    "enable_mem_reuse": bool(so.enable_mem_reuse)})}
    write_result(a.result, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
