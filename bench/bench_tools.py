"""Kernel logs, traces and reports: the figures of the README's "Kernel logs, ANE reports, reports and traces" table.

    python bench/bench_tools.py [--repeat 3]

* XNNPACK log reading: an 82 MB, ~600k-line level-5 log made from the real x86 logs in tests/data/xnnpack plus
  15,000 copies of their `running operator` lines, read by ``edgeprof kernels`` (whole process) beside a plain
  Python loop that only counts the lines of the same file (the anchor: reading text at all).
* ``edgeprof trace`` and ``edgeprof analyze`` on the 204,002-event file of bench_etdump.py (``etdump_concat.py``).
* ``edgeprof report --html`` on the toy CNN pair (portable vs XNNPACK, tests/data/etdump).
Each in a fresh process (bench/fresh.py: imports included, interpreter start excluded); medians, peak RSS the max.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from fresh import measure  # noqa: E402

OUT = ROOT / "bench" / "out"
DATA = ROOT / "tests" / "data"


def big_log() -> Path:
    path = OUT / "xnnpack_level5_big.log"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        base = b"".join((DATA / "xnnpack" / n).read_bytes() for n in ("x86_avx2_stderr.log", "x86_avx2_stdout.log"))
        running = b"".join(l for l in base.splitlines(keepends=True) if b"running operator" in l.lower()
                           or b"created operator" in l.lower())
        path.write_bytes(base + running * 15000)
    return path


def big_etdump() -> Path:
    path = OUT / "mobilenet_v3_small_xnnq8.N1000.concat.etdp"
    if not path.exists():
        from etdump_concat import concat
        small = gzip.decompress((DATA / "etdump" / "mobilenet_v3_small_xnnq8.N200.etdp.gz").read_bytes())
        OUT.mkdir(parents=True, exist_ok=True)
        path.write_bytes(concat(small, 5))
    return path


def line_loop(path: Path) -> float:
    code = ("import sys, time\nt = time.perf_counter()\nn = 0\nwith open(sys.argv[1], 'rb') as f:\n"
            "    for _ in f:\n        n += 1\nprint(time.perf_counter() - t)")
    return float(subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                                check=True).stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    log, etd = big_log(), big_etdump()
    lines = sum(1 for _ in open(log, "rb"))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        toy = []
        for n in ("toycnn_portable.N20.etdp", "toycnn_xnn.N20.etdp"):
            (tmp / n).write_bytes(gzip.decompress((DATA / "etdump" / (n + ".gz")).read_bytes()))
            toy.append(str(tmp / n))
        rows = {
            "kernels (XNNPACK log)": ["kernels", str(log), "--output-dir", str(tmp / "k")],
            "trace (204k events)": ["trace", str(etd), "--out", str(tmp / "t.json")],
            "analyze (204k events)": ["analyze", str(etd), "--output-dir", str(tmp / "a"), "--quiet", "--no-progress"],
            "report --html (toy CNN pair)": ["report", *toy, "--out", str(tmp / "r.md"), "--html", str(tmp / "r.html")],
        }
        print(f"{'what':30s} {'seconds':>8} {'peak RSS':>9}  figure")
        for name, cmd in rows.items():
            rs = [measure(*cmd) for _ in range(a.repeat)]
            sec, rss = statistics.median(r["seconds"] for r in rs), max(r["rss_mb"] for r in rs)
            extra = ""
            if name.startswith("kernels"):
                anchor = statistics.median(line_loop(log) for _ in range(a.repeat))
                extra = (f"{lines:,} lines, {log.stat().st_size / 1e6:.0f} MB: {lines / sec / 1e6:.2f}M lines/s; a bare "
                         f"line-counting loop {anchor:.2f} s ({sec / anchor:.1f}× of it)")
            elif name.startswith("trace"):
                extra = f"{(tmp / 't.json').stat().st_size / 1e6:.0f} MB of JSON"
            elif name.startswith("report"):
                extra = f"HTML {(tmp / 'r.html').stat().st_size / 1e3:.0f} kB"
            print(f"{name:30s} {sec:8.2f} {rss:7.0f} MB  {extra}", flush=True)
    print(f"\n({time.strftime('%Y-%m-%d')}, {sys.platform}, Python {sys.version.split()[0]})")


if __name__ == "__main__":
    main()
