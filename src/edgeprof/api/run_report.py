"""The report ``edgeprof run --report`` writes after collecting: which configurations it compares, and where."""

from __future__ import annotations

from pathlib import Path


def report_after_run(run_dir: Path, cfg) -> dict:
    """``run --report``: analyse the folder ``run`` wrote and write its report(s) in it — what the config pairs, or
    its two experiments; a thread sweep as several configurations (one report per comparison, see README)."""
    from .analyze import analyze
    from .report import report

    analyze([run_dir])
    timing = [e for e in cfg.experiments if e.mode == "timing"]
    names = [e.name for e in timing]
    pair = cfg.compare_pairs[0] if cfg.compare_pairs else tuple(names[:2]) if len(names) == 2 else None
    counts = sorted({t for e in timing for t in e.threads})
    # a configuration is a program × its runtime options: several thread counts are several configurations, never
    # pooled — two programs are compared at each thread count (report_t<n>), one program's counts against its first
    folder = [str(run_dir)]
    jobs: list[tuple[str, list[str], dict]] = []
    if len(counts) > 1 and pair:
        jobs = [(f"report_t{t}", folder, {"baseline": [pair[0]], "candidate": [pair[1]], "threads": t})
                for t in counts]
    elif len(counts) > 1 and len(names) == 1:
        from ..io.runfolder import describe
        from ..io.workspace import Workspace

        profiles = Workspace(run_dir).etdumps(run_dir / names[0])  # ETDumps or the runtime's profiles alike
        files = {t: sorted(str(f) for f in profiles if describe(f).threads == t) for t in counts}
        jobs = [(f"report_t{counts[0]}_vs_t{t}", [], {"baseline": files[counts[0]], "candidate": files[t],
                                                       "baseline_name": f"{names[0]} t{counts[0]}",
                                                       "candidate_name": f"{names[0]} t{t}"})
                for t in counts[1:] if files[counts[0]] and files[t]]
    if not jobs:
        kw = {"baseline": [pair[0]], "candidate": [pair[1]]} if pair else {}
        jobs = [("report", folder, {**kw, "threads": counts[0]} if len(counts) > 1 else kw)]
    done = []
    for stem, inputs, kw in jobs:
        rep = report(inputs, out=run_dir / f"{stem}.md", html=run_dir / f"{stem}.html", write=True, **kw)
        done.append({"markdown": str(run_dir / f"{stem}.md"), "html": str(run_dir / f"{stem}.html"),
                     "threads": kw.get("threads"),
                     "verdict": rep.comparison.verdict if rep.comparison else None,
                     "summary_line": rep.comparison.summary_line if rep.comparison else None})
    return {**done[0], "reports": done} if len(done) > 1 else done[0]
