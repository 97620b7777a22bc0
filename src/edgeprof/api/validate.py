"""``edgeprof validate``: does a run folder hold what the analysis needs, and does it say what it claims?

This module gathers facts from the folder through the workspace (each file read once, shared with a report
that validates the folder it reports on); :mod:`edgeprof.analysis.validate` judges them.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError, UsageError
from ..files import command, exists, is_dir, is_file
from ..io.runfolder import MANIFEST, METRICS, SUMMARY, analysis_files, display_path
from ..io.traces import manifest_sme2_roles, sme2_role, trace_folders, trace_stem
from ..io.workspace import Workspace
from ._common import rel, workspace
from .results import Validation


def _mtime(p: Path) -> float | None:
    try:
        return p.stat().st_mtime
    except OSError:
        return None


def _json_facts(ws: Workspace, path: Path, required_keys: dict):
    from ..analysis.validate import JsonFacts

    facts = JsonFacts(path=str(path), exists=is_file(path))
    if not facts.exists:
        return facts, None
    doc, problem = ws.json_doc(path)
    if problem:
        facts.problems.append(problem)
        return facts, None
    if not isinstance(doc, dict):
        facts.problems.append("not a JSON object")
        return facts, None
    for key, typ in required_keys.items():
        if not isinstance(doc.get(key), typ):
            facts.problems.append(f"'{key}' missing or not a {typ.__name__}")
    return facts, doc


def _etdump_facts(ws: Workspace, f: Path, run_dir: Path, out_root: Path | None, role):
    from ..analysis.kernels import executed_from_profile
    from ..analysis.validate import EtdumpFacts, OutputFile
    from ..io.timeline_csv import execute_latency_ms

    rf = ws.describe(f)
    e = EtdumpFacts(path=rel(f, run_dir), key=str(f.resolve()), experiment=rf.experiment, role=role)
    try:
        valid = ws.valid_profile(f, etrecord=False)
        lat = valid.latency_ms()
        e.runs, e.events = valid.n_runs, ws.profile(f, etrecord=False).n_events
        e.mean_ms = float(lat.mean()) if lat.size else None
        e.evidence = executed_from_profile(valid)
    except InputError as err:
        e.error = err.message + (f" (at byte offset {err.offset})" if err.offset is not None else "")
        return e
    base = (out_root / f.parent.resolve().relative_to(run_dir.resolve())) if out_root else f.parent
    t0 = _mtime(f)
    for key in ("timeline_all", "timeline_run0", "ops_stats"):
        cand = [base / analysis_files(f, ext)[key] for ext in (".csv", ".parquet")]
        p = next((c for c in cand if is_file(c)), cand[0])
        o = OutputFile(key=key, path=rel(p, run_dir), exists=is_file(p))
        if o.exists:
            o.newer = (_mtime(p) or 0) >= (t0 or 0)
            if key == "timeline_all":
                try:
                    per = execute_latency_ms(p)
                    o.runs = int(per.size)
                    o.mean_ms = float(per.mean()) if per.size else None
                except InputError as err:
                    o.error = err.message
        e.outputs.append(o)
    rs = base / analysis_files(f)["robust_stats"]
    e.outputs.append(OutputFile(key="robust_stats", path=rel(rs, run_dir), exists=is_file(rs),
                                newer=(_mtime(rs) or 0) >= (t0 or 0) if is_file(rs) else None))
    return e


@command
def validate(run_dir, *, require=(), require_sme2_kernels: bool = False, analysis_dir=None,
             tolerance: float = 0.01, ws: Workspace | None = None) -> Validation:
    """Check a run folder: ETDumps parse; the CSVs and analysis_summary.json exist, are fresh and agree with the
    ETDumps (run counts, mean latency within ``tolerance``); ``require`` adds ``manifest`` (manifest.json and
    metrics.json), ``metrics``, ``robust-stats`` or ``trace``; ``require_sme2_kernels`` checks the XNNPACK trace
    logs (in the folder or a sibling ``<platform>_trace``): SME2-on ones register an SME2 GEMM/IGEMM kernel,
    SME2-off ones none. ``ok`` is false when a check failed."""
    from ..analysis.kernels import kernel_table, table_from_records
    from ..analysis.validate import REQUIRABLE, SummaryFacts, TraceFacts, run_checks

    run_dir = Path(run_dir)
    if not is_dir(run_dir):
        raise InputError(run_dir, "no such folder" if not exists(run_dir) else "not a folder")
    bad = sorted(set(require) - set(REQUIRABLE))
    if bad:
        raise UsageError(f"unknown --require {', '.join(bad)} (choose from {', '.join(REQUIRABLE)})")
    ws = workspace(ws, run_dir)
    out_root = Path(analysis_dir) if analysis_dir is not None else None
    manifest_facts, manifest = _json_facts(ws, run_dir / MANIFEST, {"model": str, "results": list})
    metrics_facts, _ = _json_facts(ws, run_dir / METRICS, {"results": list})
    exp_roles = manifest_sme2_roles(manifest)

    def disp(p: Path) -> str:
        return display_path(p, run_dir)

    def role_of(p: Path) -> tuple[str | None, str]:
        r = sme2_role(disp(p))
        if r:
            return r, "name"
        for exp, role in exp_roles.items():
            if exp in str(p):
                return role, MANIFEST
        return None, ""

    etdumps = ws.etdumps(run_dir)
    facts = [_etdump_facts(ws, f, run_dir, out_root, role_of(f)[0]) for f in etdumps]
    # analysis_summary.json of this folder, or of a folder above it that was analysed as a whole
    homes = [out_root] if out_root else [run_dir, run_dir.parent, run_dir.parent.parent, run_dir.parent.parent.parent]
    spath = next((h / SUMMARY for h in homes if is_file(h / SUMMARY)), homes[0] / SUMMARY)
    summary = SummaryFacts(path=disp(spath), exists=is_file(spath))
    if summary.exists:
        sfacts, doc = _json_facts(ws, spath, {"per_etdump": list})
        if sfacts.problems:
            summary.error = "; ".join(sfacts.problems)
        else:
            newest = max((_mtime(f) or 0 for f in etdumps), default=0)
            summary.newer = (_mtime(spath) or 0) >= newest
            for ent in doc["per_etdump"]:
                if isinstance(ent, dict) and isinstance(ent.get("etdump"), str):
                    lat = got if isinstance(got := ent.get("latency_ms"), dict) else {}
                    key = str((spath.parent / ent["etdump"]).resolve())
                    runs = ent.get("runs")
                    if isinstance(runs, int) and isinstance(ent.get("runs_invalid"), int):
                        runs -= ent["runs_invalid"]
                    summary.entries[key] = {"runs": runs, "mean_ms": lat.get("mean_ms")}
    traces = []
    for t in ws.trace_logs(run_dir):
        role, how = role_of(t)
        tf = TraceFacts(path=disp(t), role=role, role_source=how)
        try:
            log = ws.kernel_log(t)
            tf.rows, tf.truncated = kernel_table(log, trace_stem(t)), log.truncated_last_line
        except InputError as err:
            tf.error = err.message
        traces.append(tf)
    for t in ws.kernel_tables(run_dir):
        role, how = role_of(t)
        tf = TraceFacts(path=disp(t), role=role, role_source=how, source="kernel table")
        try:
            tf.rows = table_from_records(ws.kernel_csv(t), t.stem.removesuffix("_kernels"))
        except InputError as err:
            tf.error = err.message
        traces.append(tf)
    if not etdumps and not traces:
        raise InputError(run_dir, "nothing to validate: no ETDumps, XNNPACK trace logs or kernel CSVs in this folder"
                         + (" or its <platform>_trace sibling" if run_dir.name and not run_dir.name.endswith("_trace")
                            else ""))
    searched = [disp(d) or "." for d in trace_folders(run_dir)]
    # a collection ``edgeprof run`` wrote: its manifest says so and records launches
    collected = isinstance(manifest, dict) and manifest.get("tool") == "edgeprof" and bool(manifest.get("results"))
    report = run_checks(facts, summary, manifest_facts, metrics_facts, traces, require=set(require),
                        require_sme2_kernels=require_sme2_kernels, tolerance=tolerance, searched=searched,
                        collected=collected)
    report["run_dir"] = str(run_dir.resolve())
    report["trace_logs"] = [{"path": t.path, "role": t.role, "role_source": t.role_source,
                             "kernels": len(t.rows or []), "error": t.error} for t in traces]
    return Validation(report)
