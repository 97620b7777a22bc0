"""Build the activation-memory fixture programs in this directory.  NOT run by the tests.

What is here
------------
One model, ``ActNet``, built three times with the *same* weights (``torch.manual_seed(0)``) and three
input resolutions, so the builds differ only in activation memory:

    x[1,8,H,W] -> conv2d(8->16, 3x3, pad 1) -> relu -> conv2d(16->16, 3x3, pad 1) -> relu
              -> mean over (H, W) (keepdim) -> flatten -> linear(16->4) -> y[1,4]

    act_small*: H = W = 256    act_mid*: H = 512, W = 1024    act_large*: H = W = 1024

act_large plans exactly twice act_mid's activations (the planted 2x of the memory gate's tests).

Files (all written by this script):

* ``act_{small,mid,large}.pte``           torch.export -> ``to_edge_transform_and_lower(...,
  partitioner=[XnnpackPartitioner()])`` -> ``.to_executorch()``.
* ``act_{small,mid,large}_portable.pte``  the same without a partitioner (portable kernels); its
  ExecuTorch memory plan holds every activation in the planned arena.
* ``act_{small,mid,large}.onnx``          legacy (TorchScript) ``torch.onnx.export``, opset 17, static
  shapes (``dynamo=False``: the dynamo exporter needs onnxscript, which is not installed).
* ``programs.json``                   per file: input shape, weight bytes, activation bytes counted
  by hand from the tensor shapes (independently of ExecuTorch), and for the .pte files the memory
  plan as ExecuTorch's emitter reports it (``execution_plan[0].non_const_buffer_sizes``).

Made with: torch 2.13.0+cpu, executorch 1.5.1, onnx 1.23.2, onnxruntime 1.32.0, Python 3.11,
x86_64 Linux, from the repo root:

    . .venv/bin/activate
    python tests/data/memory/programs/make_programs.py            # build files + programs.json
    python tests/data/memory/programs/make_programs.py --measure  # optional: print peak RSS once

``--measure`` only prints (one fresh subprocess per file/config); its numbers are observations on
one machine, not stored as truth.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
F32 = 4
SIZES = {"act_small": (256, 256), "act_mid": (512, 1024), "act_large": (1024, 1024)}  # (H, W)
C_IN, C_MID, N_OUT = 8, 16, 4


PTE_NOTE = {
    "portable": ("Every activation is planned by ExecuTorch in mem_id 1; lifetime reuse puts the plan at "
                 "two live [1,16,H,W] tensors (= hand_count.peak_two_live_bytes). The input shares offset 0 "
                 "with later tensors; flatten is aliased onto mean's buffer (no copy); a [16,4] "
                 "permute_copy of fc.weight (256 B, not in hand_count) is planned too."),
    "xnnpack": ("The whole graph is one XnnpackBackend delegate: the ExecuTorch plan holds only the graph "
                "input [1,8,H,W] and output [1,4] (+ alignment); conv/relu/mean intermediates live in "
                "XNNPACK's own allocations at run time and are NOT in non_const_buffer_sizes."),
}


def make_model():
    import torch

    class ActNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(C_IN, C_MID, 3, padding=1)
            self.conv2 = torch.nn.Conv2d(C_MID, C_MID, 3, padding=1)
            self.fc = torch.nn.Linear(C_MID, N_OUT)

        def forward(self, x):
            x = torch.relu(self.conv1(x))
            x = torch.relu(self.conv2(x))
            x = x.mean(dim=(2, 3), keepdim=True).flatten(1)
            return self.fc(x)

    torch.manual_seed(0)
    return ActNet().eval()


def hand_count(hw: tuple[int, int]) -> dict:
    """Activation bytes from the tensor shapes alone (float32), no ExecuTorch/ORT involved."""
    plane = hw[0] * hw[1]
    t = {  # name -> bytes, in execution order
        "input x [1,8,H,W]": C_IN * plane * F32,
        "conv1 out [1,16,H,W]": C_MID * plane * F32,
        "relu1 out [1,16,H,W]": C_MID * plane * F32,
        "conv2 out [1,16,H,W]": C_MID * plane * F32,
        "relu2 out [1,16,H,W]": C_MID * plane * F32,
        "mean out [1,16,1,1]": C_MID * F32,
        "flatten out [1,16]": C_MID * F32,
        "linear out [1,4]": N_OUT * F32,
    }
    names = list(t)
    vals = list(t.values())
    # chain graph: op k reads tensor k and writes tensor k+1; with no in-place ops the live set
    # while op k runs is {its input, its output}.
    pairs = [vals[k] + vals[k + 1] for k in range(len(vals) - 1)]
    k = max(range(len(pairs)), key=pairs.__getitem__)
    return {
        "tensors_bytes": t,
        "input_bytes": vals[0],
        "intermediate_sum_bytes": sum(vals[1:]),  # every non-input activation incl. the output
        "all_activations_sum_bytes": sum(vals),
        "peak_two_live_bytes": pairs[k],
        "peak_two_live_at": f"{names[k]} -> {names[k + 1]}",
        "note": "peak_two_live = max over ops of (input + output) of that op; a planner that reuses "
                "buffers by lifetime needs at least this. The flatten may be a view (no bytes) in a "
                "given runtime.",
    }


def weight_bytes(model) -> dict:
    per = {n: p.numel() * p.element_size() for n, p in model.state_dict().items()}
    return {"total": sum(per.values()), "per_tensor": per}


def plan_of(et_prog) -> dict:
    """The memory plan as ExecuTorch's emitted program reports it, plus per-tensor offsets."""
    prog = et_prog.executorch_program
    out = {}
    for ep in prog.execution_plan:
        sizes = list(ep.non_const_buffer_sizes)
        tensors = []
        for i, v in enumerate(ep.values):
            val = v.val
            ai = getattr(val, "allocation_info", None)
            if ai is None or not hasattr(val, "sizes"):
                continue
            off = (ai.memory_offset_high << 32) | ai.memory_offset_low
            n = 1
            for s in val.sizes:
                n *= s
            tensors.append({"value": i, "sizes": list(val.sizes), "scalar_type": int(val.scalar_type),
                            "mem_id": ai.memory_id, "offset": off, "numel": n})
        delegates = [d.id for d in ep.delegates]
        out[ep.name] = {
            "non_const_buffer_sizes": sizes,
            "non_const_buffer_sum_bytes": sum(sizes),
            "planned_tensors": tensors,
            "delegates": delegates,
            "operators": sorted({o.name + ("." + o.overload if o.overload else "") for o in ep.operators}),
        }
    consts = prog.constant_buffer
    seg = getattr(prog, "constant_segment", None)
    out["_constant_note"] = (f"{len(consts)} inline constant_buffer entries; constant_segment offsets "
                             f"{len(seg.offsets) if seg is not None else 'n/a'}")
    return out


def build():
    import torch
    from executorch.exir import to_edge_transform_and_lower
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    import executorch
    import onnx

    model = make_model()
    wb = weight_bytes(model)
    versions = {"python": sys.version.split()[0], "torch": torch.__version__,
                "executorch": getattr(executorch, "__version__", "1.5.1"), "onnx": onnx.__version__}
    try:
        import onnxruntime
        versions["onnxruntime"] = onnxruntime.__version__
    except ImportError:
        pass
    doc = {"_about": ("Activation-memory fixtures: one model (same torch.manual_seed(0) weights) at three "
                      "input sizes (act_large plans twice act_mid's activations). Made by make_programs.py (not run by the "
                      "tests). hand_count is "
                      "computed from tensor shapes only; executorch_plan is what executorch's emitter "
                      "reports (execution_plan[0].non_const_buffer_sizes; buffer 0 is reserved)."),
           "versions": versions,
           "model": "conv2d(8->16,3x3,p1)->relu->conv2d(16->16,3x3,p1)->relu->mean(H,W,keepdim)->flatten->linear(16->4)",
           "weight_bytes": wb,
           "files": {}}
    for stem, hw in SIZES.items():
        x = torch.randn(1, C_IN, *hw)
        hc = hand_count(hw)
        ep = torch.export.export(model, (x,))
        for suffix, parts in (("", [XnnpackPartitioner()]), ("_portable", None)):
            kw = {"partitioner": parts} if parts else {}
            et = to_edge_transform_and_lower(ep, **kw).to_executorch()
            name = f"{stem}{suffix}.pte"
            (HERE / name).write_bytes(et.buffer)
            plan = plan_of(et)
            doc["files"][name] = {
                "format": "pte", "backend": "xnnpack" if parts else "portable",
                "input_shape": list(x.shape), "input_dtype": "float32",
                "file_bytes": (HERE / name).stat().st_size,
                "weight_bytes": wb["total"],
                "hand_count": hc,
                "executorch_plan": plan,
                "executorch_planned_bytes": plan["forward"]["non_const_buffer_sum_bytes"],
                "note": PTE_NOTE["xnnpack" if parts else "portable"],
            }
            print(name, doc["files"][name]["file_bytes"], "B; ET planned",
                  plan["forward"]["non_const_buffer_sizes"], flush=True)
        name = f"{stem}.onnx"
        torch.onnx.export(model, (x,), str(HERE / name), dynamo=False, opset_version=17,
                          input_names=["x"], output_names=["y"], do_constant_folding=True)
        m = onnx.load(str(HERE / name))
        onnx.checker.check_model(m)
        doc["files"][name] = {
            "format": "onnx", "opset": 17, "input_shape": list(x.shape), "input_dtype": "float32",
            "file_bytes": (HERE / name).stat().st_size,
            "weight_bytes": wb["total"],
            "onnx_initializer_bytes": sum(len(i.raw_data) or 0 for i in m.graph.initializer),
            "onnx_nodes": [n.op_type for n in m.graph.node],
            "hand_count": hc,
        }
        print(name, doc["files"][name]["file_bytes"], "B", flush=True)
    s, lg = doc["files"]["act_small_portable.pte"], doc["files"]["act_large_portable.pte"]
    doc["planned_difference_bytes"] = {
        "executorch_portable": lg["executorch_planned_bytes"] - s["executorch_planned_bytes"],
        "executorch_xnnpack": (doc["files"]["act_large.pte"]["executorch_planned_bytes"]
                               - doc["files"]["act_small.pte"]["executorch_planned_bytes"]),
        "hand_peak_two_live": lg["hand_count"]["peak_two_live_bytes"] - s["hand_count"]["peak_two_live_bytes"],
        "hand_intermediate_sum": lg["hand_count"]["intermediate_sum_bytes"] - s["hand_count"]["intermediate_sum_bytes"],
        "hand_all_activations_sum": (lg["hand_count"]["all_activations_sum_bytes"]
                                     - s["hand_count"]["all_activations_sum_bytes"]),
    }
    (HERE / "programs.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps(doc["planned_difference_bytes"], indent=1))


# --------------------------------------------------------------------------- measurement (info only)
CHILD = r"""
import json, sys, gc
def st():
    d = {}
    for l in open('/proc/self/status'):
        if l.startswith(('VmHWM:', 'VmRSS:')):
            k, v = l.split(':'); d[k] = int(v.split()[0]) * 1024
    return d
def reset():
    with open('/proc/self/clear_refs', 'w') as f: f.write('5')
kind, path, h, w, arena = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == '1'
rows = []
def phase(name, fn):
    reset(); b = st()['VmRSS']; r = fn(); a = st()
    rows.append({'phase': name, 'rss_before': b, 'peak': a['VmHWM'], 'rss_after': a['VmRSS'],
                 'peak_minus_before': a['VmHWM'] - b, 'rss_delta': a['VmRSS'] - b}); return r
if kind == 'pte':
    import torch
    from executorch.extension.pybindings import _C
    x = torch.randn(1, 8, h, w)
    gc.collect()
    prog = phase('load_program', lambda: _C._load_program(path, enable_etdump=False, debug_buffer_size=0))
    meth = phase('load_method', lambda: prog.load_method('forward'))
    out = phase('call1', lambda: meth.call([x]))
    out = phase('call2', lambda: meth.call([x]))
    out = phase('call3', lambda: meth.call([x]))
else:
    import numpy as np, onnxruntime as ort
    x = np.random.default_rng(0).standard_normal((1, 8, h, w)).astype(np.float32)
    so = ort.SessionOptions()
    if not arena:
        so.enable_cpu_mem_arena = False; so.enable_mem_pattern = False
    sess = phase('session', lambda: ort.InferenceSession(path, so, providers=['CPUExecutionProvider']))
    out = phase('run1', lambda: sess.run(None, {sess.get_inputs()[0].name: x}))
    out = phase('run2', lambda: sess.run(None, {sess.get_inputs()[0].name: x}))
    out = phase('run3', lambda: sess.run(None, {sess.get_inputs()[0].name: x}))
print('RESULT ' + json.dumps(rows))
"""


def measure():
    jobs = []
    for stem, hw in SIZES.items():
        jobs += [("pte", f"{stem}.pte", hw, "1"), ("pte", f"{stem}_portable.pte", hw, "1"),
                 ("onnx", f"{stem}.onnx", hw, "1"), ("onnx", f"{stem}.onnx", hw, "0")]
    MiB = 1 << 20
    for kind, name, hw, arena in jobs:
        r = subprocess.run([sys.executable, "-c", CHILD, kind, str(HERE / name), str(hw[0]), str(hw[1]), arena],
                           capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
        if not line:
            print(name, "FAILED", r.stderr[-2000:])
            continue
        rows = json.loads(line[0][7:])
        tag = name + ("" if kind == "pte" else (" [arena+pattern]" if arena == "1" else " [no arena, no pattern]"))
        print(tag)
        for row in rows:
            print(f"   {row['phase']:<13} rss_before {row['rss_before'] / MiB:8.1f}  peak {row['peak'] / MiB:8.1f}"
                  f"  peak-before {row['peak_minus_before'] / MiB:8.1f}  rss_delta {row['rss_delta'] / MiB:8.1f} MiB",
                  flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--measure", action="store_true", help="print peak RSS per phase (info only)")
    a = ap.parse_args()
    measure() if a.measure else build()
