"""Make the operator-placement fixtures in this folder (XNNPACK delegate vs portable CPU kernels). Not run by the tests.

Made once with torch 2.13.0+cpu and executorch 1.5.1 (Python 3.11, x86-64 Linux, the project venv)::

    . .venv/bin/activate && python tests/data/placement/make_placement.py

Model ``gate`` (``torch.manual_seed(0)`` random weights, eval mode, input float32[1x3x32x32]): conv2d(3→16, 3x3,
pad 1) → relu → conv2d(16→16, 3x3, pad 1) → x * torch.sigmoid(x) → mean over H,W (keepdim) → flatten →
linear(16→10). Exported with ``torch.export`` and lowered with ``executorch.exir.to_edge_transform_and_lower`` three
ways:

* ``gate_xnn``       — ``XnnpackPartitioner()`` (all partitioner configs);
* ``gate_nosigmoid`` — ``XnnpackPartitioner(configs=ALL_PARTITIONER_CONFIGS without SigmoidConfig)``;
* ``gate_norelu``    — ``XnnpackPartitioner(configs=ALL_PARTITIONER_CONFIGS without ReLUConfig)``.

For each build ``<name>``:

* ``<name>.pte`` — ``.to_executorch()`` of the lowered program;
* ``<name>.etrecord`` — ``to_edge_transform_and_lower(..., generate_etrecord=True)``, then ``to_executorch()``
  and ``get_etrecord().save(...)`` (the ETRecord holds the exported, edge and executorch programs);
* ``<name>.N10.etdp.gz`` — ETDump of 10 executions of the ``.pte`` in the ExecuTorch Python runtime (the pybinding
  ``_C``, as ``edgeprof.collect.worker`` uses it): threadpool reset to 1 thread before loading, program loaded with
  ``enable_etdump=True, debug_buffer_size=0``, one warm-up execution whose events are discarded by writing a
  scratch ETDump (as the worker does with ``--warmup``), then 10 executions on one fixed input
  (``torch.randn(1, 3, 32, 32)`` from a generator seeded 1) and ``write_etdump_result_to_file``; gzipped with
  mtime 0 and no file name in the header;
* ``<name>.oracle.json`` — the placement computed from executorch's Python objects, not from the ``.pte``: the
  ``call_function`` nodes, in graph order, of the lowered edge program's graph module other than
  ``executorch_call_delegate`` and ``getitem`` (the ops left to portable kernels), the number of delegate calls,
  and per lowered module (in the order the graph calls them) its backend and the ``call_function`` targets of its
  ``original_module`` graph in order. Also the wall time (ms, ``time.perf_counter``) of each of the 10 runs.
"""

from __future__ import annotations

import gzip
import json
import operator
import os
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).resolve().parent
RUNS = 10
WARMUP = 1


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = self.conv2(x)
        x = x * torch.sigmoid(x)
        x = x.mean(dim=(-2, -1), keepdim=True)
        return self.fc(torch.flatten(x, 1))


def _name(target) -> str:
    """``aten.sigmoid.default`` for an edge/aten op overload, else the callable's name."""
    op = getattr(target, "_op", target)  # EdgeOpOverload wraps the aten OpOverload
    if isinstance(op, torch._ops.OpOverload):
        return f"{op.namespace}.{op._schema.name.split('::')[-1]}.{op._overloadname}"
    return getattr(target, "__name__", str(target))


def oracle(edge_manager) -> dict:
    gm = edge_manager.exported_program().graph_module
    delegate = torch.ops.higher_order.executorch_call_delegate
    portable, lowered = [], []
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        if node.target is delegate:
            mod = getattr(gm, node.args[0].target)
            ops = [_name(n.target) for n in mod.original_module.graph_module.graph.nodes
                   if n.op == "call_function" and n.target is not operator.getitem]
            lowered.append({"name": node.args[0].target, "backend": mod.backend_id, "ops": ops})
        else:
            portable.append(_name(node.target))
    return {"non_delegated_ops": portable, "delegate_calls": len(lowered), "lowered_modules": lowered}


def build(model, example, name, partitioner, x) -> None:
    from executorch.exir import to_edge_transform_and_lower

    ep = torch.export.export(model, (example,), strict=False)
    edge = to_edge_transform_and_lower(ep, partitioner=[partitioner], generate_etrecord=True)
    info = oracle(edge)
    et = edge.to_executorch()
    with open(HERE / f"{name}.pte", "wb") as f:
        et.write_to_file(f)
    et.get_etrecord().save(str(HERE / f"{name}.etrecord"))
    info["wall_ms"] = record(str(HERE / f"{name}.pte"), HERE / f"{name}.N{RUNS}.etdp.gz", x)
    info["versions"] = {"torch": torch.__version__, "executorch": _version("executorch")}
    with open(HERE / f"{name}.oracle.json", "w") as f:
        json.dump(info, f, indent=1)
        f.write("\n")
    print(name, json.dumps({k: info[k] for k in ("non_delegated_ops", "delegate_calls")}))


def record(pte: str, out: Path, x) -> list[float]:
    from executorch.extension.pybindings import _C as rt

    program = rt._load_program(pte, enable_etdump=True, debug_buffer_size=0)
    method = program.load_method("forward")
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(WARMUP):
            method.call([x])
        scratch = os.path.join(tmp, "warmup.etdp")
        program.write_etdump_result_to_file(scratch, scratch + ".bin")  # clears the buffer
        wall = []
        for _ in range(RUNS):
            s = time.perf_counter()
            method.call([x])
            wall.append((time.perf_counter() - s) * 1e3)
        path = os.path.join(tmp, "timed.etdp")
        program.write_etdump_result_to_file(path, path + ".bin")
        data = Path(path).read_bytes()
    out.write_bytes(gzip.compress(data, mtime=0))
    return wall


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


def main() -> int:
    from executorch.backends.xnnpack.partition.config import ALL_PARTITIONER_CONFIGS
    from executorch.backends.xnnpack.partition.config.generic_node_configs import ReLUConfig, SigmoidConfig
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.extension.pybindings import _C as rt

    rt._unsafe_reset_threadpool(1)  # before any program loads (see edgeprof.collect.worker)
    torch.manual_seed(0)
    model = Gate().eval()
    example = torch.randn(1, 3, 32, 32)
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    builds = {
        "gate_xnn": XnnpackPartitioner(),
        "gate_nosigmoid": XnnpackPartitioner(configs=[c for c in ALL_PARTITIONER_CONFIGS if c is not SigmoidConfig]),
        "gate_norelu": XnnpackPartitioner(configs=[c for c in ALL_PARTITIONER_CONFIGS if c is not ReLUConfig]),
    }
    for name, part in builds.items():
        with torch.no_grad():
            build(model, example, name, part, x)
    return 0


if __name__ == "__main__":
    sys.exit(main())
