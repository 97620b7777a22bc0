"""LiteRT (TFLite) op profiles → :class:`~edgeprof.model.Profile`: what ``benchmark_model --enable_op_profiling=true``
writes, in its three forms — the text tables it logs (stdout, or ``--op_profiling_output_mode=csv`` /
``--profiling_output_csv_file``: the same tables comma-separated) and the ``BenchmarkProfilingData`` protobuf
(``--op_profiling_output_mode=proto``).

The tables are TensorFlow's ``StatsCalculator`` report: for the initialization and then for the regular runs, per
graph a ``Run Order`` table (``[node type] [start] [first] [avg ms] [%] [cdf%] [mem KB] [times called] [Name]``;
releases before ``[start]`` lack that column — columns are read by their headers), ``Top by Computation Time``,
``Summary by node type`` and ``Timings (microseconds): count=N … avg=…``; a delegate that profiles its own
operators adds ``Delegate internal:`` tables (XNNPACK's operator names). ``benchmark_model`` itself logs
``Inference timings in us: … Inference (avg): T``.

**They hold averages, not runs**: per node its mean time per call and calls per run over the N timed runs. So the
profile is one *average run* (``Profile.format`` ``litert_ops``): each node of the primary graph's run order,
``times called`` events of its average duration, at its average start where the table has one (else end to end);
a builtin operator is an ``OPERATOR_CALL`` with a kernel named by its type (``CONV_2D``; backend ``portable``), a
delegate node (``TfLiteXNNPackDelegate``, ``DELEGATE``) a ``DELEGATE_CALL`` holding the delegate's internal
operators when it reports them; the run's time is ``Inference (avg)`` when the log has it, else the profiler's
``Timings`` average, else the sum of the nodes. ``breakdown``, ``analyze``, ``trace`` and ``report`` read it;
latency statistics, comparisons and the history need runs and refuse it (:data:`AGGREGATE`).
Subgraphs other than the primary graph (the bodies of ``WHILE``/``IF``) run inside the control-flow op that calls
them: they are left out, and said so.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from pathlib import Path
from typing import Any

import numpy as np

from ..conventions import DELEGATE_CALL, FORMAT_LITERT_OPS, METHOD_EXECUTE, OPERATOR_CALL
from ..errors import InputError

MAX_LITERT_BYTES = 256 << 20
AGGREGATE = ("holds LiteRT's per-op averages over {n} run(s), not the runs: latency statistics, comparisons and the "
             "history need per-run times (record them with `edgeprof run model.tflite`)")
_RUN_ORDER = re.compile(r"=+ Run Order =+")
_TIMINGS = re.compile(r"Timings \(microseconds\):\s*(.*)")
_INFERENCE = re.compile(r"Inference timings in us:.*?Inference \(avg\):\s*([0-9.eE+-]+)")
# benchmark_model's own memory lines (its "MB" are the resident set's KiB / 1024: mebibytes): the growth of the peak
# resident set from the tool's start to the end of init and to the end, and the peak a watcher thread sampled
_FOOTPRINT = re.compile(r"Memory footprint delta from the start of the tool \(MB\):\s*init=([0-9.eE+-]+)\s+"
                        r"overall=([0-9.eE+-]+)")
_PEAK = re.compile(r"Overall peak memory footprint \(MB\) via periodic monitoring:\s*([0-9.eE+-]+)")
_HEADER = {"node type": "type", "start": "start", "first": "first", "avg ms": "avg", "avg_ms": "avg", "%": "pct",
           "cdf%": "cdf", "mem kb": "mem", "times called": "times", "name": "name"}
_DELEGATE = re.compile(r"^TfLite\w*Delegate\w*$|^DELEGATE$|Delegate(V\d+)?$")
_MAX_CALLS = 10_000  # calls of one node per run
_LABELS = {"avg": "avg ms", "times": "times called"}


def require_runs(prof, path) -> None:
    """An input error when ``prof`` holds averages instead of runs (what latency statistics and the history need)."""
    if prof.aggregate_runs is not None:
        raise InputError(path, AGGREGATE.format(n=prof.aggregate_runs or "the"))


def looks_like_litert(head: bytes) -> bool:
    """The first bytes of a LiteRT op-profiling log or CSV (a ``Run Order`` table or the benchmark's headers)."""
    return (b"Profiling Info for" in head or b"== Run Order ==" in head or b"Run Order ==" in head) and \
        (b"[node type]" in head or b"node type," in head or b"Profiling Info for" in head)


def _stats(text: str) -> dict:
    out = {}
    for part in text.split():
        k, _, v = part.partition("=")
        with contextlib.suppress(ValueError):
            out[k] = float(v.split("(")[0])
    return out


def _row(line: str, cols: list[str], csv: bool) -> dict | None:
    if csv:
        parts = [p.strip() for p in line.split(",", len(cols) - 1)]
    else:
        parts = [p.strip() for p in line.split("\t")[1:]]  # whatever precedes the first tab is a log prefix
        if len(parts) > len(cols):
            parts = [*parts[:len(cols) - 1], "\t".join(parts[len(cols) - 1:])]
    if len(parts) != len(cols):
        return None
    return dict(zip(cols, parts))


def parse_tables(text: str, path) -> dict:
    """``{"init": [rows], "runs": [rows], "delegate": [rows], "subgraphs": k, "timings": {...}, "inference_us"}``:
    the Run Order rows of the initialization, of the primary graph's runs and of the delegate's internal ops."""
    section, graph = "runs", "primary"
    out: dict[str, Any] = {"init": [], "runs": [], "delegate": [], "subgraphs": 0, "timings": {}, "inference_us": None}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "Profiling Info for Benchmark Initialization" in line:
            section, graph = "init", "primary"
        elif "Profiling Info for Regular Benchmark Runs" in line:
            section, graph = "runs", "primary"
        elif re.search(r"Subgraph \(index: \d+\) (profile|summary)", line):
            graph = "subgraph"
            out["subgraphs"] += section == "runs" and "profile" in line
        elif "Primary graph" in line:
            graph = "primary"
        elif "Delegate internal" in line:
            graph = "delegate"
        m = _TIMINGS.search(line)
        if m and section == "runs" and graph == "primary" and not out["timings"]:
            out["timings"] = _stats(m.group(1))
        m = _INFERENCE.search(line)
        if m:
            out["inference_us"] = float(m.group(1))
        m = _FOOTPRINT.search(line) or _PEAK.search(line)
        if m:
            out.setdefault("memory", {}).update(_reported(m, path, i + 1))
        if _RUN_ORDER.search(line) and i + 1 < len(lines):
            header = lines[i + 1]
            csv = "[" not in header
            raw = [h.strip().strip("[]").lower() for h in (header.split(",") if csv else header.split("\t")[1:])]
            cols = [_HEADER.get(h, h) for h in raw]
            if not {"type", "avg", "times", "name"} <= set(cols):
                raise InputError(path, "a Run Order table whose header lacks node type, avg ms, times called or "
                                       "name", line=i + 2)
            i += 2
            while i < len(lines) and lines[i].strip():
                row = _row(lines[i], cols, csv)
                if row is None:
                    raise InputError(path, f"a Run Order row with {len(cols)} columns expected", line=i + 1)
                row["line"] = i + 1
                if graph != "subgraph":
                    out["init" if section == "init" else "delegate" if graph == "delegate" else "runs"].append(row)
                i += 1
            continue
        i += 1
    return out


def _reported(m, path, line: int) -> dict:
    """The bytes of one of benchmark_model's memory lines (its MB: MiB; a negative delta is possible — a tool that
    freed more than the model took — a peak is not)."""
    try:
        vals = [float(x) for x in m.groups()]
    except ValueError:
        raise InputError(path, f"a memory footprint '{m.group(0)[-60:]}' that is not a number", line=line) from None
    if not all(np.isfinite(v) and abs(v) < 2**40 for v in vals) or (m.re is _PEAK and vals[0] < 0):
        raise InputError(path, f"a memory footprint out of range ('{m.group(0)[-60:]}')", line=line)
    if m.re is _PEAK:
        return {"peak_bytes": round(vals[0] * 2**20)}
    return {"init_delta_bytes": round(vals[0] * 2**20), "overall_delta_bytes": round(vals[1] * 2**20)}


def _share(internal: list, calls: list, path) -> dict:
    """{id(call row): [(op row, µs per run)]}: the delegate's operators (in run order) given to its calls in run order,
    each call taking operators while their time fits in its own (the last call takes what is left)."""
    out: dict[int, list] = {id(c): [] for c in calls}
    if not calls:
        return out
    if all("start" in r for r in [*internal, *calls]):  # one time base: an operator runs inside its call
        spans = [(_num(c, "start", path), _num(c, "start", path) + _num(c, "avg", path) * int(_num(c, "times", path, int)
                                                                                           or 1)) for c in calls]
        for d in internal:
            at = _num(d, "start", path)
            k = next((j for j, (a, b) in enumerate(spans) if a - 5e-4 <= at < b + 5e-4), None)
            if k is None:  # outside every call: the nearest one before it
                k = max([j for j, (a, _) in enumerate(spans) if a <= at] or [0])
            out[id(calls[k])].append((d, _num(d, "avg", path) * 1000 * int(_num(d, "times", path, int) or 1)))
        return out
    k, used = 0, 0.0
    for d in internal:
        d_us = _num(d, "avg", path) * 1000 * int(_num(d, "times", path, int) or 1)
        budget = _num(calls[k], "avg", path) * 1000
        while k < len(calls) - 1 and out[id(calls[k])] and used + d_us > budget * 1.001:
            k, used = k + 1, 0.0
            budget = _num(calls[k], "avg", path) * 1000
        out[id(calls[k])].append((d, d_us))
        used += d_us
    return out


def _delegate_op(name: str) -> str:
    """``Delegate/Convolution (NHWC, F32) IGEMM:3`` → ``Convolution (NHWC, F32) IGEMM``."""
    return re.sub(r":\d+$", "", name.removeprefix("Delegate/"))


def _num(row: dict, key: str, path, cast=float):
    v = row.get(key)
    if v is None:
        return None
    label = _LABELS.get(key, key)
    try:
        x = cast(v.rstrip("%"))
    except ValueError:
        raise InputError(path, f"{label} '{v}' is not a number", line=row.get("line")) from None
    if not np.isfinite(x) or x < 0 or x > 1e9:
        raise InputError(path, f"{label} '{v}' is out of range", line=row.get("line"))
    return x


def read_litert_profile(path):
    """Read a LiteRT op profile: the log or CSV tables, or the ``BenchmarkProfilingData`` protobuf."""
    from ..files import read_regular

    path = Path(path)
    data = read_regular(path, MAX_LITERT_BYTES, "LiteRT op profile")
    if data[:2] == b"\x1f\x8b":
        from .sniff import gunzip

        data = gunzip(data, path, MAX_LITERT_BYTES, "LiteRT op profile")
    return profile_of_bytes(data, path)


def profile_of_bytes(data: bytes, path):
    """A LiteRT op profile from its bytes (already read, decompressed)."""
    from .litert_proto import looks_like_proto, proto_head, tables_of_proto

    if proto_head(data[:4096]) or looks_like_proto(data):
        tables = tables_of_proto(data, path)
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(path, "not UTF-8 text (is it a LiteRT op profile?)", offset=e.start) from None
        tables = parse_tables(text, path)
    if not tables["runs"]:
        raise InputError(path, "no Run Order table of the regular runs: not a LiteRT op profile "
                               "(benchmark_model --enable_op_profiling=true)")
    return _profile(tables, path, data)


def _profile(t: dict, path, data: bytes):
    from ..model import KINDS
    from .etdump import build_profile, events_only

    warnings = []
    strings: dict[str, int] = {}

    def code(s: str) -> int:
        return strings.setdefault(s, len(strings))

    kernel, k_op, k_dcall = KINDS.index("kernel"), KINDS.index("operator_call"), KINDS.index("delegate_call")
    rows = []  # (block, name code, dd code, instruction, start µs, end µs, kind, node name, backend code)
    backends: dict[str, int] = {}
    start = 0.0
    for r in t["init"]:
        dur = (_num(r, "avg", path) or 0.0) * 1000
        rows.append((0, code(r["type"]), -1, -1, start, start + dur, -1, r["name"], -1))
        start += dur
    first = 1 if t["init"] else 0
    # older releases list a delegate's own operators in the same table (type DelegateOpInvoke, name
    # "Delegate/<op>:<k>"), and newer ones time the whole Invoke: neither is a node of the graph
    internal = [dict(r, type=_delegate_op(r["name"]) if r["type"] == "DelegateOpInvoke" else r["type"])
                for r in [*(r for r in t["runs"] if r["type"] == "DelegateOpInvoke"), *t["delegate"]]]
    invoke = [r for r in t["runs"] if r["type"] == "Invoke"]
    nodes = [dict(r, type=r["type"].split("/")[0]) for r in t["runs"] if r["type"] not in ("Invoke", "DelegateOpInvoke")]
    calls = [r for r in nodes if _DELEGATE.search(r["type"])]
    inside = _share(internal, calls, path)
    if internal and len(calls) > 1:
        warnings.append(f"{len(calls)} delegate calls and one table of the delegate's operators: each operator is "
                        "given to the call its start time falls in" + ("" if all("start" in r for r in internal) else
                        " — this log has no start times, so in run order as their times fill the calls"))
    cursor = 0.0
    for k, r in enumerate(nodes):
        avg_us = _num(r, "avg", path) * 1000
        times = int(_num(r, "times", path, int) or 0)
        if times > _MAX_CALLS:
            raise InputError(path, f"times called {times} is out of range", line=r.get("line"))
        at = _num(r, "start", path) if "start" in r else None
        s0 = at * 1000 if at is not None else cursor
        m = re.search(r":(\d+)$", r["name"])
        instr = int(m.group(1)) if m and int(m.group(1)) < 2**30 else 2**30 + k
        for c in range(times):
            s, e = s0 + c * avg_us, s0 + (c + 1) * avg_us
            if _DELEGATE.search(r["type"]):
                b = backends.setdefault(r["type"], len(backends))
                if inside.get(id(r)):
                    inner = s
                    for d, d_us in inside[id(r)]:
                        rows.append((first, -1, code(d["type"]), instr, inner, inner + d_us, -1, d["name"], b))
                        inner += d_us
                else:  # the delegate's ops are not in the profile: the call is one op of its own
                    rows.append((first, -1, code(r["type"]), instr, s, e, -1, r["name"], b))
                rows.append((first, code(DELEGATE_CALL), -1, instr, s, e, k_dcall, r["name"], b))
            else:
                rows.append((first, code(r["type"]), -1, instr, s, e, kernel, r["name"], -1))
                rows.append((first, code(OPERATOR_CALL), -1, instr, s, e, k_op, r["name"], -1))
        cursor = max(cursor, s0 + times * avg_us)
    ops_us = cursor
    invoke_us = _num(invoke[0], "avg", path) * 1000 if invoke else None
    e2e = t["inference_us"] or invoke_us or t["timings"].get("avg") or t["timings"].get("curr") or ops_us
    rows.append((first, code(METHOD_EXECUTE), -1, -1, 0.0, max(e2e, ops_us), -1, None, -1))
    col = list(zip(*rows))
    us = [np.rint(np.array(col[j], dtype=np.float64) * 1000).astype(np.uint64) for j in (4, 5)]
    dec = events_only((["Default"] if first else []) + ["Execute"], col[0], col[1], col[2], list(strings), col[3], *us,
                      pe_kind=np.array(col[6], dtype=np.int8), pe_backend_codes=np.array(col[8], dtype=np.int32),
                      pe_backends=list(backends))
    import polars as pl

    prof = build_profile(dec, path, file_size=len(data))
    prof.format = FORMAT_LITERT_OPS
    prof.sha256 = hashlib.sha256(data).hexdigest()
    prof.events = prof.events.with_columns(pl.Series("module_path", list(col[7]), dtype=pl.Categorical))
    prof.aggregate_runs = int(t["timings"].get("count") or 0)
    prof.reported_memory = ({"source": "benchmark_model", **t["memory"]} if t.get("memory") else None)
    prof.warnings[:0] = [AGGREGATE.format(n=prof.aggregate_runs or "the"), *warnings]
    if t["subgraphs"]:
        prof.warnings.append(f"{t['subgraphs']} subgraph(s) besides the primary graph left out: they run inside the "
                             "control-flow op that calls them")
    return prof
