"""One launch in LiteRT: ``python -m edgeprof.collect.worker_litert --model M.tflite …`` (the ``litert`` extra).

Runs in a process of its own: an ``ai_edge_litert`` ``Interpreter`` with ``num_threads = --threads`` and, with
``--delegate none``, only LiteRT's builtin CPU kernels (``BUILTIN_WITHOUT_DEFAULT_DELEGATES``; the default applies
its XNNPACK delegate); ``--warmup`` then ``--runs`` calls of ``invoke()`` on one input, each timed with
``time.perf_counter``. LiteRT's Python package has no op profiler, so what a launch records is its runs' times:
``--etdump`` (``<stem>.litert.csv``) is a timeline CSV with one ``Method::execute`` row per run (``duration_ms``,
``run_index``, ``start_us`` from the first run), which every command reads as it reads the Arm kit's timelines;
per-operator times come from LiteRT's ``benchmark_model --enable_op_profiling`` (:mod:`edgeprof.io.litert_profile`).
What the launch did goes to ``--result`` as JSON.

Inputs as the ExecuTorch worker's (:func:`edgeprof.collect.worker.inputs_for`), from the interpreter's input details.
"""

from __future__ import annotations

import os
import sys
import time

from .worker import arguments, digest, import_runtime, inputs_for, versions_of, write_result


def main(argv=None) -> int:
    from .procmem import Phases

    a = arguments("python -m edgeprof.collect.worker_litert", argv)
    mem = Phases()  # the process's memory per phase, read between phases (never inside the timed runs)
    got = import_runtime("ai_edge_litert.interpreter", "LiteRT", "litert")
    if got is None:
        return 2
    lite, import_s = got
    mem.end()
    import numpy as np

    resolver = (lite.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES if a.delegate == "none"
                else lite.OpResolverType.AUTO)
    mem.begin("load")
    t0 = time.perf_counter()
    it = lite.Interpreter(model_path=a.model, num_threads=a.threads, experimental_op_resolver_type=resolver)
    t_loaded = time.perf_counter()
    mem.end()
    mem.begin("init")  # the tensor arena planned and allocated
    t_init = time.perf_counter()
    it.allocate_tensors()
    load_ms = (t_loaded - t0 + time.perf_counter() - t_init) * 1e3
    mem.end()
    details = it.get_input_details()
    sig = [(np.dtype(d["dtype"]).name, tuple(int(x) for x in d["shape"])) for d in details]
    mem.begin("inputs")  # the harness's own copies of the inputs: not the model's
    got = inputs_for(a, sig)
    if got is None:
        return 2
    arrays, source = got
    for d, x in zip(details, arrays):
        it.set_tensor(d["index"], x.astype(d["dtype"], copy=False))
    mem.end()
    mem.begin("warmup")
    for _ in range(a.warmup):
        it.invoke()
    mem.end()
    mem.begin("runs")
    starts, wall = [], []
    t_first = time.perf_counter()
    for _ in range(a.runs):
        s = time.perf_counter()
        it.invoke()
        wall.append((time.perf_counter() - s) * 1e3)
        starts.append((s - t_first) * 1e6)
    mem.end()
    if a.etdump and not a.no_etdump:
        tmp = a.etdump + ".tmp"
        with open(tmp, "w") as f:
            f.write("name,duration_ms,run_index,start_us,kind\n")
            for k, (ms_, st) in enumerate(zip(wall, starts)):
                f.write(f"Method::execute,{ms_!r},{k},{st!r},framework\n")
        os.replace(tmp, a.etdump)
    ops = sorted({o["op_name"] for o in it._get_ops_details()})
    report = {"wall_ms": wall, "load_ms": load_ms, "import_s": import_s, "threads": a.threads,
              "threads_requested": a.threads, "warmup": a.warmup, "runs": a.runs, "etdump": a.etdump,
              "delegate": a.delegate, "delegated": "DELEGATE" in ops, "op_types": ops,
              "inputs": {"source": source, "sha256": digest(arrays),
                         "signature": [f"{d}[{'x'.join(map(str, s))}]" for d, s in sig]},
              "versions": versions_of("ai-edge-litert", "numpy"), "pid": os.getpid(),
              "memory": mem.report({"delegate": a.delegate})}
    write_result(a.result, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
