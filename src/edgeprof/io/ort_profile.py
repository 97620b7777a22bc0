"""ONNX Runtime profiles → :class:`~edgeprof.model.Profile`.

``SessionOptions.enable_profiling`` makes ONNX Runtime write one JSON file per session: a list of Chrome-trace
``X`` events (``ts``/``dur`` in microseconds from the session's start). ``cat: "Session"`` events time the
session (``model_loading_uri``/``model_loading_array``, ``session_initialization``, one ``model_run`` per
``run()``, ``SequentialExecutor::Execute`` inside it); ``cat: "Node"`` events time one graph node each,
``<node>_kernel_time`` with ``args.op_name``, ``provider`` (the execution provider that ran it) and
``node_index`` (older releases add ``_fence_before``/``_fence_after`` events around each kernel).

They are put in edgeprof's event model as an ExecuTorch profile of the same run would be, so every analysis
reads them unchanged:

========================================  ===================================================================
ONNX Runtime                              edgeprof event
========================================  ===================================================================
``model_run``                             ``Method::execute`` of run k (the run's end-to-end time)
``model_loading_*``                       ``Program::load_method`` (load/init block, run index −1)
``session_initialization``                ``Method::init`` (load/init block)
node on ``CPUExecutionProvider``          ``OPERATOR_CALL`` with a ``kernel`` inside named by the op type
                                          (backend ``portable``: the runtime's own CPU kernels)
node on any other provider                ``DELEGATE_CALL`` with a ``delegate_op`` inside named by the op type
                                          (backend: the provider's name, ``backend_source`` ``profile``)
========================================  ===================================================================

The wrapper and its op span the node's kernel time (their overhead is 0: ONNX Runtime times only the kernel);
``instruction_id`` is the node's ``node_index``; ``module_path`` the node's name (a PyTorch export names nodes
by module path, ``/layers.0/attn/MatMul``); ``op_types`` the op type. A node of a CPU provider in a session that
also runs another provider is therefore a fallback, as a portable kernel in a delegated ExecuTorch program.
Fences and other Session events add nothing: their time stays inside ``model_run`` (unattributed).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

import numpy as np

from ..conventions import (DELEGATE_CALL, FORMAT_ORT_JSON, LOAD_METHOD, METHOD_EXECUTE, METHOD_INIT, OPERATOR_CALL,
                           RUNTIME_ARGS)
from ..errors import InputError
from . import jsontext

MAX_ORT_BYTES = 2 << 30  # a JSON document is parsed whole: 2 GB of it is ~20M node events
CPU_PROVIDER = "CPUExecutionProvider"
RUN_EVENT = "model_run"
KERNEL_TAIL = "_kernel_time"
_LOADING = ("model_loading_uri", "model_loading_array", "model_loading_from_saved_proto")
_INIT = "session_initialization"
_SNIFF = re.compile(rb'"cat"\s*:\s*"(?:Session|Node)"')


def looks_like_ort(head: bytes) -> bool:
    """Whether a file's first bytes are an ONNX Runtime profile: a JSON list (or a ``traceEvents`` object) whose
    events have ``cat`` ``Session`` or ``Node``."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return text[:1] in (b"[", b"{") and _SNIFF.search(head) is not None


def _events(doc, path) -> list:
    if isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        return doc["traceEvents"]
    if isinstance(doc, list):
        return doc
    raise InputError(path, "not an ONNX Runtime profile: expected a JSON list of trace events")


def _number(e: dict, key: str, i: int, path) -> float:
    v = e.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or v >= 2.0**53 / 1000:
        raise InputError(path, f"event {i} ('{str(e.get('name'))[:60]}'): '{key}' is {v!r}, not a time in µs")
    return float(v)


def _node_index(v) -> int:
    """A node's index (ONNX Runtime writes it as a string of digits); -1 for anything that is not one of an int32's
    (infinity, a fraction, a 5,000-digit number, a list)."""
    if (isinstance(v, str) and 0 < len(v.strip()) <= 10 and v.strip().isdigit()) or (
            isinstance(v, float) and v.is_integer()):
        v = int(v)
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**31 else -1


def read_ort_profile(path):
    """Read an ONNX Runtime profile (plain or gzip-compressed JSON)."""
    from ..files import read_regular
    from .etdump import build_profile
    from .etdump_read import check_has_runs

    path = Path(path)
    data = read_regular(path, MAX_ORT_BYTES, "ONNX Runtime profile")
    if data[:2] == b"\x1f\x8b":
        from .sniff import gunzip

        data = gunzip(data, path, MAX_ORT_BYTES, "ONNX Runtime profile")
    doc = jsontext.loads(data, path, what="the profile's JSON")
    events = _events(doc, path)

    runs, loads, nodes = [], [], []
    skipped = 0
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            raise InputError(path, f"event {i} is a {type(e).__name__}, not a JSON object")
        cat, name = e.get("cat"), e.get("name")
        if e.get("ph", "X") != "X" or cat not in ("Session", "Node") or not isinstance(name, str):
            skipped += 1
            continue
        if cat == "Session":
            if name == RUN_EVENT:
                runs.append((_number(e, "ts", i, path), _number(e, "dur", i, path)))
            elif name in _LOADING or name == _INIT:
                loads.append((_number(e, "ts", i, path), _number(e, "dur", i, path),
                              LOAD_METHOD if name in _LOADING else METHOD_INIT))
            continue
        if not name.endswith(KERNEL_TAIL):  # fences and anything else: inside model_run, unattributed
            continue
        args = got if isinstance(got := e.get("args"), dict) else {}
        node = name[: -len(KERNEL_TAIL)]
        op = args.get("op_name")
        op = op if isinstance(op, str) and op else node
        provider = args.get("provider")
        provider = provider if isinstance(provider, str) and provider else CPU_PROVIDER
        index = _node_index(args.get("node_index"))
        # every field ONNX Runtime recorded for the node (shapes, sizes, memory, thread statistics), kept for the
        # trace: the node event's own name and its args as they were, JSON text
        kept = json.dumps({"event": name, **args}, ensure_ascii=True, sort_keys=True, default=str)
        nodes.append((_number(e, "ts", i, path), _number(e, "dur", i, path), op, provider, node, index, kept))
    if not runs:
        what = f"{len(nodes)} node events but " if nodes else ""
        raise InputError(path, f"an ONNX Runtime profile with {what}no {RUN_EVENT} event: nothing to analyse")
    dec, extras, outside = _columns(runs, loads, nodes)
    prof = build_profile(dec, path, file_size=len(data))
    prof.format = FORMAT_ORT_JSON
    prof.sha256 = hashlib.sha256(data).hexdigest()
    if outside:
        prof.warnings.append(f"{outside} node event(s) lie outside every {RUN_EVENT}: left out")
    if skipped:
        prof.warnings.append(f"{skipped} event(s) that are not ONNX Runtime Session/Node spans were skipped")
    _annotate(prof, *extras)
    check_has_runs(prof, path)
    return prof


def _columns(runs: list, loads: list, nodes: list) -> tuple[dict, tuple, int]:
    """The decoded columns :func:`~edgeprof.io.etdump.build_profile` takes: a load/init block (when the profile
    has loading or initialization events), then one block per ``model_run``, each node as a wrapper and its op."""
    from ..model import KINDS
    from .etdump import events_only

    runs.sort()
    r_start = np.array([s for s, _ in runs])
    r_end = r_start + np.array([d for _, d in runs])
    # each node in the run whose span holds it (ties: the later run)
    n_start = np.array([t[0] for t in nodes]) if nodes else np.empty(0)
    n_end = n_start + (np.array([t[1] for t in nodes]) if nodes else 0)
    k = np.searchsorted(r_start, n_start, side="right") - 1
    inside = (k >= 0) & (n_end <= r_end[np.maximum(k, 0)])
    outside = int((~inside).sum())
    order = np.lexsort((n_start, k))  # by run, then start
    order = order[inside[order]]

    strings: dict[str, int] = {}

    def code(s: str) -> int:
        return strings.setdefault(s, len(strings))

    providers: dict[str, int] = {}
    first = 1 if loads else 0
    rows: list[tuple] = []  # (run data, name code, dd code, instruction, start µs, end µs, kind, backend, node, op,
    #                          the runtime's own fields)
    for ts, dur, name in sorted(loads):
        rows.append((0, code(name), -1, -1, ts, ts + dur, -1, -1, None, None, None))
    kernel, k_op, k_dcall = KINDS.index("kernel"), KINDS.index("operator_call"), KINDS.index("delegate_call")
    pos = 0
    for r in range(len(runs)):
        while pos < order.size and k[order[pos]] == r:
            ts, dur, op, provider, node, index, kept = nodes[order[pos]]
            instr = index if 0 <= index < 2**31 else 2**30 + pos  # no node index: an id of its own
            end = ts + dur
            if provider == CPU_PROVIDER:
                rows.append((first + r, code(op), -1, instr, ts, end, kernel, -1, node, op, None))
                rows.append((first + r, code(OPERATOR_CALL), -1, instr, ts, end, k_op, -1, node, op, kept))
            else:
                b = providers.setdefault(provider, len(providers))
                rows.append((first + r, -1, code(op), instr, ts, end, -1, b, node, op, None))
                rows.append((first + r, code(DELEGATE_CALL), -1, instr, ts, end, k_dcall, b, node, op, kept))
            pos += 1
        rows.append((first + r, code(METHOD_EXECUTE), -1, -1, runs[r][0], runs[r][0] + runs[r][1], -1, -1, None, None,
                     None))
    col = list(zip(*rows))
    us = [np.rint(np.array(col[j], dtype=np.float64) * 1000).astype(np.uint64) for j in (4, 5)]
    dec = events_only((["Default"] if loads else []) + ["Execute"] * len(runs), col[0], col[1], col[2], list(strings),
                      col[3], *us, pe_kind=np.array(col[6], dtype=np.int8),
                      pe_backend_codes=np.array(col[7], dtype=np.int32), pe_backends=list(providers))
    return dec, (list(col[8]), list(col[9]), list(col[10])), outside


def _annotate(prof, nodes: list, ops: list, kept: list) -> None:
    """Each node's name as its ``module_path``, its op type as its ``op_types``, and on its wrapper every field the
    runtime recorded for it (``runtime_args``: JSON text, which ``trace`` puts in the slice's args)."""
    import polars as pl

    import numpy as np

    cat = pl.Categorical
    distinct: dict = {}
    codes = np.array([distinct.setdefault(o, len(distinct)) for o in ops], dtype=np.int64)
    lists = pl.Series("op_types", [None if o is None else [o] for o in distinct], dtype=pl.List(cat))
    prof.events = prof.events.with_columns(lists.gather(codes), pl.Series("module_path", nodes, dtype=cat),
                                           pl.Series(RUNTIME_ARGS, kept, dtype=pl.String))

