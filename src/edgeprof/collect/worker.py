"""One launch in the ExecuTorch Python runtime: ``python -m edgeprof.collect.worker --model M.pte …``.

Runs in a process of its own (the only edgeprof module that imports torch or executorch): sets the runtime's threadpool to
``--threads``, loads the program with ETDump enabled, runs ``--warmup`` executions and
discards what they recorded, then times ``--runs`` executions (``time.perf_counter`` around each call) and
writes their ETDump. What it did — wall time per run, load time, threads in effect, versions, the inputs'
source and hash — goes to ``--result`` as JSON.

Every path it is given lies in a folder the parent made for it (:mod:`edgeprof.collect.staging`): the launch's
staging folder, where it also works, and the collection's private inputs folder. It writes nothing else and
removes nothing (the runtime's scratch files stay where they were written; the parent removes the folder whole).

Inputs: ``--inputs`` (``.npy`` for one input, ``.npz`` with one array per input in order, or ``.pt``
holding a tensor or a list/tuple of tensors), else generated from the method's input metadata with
``--seed``: floats standard normal, integers in [0, 8), booleans fair. Generated inputs are cached in
``--inputs-dir`` (the collection's private folder, which only its workers write) under a name derived from the
signature, so every configuration of a collection with the same signature runs on the same values.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import stat
import sys
import time

# ExecuTorch ScalarType codes → numpy dtype names (scalar_type.fbs)
DTYPES = {0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32", 7: "float64",
          11: "bool", 15: "bfloat16"}


def _runtime():
    """The ExecuTorch pybinding module: its C extension directly (importing ``executorch.runtime`` loads all
    of ``executorch.exir``, ~10 s), else the public module."""
    import torch  # noqa: F401 - loads libtorch, which the extension links against

    try:
        from executorch.extension.pybindings import _C as rt
        return rt
    except ImportError:  # pragma: no cover - other ExecuTorch layouts
        from executorch.extension.pybindings import portable_lib as rt
        return rt


def _signature(meta) -> list[tuple[str, tuple[int, ...]]]:
    out = []
    for i in range(meta.num_inputs()):
        t = meta.input_tensor_meta(i)
        out.append((DTYPES.get(int(t.dtype()), f"scalar{int(t.dtype())}"), tuple(int(s) for s in t.sizes())))
    return out


def _generate(sig, seed: int):
    import numpy as np

    rng = np.random.default_rng(seed)
    arrays = []
    for dtype, shape in sig:
        if dtype.startswith("float") or dtype == "bfloat16":
            a = rng.standard_normal(shape).astype("float32")
        elif dtype == "bool":
            a = rng.random(shape) < 0.5
        else:
            a = rng.integers(0, 8, size=shape).astype(dtype)
        arrays.append(a)
    return arrays


def _load_inputs(path: str):
    import numpy as np

    if path.endswith(".pt"):
        import torch

        obj = torch.load(path, weights_only=True)
        tensors = list(obj) if isinstance(obj, (list, tuple)) else [obj]
        return [t.numpy() for t in tensors]
    data = np.load(path, allow_pickle=False)
    if isinstance(data, np.ndarray):
        return [data]
    return [data[k] for k in data.files]


def _to_torch(arrays, sig):
    import torch

    out = []
    for a, (dtype, _) in zip(arrays, sig):
        t = torch.from_numpy(a.copy())
        out.append(t.to(torch.bfloat16) if dtype == "bfloat16" else t.to(getattr(torch, dtype)) if dtype.startswith(
            "float") else t)
    return out


def digest(arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(str(a.dtype).encode() + str(a.shape).encode() + a.tobytes())
    return h.hexdigest()[:16]


def inputs_for(a, sig):
    """(arrays, source) for a method of signature ``sig`` ([(dtype, shape)]): ``--inputs`` when given (None, said on
    stderr, when it holds another number of inputs), else generated with ``--seed`` and cached in ``--inputs-dir``
    under the signature's name, so every configuration with that signature runs on the same values."""
    import numpy as np

    if a.inputs:
        arrays = _load_inputs(a.inputs)
        if len(arrays) != len(sig):
            print(f"edgeprof worker: {a.inputs} holds {len(arrays)} input(s), the model takes {len(sig)}",
                  file=sys.stderr)
            return None
        return arrays, a.inputs
    key = hashlib.sha256(json.dumps([a.seed, sig]).encode()).hexdigest()[:16]
    cache = os.path.join(a.inputs_dir, f"inputs_{key}.npz") if a.inputs_dir else None
    if cache and os.path.lexists(cache):  # written by an earlier launch of this collection: a regular file
        with os.fdopen(os.open(cache, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK), "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise OSError(f"{cache}: not a regular file")
            data = np.load(f, allow_pickle=False)
            arrays = [data[k] for k in data.files]
    else:
        arrays = _generate(sig, a.seed)
        if cache:
            os.makedirs(a.inputs_dir, exist_ok=True)
            tmp = cache + f".{os.getpid()}.tmp.npz"
            np.savez(tmp, *arrays)
            os.replace(tmp, cache)
    return arrays, f"generated (seed {a.seed})"


def arguments(prog: str, argv=None):
    """The command line every worker takes."""
    ap = argparse.ArgumentParser(prog=prog)
    ap.add_argument("--model", required=True)
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--warmup", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--etdump")
    ap.add_argument("--no-etdump", action="store_true")
    ap.add_argument("--inputs")
    ap.add_argument("--inputs-dir")
    ap.add_argument("--result", required=True)
    ap.add_argument("--method", default="forward")
    ap.add_argument("--providers", default="")  # ONNX Runtime
    ap.add_argument("--delegate", default="xnnpack")  # LiteRT
    ap.add_argument("--graph-optimization", default=None)  # ONNX Runtime: disable, basic, extended or all
    ap.add_argument("--memory-arena", default=None)  # ONNX Runtime: on (its default) or off
    ap.add_argument("--debug-buffer-size", type=int, default=0)  # ExecuTorch: record intermediate tensors
    return ap.parse_args(argv)


def import_runtime(module: str, what: str, extra: str):
    """(the runtime's module, seconds its import took), or None — said on stderr — when it is not installed."""
    import importlib

    t0 = time.perf_counter()
    try:
        mod = importlib.import_module(module)
    except ImportError:
        print(f"edgeprof worker: {what} models need {module.split('.')[0]}: pip install 'edgeprof[{extra}]'",
              file=sys.stderr)
        return None
    return mod, time.perf_counter() - t0


def versions_of(*dists: str) -> dict:
    from importlib.metadata import version

    out: dict[str, str | None] = {}
    for dist in dists:
        try:
            out[dist] = version(dist)
        except Exception:  # a version we cannot read is not a failure
            out[dist] = None
    return out


def write_result(path: str, report: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(report, f)
    os.replace(tmp, path)


def _debug_buffer_path(etdump: str) -> str:
    """``…_l1.etdump`` → ``…_l1.bin``: the name ``edgeprof numerics`` looks for beside the ETDump (the whole buffer
    the runtime wrote; ``edgeprof run`` trims it to what the recording used)."""
    return os.path.splitext(etdump)[0] + ".bin"


def main(argv=None) -> int:
    from .procmem import Phases

    a = arguments("python -m edgeprof.collect.worker", argv)
    mem = Phases()  # the process's memory per phase, read between phases (never inside the timed runs)
    t_import = time.perf_counter()
    rt = _runtime()
    import_s = time.perf_counter() - t_import
    mem.end()
    etdump = a.etdump if not a.no_etdump else None
    # the threadpool is set before the program loads: resetting it under a loaded XNNPACK delegate corrupts
    # the heap once the ETDump is written (executorch 1.5.1)
    rt._unsafe_reset_threadpool(a.threads)
    threads = int(rt._threadpool_get_thread_count())
    debug = a.debug_buffer_size if etdump is not None else 0
    mem.begin("load")
    t0 = time.perf_counter()
    program = rt._load_program(a.model, enable_etdump=etdump is not None, debug_buffer_size=debug)
    t_loaded = time.perf_counter()
    mem.end()
    mem.begin("init")
    t_init = time.perf_counter()
    method = program.load_method(a.method)
    load_ms = (t_loaded - t0 + time.perf_counter() - t_init) * 1e3
    mem.end()
    sig = _signature(program.method_meta(a.method))
    mem.begin("inputs")  # the harness's own copies of the inputs: not the model's
    got = inputs_for(a, sig)
    if got is None:
        return 2
    arrays, source = got
    inputs = _to_torch(arrays, sig)
    mem.end()
    mem.begin("warmup")
    if debug and a.warmup:  # the debug buffer is not cleared by writing: warm up in a program that records nothing
        scratch_method = rt._load_program(a.model, enable_etdump=False, debug_buffer_size=0).load_method(a.method)
        for _ in range(a.warmup):
            scratch_method.call(inputs)
        del scratch_method
    for _ in range(a.warmup if not debug else 0):
        method.call(inputs)
    if etdump is not None and a.warmup and not debug:  # writing clears the buffer: the ETDump holds the timed runs only
        scratch = etdump + ".warmup.tmp"  # in the staging folder, left there (the parent removes the folder)
        program.write_etdump_result_to_file(scratch, scratch + ".bin")
    mem.end()
    mem.begin("runs")
    wall = []
    for _ in range(a.runs):
        s = time.perf_counter()
        method.call(inputs)
        wall.append((time.perf_counter() - s) * 1e3)
    mem.end()
    if etdump is not None:
        tmp = etdump + ".tmp"
        program.write_etdump_result_to_file(tmp, tmp + ".bin")
        if debug and os.path.exists(tmp + ".bin"):
            os.replace(tmp + ".bin", _debug_buffer_path(etdump))
        os.replace(tmp, etdump)  # never a half-written ETDump under the final name
    versions = versions_of("executorch", "torch")
    report = {"wall_ms": wall, "load_ms": load_ms, "import_s": import_s, "threads": threads,
              "threads_requested": a.threads, "warmup": a.warmup, "runs": a.runs, "etdump": etdump,
              "debug_buffer": _debug_buffer_path(etdump) if debug and etdump else None,
              "inputs": {"source": source, "sha256": digest(arrays),
                         "signature": [f"{d}[{'x'.join(map(str, s))}]" for d, s in sig]},
              "versions": versions, "pid": os.getpid(),
              "memory": mem.report({"etdump": etdump is not None, "debug_buffer_bytes": debug})}
    write_result(a.result, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
