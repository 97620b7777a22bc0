"""Every command at every size, side by side with ExecuTorch's Inspector, on real recordings.

    python bench/bench_scale.py [--sizes 2300,11600] [--repeat 3] [--walks c,numpy] [--no-inspector] [--floor-runs 20]

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


WALKS = {"c": {"EDGEPROF_CORE": "c"}, "numpy": {"EDGEPROF_CORE": "python"}}
TARGETS = "analyze ≥ 50× Inspector at ≥ 1M events, ≥ 35× at 0.2M; trace ≥ 1M events/s; compare ≤ 1 s and report ≤ 1.5 s per M events; ≤ 100 MB/M marginal peak"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="2300,11600")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-inspector", action="store_true")
    ap.add_argument("--walks", default="c,numpy", help="which ETDump walks to time (c: the compiled one, numpy)")
    ap.add_argument("--floor-runs", type=int, default=20, help="runs of the recording that measures the import floor")
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",")]
    walks = [w for w in a.walks.split(",") if w]
    has_inspector = not a.no_inspector and subprocess.run(
        [sys.executable, "-c", "import executorch.devtools"], capture_output=True).returncode == 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        base = {
            "analyze": lambda f, g: ["analyze", str(f), "--output-dir", str(tmp / "a"), "--quiet", "--no-progress", "--jobs", "1"],
            "analyze --format parquet": lambda f, g: ["analyze", str(f), "--output-dir", str(tmp / "p"), "--format",
                                                      "parquet", "--quiet", "--no-progress", "--jobs", "1"],
            "breakdown": lambda f, g: ["breakdown", str(f), "--no-write"],
            "trace": lambda f, g: ["trace", str(f), "--out", str(tmp / "t.json")],
            "compare (pair)": lambda f, g: ["compare", str(f), str(g)],
            "report (pair)": lambda f, g: ["report", str(f), str(g), "--out", str(tmp / "r.md")],
        }
        cmds = {f"{k} [{w}]": (mk, WALKS[w]) for k, mk in base.items() for w in walks}
        if has_inspector:
            cmds["ExecuTorch Inspector"] = (lambda f, g: ["inspector", str(f)], None)
        res: dict[str, list[dict]] = {k: [] for k in cmds}
        floor: dict[str, float] = {}
        f, g, floor_events = record(a.floor_runs)
        for name, (mk, env) in cmds.items():  # the import floor: each command on a recording of a few runs
            floor[name] = statistics.median(measure(*mk(f, g), env=env)["cpu"] for _ in range(max(a.repeat, 3)))
        events = []
        for runs in sizes:
            f, g, n = record(runs)
            events.append(n)
            got: dict[str, list[dict]] = {k: [] for k in cmds}
            for _ in range(a.repeat):  # alternating: every command once per round (the machine's load is shared)
                for name, (mk, env) in cmds.items():
                    got[name].append(measure(*mk(f, g), env=env))
            for name, rs in got.items():
                res[name].append({"cpu": statistics.median(r["cpu"] for r in rs),
                                  "seconds": statistics.median(r["seconds"] for r in rs),
                                  "rss_mb": max(r["rss_mb"] for r in rs)})
                print(f"  {runs} runs, {n:,} events: {name}: {res[name][-1]['cpu']:.2f} s CPU, "
                      f"{res[name][-1]['rss_mb']:.0f} MB", file=sys.stderr, flush=True)
    ev = np.array(events, dtype=float)
    print(f"CPU time of whole processes (median of {a.repeat}, alternating), peak RSS (max)")
    print(f"\n{'command':34s} " + " ".join(f"{n / 1e6:>16.2f}M" for n in events) + "   marginal per M events")
    slope = {}
    for name, rows in res.items():
        cells = " ".join(f"{r['cpu']:7.2f} s/{r['rss_mb']:5.0f} MB" for r in rows)
        t = np.polyfit(ev / 1e6, [r["cpu"] for r in rows], 1)[0] if len(rows) > 1 else rows[0]["cpu"] / (ev[0] / 1e6)
        m = np.polyfit(ev / 1e6, [r["rss_mb"] for r in rows], 1)[0] if len(rows) > 1 else float("nan")
        slope[name] = (t, m)
        print(f"{name:34s} {cells}   {t:.2f} s, {m:.0f} MB")
    print(f"\nimport floor (CPU, each command on {a.floor_runs} runs, {floor_events:,} events): "
          + ", ".join(f"{k} {v:.2f} s" for k, v in floor.items()))
    ins = res.get("ExecuTorch Inspector")
    if ins:
        print("\nvs Inspector (CPU ratio, Inspector / edgeprof), whole process | beyond each one's import floor:")
        for name, rows in res.items():
            if name != "ExecuTorch Inspector":
                print(f"{name:34s} " + " ".join(
                    f"{i['cpu'] / r['cpu']:7.1f}x | {(i['cpu'] - floor['ExecuTorch Inspector']) / max(r['cpu'] - floor[name], 1e-3):5.1f}x"
                    for i, r in zip(ins, rows)))
    print("\nevents/s (whole process, CPU):")
    for name, rows in res.items():
        print(f"{name:34s} " + " ".join(f"{n / r['cpu']:17,.0f}" for n, r in zip(events, rows)))
    print(f"\ntargets ({TARGETS}):")
    for w in walks:
        parts = []
        if ins:
            for n, i, r in zip(events, ins, res[f"analyze [{w}]"]):
                parts.append(f"analyze {i['cpu'] / r['cpu']:.1f}× Inspector at {n / 1e6:.2f}M")
        parts.append(f"trace {events[-1] / res[f'trace [{w}]'][-1]['cpu']:,.0f} events/s")
        parts.append(f"compare {res[f'compare (pair) [{w}]'][-1]['cpu'] / (2 * events[-1] / 1e6):.2f} s per M input events")
        parts.append(f"report {res[f'report (pair) [{w}]'][-1]['cpu'] / (2 * events[-1] / 1e6):.2f} s per M input events")
        parts.append("marginal MB/M " + ", ".join(f"{k.split(' [')[0]} {slope[f'{k} [{w}]'][1]:.0f}"
                                                   for k in ("analyze", "trace", "compare (pair)", "report (pair)")))
        print(f"  [{w}] " + "; ".join(parts))
    if ins:
        print("\nthe analyze budget each target leaves (Inspector's CPU / the ratio) beside the command's floor (its CPU on "
              f"{floor_events:,} events: interpreter, imports, a near-empty read and write):")
        for w in walks:
            for n, i in zip(events, ins):
                need = 50.0 if n >= 1e6 else 35.0
                budget = i["cpu"] / need
                left = budget - floor[f"analyze [{w}]"]
                print(f"  [{w}] {n / 1e6:.2f}M: {need:.0f}× needs ≤ {budget:.3f} s; floor {floor[f'analyze [{w}]']:.3f} s; "
                      + (f"{left:.3f} s left for {n:,} events" if left > 0 else "the floor alone is over the budget"))


if __name__ == "__main__":
    main()
