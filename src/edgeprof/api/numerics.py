"""``edgeprof numerics BASE CAND``: where two programs' results part ways, from two debug recordings of the same input
(:mod:`edgeprof.analysis.numerics`). Each ETDump is read once with its debug buffer (``<stem>.bin`` beside it, or one
named with ``debug_buffers``) and its ETRecord (found as every command finds it)."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..files import command
from ..io.workspace import Workspace
from ._common import workspace
from .results import NumericsResult


def _events(prof, rec, run: int) -> list[dict]:
    """The debug events of run ``run`` as the plain rows :func:`edgeprof.analysis.numerics.program_points` takes."""
    import numpy as np
    import polars as pl

    from ..io.etrecord import sources_of

    ev = prof.events.filter(pl.col("run_index") == run)
    delegates = set(ev.filter(pl.col("kind") == "delegate_call")["instruction_id"].to_list())
    backend_of = dict(ev.filter(pl.col("kind") == "delegate_call").select("instruction_id", "delegate_backend")
                      .cast({"delegate_backend": pl.String}).iter_rows())
    kernels: dict[int, str] = {}
    for instr, name in ev.filter(pl.col("kind") == "kernel").select("instruction_id", "name").cast(
            {"name": pl.String}).iter_rows():
        kernels.setdefault(instr, name[len("native_call_"):].split(".")[0])
    rows = np.flatnonzero(prof.debug_events["run_index"].to_numpy() == run)
    de = prof.debug_events
    out = []
    for r in rows.tolist():
        instr = int(de["instruction_id"][r])
        delegate = instr in delegates or (rec is not None and instr in rec.delegate_map)
        row = {"instruction": instr, "is_output": bool(de["is_output"][r]), "tensors": prof.debug_data[r],
               "delegate": delegate, "backend": backend_of.get(instr), "num_outs": None,
               "op": None if delegate else kernels.get(instr), "module": None, "op_types": [], "handles": []}
        if rec is not None and instr in rec.debug_handle_map:
            types, module = sources_of(rec, instr)
            row.update(module=module, op_types=types, handles=rec.debug_handle_map[instr],
                       num_outs=rec.num_outs.get(instr) if delegate else None,
                       backend=rec.backend_of(instr) or row["backend"] if delegate else None)
        out.append(row)
    return out


def _run_folder(paths: list[Path]) -> Path | None:
    """The collection both ETDumps belong to (the folder of their ``manifest.json``), so that each finds its own
    ETRecord in its ``artifacts/`` as ``analyze`` of that folder would; None when they belong to none or to two."""
    from ..io.runfolder import manifest_path

    found = {manifest_path(p.parent) for p in paths}
    only = next(iter(found)) if len(found) == 1 else None
    return only.parent if only is not None else None


def _first_run(prof) -> int:
    import polars as pl

    runs = prof.debug_events.filter(pl.col("run_index") >= 0)["run_index"].unique().sort().to_list()
    return runs[0] if runs else -1


def _read(ws: Workspace, path: Path, buffer):
    prof = ws.debug_profile(path, buffer)
    if prof.debug_data is None:
        from ..io.debug_buffer import stem_of

        raise UsageError(f"{path}: no debug buffer beside it ({stem_of(path)}.bin): record with "
                         "`edgeprof run --debug-buffer SIZE`, or name it with --debug-buffer PATH")
    if not any(len(t) for t in prof.debug_data):
        raise UsageError(f"{path}: its recording holds no tensors (recorded without a debug buffer?)")
    rec = None
    if prof.etrecord is not None and prof.etrecord.status == "attached":
        rec, _ = ws.etrecord_for(path)
        rec = ws.etrecord(rec) if rec is not None else None
    return prof, rec


def _assign_buffers(paths: list[Path], buffers: list[Path]) -> dict[str, Path]:
    """Debug buffers named explicitly → their ETDumps: a buffer whose stem is one ETDump's (``x.debug.bin`` for
    ``x.debug.etdp``) goes to it; the others to the ETDumps still without one, in order (baseline first)."""
    from ..errors import UsageError
    from ..io.debug_buffer import buffer_stem, stem_of

    if len(buffers) > len(paths):
        raise UsageError(f"{len(buffers)} debug buffers for {len(paths)} ETDumps")
    given: dict[str, Path] = {}
    rest = []
    for b in buffers:
        owners = [p for p in paths if stem_of(p) in (buffer_stem(b), buffer_stem(b).removesuffix(".debug"))
                  and str(p) not in given]
        if len(owners) == 1:
            given[str(owners[0])] = b
        else:
            rest.append(b)
    free = [p for p in paths if str(p) not in given]
    for p, b in zip(free, rest):
        given[str(p)] = b
    return given


@command
def numerics(baseline, candidate, *, debug_buffers=(), threshold_db: float | None = None, run: int | None = None,
             etrecord=None, ws: Workspace | None = None) -> NumericsResult:
    """Compare the debug recordings ``baseline`` and ``candidate`` (two programs, the same input): matched points,
    max/mean |diff|, cosine similarity, SQNR, and where accuracy is first lost (SQNR falling by more than
    ``threshold_db`` from one point to the next; default :data:`~edgeprof.analysis.numerics_metrics.DEFAULT_THRESHOLD_DB`).
    ``debug_buffers``: debug buffers named explicitly, each given to the ETDump whose stem it shares, else in order
    (:func:`_assign_buffers`)."""
    from ..analysis.numerics import compare_points, program_points
    from ..analysis.numerics_metrics import DEFAULT_THRESHOLD_DB
    paths = [Path(baseline), Path(candidate)]
    ws = workspace(ws, _run_folder(paths), etrecord=etrecord)
    given = _assign_buffers(paths, [Path(b) for b in debug_buffers])
    threshold = DEFAULT_THRESHOLD_DB if threshold_db is None else float(threshold_db)
    sides, points, runs = [], [], []
    for p in paths:
        prof, rec = _read(ws, p, given.get(str(p)))
        r = _first_run(prof) if run is None else run
        if r not in set(prof.debug_events["run_index"].to_list()):
            raise UsageError(f"{p}: no debug events in run {r}")
        points.append(program_points(_events(prof, rec, r)))
        runs.append(r)
        sides.append({"etdump": str(p), "debug_buffer": prof.debug_data.path, "run": r,
                      "etrecord": rec.path if rec is not None else None,
                      "debug_events": int((prof.debug_events["run_index"] == r).sum())})
    have = all(s["etrecord"] is not None for s in sides)
    res = compare_points(points[0], points[1], have_records=have, threshold_db=threshold)
    statements = []
    for o in res["outputs"]:
        m = o["metrics"]
        statements.append(f"{o['name']}: " + ("identical" if m["identical"] else
                          f"SQNR {m['sqnr_db']:.1f} dB, max |diff| {m['max_abs_diff']:.3g}, cosine {m['cosine']:.6f}"
                          if m["sqnr_db"] is not None else f"max |diff| {m['max_abs_diff']:.3g}"))
    if res["accuracy_lost"]:
        statements.append(res["accuracy_lost"]["statement"])
    elif res["points"]:
        statements.append(f"no step loses more than {threshold:g} dB of SQNR along the {len(res['points'])} "
                          "matched points")
    if not have:
        statements.append("no ETRecord for " + " and ".join(Path(s["etdump"]).name for s in sides if not s["etrecord"])
                          + ": intermediate points matched by order and shape only")
    statements += res.pop("problems")
    return NumericsResult({"baseline": sides[0], "candidate": sides[1], **res, "statements": statements})
