"""ETDump reader: the decoded columns (:mod:`edgeprof.io.etdump_decode`) → :class:`edgeprof.model.Profile`.

Column-wise with numpy, never a Python object per event. The normalization rules (event kinds, nesting,
names) are ExecuTorch's:

* an event with a delegate debug id (int ≠ -1 or non-empty string) is a ``delegate_op`` and is named by
  that id, as ExecuTorch's Inspector names it;
* ``native_call_<op>.<overload>`` is a ``kernel``, nested in the ``OPERATOR_CALL`` of the same instruction
  that follows it; delegate ops nest in the ``DELEGATE_CALL`` of their instruction that follows them;
  ``OPERATOR_CALL``/``DELEGATE_CALL`` and unknown events nest in the run's ``Method::execute``.
* a RunData is a run (``run_index`` 0, 1, …) unless it is named ``Default`` and has no ``Method::execute``
  (the load/init block, ``run_index`` −1).
"""

from __future__ import annotations


import numpy as np

from .._ids import dense_rows
from ..conventions import (
    DELEGATE_CALL,
    FRAMEWORK_EVENTS,
    LOAD_METHOD,
    METHOD_EXECUTE,
    METHOD_INIT,
    OPERATOR_CALL,
)
from .etdump_tables import allocation_table, debug_table

# Inspector's 32-bit timer wrap-around rule.
_U32_MAX = 2**32 - 1


def durations(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Durations in the timer's unit, with Inspector's 32-bit wrap-around rule.

    Returns (duration as int64, valid mask). ``end < start`` with a value above 2**32-1 cannot be a
    32-bit wrap and is invalid, as is a duration over 2**53 ns (104 days).
    """
    dur, problem = duration_problems(start, end)
    return dur, problem == 0


# why a duration is invalid (codes of duration_problems)
DURATION_PROBLEMS = ("", "end before start (not a 32-bit timer wrap)", "an out-of-range timestamp (≥ 2^62)",
                     "a duration over 2^53 ns (104 days)")


def duration_problems(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(duration as int64, problem code per event: 0 valid, else an index into :data:`DURATION_PROBLEMS`)."""
    s = start.astype(np.int64)
    e = end.astype(np.int64)
    dur = e - s
    back = start > end
    wrap = back & (start <= _U32_MAX)  # end < start ≤ 2^32 − 1: both fit a 32-bit counter
    dur[wrap] = (_U32_MAX - s[wrap]) + e[wrap]
    problem = np.zeros(start.size, dtype=np.int8)
    # a duration beyond 2**53 ns (104 days) cannot be real; it also keeps float sums exact
    problem[np.abs(dur) >= 2**53] = 3
    problem[back & ~wrap] = 1
    # values beyond int64 range (corrupt input, 2^63, 2^64-1 sentinels) count as invalid
    problem[(start >= np.uint64(2**62)) | (end >= np.uint64(2**62))] = 2
    return dur, problem


# --------------------------------------------------------------------------------------------------
# normalization: decoded columns → Profile
# --------------------------------------------------------------------------------------------------

# XNNPACK operator strings: "<Operator name> (<layout>[, <dtype>…])[ <algorithm>][ #N]"
_XNNPACK_OP = None


def looks_like_xnnpack_op(name: str) -> bool:
    global _XNNPACK_OP
    if _XNNPACK_OP is None:
        import re

        _XNNPACK_OP = re.compile(r"^[A-Z][A-Za-z0-9 \-]*\((?:NC|NHWC|NCHW|ND|NWC|NCW|NDHWC|NCDHW|NHWC2NCHW|NCHW2NHWC)\b[^)]*\)")
    return bool(_XNNPACK_OP.match(name))


def _kind_of(name: str) -> int:
    from ..model import KINDS

    if name in FRAMEWORK_EVENTS:
        return KINDS.index("framework")
    if name == OPERATOR_CALL:
        return KINDS.index("operator_call")
    if name == DELEGATE_CALL:
        return KINDS.index("delegate_call")
    if name.startswith("native_call_"):
        return KINDS.index("kernel")
    return KINDS.index("other")


def _next_match(group_child, row_child, group_parent, row_parent):
    """For each child, the first parent row at or after the child row with the same group (−1 if none); rows and
    groups below 2**32 (a FlatBuffer is under 4 GiB)."""
    out = np.full(row_child.size, -1, dtype=np.int64)
    if row_child.size == 0 or row_parent.size == 0:
        return out
    kp = (group_parent.astype(np.int64) << 32) | row_parent.astype(np.int64)
    kp.sort()  # (group, row) keys, each holding its row: one integer sort, no argsort and gather
    kc = (group_child.astype(np.int64) << 32) | row_child.astype(np.int64)
    i = np.searchsorted(kp, kc, side="left")
    ok = i < kp.size
    i2 = np.minimum(i, kp.size - 1)
    ok &= (kp[i2] >> 32) == group_child
    out[ok] = kp[i2[ok]] & 0xFFFFFFFF
    return out


def read_warnings(c: dict) -> list[str]:
    """The reader's warnings from its counts (:func:`build_profile`'s ``counts_out``; counts of several blocks of one file
    add up to the whole file's)."""
    warnings = []
    if c["empty_rundata"]:
        warnings.append(f"{c['empty_rundata']} RunData block(s) hold no events and were skipped")
    if any(c["invalid"][1:]):
        warnings.append("left out as invalid: " + ", ".join(f"{int(k)} event(s) with {DURATION_PROBLEMS[i]}"
                                                             for i, k in enumerate(c["invalid"]) if i and k)
                        + " (their durations are left empty)")
    if c["bad_runs"]:
        warnings.append(f"{sum(c['bad_runs'].values())} of {c['n_run']} run(s) have no valid end-to-end time ("
                        + ", ".join(f"{k}: {p}" for p, k in c["bad_runs"].most_common())
                        + "): left out of latency statistics")
    if c["runs_wo_exec"]:
        warnings.append(f"{c['runs_wo_exec']} run(s) have no Method::execute event: their end-to-end latency is the sum "
                        "of their top-level events (runs.e2e_source = 'top_level_events')")
    if c["n_empty_events"]:
        warnings.append(f"{c['n_empty_events']} Event table(s) hold no payload and were skipped")
    if c["n_ambiguous_events"]:
        warnings.append(f"{c['n_ambiguous_events']} Event table(s) hold more than one payload; the first was used")
    if c["invalid_utf8"]:
        warnings.append(f"{c['invalid_utf8']} string(s) are not valid UTF-8 (shown with replacement characters)")
    return warnings


def add_counts(a: dict, b: dict) -> dict:
    """The counts of two blocks of one file, together."""
    return {k: (a[k] + b[k]) if k != "invalid" else [x + y for x, y in zip(a[k], b[k])] for k in a}


def events_only(run_names: list[str], pe_run, name_codes, dd_codes, names: list[str], instruction, start, end,
                **extra) -> dict:
    """The decoded columns of a profile that holds profiling events only (a timeline CSV, another runtime's
    profile), for :func:`build_profile`: ``names`` serve as both the event names and the delegate debug id strings
    (``name_codes``/``dd_codes`` index them, −1 for none); ``extra`` adds the optional columns (``pe_kind``,
    ``pe_backend_codes``/``pe_backends``, ``pe_invalid``)."""
    n = len(pe_run)
    empty = np.empty(0, dtype=np.int64)
    return {
        "version": 0, "run_names": list(run_names), "run_bundled_input_index": np.full(len(run_names), -1, dtype=np.int32),
        "allocator_run": empty, "allocator_names": [], "n_runs": len(run_names),
        "n_empty_events": 0, "n_ambiguous_events": 0, "invalid_utf8": 0,
        "pe_run": np.asarray(pe_run, dtype=np.int64),
        "pe_name_codes": np.asarray(name_codes, dtype=np.int32), "pe_names": names,
        "pe_dd_str_codes": np.asarray(dd_codes, dtype=np.int32), "pe_dd_strs": names,
        "pe_chain": np.zeros(n, dtype=np.int32), "pe_instruction": np.asarray(instruction, dtype=np.int32),
        "pe_dd_int": np.full(n, -1, dtype=np.int32),
        "pe_start": np.asarray(start, dtype=np.uint64), "pe_end": np.asarray(end, dtype=np.uint64),
        "ae_run": empty, "ae_seq": empty, "ae_allocator": np.empty(0, np.int32), "ae_size": np.empty(0, np.uint64),
        "de_run": empty, "de_seq": empty, "de_chain": np.empty(0, np.uint64), "de_instruction": np.empty(0, np.int32),
        "de_dd_int": np.empty(0, np.int32), "de_dd_str": [], "de_name": [],
        "de_value": {"value_type": np.empty(0, np.int16), "is_output": np.empty(0, bool), "int_value": np.empty(0),
                     "float_value": np.empty(0), "bool_value": np.empty(0, np.int8), "tensors": []},
        **extra,
    }


def build_profile(dec: dict, path, file_size: int = 0, counts_out: dict | None = None):
    """Turn decoded columns into a :class:`~edgeprof.model.Profile`. ``counts_out`` receives the counts its
    warnings are made of (:func:`read_warnings`)."""
    from collections import Counter

    import polars as pl

    from ..model import KINDS, TIMING_SOURCES, Profile

    n = dec["pe_run"].size
    run_names: list[str] = dec["run_names"]
    n_rundata = dec["n_runs"]

    # ---- names: Inspector names a delegated event by its delegate debug id ----------------------
    names: list[str] = dec["pe_names"]
    dstrs: list[str] = dec["pe_dd_strs"]
    dd_int = dec["pe_dd_int"].astype(np.int64)
    dcode = dec["pe_dd_str_codes"]
    dstr_nonempty_lut = np.array([s != "" for s in dstrs] + [False], dtype=bool)
    has_dstr = dstr_nonempty_lut[np.where(dcode >= 0, dcode, len(dstrs))]
    has_dint = dd_int != -1
    delegated = has_dint | has_dstr
    int_uniques, int_codes = np.unique(dd_int[has_dint], return_inverse=True)
    a, b = len(names), len(dstrs)
    cand = names + dstrs + [str(int(v)) for v in int_uniques] + [""]
    empty = len(cand) - 1
    code = np.where(dec["pe_name_codes"] >= 0, dec["pe_name_codes"], empty).astype(np.int64)
    code[has_dstr] = a + dcode[has_dstr]
    code[has_dint] = a + b + int_codes.reshape(-1)
    canon: dict[str, int] = {}
    remap = np.array([canon.setdefault(s, len(canon)) for s in cand], dtype=np.int64)
    uniq = list(canon)
    code = remap[code]
    kind_lut = np.array([_kind_of(s) for s in uniq], dtype=np.int8)
    kind = np.where(delegated, KINDS.index("delegate_op"), kind_lut[code]).astype(np.int8)
    if "pe_kind" in dec:  # a reader that knows an event's kind (-1: from its name, as above)
        kind = np.where(dec["pe_kind"] >= 0, dec["pe_kind"], kind).astype(np.int8)

    # ---- runs -------------------------------------------------------------------------------------
    pe_run = dec["pe_run"]
    exec_code = canon.get(METHOD_EXECUTE, -1)
    is_exec = (code == exec_code) & ~delegated
    has_exec = np.bincount(pe_run[is_exec], minlength=n_rundata) > 0
    has_events = (np.bincount(pe_run, minlength=n_rundata) + np.bincount(dec["de_run"], minlength=n_rundata)
                  + np.bincount(dec["ae_run"], minlength=n_rundata)) > 0
    is_run = has_events & (np.array([nm != "Default" for nm in run_names], dtype=bool) | has_exec)
    run_index_of = np.where(is_run, np.cumsum(is_run) - 1, -1).astype(np.int32)
    counts = {"empty_rundata": int((~has_events).sum()), "n_run": int(is_run.sum()),
              "n_empty_events": dec["n_empty_events"], "n_ambiguous_events": dec["n_ambiguous_events"],
              "invalid_utf8": dec["invalid_utf8"]}

    # event position within its run
    row = np.arange(n, dtype=np.int64)
    run_first = np.full(n_rundata + 1, n, dtype=np.int64)
    if n:
        change = np.flatnonzero(np.r_[True, pe_run[1:] != pe_run[:-1]])
        run_first[pe_run[change]] = change
    event_index = (row - run_first[pe_run]).astype(np.int32) if n else np.empty(0, np.int32)

    # ---- durations --------------------------------------------------------------------------------
    start = dec["pe_start"]
    end = dec["pe_end"]
    dur, problem = duration_problems(start, end)
    if "pe_invalid" in dec:  # a reader that knows a duration is unusable (a timeline CSV's NaN, say)
        problem[dec["pe_invalid"] & (problem == 0)] = 1
    valid = problem == 0
    counts["invalid"] = np.bincount(problem, minlength=len(DURATION_PROBLEMS)).tolist()
    dur_valid = np.where(valid, dur, 0)

    # ---- nesting ----------------------------------------------------------------------------------
    instr = dec["pe_instruction"].astype(np.int64)
    k_kernel, k_op, k_dcall, k_dop, k_fw = (KINDS.index(k) for k in
                                            ("kernel", "operator_call", "delegate_call", "delegate_op", "framework"))
    group = dense_rows(pe_run, instr).astype(np.int64) if n else np.empty(0, np.int64)
    parent = np.full(n, -1, dtype=np.int64)
    for child_kind, parent_kind in ((k_kernel, k_op), (k_dop, k_dcall)):
        c = kind == child_kind
        p = kind == parent_kind
        parent[c] = _next_match(group[c], row[c], group[p], row[p])
    top = (parent < 0) & ~is_exec & (kind != k_fw)
    parent[top] = _next_match(pe_run[top].astype(np.int64), row[top], pe_run[is_exec].astype(np.int64), row[is_exec])
    init_code = canon.get(METHOD_INIT, -1)
    load_code = canon.get(LOAD_METHOD, -1)
    if init_code >= 0 and load_code >= 0:
        c = (code == init_code) & ~delegated
        p = (code == load_code) & ~delegated
        parent[c] = _next_match(pe_run[c].astype(np.int64), row[c], pe_run[p].astype(np.int64), row[p])
    depth = np.zeros(n, dtype=np.int8)
    has_parent = parent >= 0
    for _ in range(8):
        new = np.where(has_parent, depth[np.maximum(parent, 0)] + 1, 0).astype(np.int8)
        if np.array_equal(new, depth):
            break
        depth = new
    child_sum = np.bincount(parent[has_parent], weights=dur_valid[has_parent].astype(np.float64), minlength=n)[:n]
    self_ns = dur_valid - child_sum.astype(np.int64)

    # ---- backends and timing source (small lookup tables + codes; strings are built by Polars) ------
    backends = ["portable", "framework", "delegated", "XnnpackBackend"]
    backend_lut = np.where(kind_lut == k_fw, 1, 0).astype(np.int8)
    xnn_name = np.array([looks_like_xnnpack_op(s) for s in uniq], dtype=bool)
    backend = backend_lut[code]
    source = np.zeros(n, dtype=np.int8)  # 0 "", 1 "inferred"
    dop = kind == k_dop
    xnn_op = dop & xnn_name[code]
    backend[dop] = 2
    backend[xnn_op] = 3
    source[xnn_op] = 1
    dcall = np.flatnonzero(kind == k_dcall)
    backend[dcall] = 2
    if dcall.size:
        # a delegate call is XNNPACK when its per-op events are
        child_xnn = np.bincount(parent[xnn_op & (parent >= 0)], minlength=n)[:n] > 0
        xc = dcall[child_xnn[dcall]]
        backend[xc] = 3
        source[xc] = 1
        # and every op inside an XNNPACK call is XNNPACK's, whatever its name ("Invalid Unary Op", a new operator)
        in_xc = dop & ~xnn_op & (parent >= 0)
        is_xc = np.zeros(n, dtype=bool)
        is_xc[xc] = True
        in_xc[in_xc] = is_xc[parent[in_xc]]
        backend[in_xc] = 3
        source[in_xc] = 1
    if "pe_backend_codes" in dec:  # a profile that names each event's backend itself (−1: the rules above)
        given = dec["pe_backend_codes"]
        backends += list(dec["pe_backends"])
        backend = np.where(given >= 0, 4 + given, backend).astype(np.int8)
        source[given >= 0] = 2
    timing = np.zeros(n, dtype=np.int8)
    timing[xnn_op] = 1  # XNNPACK lays per-op start times end to end from the delegate call's start
    timing |= _contiguous_children(dop, parent, start, end, dur_valid).astype(np.int8)

    # ---- tables -----------------------------------------------------------------------------------
    cat = pl.Categorical
    block_names: dict[str, int] = {}
    block_code = np.array([block_names.setdefault(nm, len(block_names)) for nm in run_names], dtype=np.int64)
    block_of_run = pl.Series("block", list(block_names), dtype=cat)
    ev = pl.DataFrame({
        "run_index": run_index_of[pe_run],
        "block": block_of_run.gather(block_code[pe_run]) if n else pl.Series([], dtype=cat),
        "event_index": event_index,
        "name": pl.Series(uniq, dtype=cat).gather(code) if n else pl.Series([], dtype=cat),
        "kind": pl.Series(KINDS, dtype=pl.Enum(KINDS)).gather(kind),
        "instruction_id": dec["pe_instruction"].astype(np.int32),
        "chain_index": dec["pe_chain"].astype(np.int32),
        "delegate_debug_id_int": (pl.Series(dd_int.astype(np.int32)).set(pl.Series(~has_dint), None)
                                  if n else pl.Series([], dtype=pl.Int32)),
        "delegate_debug_id_str": (pl.Series([*dstrs, None], dtype=cat).gather(np.where(has_dstr, dcode, len(dstrs)))
                                  if n else pl.Series([], dtype=cat)),
        "start_ns": start.astype(np.int64),
        "end_ns": end.astype(np.int64),
        "duration_ns": pl.Series(dur).set(pl.Series(~valid), None) if n else pl.Series([], dtype=pl.Int64),
        "self_ns": self_ns,
        "parent": pl.Series(parent).set(pl.Series(~has_parent), None) if n else pl.Series([], dtype=pl.Int64),
        "depth": depth,
        "delegate_backend": pl.Series(backends, dtype=cat).gather(backend),
        "backend_source": pl.Series(["", "inferred", "profile"], dtype=cat).gather(source),
        "timing_source": pl.Series(TIMING_SOURCES, dtype=cat).gather(timing),
        "op_types": pl.repeat(None, n, dtype=pl.List(pl.Categorical), eager=True),
        "module_path": pl.repeat(None, n, dtype=cat, eager=True),
    }, schema_overrides={"parent": pl.Int64, "duration_ns": pl.Int64, "delegate_debug_id_int": pl.Int32})

    e2e = np.bincount(pe_run[is_exec & valid], weights=dur[is_exec & valid].astype(np.float64), minlength=n_rundata)
    n_exec = np.bincount(pe_run[is_exec], minlength=n_rundata)
    # runs without Method::execute: fall back to the sum of their top-level events, and say so
    top_level = (depth == 0) & (kind != k_fw) | (depth == 0) & is_exec
    e2e_top = np.bincount(pe_run[top_level & valid], weights=dur[top_level & valid].astype(np.float64),
                          minlength=n_rundata)
    e2e = np.where(n_exec > 0, e2e, e2e_top)
    e2e_source = np.where(n_exec > 0, "method_execute", "top_level_events").astype(object)
    # a run's end-to-end time is valid only when every event it is made of is, and it is above zero
    timed = np.where(n_exec > 0, 0, 1)  # which events make the time: Method::execute, else the top-level ones
    part_bad = np.bincount(pe_run[~valid & np.where(timed[pe_run] == 0, is_exec, top_level)], minlength=n_rundata) > 0
    n_profile_events = np.bincount(pe_run, minlength=n_rundata)
    e2e_problem = np.full(n_rundata, None, dtype=object)
    e2e_problem[(e2e <= 0)] = "zero duration"
    e2e_problem[part_bad] = "its timed events have invalid timestamps"
    e2e_problem[n_profile_events == 0] = "no profiling events"
    e2e_problem[~is_run] = None
    run_min = np.full(n_rundata, np.iinfo(np.int64).max)
    run_max = np.full(n_rundata, np.iinfo(np.int64).min)
    if n:
        np.minimum.at(run_min, pe_run, start.astype(np.int64))
        np.maximum.at(run_max, pe_run, end.astype(np.int64))
    n_events = np.bincount(pe_run, minlength=n_rundata)
    runs = pl.DataFrame({
        "run_data_index": np.arange(n_rundata, dtype=np.int32),
        "run_index": run_index_of,
        "block": pl.Series(run_names, dtype=pl.String),
        "bundled_input_index": dec["run_bundled_input_index"].astype(np.int32),
        "n_events": n_events.astype(np.int64),
        "n_method_execute": n_exec.astype(np.int32),
        "e2e_ns": pl.Series(e2e.astype(np.int64)).set(pl.Series((n_events == 0) | ~is_run | (e2e_problem != None)),  # noqa: E711
                                                      None) if n_rundata else pl.Series([], dtype=pl.Int64),
        "e2e_source": pl.Series([None if k == 0 else src for k, src in zip(n_events.tolist(), e2e_source.tolist())],
                                dtype=pl.String),
        "e2e_problem": pl.Series(e2e_problem.tolist(), dtype=pl.String),
        "start_ns": pl.Series(run_min).set(pl.Series(n_events == 0), None) if n_rundata else pl.Series([], dtype=pl.Int64),
        "end_ns": pl.Series(run_max).set(pl.Series(n_events == 0), None) if n_rundata else pl.Series([], dtype=pl.Int64),
    }, schema_overrides={"e2e_ns": pl.Int64, "start_ns": pl.Int64, "end_ns": pl.Int64})
    counts["bad_runs"] = Counter(p for p, r in zip(e2e_problem.tolist(), is_run.tolist()) if r and p)
    counts["runs_wo_exec"] = int(((n_exec == 0) & is_run & (n_profile_events > 0)).sum())

    allocs = allocation_table(dec, run_index_of, run_names)
    debug = debug_table(dec, run_index_of, run_names)
    allocators = [(int(r), nm) for r, nm in zip(dec["allocator_run"].tolist(), dec["allocator_names"])]
    if counts_out is not None:
        counts_out.update(counts)
    return Profile(source=str(path), events=ev, runs=runs, allocations=allocs, debug_events=debug,
                   allocators=allocators, version=dec["version"], file_size=file_size, warnings=read_warnings(counts))


def _contiguous_children(dop, parent, start, end, dur):
    """Delegate ops whose start times are laid end to end from their delegate call's start.

    That is how a backend that measures only durations fills in start times (XNNPACK does this).
    Groups with at least two ops where every start equals the previous end and the first start
    equals the delegate call's start are marked.
    """
    n = dop.size
    out = np.zeros(n, dtype=bool)
    idx = np.flatnonzero(dop & (parent >= 0))
    if idx.size < 2:
        return out
    par = parent[idx]
    s = start[idx].astype(np.int64)
    e = s + dur[idx]
    first = np.r_[True, par[1:] != par[:-1]]
    link_ok = np.where(first, s == start[par].astype(np.int64), s == np.r_[0, e[:-1]])
    gid = np.cumsum(first) - 1
    bad = np.bincount(gid, weights=~link_ok, minlength=gid[-1] + 1) > 0
    size = np.bincount(gid, minlength=gid[-1] + 1)
    ok = ~bad & (size >= 2)
    out[idx] = ok[gid]
    return out
