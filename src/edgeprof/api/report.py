"""``edgeprof report``: everything about a run folder, one profile or a pair, as one document.

The configurations, the comparison, the kernel evidence and the validation all read through one workspace,
so each input is read once however many sections use it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..conventions import THRESHOLD, fit_name, profile_stem
from ..errors import InputError, UsageError
from ..files import command, exists, is_dir
from ..io.formats import by_name
from ..io.manifest import recorded_device, recorded_environment, recorded_runners, recorded_runtimes
from ..io.runfolder import display_path
from ..io.traces import sme2_role
from ..io.workspace import Workspace
from ._common import configurations, taxonomy_of, workspace
from .compare import assign_roles, compare
from .kernels import kernel_view, kernels
from .results import Report
from .validate import validate


def _arms(ws: Workspace, inputs: list[str], run_dir: Path | None, baseline, candidate, threads, missing: list):
    """[(role, specs, configuration name or None)] and whether the pair is SME2-off vs SME2-on."""
    if baseline or candidate:
        if not (baseline and candidate):
            raise UsageError("give both --baseline and --candidate")
        pair = sme2_role(" ".join(baseline)) == "off" and sme2_role(" ".join(candidate)) == "on"
        return [("baseline", list(baseline), None), ("candidate", list(candidate), None)], pair
    if run_dir is None and len(inputs) == 2:
        r = assign_roles(inputs)
        return [("baseline", r.baseline, None), ("candidate", r.candidate, None)], r.note.startswith("by name")
    if run_dir is None and len(inputs) == 1:
        return [(None, inputs, None)], False
    if run_dir is None:
        raise UsageError("give a run folder, one or two ETDumps/timeline CSVs, or --baseline and --candidate")
    # one configuration per experiment × program × runtime options (a thread sweep: one per thread count)
    exps = configurations(ws, [f for f in ws.etdumps(run_dir) if threads is None or ws.describe(f).threads == threads],
                          unnamed="by_name")
    if not exps:
        raise InputError(run_dir, "no .etdump or .etdp files found" + (f" with {threads} thread(s)" if threads else ""))
    roles = {e: sme2_role(e) for e in exps}
    off = [e for e, r in roles.items() if r == "off"]
    on = [e for e, r in roles.items() if r == "on"]
    if len(off) == 1 and len(on) == 1:
        return [("baseline", [str(p) for p in exps[off[0]]], off[0]),
                ("candidate", [str(p) for p in exps[on[0]]], on[0])], True
    if len(exps) > 1:
        missing.append("no baseline/candidate pair: each configuration is reported on its own "
                       "(give --baseline and --candidate to compare two"
                       + (", and --threads for one thread count)" if len({ws.describe(f).threads for v in exps.values()
                                                                       for f in v}) > 1 else ")"))
    return [(None, [str(p) for p in v], k) for k, v in sorted(exps.items())], False


def _configuration(ws: Workspace, role, specs, run_dir, threads, name, seed, resamples, taxonomy, top) -> dict:
    from ..analysis.breakdown import breakdown as run_breakdown
    from ..analysis.kernels import executed_from_profile
    from ..analysis.latency import robust_latency
    from ..analysis.selection import select_runs
    from ..analysis.report import representative_run, run_lanes
    from ..model import concat_runs

    files = [f for s in specs for f in ws.resolve(s, run_dir, threads)]
    first = files[0]
    rf = ws.describe(first)
    if not name:
        name = rf.experiment or (profile_stem(first) if len(files) == 1
                                  else os.path.commonprefix([profile_stem(f) for f in files]))  # noqa: RUF071 - names, not paths
    # every table and chart of the report uses the same runs: each launch's steady runs after its detected warm-up,
    # the launches one after the other — the runs the comparison uses
    profs = [ws.valid_profile(f) for f in files]
    prof = profs[0]
    runs = select_runs([p.latency_ms() for p in profs], "auto", [str(f) for f in files])
    parts = [p.without_leading_runs(x.warmup) for p, x in zip(profs, runs.launches)]
    steady = concat_runs(parts)
    if len(files) == 1:  # one launch: its warm-up is reported with the statistics (the same detection)
        latency_rep = robust_latency(prof.latency_ms(), name=name, seed=seed, resamples=resamples,
                                     source=prof.latency_source)
    else:
        latency_rep = robust_latency(steady.latency_ms(), name=name, seed=seed, resamples=resamples,
                                     source=steady.latency_source, warmup_known=runs.warmup_total,
                                     launch_sizes=[len(p.latency_ms()) for p in parts])
    if prof.runtime:
        latency_rep["runtime"] = prof.runtime  # as the latency document says it
    bd = run_breakdown(steady, taxonomy=taxonomy, top=top, name=name)
    bd.pop("operators_all", None)
    rep_run = representative_run(steady.latency_ms().tolist(), 0)
    launch, within = runs.locate(rep_run)
    program = None
    takes_program = by_name(prof.format).takes_program
    if takes_program:
        pte = ws.program_for(first)
        if pte is not None:
            from .program import join_with_program

            program = join_with_program(steady, pte)
    phases_doc = None
    if takes_program and len(files) == 1:
        from .phases import phases as run_phases

        ph = run_phases(first, seed=seed, ws=ws).data
        if len(ph["phases"]) > 1:  # an LLM-shaped recording: prefill and decode are reported apart
            phases_doc = ph
    return {
        "phases": phases_doc,
        "program": program,
        "name": name, "role": role, "files": [str(f) for f in files], "threads": rf.threads,
        "experiment": rf.experiment, "platform": rf.platform,
        "sme2_role": sme2_role(" ".join([rf.experiment or "", name, str(first)])),
        "evidence": prof.format,
        "etrecord": prof.etrecord.status if prof.etrecord else "absent",
        "latency": latency_rep, "breakdown": bd,
        "runs_used": runs.to_json(),
        "kernel_evidence": executed_from_profile(steady, taxonomy),
        "lanes": {"run_index": within, "launch": launch + 1 if len(files) > 1 else None,
                  "segments": run_lanes(steady, rep_run)},
        "launches": len(files),
    }


def _kernel_part(ws: Workspace, run_dir: Path, configs: list[dict], missing: list) -> dict:
    from ..analysis.kernels import registered_vs_executed, summarize_kernels

    traces = ws.trace_logs(run_dir)
    logs: list[dict[str, Any]] = [{"path": display_path(t, run_dir), "role": sme2_role(display_path(t, run_dir)),
                                   "summary": summarize_kernels(kernels(t, ws=ws)["kernels"])} for t in traces]
    on = [t for t in traces if sme2_role(display_path(t, run_dir)) == "on"]
    off = [t for t in traces if sme2_role(display_path(t, run_dir)) == "off"]
    view = kernel_view(off[0], on[0], ws=ws).data if len(on) == 1 and len(off) == 1 else None
    part: dict[str, Any] = {"logs": logs, "view": view, "registered_vs_executed": []}
    for role in ("on", "off"):
        regs = [x["summary"] for x in logs if x["role"] == role]
        ran = [c["kernel_evidence"] for c in configs if c["sme2_role"] == role and c.get("kernel_evidence")]
        why = registered_vs_executed(regs, ran) if regs and ran else None
        if why:
            part["registered_vs_executed"].append({"role": role, "statement": why,
                                                   "logs": [x["path"] for x in logs if x["role"] == role],
                                                   "configs": [c["name"] for c in configs if c["sme2_role"] == role]})
    if not logs:
        missing.append("no XNNPACK trace log in the run folder or a sibling `<platform>_trace` folder: kernel evidence "
                       "is the executed tier (op names) only")
    return part


@command
def report(inputs=(), *, baseline=(), candidate=(), baseline_name: str | None = None, candidate_name: str | None = None,
           threads: int | None = None, seed: int = 0, resamples: int = 2000, threshold: float = THRESHOLD, top: int = 15,
           taxonomy=None, out=None, html=None, write: bool = False, launch_cv=None, store=None,
           metric: str = "median", allow_different: bool = False, ws: Workspace | None = None) -> Report:
    """Everything about a run folder (or one or two ETDumps / timeline CSVs) for the Markdown/HTML report:
    metadata as recorded, latency per configuration, the comparison and categories when there is a baseline
    and a candidate, breakdowns, kernel evidence, validation and the findings. What is missing is listed rather
    than guessed. ``write`` writes the Markdown (``out``, default ``RUN_DIR/report.md`` or
    ``<first input>_report.md``) and, with ``html``, the HTML — both or neither."""
    from ..conventions import TOOL_VERSION as __version__
    from ..analysis.report import findings
    from ..conventions import EVIDENCE_NAMES
    from ..taxonomy import TAXONOMY_VERSION

    inputs = [str(x) for x in inputs]
    if not inputs and not (baseline and candidate):
        raise UsageError("give a run folder, one or two ETDumps, or --baseline and --candidate")
    run_dir = Path(inputs[0]) if len(inputs) == 1 and is_dir(inputs[0]) else None
    if (baseline or candidate) and len(inputs) > 1:
        raise UsageError("with --baseline/--candidate give at most one run folder")
    for x in inputs:
        if not exists(x):
            raise InputError(x, "no such file or folder")
    ws = workspace(ws, run_dir)
    tax = taxonomy_of(taxonomy)
    missing: list[str] = []
    arms, sme2_pair = _arms(ws, inputs, run_dir, baseline, candidate, threads, missing)
    configs = []
    for role, specs, config_name in arms:
        name = (baseline_name if role == "baseline" else candidate_name if role == "candidate" else None) or config_name
        configs.append(_configuration(ws, role, specs, run_dir, threads, name, seed, resamples, tax, top))
        if configs[-1]["etrecord"] != "attached" and configs[-1]["evidence"] == "etdump":
            missing.append(f"{configs[-1]['name']}: no ETRecord attached — op types and backend names are inferred "
                           "from event names")
    comparison = None
    pair = [c for c in configs if c["role"] in ("baseline", "candidate")]
    if len(pair) == 2 and pair[0]["name"] == pair[1]["name"]:  # the comparison's arm names, in every table too
        for c in pair:
            c["name"] = c["latency"]["name"] = c["breakdown"]["name"] = f"{c['name']} ({c['role']})"
    if len(pair) == 2:
        b, c = pair
        comparison = compare(b["files"], c["files"], baseline_name=b["name"], candidate_name=c["name"],
                             threshold=threshold, seed=seed, resamples=resamples, taxonomy=tax, top=top,
                             launch_cv=launch_cv, store=store, metric=metric, allow_different=allow_different,
                             ws=ws).data
    phase_cmp = None
    if len(pair) == 2 and all(c.get("phases") for c in pair) and len(pair[0]["files"]) == len(pair[1]["files"]) == 1:
        from .phases import compare_phases

        phase_cmp = compare_phases(pair[0]["files"][0], pair[1]["files"][0], seed=seed, ws=ws).data
    numerics_doc = _numerics_of(ws, pair)
    manifest, mpath, _ = ws.manifest(run_dir if run_dir else Path(configs[0]["files"][0]).parent)
    device, device_src = recorded_device(manifest)
    if device is None:
        missing.append("device: not recorded in the run (no device in manifest.json); edgeprof does not report the "
                       "analysis host as the device")
    if run_dir is not None:
        kernels_part = _kernel_part(ws, run_dir, configs, missing)
    else:
        kernels_part = None
        missing.append("no run folder: validation and trace-log kernel evidence are not part of this report")
    validation = validate(run_dir, ws=ws).data if run_dir is not None else None
    data = {
        "tool": "edgeprof", "version": __version__, "taxonomy_version": TAXONOMY_VERSION,
        "title": (f"{comparison['candidate']['name']} vs {comparison['baseline']['name']}" if comparison
                  else ", ".join(c["name"] for c in configs)),
        "metadata": {
            "run_dir": str(run_dir) if run_dir else None, "manifest": str(mpath) if mpath else None,
            "model": (manifest or {}).get("model") if isinstance((manifest or {}).get("model"), str) else
            ws.describe(Path(configs[0]["files"][0])).model,
            "models": {str(k): v for k, v in got.items() if isinstance(v, str)}
            if isinstance(got := (manifest or {}).get("models"), dict) else None,
            "device": device, "device_source": device_src, "runners": recorded_runners(manifest),
            "environment": [list(r) for r in recorded_environment(
                manifest, [(c.get("breakdown") or {}).get("runtime") for c in configs])],
            "executorch": (manifest or {}).get("executorch") if isinstance((manifest or {}).get("executorch"), dict) else None,
            "runtimes": recorded_runtimes(manifest, [(c.get("breakdown") or {}).get("runtime") for c in configs]),
        },
        "configs": configs, "comparison": comparison, "phase_comparison": phase_cmp, "sme2_pair": sme2_pair,
        "kernels": kernels_part,
        "validation": validation, "missing": missing,
        "latency_evidence": "+".join(sorted({c["evidence"] for c in configs})),
    }
    if numerics_doc is not None:
        data["numerics"] = numerics_doc
    data["findings"] = findings(data)
    data["evidence_names"] = EVIDENCE_NAMES
    rep = Report(data)
    return _write(rep, run_dir, inputs, baseline, out, html) if write else rep


def _numerics_of(ws: Workspace, pair: list[dict]) -> dict | None:
    """``edgeprof numerics`` of the baseline's and candidate's first ETDumps, when both have a debug buffer beside
    them (``run --debug-buffer``)."""
    from ..io.debug_buffer import find_debug_buffer

    files = [Path(c["files"][0]) for c in pair if c.get("files")]
    if len(pair) != 2 or len(files) != 2 or any(find_debug_buffer(f) is None for f in files):
        return None
    from .numerics import numerics

    return numerics(files[0], files[1], ws=ws).data


def _write(rep: Report, run_dir: Path | None, inputs: list[str], baseline, out, html) -> Report:
    from ..writer import Batch

    if out:
        md_path = Path(out)
    elif run_dir:
        md_path = run_dir / "report.md"
    else:
        first = Path((list(inputs) or list(baseline))[0])
        md_path = first.with_name(fit_name(first.name.split(".")[0], "_report.md"))
    with Batch() as batch:
        batch.path(md_path).write_bytes(rep.markdown().encode("utf-8", "replace"))
        if html:
            batch.path(Path(html)).write_bytes(rep.html().encode("utf-8", "replace"))
    return rep.with_(written=[str(md_path)] + ([str(html)] if html else []))
