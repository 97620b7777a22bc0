"""``edgeprof breakdown``: where the time goes in one profile."""

from __future__ import annotations

from pathlib import Path

from ..files import display
from ..io.runfolder import timeline_model_name
from ..io.workspace import Workspace
from ._common import as_list, taxonomy_of, workspace
from .results import Breakdown


def load_profile(path, *, etrecord=None, strict_etrecord: bool = False, method: str | None = None,
                 ws: Workspace | None = None):
    """An ETDump (its ETRecord given or found as ``analyze`` finds it) or a timeline CSV, as a Profile of the runs
    with a valid end-to-end time."""
    ws = workspace(ws, None, etrecord=etrecord, strict_etrecord=strict_etrecord, method=method)
    return ws.valid_profile(path)


def breakdown(path, *, etrecord=None, strict_etrecord: bool = False, taxonomy=None, top: int = 15,
              model_name: str | None = None, skip_runs: int = 0, program=None, ws: Workspace | None = None) -> Breakdown:
    """Category accounting, top and OTHER operators, backends, portable hotspots and graph breaks of one profile
    (its valid runs, without the first ``skip_runs``). ``.profile`` is the profile that was accounted. With
    ``program`` (the .pte that ran): per instruction and category, achieved GFLOP/s and GB/s, intensity, weight
    share and the XNNPACK node mix behind each delegate call."""
    from ..analysis.breakdown import breakdown as run_breakdown

    ws = workspace(ws, None, etrecord=etrecord, strict_etrecord=strict_etrecord)
    path = Path(path)
    prof = ws.valid_profile(path).without_leading_runs(skip_runs)
    name = model_name or display(timeline_model_name(path))
    result = run_breakdown(prof, taxonomy=taxonomy_of(taxonomy), top=top, name=name)
    result.update(input=str(path), etrecord_status=prof.etrecord.status if prof.etrecord else "absent",
                  experiment=ws.describe(path).experiment, warnings=list(prof.warnings))
    if program is not None:
        from ..io.pte import read_pte
        from .program import join_with_program

        result["program"] = join_with_program(prof, read_pte(program))
    return Breakdown(result, profile=prof)


def breakdowns(inputs, *, run_dir=None, threads: int | None = None, etrecord=None, strict_etrecord: bool = False,
               taxonomy=None, top: int = 15, model_name: str | None = None, write: bool = False, output_dir=None,
               fmt: str = "csv", program=None, ws: Workspace | None = None) -> list[Breakdown]:
    """:func:`breakdown` of every profile named by ``inputs`` (files, folders, experiments of ``run_dir``);
    ``write`` writes the Arm kit's breakdown files beside each input (or in ``output_dir``)."""
    from ..io.runfolder import breakdown_files
    from ..render.breakdown_files import write_breakdown
    from ..render.tables import suffix

    ws = workspace(ws, run_dir, etrecord=etrecord, strict_etrecord=strict_etrecord)
    files = [f for spec in as_list(inputs) for f in ws.resolve(spec, run_dir, threads)]
    out = []
    taxonomy = taxonomy_of(taxonomy)
    for f in files:
        bd = breakdown(f, taxonomy=taxonomy, top=top, model_name=model_name if len(files) == 1 else None,
                       program=program, ws=ws)
        if write:
            names = breakdown_files(bd.name, suffix(fmt))
            folder = Path(output_dir) if output_dir else f.parent
            bd = bd.with_(written=[str(p) for p in write_breakdown(
                {**bd.data, "operators_all": bd.operators_all}, bd.profile.latency_ms(),
                {k: folder / v for k, v in names.items()}, fmt, doc=bd.to_json())])
        out.append(bd)
    return out
