"""``edgeprof compare``: which arm is the baseline, and is the candidate faster?

Roles are decided here, once, for ``compare``, ``latency --compare`` and ``report``: SME2 names first (the
SME2-off input is the baseline whatever the order), then ``--baseline``/``--candidate`` as given, the first of
two positional inputs, or the Arm kit's ``--compare`` input as the reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageError
from ..conventions import LEVEL, THRESHOLD
from ..files import command
from ..io.runfolder import comparison_stem
from ..io.traces import sme2_role
from ..io.workspace import Workspace
from ._common import as_list, checked_threshold, launch_facts_of, shared_name, taxonomy_of, workspace
from .results import Comparison

if TYPE_CHECKING:
    from collections.abc import Sequence

SME2_NOTE = "the SME2-off input is the baseline whatever the order given"


@dataclass
class Roles:
    """Which inputs are the baseline and which the candidate, their names, and why (one line)."""

    baseline: list[str]
    candidate: list[str]
    baseline_name: str | None = None
    candidate_name: str | None = None
    note: str = ""
    warnings: list[str] = field(default_factory=list)


def _role(paths, name: str | None) -> str | None:
    """The SME2 role of an arm: from its files' paths when they agree on one, else from its name."""
    found = {sme2_role(str(p)) for p in paths}
    if len(found) == 1 and None not in found:
        return found.pop()
    return sme2_role(name) if name else None


def assign_roles(inputs: list[str], baseline_name: str | None = None, candidate_name: str | None = None) -> Roles:
    """Two positional inputs: by ``sme2_off``/``sme2_on`` in their names when that decides it, else in the order
    given (first = baseline)."""
    if len(inputs) != 2:
        raise UsageError("give two inputs (baseline then candidate), or --baseline and --candidate")
    r0, r1 = _role([inputs[0]], None), _role([inputs[1]], None)
    if r0 == "on" and r1 == "off":
        return Roles([inputs[1]], [inputs[0]], baseline_name, candidate_name, f"by name: {SME2_NOTE}")
    if r0 == "off" and r1 == "on":
        return Roles([inputs[0]], [inputs[1]], baseline_name, candidate_name, f"by name: {SME2_NOTE}")
    return Roles([inputs[0]], [inputs[1]], baseline_name, candidate_name, "in the order given (first = baseline)")


def kit_roles(changed: str, reference: str, changed_name: str | None = None,
              reference_name: str | None = None) -> Roles:
    """The Arm kit's ``--timeline-csv CHANGED --compare REFERENCE --name1 … --name2 …``: the ``--compare`` input
    is the reference (baseline) unless SME2 names say which is SME2-off; each name stays with its file."""
    rc, rr = _role([changed], changed_name), _role([reference], reference_name)
    if rc == "off" and rr == "on":
        return Roles([changed], [reference], changed_name, reference_name, f"by name: {SME2_NOTE}")
    if rc == "on" and rr == "off":
        return Roles([reference], [changed], reference_name, changed_name, f"by name: {SME2_NOTE}")
    return Roles([reference], [changed], reference_name, changed_name,
                 "the --compare input is the reference (baseline), --timeline-csv the candidate")


def explicit_roles(baseline: list[str], candidate: list[str], baseline_name: str | None = None,
                   candidate_name: str | None = None) -> Roles:
    """--baseline/--candidate as given; a warning when the names say the roles look reversed."""
    rb, rc = _role(baseline, baseline_name), _role(candidate, candidate_name)
    warnings = []
    if rb == "on" and rc == "off":
        warnings.append("the baseline looks like an SME2-on run and the candidate like an SME2-off run; kept as given "
                        "(speedup = baseline / candidate, so > 1 means the SME2-off candidate is faster)")
    return Roles(baseline, candidate, baseline_name, candidate_name, "as given (--baseline/--candidate)", warnings)


def check_distinct(ws: Workspace, b_files: list[Path], c_files: list[Path]) -> None:
    """A usage error when a file (or a copy of the same measurement) is in both arms."""
    rb = {f.resolve() for f in b_files}
    for f in c_files:
        if f.resolve() in rb:
            raise UsageError(f"{f} is in both the baseline and the candidate: a comparison needs two different arms")
    for f in c_files:
        for g in b_files:
            if ws.same_measurement(g, f):
                raise UsageError(f"{f} and {g} hold the same measurement: the baseline and the candidate are the "
                                 "same runs")


def _arm_name(series, given: str | None, by_file: bool = False) -> str:
    """An arm's name: the one given, else its experiment, else (or with ``by_file``) what its files' names share
    once their launch numbers (``_l<k>``) are left out."""
    if given:
        return given
    exps = {s.experiment for s in series}
    if len(exps) == 1 and None not in exps and not by_file:
        return exps.pop()
    return shared_name([s.path for s in series])


def _distinct_launches(ws: Workspace, files: list[Path], role: str) -> tuple[list[Path], str | None]:
    """An arm's files with identical recordings (the same file given twice, or copies of one measurement) counted
    once, and the one line that says so (None when there were none)."""
    kept: list[Path] = []
    dropped: list[tuple[Path, Path]] = []
    for f in files:
        same = next((g for g in kept if g.resolve() == f.resolve() or ws.same_measurement(g, f)), None)
        if same is None:
            kept.append(f)
        else:
            dropped.append((f, same))
    if not dropped:
        return kept, None
    return kept, (f"{len(dropped)} {role} input(s) repeat a recording already in the arm and count once "
                  f"({', '.join(f'{a.name} = {b.name}' for a, b in dropped[:3])}"
                  + (", …" if len(dropped) > 3 else "") + f"): {len(kept)} distinct launch(es)")


def launch_noise(ws: Workspace, files: list[Path], launch_cv=None, store=None, facts: Sequence[dict] = ()):
    """The launch-to-launch noise a comparison of ``files`` assumes where its arms cannot measure it: ``launch_cv``
    when given as a number; else (``None``/``"auto"``) what the history ``store`` knows about the same model and
    device, else the ``noise.json`` beside the inputs, else the default (:mod:`edgeprof.analysis.noise`)."""
    from ..analysis import noise as nz
    from ..files import display

    if launch_cv not in (None, "auto"):
        return nz.given(float(launch_cv))
    from_store = None
    if store is not None:
        from .history import store_launch_noise

        devices = {f.get("device") for f in facts if f.get("device")}
        from_store = store_launch_noise(store, device=devices.pop() if len(devices) == 1 else None)
    from_profile = None
    for f in files:
        doc, where = ws.noise_profile(f.parent)
        if doc is not None:
            from_profile = nz.from_profile(doc, display(where))
            if from_profile is not None:
                break
    return nz.choose(from_store, from_profile)


def placement_of_arms(baseline_profile, candidate_profile) -> dict:
    """Where each operator ran in the first launch of each arm, diffed (``edgeprof placement --diff``'s document
    without its kind)."""
    from ..analysis.placement import from_profile
    from ..analysis.placement_diff import diff

    return diff(from_profile(baseline_profile), from_profile(candidate_profile))


@command
def compare(baseline, candidate, *, run_dir=None, threads: int | None = None, baseline_name: str | None = None,
            candidate_name: str | None = None, threshold: float = THRESHOLD, level: float = LEVEL, seed: int = 0,
            resamples: int = 2000, warmup="auto", categories: bool = True, taxonomy=None, top: int = 20,
            roles: Roles | None = None, write: bool = False, output_dir=None, out=None,
            launch_cv=None, store=None, metric: str = "median", allow_different: bool = False,
            ws: Workspace | None = None) -> Comparison:
    """Compare end-to-end latency: speedup = baseline / candidate with its interval and a verdict; with
    profiles (ETDumps or timeline CSVs) also by category and operator, with the bottleneck statement.

    ``baseline``/``candidate``: one or more inputs each (several files = several process launches). ``write``
    writes ``<baseline>_vs_<candidate>_robust_comparison.json`` beside the baseline (``output_dir``, ``out``).
    ``launch_cv``: the launch-to-launch SD assumed where the arms cannot measure it — a number, or ``"auto"``/None
    for the evidence (:func:`launch_noise`: the history ``store``, ``noise.json``, the default); 0: none.
    ``metric``: what the verdict is about — median (default), mean, p90 or p99.
    What both arms recorded is compared first; a different device or thread count besides the variable under
    test makes the verdict ``not_comparable`` unless ``allow_different``.
    """
    from ..analysis.comparability import comparability
    from ..analysis.compare import Arm, arm_selection, compare_latency
    from ..conventions import metric_name

    threshold = checked_threshold(threshold)
    if not 0.5 < level < 1:
        raise UsageError(f"level must be in (0.5, 1), got {level}")
    if launch_cv not in (None, "auto") and not (isinstance(launch_cv, (int, float)) and 0 <= launch_cv < 2):
        raise UsageError(f"launch_cv must be auto or in [0, 2), got {launch_cv}")
    from ..conventions import MEMORY_METRICS

    if str(metric).partition(":")[0] in MEMORY_METRICS:
        raise UsageError(f"--metric {metric}: a comparison states peak memory beside the time (its `memory` part, the "
                         "report's Peak memory) and compare --fail-on memory-regression gates it; history takes "
                         "--metric peak_rss")
    try:
        metric = metric_name(metric)
    except ValueError as e:
        raise UsageError(f"--metric: {e}") from None
    ws = workspace(ws, run_dir)
    b_files = [f for spec in as_list(baseline) for f in ws.resolve(spec, run_dir, threads)]
    c_files = [f for spec in as_list(candidate) for f in ws.resolve(spec, run_dir, threads)]
    check_distinct(ws, b_files, c_files)
    b_files, b_repeat = _distinct_launches(ws, b_files, "baseline")
    c_files, c_repeat = _distinct_launches(ws, c_files, "candidate")
    bs, cs = [ws.series(f) for f in b_files], [ws.series(f) for f in c_files]
    b_arm = Arm(_arm_name(bs, baseline_name), [s.values_ms for s in bs], [str(s.path) for s in bs])
    c_arm = Arm(_arm_name(cs, candidate_name), [s.values_ms for s in cs], [str(s.path) for s in cs])
    if b_arm.name == c_arm.name and not (baseline_name or candidate_name):  # one experiment: name them by file
        b_arm.name, c_arm.name = _arm_name(bs, None, by_file=True), _arm_name(cs, None, by_file=True)
    if b_arm.name == c_arm.name:
        b_arm.name, c_arm.name = f"{b_arm.name} (baseline)", f"{c_arm.name} (candidate)"
    b_facts, c_facts = [launch_facts_of(ws, f) for f in b_files], [launch_facts_of(ws, f) for f in c_files]
    noise = launch_noise(ws, b_files + c_files, launch_cv, store, b_facts + c_facts)
    runs = arm_selection(b_arm, warmup), arm_selection(c_arm, warmup)  # each arm's runs, for every analysis below
    result = compare_latency(b_arm, c_arm, threshold=threshold, level=level, seed=seed, resamples=resamples,
                             selections=runs, noise=noise, metric=metric,
                             comparability=comparability(b_facts, c_facts), allow_different=allow_different)
    result["warnings"] = ([w for w in (b_repeat, c_repeat) if w]
                          + [w for s in bs + cs for w in (f"{s.path.name}: {x}" for x in s.warnings)]
                          + result["warnings"])
    stem_b = bs[0].timeline_stem if len(bs) == 1 else b_arm.name
    stem_c = cs[0].timeline_stem if len(cs) == 1 else c_arm.name
    result["output_stem"] = comparison_stem(stem_b, stem_c)
    result["inputs"] = {"baseline": [str(s.path) for s in bs], "candidate": [str(s.path) for s in cs]}
    if roles is not None:
        result["roles"] = roles.note
    if categories and all(s.profile is not None for s in bs + cs):
        from ..analysis.compare_ops import compare_categories

        result["by_category"] = compare_categories(
            [s.profile for s in bs if s.profile], [s.profile for s in cs if s.profile], b_name=b_arm.name, c_name=c_arm.name,
            b_runs=runs[0], c_runs=runs[1],
            taxonomy=taxonomy_of(taxonomy), level=level, seed=seed, resamples=resamples, threshold=threshold, top=top,
            noise=noise)
        result["placement"] = placement_of_arms(bs[0].profile, cs[0].profile)
    from .memory import launch_memory

    mem_b = [m for m in (launch_memory(ws, f) for f in b_files) if m is not None]
    mem_c = [m for m in (launch_memory(ws, f) for f in c_files) if m is not None]
    if mem_b and mem_c:
        from ..analysis.memory import compare_memory

        result["memory"] = compare_memory(mem_b, mem_c, threshold=threshold, level=level)
    cmp = Comparison(result)
    if write:
        from ..writer import write_text
        from ..render.jsonfmt import dumps

        target = Path(out) if out else (Path(output_dir) if output_dir else Path(run_dir) if run_dir
                                        else b_files[0].parent) / f"{result['output_stem']}.json"
        write_text(target, dumps(cmp.to_json()))
        cmp = cmp.with_(written=str(target))
    return cmp
