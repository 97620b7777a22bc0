"""``edgeprof breakdown``: where the time goes in one profile."""

from __future__ import annotations

from pathlib import Path

from ..conventions import OP_TYPES_INLINE
from ..files import command, display
from ..io.runfolder import timeline_model_name
from ..io.workspace import Workspace
from ..model import ReadWhole
from ._common import KeptStream, as_list, taxonomy_of, workspace
from .results import Breakdown


@command
def load_profile(path, *, etrecord=None, strict_etrecord: bool = False, method: str | None = None,
                 ws: Workspace | None = None):
    """An ETDump (its ETRecord given or found as ``analyze`` finds it) or a timeline CSV, as a Profile of the runs
    with a valid end-to-end time."""
    ws = workspace(ws, None, etrecord=etrecord, strict_etrecord=strict_etrecord, method=method, op_types=OP_TYPES_INLINE)
    return ws.valid_profile(path)


# the event columns the accounting reads (an ETDump read block by block keeps only these)
BREAKDOWN_COLUMNS = ("run_index", "name", "kind", "duration_ns", "self_ns", "parent", "depth", "delegate_backend",
                     "op_types")


@command
def breakdown(path, *, etrecord=None, strict_etrecord: bool = False, taxonomy=None, top: int = 15,
              model_name: str | None = None, skip_runs: int = 0, program=None, ws: Workspace | None = None,
              block_events: int | None = 0) -> Breakdown:
    """Category accounting, top and OTHER operators, backends, portable hotspots and graph breaks of one profile
    (its valid runs, without the first ``skip_runs``). ``.profile`` is the profile that was accounted. With
    ``program`` (the .pte that ran): per instruction and category, achieved GFLOP/s and GB/s, intensity, weight
    share and the XNNPACK node mix behind each delegate call. ``block_events`` (an ETDump, no ``program``): read
    it block by block of runs, that many events at a time (None: the default block), keeping only the columns the
    accounting reads (:data:`BREAKDOWN_COLUMNS`, then all ``.profile`` holds); 0 (the default): read it whole."""
    from ..analysis.breakdown import breakdown as run_breakdown

    ws = workspace(ws, None, etrecord=etrecord, strict_etrecord=strict_etrecord)
    path = Path(path)
    prof = (_kept_profile(ws, path, block_events) if block_events != 0 and program is None else None) \
        or ws.valid_profile(path)
    prof = prof.without_leading_runs(skip_runs)
    name = model_name or display(timeline_model_name(path))
    result = run_breakdown(prof, taxonomy=taxonomy_of(taxonomy), top=top, name=name)
    result.update(input=str(path), etrecord_status=prof.etrecord.status if prof.etrecord else "absent",
                  experiment=ws.describe(path).experiment, warnings=list(prof.warnings))
    if program is not None and str(program).lower().endswith(".onnx"):
        from ..io.onnx_model import read_onnx
        from .program import join_with_onnx

        result["program"] = join_with_onnx(prof, read_onnx(program))
    elif program is not None:
        from ..io.pte import read_pte
        from .program import join_with_program

        result["program"] = join_with_program(prof, read_pte(program))
    return Breakdown(result, profile=prof)


def _kept_profile(ws: Workspace, path: Path, block_events):
    """The valid runs of an ETDump read block by block with :data:`BREAKDOWN_COLUMNS`; None for another format
    or where the blocks cannot give the whole file's ETRecord outcome (read whole then)."""
    from ..io.readers import input_format

    if not input_format(path).streams:
        return None
    try:
        stream = KeptStream(ws, path, BREAKDOWN_COLUMNS, block_events)
        for _ in stream:
            pass
        return stream.profile().valid_runs()
    except ReadWhole:
        return None


@command
def breakdowns(inputs, *, run_dir=None, threads: int | None = None, etrecord=None, strict_etrecord: bool = False,
               taxonomy=None, top: int = 15, model_name: str | None = None, write: bool = False, output_dir=None,
               fmt: str = "csv", program=None, ws: Workspace | None = None,
               block_events: int | None = 0) -> list[Breakdown]:
    """:func:`breakdown` of every profile named by ``inputs`` (files, folders, experiments of ``run_dir``);
    ``write`` writes the Arm kit's breakdown files beside each input (or in ``output_dir``); ``block_events`` as
    :func:`breakdown`."""
    from ..io.runfolder import breakdown_files
    from ..render.breakdown_files import write_breakdown
    from ..render.tables import suffix

    ws = workspace(ws, run_dir, etrecord=etrecord, strict_etrecord=strict_etrecord)
    files = [f for spec in as_list(inputs) for f in ws.resolve(spec, run_dir, threads)]
    out = []
    taxonomy = taxonomy_of(taxonomy)
    for f in files:
        bd = breakdown(f, taxonomy=taxonomy, top=top, model_name=model_name if len(files) == 1 else None,
                       program=program, ws=ws, block_events=block_events)
        if write:
            names = breakdown_files(bd.name, suffix(fmt))
            folder = Path(output_dir) if output_dir else f.parent
            bd = bd.with_(written=[str(p) for p in write_breakdown(
                {**bd.data, "operators_all": bd.operators_all}, bd.profile.latency_ms(),
                {k: folder / v for k, v in names.items()}, fmt, doc=bd.to_json())])
        out.append(bd)
    return out
