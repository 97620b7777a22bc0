"""Every command at every size, side by side with ExecuTorch's Inspector, on real recordings.

    python bench/bench_scale.py [--sizes 2300,11600,23200,46400] [--repeat 1] [--no-inspector] [--floor-runs 20]

Profiles: the fixture program ``tel_xnnq8.pte`` (a small transformer, XNNPACK int8; 88 events a run) recorded by
the ExecuTorch runtime through ``edgeprof run`` (one launch, no warm-up) with 2,300 to 46,400 runs — 0.2M to
4.1M events, 15 to 300 MB — cached in bench/out/scale/. A second launch of each size is the other side of the
``report``/``compare`` pair. ``analyze`` and ``trace`` run with the op-type lists by reference (the default) and
inline (``--op-types inline``, the only form before). Each measurement is a fresh process (whole process: interpreter, imports, reading,
writing), commands interleaved size by size; the figure is the median of ``--repeat`` runs, RSS the peak.
Inspector: ``Inspector(etdump_path=…).to_dataframe()`` (no ETRecord), timed the same way. Marginal cost = the
slope of time and peak RSS over events (least squares over the sizes). The import floor of each command (and of
Inspector) is its time on a recording of ``--floor-runs`` runs; "beyond the floor" ratios subtract it on both sides.

Needs the `run` extra (ExecuTorch's runtime records the profiles, and its devtools are the Inspector it is timed
against): ``pip install torch==2.13.0 && pip install -e '.[run]'``. The program and its ETRecord come from
tests/data (``tests/data/pte/tel_xnnq8.pte``, ``tests/data/etrecord/tel_xnnq8.etrecord``).
"""

from __future__ import annotations

import argparse
import statistics
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from fresh import measure  # noqa: E402

OUT = ROOT / "bench" / "out" / "scale"

def program() -> Path:
    """The fixture program with its ETRecord beside it (both in tests/data), where `edgeprof run` finds the ETRecord."""
    d = OUT / "program"
    d.mkdir(parents=True, exist_ok=True)
    for src in (ROOT / "tests/data/pte/tel_xnnq8.pte", ROOT / "tests/data/etrecord/tel_xnnq8.etrecord"):
        if not (d / src.name).exists():
            shutil.copyfile(src, d / src.name)
    return d / "tel_xnnq8.pte"


def record(runs: int) -> tuple[Path, Path, int]:
    """Two launches of ``runs`` runs each (cached); returns their ETDumps and the event count of the first."""
    from edgeprof.io.etdump_read import read_etdump

    d = OUT / f"tel_xnnq8_r{runs}"
    files = sorted(d.rglob("*.etdump"))
    if len(files) < 2:
        subprocess.run([sys.executable, "-m", "edgeprof", "run", str(program()), "--runs", str(runs), "--warmup", "0",
                        "--launches", "2", "--out", str(d), "--force", "--no-progress"], check=True,
                       stdout=subprocess.DEVNULL)
        files = sorted(d.rglob("*.etdump"))
    return files[0], files[1], read_etdump(files[0]).n_events


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="2300,11600,23200,46400")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--no-inspector", action="store_true")
    ap.add_argument("--floor-runs", type=int, default=20, help="runs of the recording that measures the import floor")
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",")]
    has_inspector = not a.no_inspector and subprocess.run(
        [sys.executable, "-c", "import executorch.devtools"], capture_output=True).returncode == 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cmds = {
            "analyze (CSV)": lambda f, g: ["analyze", str(f), "--output-dir", str(tmp / "a"), "--quiet", "--no-progress", "--jobs", "1"],
            "analyze (CSV, op types inline)": lambda f, g: ["analyze", str(f), "--output-dir", str(tmp / "i"), "--quiet",
                                                            "--no-progress", "--jobs", "1", "--op-types", "inline"],
            "analyze --format parquet": lambda f, g: ["analyze", str(f), "--output-dir", str(tmp / "p"), "--format",
                                                      "parquet", "--quiet", "--no-progress", "--jobs", "1"],
            "breakdown": lambda f, g: ["breakdown", str(f), "--no-write"],
            "trace": lambda f, g: ["trace", str(f), "--out", str(tmp / "t.json")],
            "trace (op types inline)": lambda f, g: ["trace", str(f), "--out", str(tmp / "ti.json"), "--op-types",
                                                     "inline"],
            "compare (pair)": lambda f, g: ["compare", str(f), str(g)],
            "report (pair)": lambda f, g: ["report", str(f), str(g), "--out", str(tmp / "r.md")],
        }
        if has_inspector:
            cmds["ExecuTorch Inspector"] = lambda f, g: ["inspector", str(f)]
        res: dict[str, list[dict]] = {k: [] for k in cmds}
        floor: dict[str, float] = {}
        f, g, floor_events = record(a.floor_runs)
        for name, mk in cmds.items():  # the import floor: each command on a recording of a few runs
            floor[name] = statistics.median(measure(*mk(f, g))["seconds"] for _ in range(max(a.repeat, 3)))
        events = []
        for runs in sizes:
            f, g, n = record(runs)
            events.append(n)
            for name, mk in cmds.items():
                rs = [measure(*mk(f, g)) for _ in range(a.repeat)]
                res[name].append({"seconds": statistics.median(r["seconds"] for r in rs),
                                  "rss_mb": max(r["rss_mb"] for r in rs)})
                print(f"  {runs} runs, {n:,} events: {name}: {res[name][-1]['seconds']:.2f} s, "
                      f"{res[name][-1]['rss_mb']:.0f} MB", file=sys.stderr, flush=True)
    ev = np.array(events, dtype=float)
    print(f"\n{'command':26s} " + " ".join(f"{n / 1e6:>16.2f}M" for n in events) + "   marginal per M events")
    for name, rows in res.items():
        cells = " ".join(f"{r['seconds']:7.2f} s/{r['rss_mb']:5.0f} MB" for r in rows)
        t = np.polyfit(ev / 1e6, [r["seconds"] for r in rows], 1)[0] if len(rows) > 1 else float("nan")
        m = np.polyfit(ev / 1e6, [r["rss_mb"] for r in rows], 1)[0] if len(rows) > 1 else float("nan")
        print(f"{name:26s} {cells}   {t:.2f} s, {m:.0f} MB")
    print(f"\nimport floor (each command on {a.floor_runs} runs, {floor_events:,} events): "
          + ", ".join(f"{k} {v:.2f} s" for k, v in floor.items()))
    if has_inspector:
        ins, name_i = res["ExecuTorch Inspector"], "ExecuTorch Inspector"
        print("\nvs Inspector (time ratio, Inspector / edgeprof), whole process | beyond each one's import floor:")
        for name, rows in res.items():
            if name != name_i:
                print(f"{name:26s} " + " ".join(
                    f"{i['seconds'] / r['seconds']:7.1f}x | {(i['seconds'] - floor[name_i]) / max(r['seconds'] - floor[name], 1e-3):5.1f}x"
                    for i, r in zip(ins, rows)))
    print("\nevents/s (whole process):")
    for name, rows in res.items():
        print(f"{name:26s} " + " ".join(f"{n / r['seconds']:17,.0f}" for n, r in zip(events, rows)))


if __name__ == "__main__":
    main()
