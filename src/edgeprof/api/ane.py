"""``edgeprof ane``: anemll-profile and ane-costplan reports, one report, two (diff), or a model folder."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError, UsageError
from ..files import command, exists, is_dir, is_file
from ..io.workspace import Workspace
from ._common import ane_boundary, workspace
from .results import AneAnalysis, AneDiff, AneFolder

BUNDLE_SUFFIXES = (".mlpackage", ".mlmodelc", ".mlmodel")


def is_model_bundle(path) -> bool:
    """A Core ML model (bundle or file) rather than a report."""
    return Path(path).suffix.lower() in BUNDLE_SUFFIXES


def _bundle_hint(path) -> str:
    p = Path(path)
    compiled = p.with_suffix(".mlmodelc").name
    return (f"a Core ML model, not a report: on a Mac run `anemll-profile -j profile.json {p.name}` (and "
            f"`ane-costplan -j costplan.json {compiled}` on the compiled model), then "
            "`edgeprof ane profile.json --costplan costplan.json`")


@command
def load_ane_report(path, ws: Workspace | None = None):
    """An anemll-profile or ane-costplan JSON report (by content) as AneProfile / AneCostPlan."""
    return workspace(ws).ane_report(path)


@command
def ane(path, *, costplan=None, boundary_ms: float | None = None, model=None, chip: str | None = None,
        ws: Workspace | None = None) -> AneAnalysis:
    """Findings for one anemll-profile report (with an optional ane-costplan report to cross-check, and with
    ``model`` the static analysis of the Core ML model it measured, joined op by op), or the plan's findings
    for a cost plan alone."""
    from ..analysis.ane import analyze_plan, analyze_profile
    from ..ane_model import AneCostPlan, AneProfile

    ws = workspace(ws)
    for p in (path, costplan):
        if p is not None and is_model_bundle(p):
            raise InputError(p, _bundle_hint(p))
    b = ane_boundary(boundary_ms)
    rep = ws.ane_report(path)
    plan = ws.ane_report(costplan) if costplan else None
    if plan is not None and not isinstance(plan, AneCostPlan):
        raise InputError(costplan, "expected an ane-costplan report here (this is an anemll-profile report)")
    if isinstance(rep, AneProfile):
        static = None
        if model is not None:
            from .coreml import coreml

            st = coreml(model, chip=chip, boundary_ms=b)
            if len(st["models"]) != 1:
                raise InputError(model, f"--model names one model; found {len(st['models'])}")
            static = st["models"][0]
        return AneAnalysis(analyze_profile(rep, plan, boundary_ms=b, static=static))
    if model is not None:
        raise UsageError("--model goes with an anemll-profile report (a cost plan has no measured runtimes)")
    if plan is not None:
        raise UsageError("--costplan goes with an anemll-profile report; the first input is a cost plan")
    return AneAnalysis(analyze_plan(rep))


@command
def ane_diff(before, after, *, ws: Workspace | None = None) -> AneDiff:
    """Two anemll-profile reports, or two ane-costplan reports, before vs after."""
    from ..analysis.ane_diff import diff_plans, diff_profiles
    from ..ane_model import AneProfile

    ws = workspace(ws)
    a, b = ws.ane_report(before), ws.ane_report(after)
    if type(a) is not type(b):
        raise UsageError("ane diff needs two reports of the same kind (two profiles or two cost plans)")
    return AneDiff(diff_profiles(a, b) if isinstance(a, AneProfile) else diff_plans(a, b))


def _report_files(inputs) -> list[Path]:
    files = []
    for item in inputs:
        p = Path(item)
        if is_dir(p):
            files += sorted(f for f in p.rglob("*.json") if is_file(f)
                            and not any(x.startswith(".") or is_model_bundle(x) for x in f.relative_to(p).parts))
        elif exists(p):
            files.append(p)
        else:
            raise InputError(p, "no such file or folder")
    return files


@command
def ane_folder(inputs, *, boundary_ms: float | None = None, ws: Workspace | None = None) -> AneFolder:
    """Every report below the inputs, one analysis per submodel (cost plans paired with their profile by model
    name), and one summary table. A folder is never analysed as one model."""
    from ..analysis.ane import analyze_plan, analyze_profile
    from ..analysis.ane_diff import PIPELINE_ORDER, model_stem, role_of
    from ..io.anemll import detect
    from ..ane_model import AneCostPlan, AneProfile

    ws = workspace(ws)
    profiles: list[tuple[Path, AneProfile]]
    plans: list[tuple[Path, AneCostPlan]]
    profiles, plans, skipped, errors = [], [], [], []
    for f in _report_files(inputs):
        try:
            if detect(ws.ane_json(f)) is None:
                skipped.append(str(f))
                continue
            rep = ws.ane_report(f)
        except InputError as e:
            errors.append({"file": str(f), "error": str(e)})
            continue
        (profiles if isinstance(rep, AneProfile) else plans).append((f, rep))
    if not profiles and not plans:
        bundles = [b for item in inputs for b in sorted(Path(item).glob("*")) if is_model_bundle(b)] \
            if is_dir(inputs[0]) else []
        raise InputError(inputs[0], "no anemll-profile or ane-costplan reports found"
                         + (f" ({len(skipped)} other JSON file(s) skipped)" if skipped else "")
                         + (f"; it holds {len(bundles)} Core ML model(s) ({', '.join(b.name for b in bundles[:4])}): "
                            "profile each submodel on a Mac with `anemll-profile -j <name>.profile.json <model>` and "
                            "`ane-costplan -j <name>.costplan.json <model>.mlmodelc`, then run edgeprof ane on this "
                            "folder" if bundles else ""))

    def stems(f, rep):
        name = rep.model.get("display_name") or rep.model.get("input_path") or "" if isinstance(rep, AneProfile) \
            else rep.model
        return {s for s in (model_stem(name), model_stem(f.name)) if s}

    b = ane_boundary(boundary_ms)
    results, used = [], set()
    for f, rep in profiles:
        mine = stems(f, rep)
        plan = next(((pf, pr) for pf, pr in plans if pf not in used and stems(pf, pr) & mine), None)
        if plan:
            used.add(plan[0])
        r = analyze_profile(rep, plan[1] if plan else None, boundary_ms=b)
        r["file"] = str(f)
        results.append(r)
    for f, rep in plans:
        if f not in used:
            r = analyze_plan(rep)
            r["file"] = str(f)
            results.append(r)
    order = {role: i for i, role in enumerate(PIPELINE_ORDER)}
    for r in results:
        # one name per submodel — its bundle's (the report's model), else the report file's — and the role read
        # from that same name, so a row never pairs one file's role with another bundle's name
        file_stem = model_stem(Path(r["file"]).name)
        name = model_stem(r["model"]) or file_stem
        role = role_of(name)
        if not role and role_of(file_stem):
            name, role = file_stem, role_of(file_stem)
        r["summary"].update(model=name, role=role, file=r["file"], headline=r["headline"])
    results.sort(key=lambda r: (order.get(r["summary"]["role"], 99), r["summary"]["model"], r["file"]))
    return AneFolder({"reports": results, "summary": [r["summary"] for r in results], "skipped": skipped,
                      "errors": errors, "note": "each report is one submodel; nothing is summed across them"})
