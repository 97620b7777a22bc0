"""`edgeprof report` on a pair of 204k-event profiles: time, peak RSS and how often each input is opened,
for two revisions side by side in one run (interleaved, fresh processes).

    python bench/bench_report.py [--before REV] [--repeat 3]

``--before`` (default: ``HEAD``) is checked out with ``git archive`` into a temporary folder and run from its
``src/``; the working tree is "after". The pair: the recorded ``mobilenet_v3_small_xnnq8.N200.etdp`` repeated
5× (204,002 events) as the baseline and its ``N20`` recording repeated 50× (≈ 204k events) as the candidate
(``bench/etdump_concat.py``), laid out as a run folder (``mac_sme2_off``/``mac_sme2_on`` experiments, a
``manifest.json``, the two illustrative SME2 trace logs in ``mac_trace``) and reported as ``edgeprof report
RUN_DIR --html``, which also validates the folder. Opens of every input file are counted with an audit hook
(``sys.addaudithook``, event ``open``), independent of edgeprof's own bookkeeping.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from fresh import PEAK  # noqa: E402
OUT = ROOT / "bench" / "out"

DRIVER = PEAK + r"""
import collections, contextlib, io, json, os, resource, sys, time
opens = collections.Counter()
watch = set(json.loads(os.environ["EDGEPROF_BENCH_INPUTS"]))
def hook(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        p = os.path.realpath(os.fsdecode(args[0]))
        if p in watch:
            opens[p] += 1
sys.addaudithook(hook)
import edgeprof.cli as cli
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    try:
        cli.main(["report", sys.argv[1], "--out", sys.argv[2], "--html", sys.argv[3]], standalone_mode=False)
    except SystemExit as e:
        if e.code:
            raise
dt = time.perf_counter() - t
print(json.dumps({"seconds": dt, "rss_mb": peak_mb(),
                  "opens": sum(opens.values()), "per_file": {os.path.basename(k): v for k, v in opens.items()}}))
"""


def run_folder(tmp: Path) -> tuple[Path, list[Path]]:
    sys.path.insert(0, str(ROOT / "src"))
    sys.path.insert(0, str(ROOT / "bench"))
    from etdump_concat import concat

    data = ROOT / "tests" / "data"
    run_dir = tmp / "out_mnv3" / "runs" / "mac"
    files = []
    for exp, src, copies in (("mac_sme2_off", "N200", 5), ("mac_sme2_on", "N20", 50)):
        d = run_dir / exp
        d.mkdir(parents=True)
        f = d / f"mnv3_q8_{exp}_t1.etdump"
        f.write_bytes(concat(gzip.decompress((data / "etdump" / f"mobilenet_v3_small_xnnq8.{src}.etdp.gz").read_bytes()),
                             copies))
        files.append(f)
    (run_dir / "manifest.json").write_text(json.dumps({"model": "mnv3_q8.pte", "device": "bench", "results": []}))
    files.append(run_dir / "manifest.json")
    trace = run_dir.parent / "mac_trace"
    trace.mkdir()
    for role in ("on", "off"):
        t = trace / f"mnv3_q8_mac_sme2_{role}_t1_xnntrace.log"
        t.write_bytes((data / "xnnpack" / f"mac_sme2_{role}_xnntrace.log").read_bytes())
        files.append(t)
    return run_dir, files


def checkout(rev: str, tmp: Path) -> Path:
    dest = tmp / f"rev-{rev.replace('/', '_')}"
    dest.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as t:
        t.extractall(dest, filter="data")
    return dest / "src"


def run(src: Path, run_dir: Path, files: list[Path], tmp: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src),
               EDGEPROF_BENCH_INPUTS=json.dumps([os.path.realpath(f) for f in files]))
    r = subprocess.run([sys.executable, "-c", DRIVER, str(run_dir), str(tmp / "r.md"), str(tmp / "r.html")],
                       capture_output=True, text=True, env=env, timeout=900)
    if r.returncode:
        raise SystemExit(f"{src}: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", default="HEAD")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        run_dir, files = run_folder(tmp)
        srcs = {"before": checkout(args.before, tmp), "after": ROOT / "src"}
        res: dict[str, list] = {k: [] for k in srcs}
        for _ in range(args.repeat):
            for k, src in srcs.items():  # interleaved: drift of the machine hits both alike
                res[k].append(run(src, run_dir, files, tmp))
        events = 2 * 204_002
        rows = {}
        for k, rs in res.items():
            rows[k] = {"seconds": statistics.median(r["seconds"] for r in rs), "rss_mb": max(r["rss_mb"] for r in rs),
                       "opens": rs[0]["opens"], "per_file": rs[0]["per_file"]}
        b_, a_ = rows["before"], rows["after"]
        print(f"report RUN_DIR --html on a {events:,}-event pair (two 204k-event ETDumps, a manifest, two trace logs), "
              f"median of {args.repeat}, interleaved")
        print(f"{'':8} {'seconds':>9} {'peak RSS MB':>12} {'input opens':>12}")
        for k in ("before", "after"):
            r = rows[k]
            print(f"{k:8} {r['seconds']:9.2f} {r['rss_mb']:12.0f} {r['opens']:12d}")
        for k in ("before", "after"):
            print(f"  {k} opens per file: " + ", ".join(f"{f} {n}" for f, n in sorted(rows[k]["per_file"].items())))
        print(f"after/before: time {a_['seconds'] / b_['seconds']:.2f}×, peak RSS {a_['rss_mb'] / b_['rss_mb']:.2f}×, "
              f"opens {b_['opens']} → {a_['opens']}  (before = {args.before})")
        OUT.mkdir(exist_ok=True)
        (OUT / "bench_report.json").write_text(json.dumps({"before": args.before, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
