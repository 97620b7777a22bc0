"""Real-format ETDumps made from the real-noise corpus (tests/data/noise): one launch of a portable program, each
run's recorded operator times inside ``Method::execute`` (built with the reference FlatBuffers runtime,
independent of edgeprof's reader)."""

from __future__ import annotations



def etdump_of(launch, factor: float = 1.0, runs: int | None = None) -> bytes:
    """The launch's recorded runs (the first ``runs`` of them, warm-up included), every time × ``factor``."""
    from etdump_builder import PE, Run, build

    n = launch.runs.size if runs is None else min(runs, launch.runs.size)
    ops = {c[3:]: v[:n] * factor for c, v in launch.columns.items() if c.startswith("op:") and v[:n].any()}
    out, t = [], 0
    for i in range(n):
        ev, cur = [], t + 1000
        for j, (name, ms) in enumerate(ops.items()):
            d = max(int(ms[i] * 1e6), 1)
            ev += [PE(name, cur + 10, cur + 10 + d, j), PE("OPERATOR_CALL", cur, cur + 20 + d, j)]
            cur += 30 + d
        total = max(int(launch.runs[i] * factor * 1e6), cur - t + 100)
        ev.append(PE("Method::execute", t, t + total, -1))
        out.append(Run("Execute", ev))
        t += total + 100_000
    return build(out)

