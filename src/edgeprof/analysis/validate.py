"""Does a run folder hold what the analysis needs, and does it say what it claims? Pure checks over facts
gathered from the folder (:func:`edgeprof.api.validate` gathers them).

Each check is ``{"status": pass|fail|warn|info, "check", "subject", "message", "items"}``; the folder is
valid when no check fails. ``manifest.json``/``metrics.json`` are checked only when required: the Arm
pipeline never writes them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..conventions import PENDING, fmt_ms
from .kernels import registered_vs_executed, summarize_kernels

if TYPE_CHECKING:
    from collections.abc import Sequence, Set

OUTPUT_LABELS = {"timeline_all": "all-runs timeline", "timeline_run0": "run-0 timeline", "ops_stats": "operator stats",
                 "robust_stats": "robust latency stats"}
REQUIRABLE = ("manifest", "metrics", "robust-stats", "trace")


@dataclass
class OutputFile:
    key: str                       # timeline_all · timeline_run0 · ops_stats · robust_stats
    path: str
    exists: bool
    newer: bool | None = None      # at least as new as its ETDump
    runs: int | None = None        # execute runs it holds (timelines)
    mean_ms: float | None = None   # mean Method::execute it says (timelines)
    error: str | None = None


@dataclass
class EtdumpFacts:
    path: str
    key: str = ""                  # how the analysis summary names it (absolute path)
    error: str | None = None
    runs: int = 0
    events: int = 0
    mean_ms: float | None = None
    experiment: str | None = None
    role: str | None = None        # SME2 "on" / "off" / None
    outputs: list[OutputFile] = field(default_factory=list)
    evidence: dict | None = None   # executed kernel evidence (analysis.kernels.executed_from_profile)


@dataclass
class SummaryFacts:
    path: str
    exists: bool
    error: str | None = None
    newer: bool | None = None      # at least as new as every ETDump
    entries: dict = field(default_factory=dict)  # ETDump (absolute path) → {runs, mean_ms}


@dataclass
class JsonFacts:
    path: str
    exists: bool
    problems: list[str] = field(default_factory=list)


@dataclass
class TraceFacts:
    path: str
    role: str | None
    role_source: str = ""
    rows: list[dict] | None = None  # kernel table (analysis.kernels.kernel_table)
    error: str | None = None
    truncated: bool = False
    source: str = "trace log"       # "trace log" (XNNPACK log) or "kernel table" (a *_kernels.csv made from one)


def _check(out: list, status: str, check: str, subject: str, message: str, items=None) -> None:
    out.append({"status": status, "check": check, "subject": subject, "message": message, "items": list(items or [])})


def _close(a: float | None, b: float | None, tol: float) -> bool:
    if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
        return False
    return abs(a - b) <= tol * max(abs(b), 1e-12)


def collected_only(etdumps: list, summary, manifest: JsonFacts, collected: bool) -> bool:
    """A folder ``edgeprof run`` wrote (``collected``: its manifest says so and records launches) and nothing
    analysed yet: not one analysis output (no timeline, no operator stats, no analysis_summary.json). Its analysis
    outputs are pending, not missing; a half-analysed folder (some outputs there, others not) still fails."""
    return (collected and manifest.exists and not manifest.problems and bool(etdumps) and not summary.exists
            and not any(o.exists for e in etdumps for o in e.outputs))


def _etdump_checks(out: list, e: EtdumpFacts, tol: float, require: set, pending: bool = False) -> None:
    if e.error:
        _check(out, "fail", "etdump", e.path, f"cannot be read: {e.error}")
        return
    _check(out, "pass", "etdump", e.path, f"parses: {e.runs} run(s), {e.events:,} events"
           + (f", mean latency {fmt_ms(e.mean_ms, 3, fixed=True)} ms"
              if e.mean_ms is not None and math.isfinite(e.mean_ms) else ""))
    for o in e.outputs:
        label = OUTPUT_LABELS[o.key]
        if o.key == "robust_stats" and "robust-stats" not in require:
            continue
        if not o.exists:
            if pending:
                _check(out, "info", o.key, o.path, f"{label} {PENDING}")
            else:
                _check(out, "fail", o.key, o.path, f"{label} missing (run: edgeprof analyze)")
            continue
        if o.error:
            _check(out, "fail", o.key, o.path, f"{label} unreadable: {o.error}")
            continue
        if o.newer is False:
            _check(out, "fail", o.key, o.path, f"{label} is older than its ETDump (stale: re-run edgeprof analyze)")
            continue
        if o.runs is not None:
            if o.runs != e.runs:
                _check(out, "fail", o.key, o.path, f"{label} holds {o.runs} run(s), the ETDump {e.runs}")
                continue
            if o.mean_ms is not None and e.mean_ms is not None and not _close(o.mean_ms, e.mean_ms, tol):
                _check(out, "fail", o.key, o.path, f"{label} says mean latency {fmt_ms(o.mean_ms, 3, fixed=True)} ms, the ETDump "
                       f"{fmt_ms(e.mean_ms, 3, fixed=True)} ms (more than {100 * tol:g} % apart)")
                continue
            _check(out, "pass", o.key, o.path, f"{label} present, fresh, {o.runs} run(s) consistent with the ETDump")
        else:
            _check(out, "pass", o.key, o.path, f"{label} present and fresh")


def _summary_checks(out: list, s: SummaryFacts, etdumps: list[EtdumpFacts], tol: float, pending: bool = False) -> None:
    if not s.exists:
        if pending:
            _check(out, "info", "analysis_summary", s.path, f"analysis_summary.json {PENDING}")
        else:
            _check(out, "fail", "analysis_summary", s.path, "analysis_summary.json missing (run: edgeprof analyze)")
        return
    if s.error:
        _check(out, "fail", "analysis_summary", s.path, f"analysis_summary.json unreadable: {s.error}")
        return
    problems = []
    for e in etdumps:
        if e.error:
            continue
        entry = s.entries.get(e.key or e.path)
        if entry is None:
            problems.append(f"{e.path}: not in the summary")
        elif entry.get("runs") != e.runs:
            problems.append(f"{e.path}: summary says {entry.get('runs')} run(s), the ETDump {e.runs}")
        elif e.mean_ms is not None and not _close(entry.get("mean_ms"), e.mean_ms, tol):
            problems.append(f"{e.path}: summary says mean {entry.get('mean_ms')} ms, "
                            f"the ETDump {fmt_ms(e.mean_ms, 3, fixed=True)} ms")
    if s.newer is False:
        problems.insert(0, "older than an ETDump (stale: re-run edgeprof analyze)")
    if problems:
        _check(out, "fail", "analysis_summary", s.path, "analysis_summary.json does not match the ETDumps", problems)
    else:
        _check(out, "pass", "analysis_summary", s.path,
               f"analysis_summary.json present, fresh, consistent for {sum(1 for e in etdumps if not e.error)} ETDump(s)")


def _json_checks(out: list, facts: JsonFacts, name: str, required: bool) -> None:
    if not required:
        if facts.exists and facts.problems:
            _check(out, "warn", name, facts.path, f"{name} present but " + "; ".join(facts.problems))
        return
    if not facts.exists:
        _check(out, "fail", name, facts.path, f"{name} missing (required by --require)")
    elif facts.problems:
        _check(out, "fail", name, facts.path, f"{name} invalid", facts.problems)
    else:
        _check(out, "pass", name, facts.path, f"{name} present and valid")


def _gemm_line(rows: list[dict]) -> list[str]:
    return [f"{r['kernel_name']} ({r['isa_family']} {r['isa']}, {r['category']})" for r in rows
            if r["category"] in ("gemm", "igemm", "dqgemm", "dqigemm", "qp8gemm", "qp8gemm_bl")]


def _trace_checks(out: list, traces: list[TraceFacts], etdumps: list[EtdumpFacts], require_sme2: bool,
                  searched: list[str]) -> None:
    where = " and ".join(searched)
    if not traces:
        if require_sme2:
            _check(out, "fail", "sme2_kernels", where, "no XNNPACK trace log found (a *_xnntrace.log, or a log with "
                   f"'Using … microkernel' lines) in {where}")
        return
    roles = {t.role for t in traces if not t.error}
    for t in traces:
        if t.error:
            _check(out, "fail" if require_sme2 else "warn", "trace_log", t.path, f"{t.source} unreadable: {t.error}")
            continue
        rows = t.rows or []
        s = summarize_kernels(rows)
        role = {"on": "SME2-on", "off": "SME2-off", None: "role unknown"}[t.role]
        what = t.source
        cut = " (last line cut off)" if t.truncated else ""
        if not rows:
            _check(out, "fail" if require_sme2 and t.role else "warn", "sme2_kernels" if require_sme2 else "trace_log",
                   t.path, f"{role} {what} holds no kernels" + (
                       ": no 'Using … microkernel' lines, so the runner was built without XNN_LOG_LEVEL ≥ 4 (use "
                       "-DEXECUTORCH_XNNPACK_LOG_LEVEL=4 or -DXNN_LOG_LEVEL=4 in C and CXX flags)" if what == "trace log"
                       else ""))
            continue
        fams = ", ".join(f"{f} {n}" for f, n in s["by_family"].items())
        if not require_sme2 or t.role is None:
            _check(out, "info", "trace_log", t.path, f"{role} {what}{cut}: {s['kernels']} kernels registered "
                   f"({fams}); SME2 GEMM/IGEMM: {len(s['sme2_gemm_kernels'])}"
                   + ("" if t.role else " — not checked: the name says neither sme2_on nor sme2_off and the manifest "
                      "does not mark it"))
            continue
        if t.role == "on":
            if s["sme2_gemm_kernels"]:
                _check(out, "pass", "sme2_kernels", t.path, f"SME2-on {what} registers {len(s['sme2_gemm_kernels'])} SME2 "
                       f"GEMM/IGEMM kernel(s){cut}", s["sme2_gemm_kernels"])
            else:
                fallback = _gemm_line(rows)
                _check(out, "fail", "sme2_kernels", t.path, f"SME2-on {what} registers no SME2 GEMM/IGEMM kernel"
                       + (f"; GEMM/IGEMM fell back to {len(fallback)} other kernel(s)" if fallback else
                          "; no GEMM/IGEMM kernel at all") + cut, fallback)
        else:
            sme2 = [r for r in rows if r["isa_family"] == "SME2"]
            if sme2:
                _check(out, "fail", "sme2_kernels", t.path, f"SME2-off {what} registers {len(sme2)} SME2 kernel(s): "
                       "the baseline runner still has SME2 on", [r["kernel_name"] for r in sme2])
            else:
                gemm = s["gemm_families"]
                detail = ", ".join(f"{f} {' '.join(i)}" for f, i in gemm.items()) or "no GEMM kernels"
                _check(out, "pass", "sme2_kernels", t.path, f"SME2-off {what} registers no SME2 kernel (GEMM/IGEMM: "
                       f"{detail}){cut}")
                if s["sme_gemm_kernels"]:
                    _check(out, "warn", "sme2_kernels", t.path, f"SME2-off {what} registers SME (non-SME2) GEMM kernels: "
                           "not a NEON-only baseline (build with XNNPACK_ENABLE_ARM_SME=OFF too)", s["sme_gemm_kernels"])
    if require_sme2:
        if roles <= {None}:
            _check(out, "fail", "sme2_kernels", where, "cannot tell which trace logs are SME2-on: no sme2_on/sme2_off "
                   "in their names and no sme2 marks in manifest.json")
        elif "on" not in roles:
            _check(out, "fail", "sme2_kernels", where, "no SME2-on trace log found (only SME2-off ones)")
    for e in etdumps:
        if e.evidence and e.role in ("on", "off") and not e.error:
            _check(out, "info", "executed_evidence", e.path, f"ETDump ({'SME2-on' if e.role == 'on' else 'SME2-off'}): "
                   + e.evidence["statement"])
    for role in ("on", "off"):
        regs = [t for t in traces if t.role == role and not t.error and t.rows]
        runs = [e for e in etdumps if e.role == role and not e.error and e.evidence]
        if not regs or not runs:
            continue
        mismatch = registered_vs_executed([summarize_kernels(t.rows or []) for t in regs],
                                          [e.evidence for e in runs if e.evidence])
        if mismatch:
            _check(out, "warn", "registered_vs_executed", " and ".join(x.path for x in regs + runs)[:400], mismatch)


def run_checks(etdumps: list[EtdumpFacts], summary: SummaryFacts, manifest: JsonFacts, metrics: JsonFacts,
               traces: list[TraceFacts], *, require: Set[str] = frozenset(), require_sme2_kernels: bool = False,
               tolerance: float = 0.01, searched: Sequence[str] = (), collected: bool = False) -> dict:
    checks: list[dict] = []
    if not etdumps and not traces:
        _check(checks, "fail", "etdump", "", "no .etdump or .etdp files in the run folder")
    elif not etdumps:
        _check(checks, "info", "etdump", "", "no ETDumps here (a trace folder): checking its "
               f"{len(traces)} trace log(s) and kernel table(s)")
    pending = collected_only(etdumps, summary, manifest, collected)
    for e in etdumps:
        _etdump_checks(checks, e, tolerance, set(require), pending)
    if etdumps:
        _summary_checks(checks, summary, etdumps, tolerance, pending)
    _json_checks(checks, manifest, "manifest.json", "manifest" in require)
    _json_checks(checks, metrics, "metrics.json", "manifest" in require or "metrics" in require)
    if "trace" in require and not traces:
        _check(checks, "fail", "trace_log", " and ".join(searched), "no XNNPACK trace log found (required by --require)")
    _trace_checks(checks, traces, etdumps, require_sme2_kernels, list(searched))
    counts = {s: sum(1 for c in checks if c["status"] == s) for s in ("pass", "fail", "warn", "info")}
    return {"ok": counts["fail"] == 0, "counts": counts, "checks": checks}
