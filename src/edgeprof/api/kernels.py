"""``edgeprof kernels`` and ``edgeprof kernel-view``: XNNPACK kernel evidence, registered (logs) and executed
(ETDumps)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..files import command, display, is_dir
from ..conventions import FORMAT_KERNEL_CSV, FORMAT_XNNPACK_LOG
from ..io.readers import kernel_input_format
from ..io.traces import trace_stem
from ..io.workspace import Workspace
from ._common import as_list, workspace
from .results import ExecutedEvidence, KernelTable, KernelView


def _input_name(path: Path, fmt: str) -> str:
    return path.name.removesuffix(".gz").rsplit(".", 1)[0].removesuffix("_kernels") if fmt == FORMAT_KERNEL_CSV \
        else trace_stem(path)


def _log_facts(log) -> dict:
    dts: dict[str, int] = {}
    for a in log.assumed_datatypes:
        dts[a["datatype"]] = dts.get(a["datatype"], 0) + 1
    return {"lines": log.lines, "xnnpack_lines": log.xnnpack_lines, "formats": log.formats,
            "truncated_last_line": log.truncated_last_line, "hardware": log.hardware,
            "assumed_datatypes": dts, "inlined_lhs_packing": log.inlined_lhs_packing,
            "operators_run": log.operators_run, "operators_skipped": log.operators_skipped,
            "gemm_tiles": log.tiles[:50], "messages": log.messages}


@command
def kernels(path, *, model_id: str | None = None, ws: Workspace | None = None,
            input_format: str | None = None) -> KernelTable:
    """The kernel table of one XNNPACK log (or kernels CSV): the Arm kit's columns then ours, a summary by ISA
    family and kind, and the operators the log shows running on SME/KleidiAI datatype paths."""
    from ..analysis.kernels import (
        executed_from_operators,
        kernel_table,
        summarize_kernels,
        table_from_records,
    )

    ws = workspace(ws)
    path = Path(path)
    fmt = input_format or kernel_input_format(path)
    mid = model_id or display(_input_name(path, fmt))
    if fmt == FORMAT_KERNEL_CSV:
        rows, log = table_from_records(ws.kernel_csv(path), mid), None
    else:
        log = ws.kernel_log(path)
        rows = kernel_table(log, mid)
    result: dict[str, Any] = {"input": str(path), "model_id": mid, "kernels": rows, "summary": summarize_kernels(rows),
                              "warnings": []}
    if log is not None:
        result["log"] = _log_facts(log)
        result["executed"] = executed_from_operators(log.operators_run)
        if not log.registrations:
            result["warnings"].append(
                "no 'Using … microkernel' lines: XNNPACK logs kernels only when built with XNN_LOG_LEVEL ≥ 4"
                if log.xnnpack_lines == 0 else "XNNPACK lines but no kernel registrations (the kernel lines go to "
                "stderr; capture both streams with 2>&1)")
        if log.truncated_last_line:
            result["warnings"].append("the last line is cut off mid-message; it was not used")
    unknown = result["summary"]["unknown_isa"]
    if unknown:
        result["warnings"].append(f"{len(unknown)} kernel(s) with an ISA this version does not know: "
                                  + ", ".join(unknown[:5]))
    return KernelTable(result)


@command
def executed_evidence(path, *, etrecord=None, taxonomy=None, ws: Workspace | None = None) -> ExecutedEvidence:
    """Which XNNPACK operators of an ETDump (or timeline CSV) ran on SME/KleidiAI datatype paths (PF32, PF16,
    PQS8, QP8) and the time they cover: evidence = executed."""
    from ..analysis.kernels import executed_from_profile
    from ._common import taxonomy_of

    ws = workspace(ws, None, etrecord=etrecord)
    result = executed_from_profile(ws.valid_profile(path), taxonomy_of(taxonomy))
    result["input"] = str(path)
    return ExecutedEvidence(result)


@command
def kernel_evidence(inputs, *, model_id: str | None = None, write: bool = False, out=None, output_dir=None,
                    fmt: str = "csv", ws: Workspace | None = None) -> tuple[list[KernelTable], list[ExecutedEvidence]]:
    """``edgeprof kernels``: the logs (and kernels CSVs) named by ``inputs`` or found in its folders (and their
    ``<platform>_trace`` siblings) as kernel tables, and its ETDumps or timeline CSVs as executed evidence.
    ``write`` writes each log's table to ``<stem>_kernels.csv`` beside it (``out`` for one log, ``output_dir``)."""
    from ..io.runfolder import kernel_table_file
    from ..render.tables import suffix

    ws = workspace(ws)
    logs, profiles = [], []
    for spec in as_list(inputs):
        p = Path(spec)
        if is_dir(p):
            logs += [(x, FORMAT_XNNPACK_LOG) for x in ws.trace_logs(p)]
            profiles += ws.etdumps(p)
        elif (what := kernel_input_format(p)) in (FORMAT_KERNEL_CSV, FORMAT_XNNPACK_LOG):
            logs.append((p, what))
        else:
            profiles.append(p)
    if not logs and not profiles:
        raise UsageError("no XNNPACK logs, kernel CSVs or ETDumps in " + ", ".join(map(str, as_list(inputs))))
    if out and len(logs) != 1:
        raise UsageError("--out needs exactly one log")
    tables = []
    for log, what in logs:
        t = kernels(log, model_id=model_id, ws=ws, input_format=what)
        if write and what == FORMAT_XNNPACK_LOG:
            from ..analysis.kernels import COLUMNS
            from ..render.kernel_files import write_kernel_table

            target = Path(out) if out else (Path(output_dir) if output_dir else log.parent) / kernel_table_file(
                log, suffix(fmt))
            write_kernel_table(t["kernels"], COLUMNS, target, fmt)
            t = t.with_(written=str(target))
        tables.append(t)
    return tables, [executed_evidence(p, ws=ws) for p in profiles]


@command
def kernel_view(baseline, candidate, *, baseline_name: str | None = None, candidate_name: str | None = None,
                filter_op: str | None = None, ws: Workspace | None = None) -> KernelView:
    """Baseline vs candidate kernels (each a log or a kernels CSV), with a summary and a GEMM/IGEMM verdict."""
    from ..analysis.kernels import kernel_view as view

    ws = workspace(ws)
    b, c = Path(baseline), Path(candidate)
    fb, fc = kernel_input_format(b), kernel_input_format(c)
    bn = baseline_name or display(_input_name(b, fb))
    cn = candidate_name or display(_input_name(c, fc))
    if bn == cn:
        bn, cn = f"{bn} (baseline)", f"{cn} (candidate)"
    kb, kc = kernels(b, ws=ws, input_format=fb), kernels(c, ws=ws, input_format=fc)
    result = view(kb["kernels"], kc["kernels"], base_name=bn, cand_name=cn, filter_op=filter_op)
    result["inputs"] = {"baseline": str(b), "candidate": str(c)}
    result["warnings"] = [f"{b.name}: {w}" for w in kb["warnings"]] + [f"{c.name}: {w}" for w in kc["warnings"]]
    return KernelView(result)
