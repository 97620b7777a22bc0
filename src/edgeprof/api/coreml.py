"""``edgeprof coreml``: static analysis of Core ML models on any OS (no prediction, no macOS)."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError, UsageError
from ..files import command
from ._common import ane_boundary
from .results import CoreMLDiff, CoreMLStatic


def load_programs(path) -> list:
    """Every program of a bundle, or of each bundle in a folder (one per submodel, by name)."""
    from ..io.coreml import find_bundles, read_bundle

    return [read_bundle(b) for b in find_bundles(path)]


@command
def coreml(path, *, chip: str | None = None, boundary_ms: float | None = None) -> CoreMLStatic:
    """Per-op cost, hazards and an ANE placement estimate of a Core ML model or of every model in a folder.
    A bad bundle in a folder is reported in ``errors`` and the others are analysed."""
    from ..analysis.mil_static import DEFAULT_CHIP, analyze_program, chip as chip_info
    from ..io.coreml import find_bundles, read_bundle

    chip = chip or DEFAULT_CHIP
    chip_info(chip)  # validates the name before any reading
    b = ane_boundary(boundary_ms)
    bundles = find_bundles(path)
    models, errors = [], []
    for bundle in bundles:
        try:
            models.append(analyze_program(read_bundle(bundle), chip_name=chip, boundary_ms=b))
        except InputError as e:
            if len(bundles) == 1:
                raise
            errors.append({"path": str(bundle), "error": str(e)})
    return CoreMLStatic({"path": str(path), "models": models, "errors": errors})


@command
def coreml_diff(a, b, *, chip: str | None = None, boundary_ms: float | None = None) -> CoreMLDiff:
    """Two versions of one model: ops, bytes, hazards and estimated islands, side by side."""
    from ..analysis.mil_diff import diff

    ra, rb = coreml(a, chip=chip, boundary_ms=boundary_ms), coreml(b, chip=chip, boundary_ms=boundary_ms)
    for p, r in ((a, ra), (b, rb)):
        if len(r["models"]) != 1:
            raise InputError(p, f"expected one model to compare, found {len(r['models'])}")
    return CoreMLDiff(diff(ra["models"][0], rb["models"][0]))


@command
def coreml_as_anemll(path, out, *, chip: str | None = None, boundary_ms: float | None = None) -> CoreMLStatic:
    """The static analysis, and its estimate written as an anemll-profile–shaped JSON (``edgeprof ane`` reads it)."""
    from ..render.anemll_doc import estimate_document

    res = coreml(path, chip=chip, boundary_ms=boundary_ms)
    if len(res["models"]) != 1:
        raise InputError(path, f"--as-anemll writes one model's report; found {len(res['models'])} (name one bundle)")
    _write_json(out, estimate_document(res["models"][0]))
    return res


def _write_json(out, doc: dict) -> None:
    from ..render import jsonfmt
    from ..writer import write_text

    write_text(Path(out), jsonfmt.dumps(doc))


@command
def coreml_plan(model, out, *, compute_units: str = "all") -> Path:
    """macOS: the compute plan as an ane-costplan–compatible JSON report."""
    from ..collect.coreml_mac import plan_records
    from ..render.anemll_doc import costplan_document

    _write_json(out, costplan_document(str(model), plan_records(str(model), compute_units)))
    return Path(out)


@command
def coreml_profile(model, out, *, runs: int = 10, compute_units: str = "all",
                   boundary_ms: float | None = None) -> Path:
    """macOS: compute plan + timed predictions as an anemll-profile–compatible JSON report."""
    from ..collect.coreml_mac import plan_records, time_predictions

    if runs < 1:
        raise UsageError("--runs must be at least 1")
    _write_json(out, profile_document(str(model), plan_records(str(model), compute_units),
                                      time_predictions(str(model), compute_units, runs), compute_units,
                                      ane_boundary(boundary_ms)))
    return Path(out)


def profile_document(model: str, records: list[dict], timing: dict, compute_units: str, boundary_ms: float) -> dict:
    """Records of a compute plan and a timing into an anemll-profile–compatible document (every OS)."""
    from ..analysis.ane_islands import Placement, focus_device, islands, summary
    from ..render.anemll_doc import measured_document

    places = [Placement(r["function"], r["index"], r["name"], r["type"], r["device"], r["cost"] or 0.0,
                        "ANE" in r["supported"], None, "", r["cost"] is None) for r in records]
    focus = focus_device(places, compute_units == "all")
    isl = islands(places, boundary_ms=boundary_ms, focus=focus)
    return measured_document(model, records, timing, compute_units, boundary_ms, isl, summary(isl, focus))
