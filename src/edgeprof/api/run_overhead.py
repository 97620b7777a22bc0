"""What profiling costs a collection (``edgeprof run --overhead-check``): each configuration's launches with the
runtime's profiler (ExecuTorch's ETDump, ONNX Runtime's profiling) against its launches without, launch-aware where
the runtime reports per-run times; said in each runtime's words."""

from __future__ import annotations


def overhead_of(records: list[dict], seed: int, runtimes: dict | None = None) -> dict | None:
    """The profiler's cost per run: each configuration's runs with it vs its launches without, launch-aware.
    ``runtimes``: each experiment's runtime (ExecuTorch when not said)."""
    import numpy as np

    from ..analysis.compare import Arm, compare_latency
    from ..runtimes import runtime

    out = []
    keys = sorted({(r["experiment"], r["threads"]) for r in records if r.get("overhead")})
    for exp, t in keys:
        def series(overhead: bool, exp=exp, t=t):
            vals = []
            for r in records:
                if r["experiment"] == exp and r["threads"] == t and bool(r.get("overhead")) == overhead \
                        and r["status"] == "ok":
                    m = r["metrics"]
                    if m.get("wall_ms"):
                        vals.append(np.asarray(m["wall_ms"], dtype=float))
                    elif m.get("runner_total_ms") and m.get("runner_executions"):
                        vals.append(np.array([m["runner_total_ms"] / m["runner_executions"]]))
            return vals

        off, on = series(True), series(False)
        if not off or not on:
            continue
        per_run = all(v.size > 1 for v in off + on)
        rt = runtime((runtimes or {}).get(exp))
        entry = {"experiment": exp, "threads": t, "launches_without": len(off), "launches_with": len(on),
                 "runtime": rt.name, "profiler": rt.profile_noun,
                 "median_ms_without": float(np.median(np.concatenate(off))),
                 "median_ms_with": float(np.median(np.concatenate(on)))}
        if per_run:
            r = compare_latency(Arm(f"without {rt.profile_noun}", off), Arm(f"with {rt.profile_noun}", on),
                                seed=seed, warmup=0, threshold=0.0)
            s, lo, hi = r["speedup"]["estimate"], r["speedup"]["ci_low"], r["speedup"]["ci_high"]
            entry.update(overhead_percent=(1 / s - 1) * 100 if s else None,
                         ci_percent=[(1 / hi - 1) * 100, (1 / lo - 1) * 100] if lo and hi else None,
                         method=r["ci"]["method"] if r.get("ci") else None)
        else:  # runner-reported averages: one number per launch, no interval
            entry.update(overhead_percent=(entry["median_ms_with"] / entry["median_ms_without"] - 1) * 100,
                         ci_percent=None, method="ratio of launch averages (the runner reports no per-run times)")
        out.append(entry)
    if not out:
        return None
    parts = [f"{e['experiment']} t{e['threads']}: {e['overhead_percent']:+.1f} %"
             + (f" [{e['ci_percent'][0]:+.1f}, {e['ci_percent'][1]:+.1f}]" if e.get("ci_percent") else "")
             for e in out if e.get("overhead_percent") is not None]
    how = "host wall time per run" if all(e.get("ci_percent") is not None for e in out) else "time per run"
    used = list(dict.fromkeys(e["runtime"] for e in out))
    what = runtime(used[0]) if len(used) == 1 else None
    lead = (f"{what.overhead} ({how}, with vs without the {what.profile_noun})" if what
            else f"profiling overhead ({how}, with vs without each runtime's profiler)")
    return {"per_configuration": out, "statement": f"{lead}: " + "; ".join(parts)}
