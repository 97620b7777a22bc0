"""``edgeprof phases``: an LLM-shaped profile per phase (prefill, decode): latency, tokens/s, time to first
token, the slope with position separated from drift, and the categories that grow with position."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import InputError
from ..files import command, is_file, read_text
from ..io.workspace import Workspace
from ._common import workspace
from .results import PhaseComparison, PhaseReport


def run_order_file(etdump: Path) -> Path:
    """``model.G2S64.etdp`` (or ``….etdp.gz``) → ``model.G2S64.runs.json`` (the run order a recorder writes beside
    the ETDump, named after it uncompressed)."""
    if etdump.name.lower().endswith(".gz"):
        etdump = etdump.with_name(etdump.name[:-3])
    return etdump.with_suffix(".runs.json")


def _same_partition(a: list[str], b: list[str]) -> bool:
    return len(a) == len(b) and len(set(zip(a, b))) == len(set(a)) == len(set(b))


def _labelled(path: Path, spec: str | None, ws: Workspace):
    """(profile, latency per run, phase label per run, position per run or None, where the labels came from)."""
    import polars as pl

    from ..analysis.phases import parse_phases, run_signatures, shape_labels, signature_labels

    prof = ws.profile(path)
    lat = prof.latency_ms()
    n = lat.size
    positions = None
    order_file = run_order_file(path)
    if spec:
        labels, source = parse_phases(spec, n), "--phases"
        # a step's position: its place in its contiguous range of one phase (the KV length grows along a range)
        positions = [0] * n
        for i in range(1, n):
            positions[i] = positions[i - 1] + 1 if labels[i] == labels[i - 1] else 0
    elif is_file(order_file):
        text = read_text(order_file, 64 << 20, "run-order file")
        try:
            order = json.loads(text)
            labels = [str(o["method"]) for o in order]
            positions = [int(o.get("position", 0)) for o in order]
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
            raise InputError(order_file, f"not a run-order file ({type(e).__name__}: {str(e)[:80]})") from None
        if len(labels) != n:
            raise InputError(order_file, f"lists {len(labels)} runs; the ETDump has {n}")
        source = order_file.name
    else:
        ids = prof.runs.filter(pl.col("run_index") >= 0).sort("run_index")["run_index"].to_list()
        name_ids, _, _ = prof.name_groups()
        sigs = run_signatures(prof.events["run_index"].to_numpy(), name_ids, ids)
        labels, source = signature_labels(sigs), "event signatures"
        shaped = shape_labels(lat)
        if shaped is not None and (set(labels) == {"all"} or _same_partition(labels, shaped[0])):
            labels, positions, source = shaped  # two signatures that split the runs as the shape does: named so
        elif set(labels) == {"all"}:
                source = ("one phase: every run has the same events and none stands out as a prefill; name the "
                          "phases with --phases 0:1=prefill,1:=decode or a run-order file")
    # runs without a valid end-to-end time are left out of every phase (their labels with them)
    import numpy as np

    keep = np.isfinite(lat)
    if not keep.any():
        raise InputError(path, "no run has a valid end-to-end time: nothing to analyse per phase")
    if not keep.all():
        lat = lat[keep]
        labels = [x for x, k in zip(labels, keep) if k]
        positions = None if positions is None else [x for x, k in zip(positions, keep) if k]
    return prof, lat, labels, positions, source


@command
def phases(path, *, spec: str | None = None, seed: int = 0, ws: Workspace | None = None) -> PhaseReport:
    import numpy as np

    from ..analysis.breakdown import LINES, EventLines, per_run_lines
    from ..analysis.latency import framework_times_ms
    from ..analysis.phases import analyze_phases

    ws = workspace(ws)
    path = Path(path)
    prof, lat, labels, positions, source = _labelled(path, spec, ws)
    n = lat.size
    lines = EventLines(prof)
    mat, _e2e, _ = per_run_lines(prof, lines)
    valid = np.isfinite(prof.latency_ms())
    mat = mat[valid] if mat.shape[0] == valid.size else mat
    cats = {LINES[j]: mat[:, j] / 1e6 for j in range(len(LINES)) if mat[:, j].any()} if mat.shape[0] == n else None
    fw = framework_times_ms(prof)
    init = sum(v for v in fw.values() if v is not None) if any(v is not None for v in fw.values()) else None
    doc = analyze_phases(np.asarray(lat), labels, positions=positions, category_ms=cats, init_ms=init, seed=seed)
    doc.update(input=str(path), labels_source=source, runs=n)
    return PhaseReport(doc)


@command
def compare_phases(baseline, candidate, *, spec: str | None = None, seed: int = 0,
                   ws: Workspace | None = None) -> PhaseComparison:
    """Baseline vs candidate per phase (speedup = baseline / candidate per phase, each with its interval and
    verdict); phases present on one side only are listed, never pooled."""
    import numpy as np

    from ..analysis.compare import Arm, compare_latency

    ws = workspace(ws)
    sides = [_labelled(Path(p), spec, ws) for p in (baseline, candidate)]
    names = [list(dict.fromkeys(s[2])) for s in sides]
    rows, statements = [], []
    for name in [x for x in names[0] if x in names[1]]:
        arms = [Arm(name, [np.asarray(lat)[[i for i, x in enumerate(lab) if x == name]]]) for _, lat, lab, _, _ in sides]
        r = compare_latency(arms[0], arms[1], seed=seed)
        sp = r["speedup"]
        rows.append({"phase": name, "verdict": r["verdict"], "speedup": sp["estimate"], "ci_low": sp["ci_low"],
                     "ci_high": sp["ci_high"], "baseline_runs": int(arms[0].launches[0].size),
                     "candidate_runs": int(arms[1].launches[0].size)})
        word = {"faster": "faster", "slower": "slower"}.get(r["verdict"])
        statements.append(f"{name} {sp['estimate']:.3g}× {word} [{sp['ci_low']:.3g}–{sp['ci_high']:.3g}]" if word else
                          f"{name} {r['verdict'].replace('_', ' ')} ({sp['estimate']:.3g}× [{sp['ci_low']:.3g}–"
                          f"{sp['ci_high']:.3g}])")
    only = {"baseline": [x for x in names[0] if x not in names[1]], "candidate": [x for x in names[1] if x not in names[0]]}
    return PhaseComparison({"baseline": str(baseline), "candidate": str(candidate), "phases": rows,
                            "only_in": only, "statements": statements,
                            "convention": "speedup = baseline / candidate per phase (> 1: candidate faster)"})
