"""`edgeprof run` against a bare loop over the same ExecuTorch runtime, and what ETDump costs, in one run.

    python bench/bench_run.py [--runs 300] [--launches 3]

For each bundled toy-CNN program (XNNPACK fp32, ~0.1 ms per run; portable, ~15 ms): a bare loop — a fresh
process that imports the runtime, loads the program without ETDump and times ``--runs`` calls with
``time.perf_counter`` — launched ``--launches`` times, then ``edgeprof run`` on the same program with the same
settings (``--overhead-check``: its launches with ETDump and without, interleaved). Printed side by side: the median per-run time
of each, and the ratios edgeprof-run / bare loop (what collecting through edgeprof costs per run) and
with / without ETDump (what tracing costs). Needs the run extra (torch + executorch).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

BARE = r"""
import sys, time, json
import torch
from executorch.extension.pybindings import _C as rt
rt._unsafe_reset_threadpool(1)
p = rt._load_program(sys.argv[1], enable_etdump=False, debug_buffer_size=0)
m = p.load_method("forward")
meta = p.method_meta("forward").input_tensor_meta(0)
x = torch.randn(*meta.sizes())
for _ in range(int(sys.argv[3])):
    m.call([x])
w = []
for _ in range(int(sys.argv[2])):
    s = time.perf_counter(); m.call([x]); w.append((time.perf_counter() - s) * 1e3)
print(json.dumps(w))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--launches", type=int, default=3)
    args = ap.parse_args()
    from edgeprof import api
    from edgeprof.examples import example_root

    art = example_root() / "artifacts"
    print(f"per-run median ms over {args.launches} interleaved launches × {args.runs} runs (1 thread)")
    print(f"{'program':22} {'bare loop':>10} {'run+ETDump':>11} {'run, no ETD':>12} {'run/bare':>9} "
          f"{'ETDump cost':>12} {'s/launch bare':>14} {'s/launch run':>13}")
    for pte in ("toycnn_xnnpack_fp32.pte", "toycnn_portable.pte"):
        model = art / pte
        with tempfile.TemporaryDirectory() as tmp:
            bare, bare_s = [], []
            for _ in range(args.launches):
                t = time.perf_counter()
                out = subprocess.run([sys.executable, "-c", BARE, str(model), str(args.runs), str(args.warmup)],
                                     capture_output=True, text=True, check=True).stdout
                bare_s.append(time.perf_counter() - t)
                bare += json.loads(out.strip().splitlines()[-1])
            t = time.perf_counter()
            res = api.run([model], runs=args.runs, warmup=args.warmup, launches=args.launches, out=Path(tmp) / "r",
                          overhead_check=True)
            run_s = (time.perf_counter() - t) / (args.launches + 2)
            m = json.loads((Path(tmp) / "r" / "manifest.json").read_text())
            with_e = [w for r in m["results"] for w in r["metrics"]["wall_ms"]]
            without = [w for r in m["overhead_launches"] for w in r["metrics"]["wall_ms"]]
        b, w, wo = statistics.median(bare), statistics.median(with_e), statistics.median(without)
        ov = res["overhead"]["per_configuration"][0]
        ci = ov.get("ci_percent")
        print(f"{pte[:-4]:22} {b:10.4f} {w:11.4f} {wo:12.4f} {wo / b:8.3f}× {ov['overhead_percent']:+6.1f} %"
              + (f" [{ci[0]:+.0f},{ci[1]:+.0f}]" if ci else "") + f" {statistics.median(bare_s):9.2f} {run_s:13.2f}")
    print("run/bare: edgeprof run's per-run time without ETDump over the bare loop's (1.00 = no cost); ETDump cost: "
          "with vs without ETDump in edgeprof run, launch-level 95 % interval")
    return 0


if __name__ == "__main__":
    sys.exit(main())
