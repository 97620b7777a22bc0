"""``edgeprof latency``: robust end-to-end latency statistics of each launch."""

from __future__ import annotations

from pathlib import Path

from ..conventions import fit_name, profile_stem
from ..files import command, display
from ..io.formats import by_name
from ..io.workspace import Workspace
from ._common import as_list, workspace
from .results import LatencyReport


@command
def latency(inputs, *, run_dir=None, threads: int | None = None, name: str | None = None, seed: int = 0,
            resamples: int = 2000, names: dict | None = None, write: bool = False, output_dir=None,
            ws: Workspace | None = None) -> list[LatencyReport]:
    """Robust latency statistics for each launch (file) named by ``inputs``, one :class:`LatencyReport` each.

    ``inputs``: ETDumps, timeline CSVs, folders, or experiment names of ``run_dir``. ``name`` names every
    report; ``names`` maps an input (as given) to its report's name. ``write`` writes each report to
    ``<timeline stem>_robust_stats.json`` beside its input (or in ``output_dir``), as the Arm kit does.
    """
    from ..analysis.latency import robust_latency
    from ..writer import write_text
    from ..render.jsonfmt import dumps

    ws = workspace(ws, run_dir)
    out = []
    for spec in as_list(inputs):
        given = (names or {}).get(spec) or name
        for f in ws.resolve(spec, run_dir, threads):
            s = ws.series(f)
            kit = s.profile is None or by_name(s.profile.format).kit_names
            shown = s.timeline_stem if kit else profile_stem(s.path)
            rep = robust_latency(s.values_ms, name=given or display(shown), run_indices=s.run_indices,
                                 seed=seed, resamples=resamples, source=s.source)
            rep.update(input=str(s.path), warnings=list(s.warnings))
            if s.profile is not None and s.profile.runtime:
                rep["runtime"] = s.profile.runtime
            report = LatencyReport(rep, series=s)
            if write:
                target = (Path(output_dir) if output_dir else s.path.parent) / fit_name(s.timeline_stem,
                                                                                        "_robust_stats.json")
                write_text(target, dumps(report.to_json()))
                report = report.with_(written=str(target))
            out.append(report)
    return out
