"""`edgeprof program` on the largest fixture program and on a generated ≥ 100 MB program, side by side with
ExecuTorch's own Python deserializer (``deserialize_pte_binary``, what torch-side tools use).

    python bench/bench_program.py [--repeat 3]

The big program (seven 2048×2048 fp32 linear layers, portable, 117 MB) is exported once with the ExecuTorch
runtime (the `run` extra) into bench/out/program/; without the extra, edgeprof's side runs alone (on the cached
big program when there is one). Whole process each time (imports included), fresh
interpreter, median of --repeat; RSS is the peak. edgeprof reads the program flatbuffer and the XNNPACK graphs
only, never the constant data, so its memory should not follow the file.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from fresh import measure  # noqa: E402

OUT = ROOT / "bench" / "out" / "program"
EXPORT = r"""
import sys, torch
from torch import nn
from executorch.exir import to_edge
torch.manual_seed(0)
m = nn.Sequential(*[nn.Linear(2048, 2048) for _ in range(7)]).eval()
ep = torch.export.export(m, (torch.randn(1, 2048),))
prog = to_edge(ep).to_executorch()
open(sys.argv[1], "wb").write(prog.buffer)
"""


def big_program(can_export: bool) -> Path | None:
    """The generated program: cached, else exported now (None when it is not cached and ExecuTorch is absent)."""
    p = OUT / "linear7x2048_portable.pte"
    if not p.exists():
        if not can_export:
            return None
        OUT.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-c", EXPORT, str(p)], check=True)
    return p


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    has_et = subprocess.run([sys.executable, "-c", "import executorch.exir"], capture_output=True).returncode == 0
    big = big_program(has_et)
    files = [ROOT / "tests" / "data" / "pte" / "tel_xnn.pte"] + ([big] if big else [])
    if not has_et:  # edgeprof's side needs neither torch nor executorch: it is measured alone
        print("ExecuTorch is not installed: its deserializer is not timed" +
              ("" if big else ", and the 117 MB program cannot be exported (pip install -e '.[run]')"))
    print(f"{'program':34s} {'MB':>7s} {'edgeprof s':>11s} {'RSS MB':>7s} {'ExecuTorch s':>13s} {'RSS MB':>7s} "
          f"{'time ratio':>10s}")
    for f in files:
        ours = [measure("program", str(f), "--json") for _ in range(a.repeat)]
        t, m = statistics.median(r["seconds"] for r in ours), max(r["rss_mb"] for r in ours)
        if has_et:
            theirs = [measure("et-deserialize", str(f)) for _ in range(a.repeat)]
            tt, mm = statistics.median(r["seconds"] for r in theirs), max(r["rss_mb"] for r in theirs)
            print(f"{f.name:34s} {f.stat().st_size / 1e6:7.1f} {t:11.2f} {m:7.0f} {tt:13.2f} {mm:7.0f} {tt / t:9.1f}x")
        else:
            print(f"{f.name:34s} {f.stat().st_size / 1e6:7.1f} {t:11.2f} {m:7.0f} {'—':>13s} {'—':>7s}")


if __name__ == "__main__":
    main()
