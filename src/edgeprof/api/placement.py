"""``edgeprof placement``: where each operator ran, from any input that says so; two builds diffed and gated."""

from __future__ import annotations

from pathlib import Path

from ..files import command
from ..io.workspace import Workspace
from ._common import workspace
from .results_placement import PlacementDiff, PlacementInfo

STATIC_SUFFIXES = (".pte", ".onnx")


def load_placement(path, *, model=None, providers=None, method: str | None = None, ws: Workspace | None = None):
    """The :class:`~edgeprof.placement_model.Placement` of one input, chosen by what the input is: an ExecuTorch
    program (``.pte``: its delegates' contents), an ONNX model (``.onnx``: the providers a session assigns, with
    ``providers`` first and CPUExecutionProvider last), an anemll-profile or ane-costplan report (the compute plan),
    or a profile (ETDump, ONNX Runtime, LiteRT: what ran where). ``model``: the ONNX model an ONNX Runtime profile
    ran, to place every model node (also the ones inside a provider's fused subgraph)."""
    from ..analysis import placement as pa
    from ..errors import InputError, UsageError

    from ..conventions import FORMAT_ETDUMP

    ws = workspace(ws)
    p = Path(path)
    name = p.name.lower().removesuffix(".gz")
    if providers and not name.endswith(".onnx"):
        raise UsageError("--providers goes with an ONNX model (.onnx): the session's assignment of its nodes")
    if model is not None and name.endswith(STATIC_SUFFIXES):
        raise UsageError("--model goes with an ONNX Runtime profile (the ONNX model it ran)")
    if name.endswith(".pte"):
        from ..io.pte import read_pte

        return pa.from_program(read_pte(p), method)
    if name.endswith(".onnx"):
        from ..io.onnx_model import read_onnx
        from ..io.ort_assignment import assignment

        m = read_onnx(p)
        got = assignment(p, providers)
        return pa.from_onnx_assignment(m, got["assigned"], str(p))
    try:
        from ..io.formats import detect

        detect(p)
    except InputError as first:
        also = "; placement also reads a .pte, an .onnx, and anemll-profile / ane-costplan JSON reports"
        if not name.endswith(".json"):
            raise InputError(first.path, first.message + also, offset=first.offset, line=first.line) from None
        from ..io.anemll import detect as ane_kind

        doc = ws.ane_json(p)
        if ane_kind(doc) is None:
            raise InputError(first.path, first.message + also, offset=first.offset, line=first.line) from None
        if model is not None:
            raise UsageError("--model goes with an ONNX Runtime profile (the ONNX model it ran)") from None
        return pa.from_ane(ws.ane_report(p))
    prof = ws.profile(p)
    if model is not None:
        from ..runtimes import ONNXRUNTIME

        if prof.runtime != ONNXRUNTIME.name:
            raise UsageError("--model goes with an ONNX Runtime profile (the ONNX model it ran)")
        from ..io.onnx_model import read_onnx

        return pa.from_ort_profile_and_model(prof, read_onnx(model))
    placed = pa.from_profile(prof)
    if prof.format == FORMAT_ETDUMP:  # the program it ran, found beside it: the work of each operator
        prog = ws.program_for(p)
        if prog is not None:
            return pa.with_work(placed, pa.from_program(prog, method))
    return placed


@command
def placement(path, *, model=None, providers=None, method: str | None = None,
              ws: Workspace | None = None) -> PlacementInfo:
    """Where each operator of one input ran: operators in order, partitions, shares of time and work per
    placement (see :func:`load_placement` for the inputs it takes)."""
    from ..analysis.placement_parts import describe

    return PlacementInfo(describe(load_placement(path, model=model, providers=providers, method=method, ws=ws)))


@command
def placement_diff(baseline, candidate, *, model=None, candidate_model=None, providers=None,
                   method: str | None = None, ws: Workspace | None = None) -> PlacementDiff:
    """Baseline against candidate: the operators that moved (fallbacks named), partitions split or merged, the
    moved operators' time and a verdict. ``model`` / ``candidate_model``: the ONNX models two ONNX Runtime profiles
    ran (the candidate's defaults to the baseline's)."""
    from ..analysis.placement_diff import diff

    ws = workspace(ws)
    a = load_placement(baseline, model=model, providers=providers, method=method, ws=ws)
    b = load_placement(candidate, model=candidate_model or model, providers=providers, method=method, ws=ws)
    return PlacementDiff(diff(a, b))


def placement_gate(diff_doc, fail_on: str) -> str | None:
    """Why ``--fail-on fallback`` / ``new-partition`` fails on a placement diff (a :class:`PlacementDiff`, or the
    ``placement`` of a comparison), or None when it passes."""
    from ..analysis.placement_diff import gate

    return gate(diff_doc, fail_on)
