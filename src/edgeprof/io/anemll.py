"""anemll-profile (0.4.x) and ane-costplan ``-j`` JSON reports → :class:`~edgeprof.ane_model.AneProfile` /
:class:`~edgeprof.ane_model.AneCostPlan`.

Tolerant where the tools are loose: sections may be missing (a failed analysis still writes the JSON),
keys may be unknown or in any order, ``/`` may be escaped as ``\\/``, booleans may be ``0``/``1`` or
``true``/``false``, and numbers may be written as strings by hand-edited reports. Strict where the data
would mislead: a value of the wrong kind (an object where a number belongs), a non-finite or absurd number,
or nesting beyond any real report is an :class:`~edgeprof.errors.InputError` naming the file and the
JSON path of the value.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ..conventions import ESTIMATE_TOOL
from ..errors import InputError
from ..mil_model import short_type
from ..ane_model import AneCostPlan, AneIsland, AnePlacement, AneProfile

if TYPE_CHECKING:
    from collections.abc import Callable

MAX_BYTES = 512 << 20
_LIMIT = 1e300  # larger magnitudes are not measurements


class _Doc:
    """Typed access to a parsed document, every error naming the file and the JSON path."""

    def __init__(self, path: str):
        self.path = path

    def fail(self, where: str, msg: str) -> NoReturn:
        raise InputError(self.path, f"{where}: {msg}")

    def obj(self, d: dict, key: str, where: str) -> dict:
        v = d.get(key)
        if v is None:
            return {}
        if not isinstance(v, dict):
            self.fail(f"{where}.{key}" if where else key, f"expected an object, got {_kind(v)}")
        return v

    def arr(self, d: dict, key: str, where: str) -> list:
        v = d.get(key)
        if v is None:
            return []
        if not isinstance(v, list):
            self.fail(f"{where}.{key}" if where else key, f"expected an array, got {_kind(v)}")
        return v

    def item(self, v, where: str) -> dict:
        if not isinstance(v, dict):
            self.fail(where, f"expected an object, got {_kind(v)}")
        return v

    def num(self, d: dict, key: str, where: str, default: float = 0.0) -> float:
        v = d.get(key, default)
        if v is None:
            return default
        if isinstance(v, str):
            try:
                v = float(v)
            except ValueError:
                self.fail(f"{where}.{key}", f"expected a number, got '{v[:40]}'")
        if isinstance(v, bool):
            return float(v)
        if not isinstance(v, (int, float)):
            self.fail(f"{where}.{key}", f"expected a number, got {_kind(v)}")
        try:
            f = float(v)
        except OverflowError:
            self.fail(f"{where}.{key}", "number out of range")
        if not math.isfinite(f) or abs(f) > _LIMIT:
            self.fail(f"{where}.{key}", f"number out of range ({v!r:.40})")
        return f

    def int_(self, d: dict, key: str, where: str, default: int = 0) -> int:
        f = self.num(d, key, where, float(default))
        if abs(f) > 2 ** 53:
            self.fail(f"{where}.{key}", "integer out of range")
        return int(f)

    def str_(self, d: dict, key: str, where: str, default: str = "") -> str:
        v = d.get(key, default)
        if v is None:
            return default
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return str(v)
        if not isinstance(v, str):
            self.fail(f"{where}.{key}", f"expected a string, got {_kind(v)}")
        return v

    def bool_(self, d: dict, key: str, where: str, default: bool = False) -> bool:
        """``true``/``false`` (BOOL boxed on arm64) or ``0``/``1`` (int or comparison boxed; BOOL on x86_64)."""
        v = d.get(key, default)
        if v is None:
            return default
        if isinstance(v, bool):
            return v
        if isinstance(v, (int, float)) and v in (0, 1):
            return bool(v)
        if isinstance(v, str) and v.strip().lower() in ("true", "false", "0", "1", "yes", "no"):
            return v.strip().lower() in ("true", "1", "yes")
        self.fail(f"{where}.{key}", f"expected true/false or 0/1, got '{str(v)[:40]}'")


def _kind(v) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(v), "a number")


def _no_constants(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(s: str) -> float:
    f = float(s)
    if not math.isfinite(f):
        raise ValueError(f"number {s[:40]} is out of range")
    return f


def load_json(path) -> object:
    from ..files import read_regular

    path = Path(path)
    raw = read_regular(path, MAX_BYTES, "report")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        from .sniff import kind, wrong_kind

        if kind(raw[:64])[0] in ("etdump", "pte", "zip", "gzip"):
            raise InputError(path, wrong_kind(path, "an anemll-profile or ane-costplan JSON report", raw[:64])) from None
        raise InputError(path, "not UTF-8 text", offset=e.start) from None
    try:
        return json.loads(text, parse_constant=_no_constants, parse_float=_finite_float)
    except json.JSONDecodeError as e:
        raise InputError(path, f"not valid JSON ({e.msg})", line=e.lineno) from None
    except ValueError as e:
        raise InputError(path, f"not valid JSON ({e})") from None
    except RecursionError:
        raise InputError(path, "JSON nested too deeply to be a report") from None


def detect(doc) -> str | None:
    """``profile``, ``costplan`` or None."""
    if not isinstance(doc, dict):
        return None
    if doc.get("tool") in ("anemll-profile", ESTIMATE_TOOL) or (
            "tool" not in doc and sum(k in doc for k in ("graph_interruptions", "ordered_placements", "op_type_breakdown",
                                                         "measured_prediction", "fallback_ops")) >= 2):
        return "profile"
    if isinstance(doc.get("operations"), list) and ("total_cost" in doc or "with_device" in doc):
        return "costplan"
    return None


def read_report(path) -> AneProfile | AneCostPlan:
    """Either report, by content. A document that is neither is an InputError."""
    return report_from_doc(load_json(path), str(path))


def report_from_doc(doc, path: str) -> AneProfile | AneCostPlan:
    """Either report from a parsed document, by content. A document that is neither is an InputError."""
    kind = detect(doc)
    if kind == "profile":
        return profile_from_doc(doc, str(path))
    if kind == "costplan":
        return costplan_from_doc(doc, str(path))
    hint = f" (its tool is '{str(doc.get('tool'))[:60]}')" if isinstance(doc, dict) and "tool" in doc else ""
    raise InputError(path, f"neither an anemll-profile nor an ane-costplan JSON report: the document is {_kind(doc)}{hint}")


_PROFILE_SECTIONS = ("model", "compute", "status", "summary", "measured_prediction", "ordered_placements",
                     "graph_interruptions", "op_type_breakdown", "op_type_totals", "top_operations", "conv_detail",
                     "high_cost_ops", "ane_op_types", "cpu_op_types", "unsupported_reasons_by_type", "fallback_ops")


def _island(r: _Doc, v, where: str) -> AneIsland:
    d = r.item(v, where)
    return AneIsland(
        id=r.int_(d, "id", where), function=r.str_(d, "function", where),
        start_index=r.int_(d, "start_index", where), end_index=r.int_(d, "end_index", where),
        path=r.str_(d, "path", where), device=r.str_(d, "device", where), op_count=r.int_(d, "op_count", where),
        total_cost=r.num(d, "total_cost", where), runtime_ms=r.num(d, "runtime_ms", where),
        switch_penalty_ms=r.num(d, "switch_penalty_ms", where), total_penalty_ms=r.num(d, "total_penalty_ms", where),
        soft_ops=r.int_(d, "soft_ops", where), hard_ops=r.int_(d, "hard_ops", where),
        missing_runtime_ops=r.int_(d, "missing_runtime_ops", where), reason=r.str_(d, "reason", where),
        first_type=r.str_(d, "first_type", where), last_type=r.str_(d, "last_type", where),
        is_interruption=r.bool_(d, "is_interruption", where), edge_kind=r.str_(d, "edge_kind", where),
        center_percent=r.num(d, "center_percent", where))


def _rows(r: _Doc, doc: dict, key: str, fields: dict) -> list[dict]:
    """An array of flat objects, each field coerced: fields = {name: "num" | "int" | "str" | "bool"}."""
    read: dict[str, Callable[[dict, str, str], object]] = {"num": r.num, "int": r.int_, "str": r.str_, "bool": r.bool_}
    out = []
    for i, v in enumerate(r.arr(doc, key, "")):
        where = f"{key}[{i}]"
        d = r.item(v, where)
        row: dict[str, Any] = {}
        for f, kind in fields.items():
            row[f] = read[kind](d, f, where)
        if "type" in row and not row.get("short_type"):
            row["short_type"] = short_type(row["type"])
        out.append(row)
    return out


def _count_map(r: _Doc, doc: dict, key: str) -> dict[str, int]:
    m = r.obj(doc, key, "")
    return {str(k): r.int_(m, k, key) for k in m}


def profile_from_doc(doc: dict, source: str) -> AneProfile:
    r = _Doc(source)
    warnings = []
    version = r.str_(doc, "version", "")
    if doc.get("tool") == ESTIMATE_TOOL:
        warnings.append("a static estimate written by `edgeprof coreml --as-anemll` (evidence mil_static): placements "
                        "come from documented rules and runtimes from a roofline, nothing was measured")
    elif version and not version.startswith("0.4"):
        warnings.append(f"written by anemll-profile {version}; read with the 0.4.x schema")
    missing = [s for s in _PROFILE_SECTIONS if s not in doc]
    m = r.obj(doc, "model", "")
    model: dict[str, object] = {k: r.str_(m, k, "model") for k in ("display_name", "input_path", "compiled_model_path",
                                                                   "format") if k in m}
    model.update({k: r.num(m, k, "model") for k in ("size_bytes", "size_mb") if k in m})
    if "compiled_from_package" in m:
        model["compiled_from_package"] = r.bool_(m, "compiled_from_package", "model")
    c = r.obj(doc, "compute", "")
    compute = {"mode": r.str_(c, "mode", "compute"),
               "interrupt_boundary_ms": r.num(c, "interrupt_boundary_ms", "compute", 300.0),
               "compute_units_all": r.bool_(c, "compute_units_all", "compute")}
    s = r.obj(doc, "status", "")
    status = {"no_costmodel_entries": r.bool_(s, "no_costmodel_entries", "status"),
              "log_data_masked": r.bool_(s, "log_data_masked", "status"),
              "static_estimate": doc.get("tool") == ESTIMATE_TOOL}  # written by edgeprof coreml --as-anemll
    sm = r.obj(doc, "summary", "")
    summary = {k: (r.int_(sm, k, "summary") if k.endswith(("ops", "entries")) else r.num(sm, k, "summary"))
               for k in ("total_ops", "ane_ops", "cpu_ops", "gpu_ops", "const_ops", "total_cost", "ane_cost", "cpu_cost",
                         "gpu_cost", "costmodel_entries", "unique_costmodel_ops", "grand_runtime_ms", "grand_gflop")
               if k in sm}
    mp = r.obj(doc, "measured_prediction", "")
    measured: dict[str, object] = {"status": r.str_(mp, "status", "measured_prediction", "not_run" if not mp else "")}
    for k in ("steady_ms", "average_ms", "iter_per_sec", "gflops_per_sec", "tops", "weight_bw_gbps",
              "speedup_vs_sequential"):
        if k in mp:
            measured[k] = r.num(mp, k, "measured_prediction")
    if "runs" in mp:
        measured["runs"] = r.int_(mp, "runs", "measured_prediction")
    if "error" in mp:
        measured["error"] = r.str_(mp, "error", "measured_prediction")
    placements = []
    for i, v in enumerate(r.arr(doc, "ordered_placements", "")):
        where = f"ordered_placements[{i}]"
        d = r.item(v, where)
        t = r.str_(d, "type", where)
        placements.append(AnePlacement(
            function=r.str_(d, "function", where), index=r.int_(d, "index", where), name=r.str_(d, "name", where),
            type=t, short_type=r.str_(d, "short_type", where) or short_type(t), device=r.str_(d, "device", where, "?"),
            cost=r.num(d, "cost", where), ane_supported=r.bool_(d, "ane_supported", where)))
    gi = r.obj(doc, "graph_interruptions", "")
    gi_summary = {k: v for k, v in gi.items() if k not in ("interruptions", "edge_runs", "timeline_by_function")
                  and isinstance(v, (str, int, float, bool))}
    for k in ("graph_interruptions", "non_focus_runs", "edge_runs_ignored", "interrupted_ops",
              "interrupted_soft_ops", "interrupted_hard_ops", "interrupted_missing_runtime_ops"):
        if k in gi:
            gi_summary[k] = r.int_(gi, k, "graph_interruptions")
    for k in ("estimated_switch_tax_ms", "estimated_island_time_ms", "estimated_total_tax_ms", "interrupted_cost"):
        if k in gi:
            gi_summary[k] = r.num(gi, k, "graph_interruptions")
    interruptions = [_island(r, v, f"graph_interruptions.interruptions[{i}]")
                     for i, v in enumerate(r.arr(gi, "interruptions", "graph_interruptions"))]
    edge_runs = [_island(r, v, f"graph_interruptions.edge_runs[{i}]")
                 for i, v in enumerate(r.arr(gi, "edge_runs", "graph_interruptions"))]
    if gi and "graph_interruptions" in gi and gi_summary["graph_interruptions"] != len(interruptions):
        warnings.append(f"graph_interruptions says {gi_summary['graph_interruptions']} interruptions but lists "
                        f"{len(interruptions)} (the tool stores at most 4,096)")
    op_types = _rows(r, doc, "op_type_breakdown", {"type": "str", "short_type": "str", "count": "int", "ms_per_op": "num",
                                                   "total_ms": "num", "gflop": "num", "gbps": "num", "share_pct": "num",
                                                   "bound": "str", "weight_mb": "num"})
    tt = r.obj(doc, "op_type_totals", "")
    totals = {k: r.num(tt, k, "op_type_totals") for k in ("grand_runtime_ms", "grand_gflop", "grand_weight_mb",
                                                         "grand_gbps") if k in tt}
    top = _rows(r, doc, "top_operations", {"name": "str", "type": "str", "short_type": "str", "runtime_ms": "num",
                                           "total_mb": "num", "gbps": "num", "bound": "str"})
    conv = _rows(r, doc, "conv_detail", {"name": "str", "type": "str", "runtime_ms": "num", "gflops": "num",
                                         "total_mb": "num", "gbps": "num", "input_channels": "int",
                                         "output_channels": "int", "work_unit_efficiency_pct": "num"})
    high = _rows(r, doc, "high_cost_ops", {"index": "int", "type": "str", "short_type": "str", "cost": "num",
                                           "device": "str"})
    fallback = _rows(r, doc, "fallback_ops", {"function": "str", "index": "int", "name": "str", "type": "str",
                                              "short_type": "str", "device": "str", "cost": "num", "supported": "str",
                                              "reason": "str"})
    reasons = {}
    ur = r.obj(doc, "unsupported_reasons_by_type", "")
    for t, lst in ur.items():
        if isinstance(lst, str):
            lst = [lst]
        if not isinstance(lst, list) or not all(isinstance(x, str) for x in lst):
            r.fail(f"unsupported_reasons_by_type.{t}", "expected an array of strings")
        reasons[str(t)] = sorted(lst)
    return AneProfile(
        source=source, version=version, model=model, compute=compute, status=status, summary=summary,
        measured=measured, placements=placements, interruptions_summary=gi_summary, interruptions=interruptions,
        edge_runs=edge_runs, op_types=op_types, op_type_totals=totals, top_operations=top, conv_detail=conv,
        high_cost_ops=high, ane_op_types=_count_map(r, doc, "ane_op_types"),
        cpu_op_types=_count_map(r, doc, "cpu_op_types"), unsupported_reasons=reasons, fallback_ops=fallback,
        missing=missing, warnings=warnings)


def costplan_from_doc(doc: dict, source: str) -> AneCostPlan:
    r = _Doc(source)
    ops = []
    for i, v in enumerate(r.arr(doc, "operations", "")):
        where = f"operations[{i}]"
        d = r.item(v, where)
        t = r.str_(d, "type", where)
        op: dict[str, Any] = {"index": r.int_(d, "index", where, -1), "type": t, "short_type": short_type(t),
              "cost": r.num(d, "cost", where)}
        for extra in ("function", "device", "preferred_device"):  # richer plans may say these
            if extra in d:
                op["function" if extra == "function" else "device"] = r.str_(d, extra, where)
        ops.append(op)
    warnings = []
    total = r.num(doc, "total_cost", "", sum(o["cost"] for o in ops))
    n = r.int_(doc, "total_ops", "", len(ops))
    if n != len(ops):
        warnings.append(f"total_ops says {n} but {len(ops)} operations are listed")
    return AneCostPlan(source=source, model=r.str_(doc, "model", ""), operations=ops, total_cost=total, total_ops=n,
                       with_device=r.int_(doc, "with_device", ""), no_device=r.int_(doc, "no_device", ""),
                       warnings=warnings)
