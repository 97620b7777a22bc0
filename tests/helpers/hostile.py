"""Hostile inputs, built from the real fixtures: ETDumps with semantically odd timestamps and run structure,
ETRecords with out-of-range JSON values, timeline CSVs with wrong cell types, ANE reports with wrong field
types, and XNNPACK logs that are bombs, giant lines or UTF-16. Shared by the test matrix and the fuzzers.

ETDumps are rewritten with the reference FlatBuffers runtime (:mod:`etdump_rewrite`), not with edgeprof.
"""

from __future__ import annotations

import gzip
import io
import json
import random
import zipfile
from dataclasses import replace
from pathlib import Path

from etdump_builder import AE, DE, PE, TensorMeta
from etdump_rewrite import read, write

from testdata import DATA


def fixture_etdump(name: str = "toycnn_xnn.N20") -> bytes:
    return gzip.decompress((DATA / "etdump" / f"{name}.etdp.gz").read_bytes())


def _execute(e) -> bool:
    return isinstance(e, PE) and e.name == "Method::execute"


def _map_exec(runs, fn, which=lambda i: True):
    out = []
    i = 0
    for r in runs:
        if r.name == "Execute":
            events = [fn(e) if _execute(e) and which(i) else e for e in r.events]
            out.append(replace(r, events=events))
            i += 1
        else:
            out.append(r)
    return out


U64 = 2**64 - 1


def etdump_variants(seed: bytes) -> dict[str, bytes]:
    """name → ETDump bytes. ``*_all`` variants leave no run with a valid end-to-end time."""
    runs, v = read(seed)
    out = {
        "exec_zero_all": _map_exec(runs, lambda e: replace(e, end=e.start)),
        # past 2^32, so not a 32-bit timer wrap (which Inspector's rule, and edgeprof's, would accept)
        "exec_backwards_all": _map_exec(runs, lambda e: replace(e, start=e.start + 2**33, end=e.start + 2**33 - 1000)),
        "exec_u64max_all": _map_exec(runs, lambda e: replace(e, end=U64)),
        "exec_2p63_all": _map_exec(runs, lambda e: replace(e, start=2**63, end=2**63 + 5)),
        "exec_u32wrap": _map_exec(runs, lambda e: replace(e, start=2**32 - 10, end=5)),
        "exec_zero_some": _map_exec(runs, lambda e: replace(e, end=e.start), which=lambda i: i % 2 == 0),
        "kernels_backwards": [replace(r, events=[replace(e, end=e.start - 7) if isinstance(e, PE) and e.name
                                                 and e.name.startswith(("native", "DELEGATE")) else e
                                                 for e in r.events]) for r in runs],
        "alloc_only_runs": [replace(r, events=[AE(0, 64), AE(1, 128)], allocators=["a", "b"]) if r.name == "Execute"
                            else r for r in runs],
        "debug_only_runs": [replace(r, events=[DE(name="x", instruction_id=1, tensor=TensorMeta(6, [1, 2], [2, 1], 0))])
                            if r.name == "Execute" else r for r in runs],
        "alloc_only_some": [replace(r, events=[AE(0, 64)], allocators=["a"]) if r.name == "Execute" and i % 3 == 0
                            else r for i, r in enumerate(runs)],
        "default_only": [r for r in runs if r.name != "Execute"],
        "empty_blocks": [replace(r, events=[]) for r in runs],
        "no_blocks": [],
        "one_run": [r for r in runs if r.name != "Execute"] + [next(r for r in runs if r.name == "Execute")],
    }
    return {k: write(r, v) for k, r in out.items()}


ALL_INVALID = ("exec_zero_all", "exec_backwards_all", "exec_u64max_all", "exec_2p63_all", "alloc_only_runs",
               "debug_only_runs", "default_only", "empty_blocks", "no_blocks")


def etrecord_variants(seed_path: Path) -> dict[str, bytes]:
    """ETRecords with one JSON value out of range or of the wrong kind (the zip itself intact)."""
    with zipfile.ZipFile(seed_path) as z:
        members = {n: z.read(n) for n in z.namelist()}

    def rebuild(changes: dict[str, bytes]) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for n, data in members.items():
                z.writestr(n, changes.get(n, data))
        return buf.getvalue()

    graph_name = next(n for n in members if n.startswith("edge_dialect_exported_program"))
    graph = members[graph_name].decode("utf-8")
    dhm = json.loads(members["debug_handle_map"])
    method = next(iter(dhm))
    out = {
        "handle_1e999": rebuild({graph_name: graph.replace('"debug_handle":', '"debug_handle": 1e999, "x":', 1)
                                 .encode()}),
        "handle_huge_int": rebuild({graph_name: graph.replace('"debug_handle":', '"debug_handle": ' + "9" * 5000
                                                              + ', "x":').encode()}),
        "map_key_huge": rebuild({"debug_handle_map": json.dumps({method: {"9" * 5000: [1]}}).encode()}),
        "map_values_nested": rebuild({"debug_handle_map": json.dumps({method: {"1": [[[[1]]]], "2": {"a": 1}}}).encode()}),
        "map_deep": rebuild({"debug_handle_map": (b"[" * 100_000) + (b"]" * 100_000)}),
        "delegate_map_types": rebuild({"delegate_map": json.dumps({method: {"1": [1, 2], "2": {"name": 7,
                                                                                       "delegate_map": 3}}}).encode()}),
        "graph_nodes_not_list": rebuild({graph_name: b'{"graph_module": {"graph": {"nodes": 12}}}'}),
        "nan_everywhere": rebuild({"debug_handle_map": b'{"' + method.encode() + b'": {"1": NaN, "2": Infinity}}'}),
    }
    return out


def csv_variants(good_csv: str) -> dict[str, str]:
    """Timeline CSVs (edgeprof's columns) with cells of the wrong type or value."""
    lines = good_csv.splitlines()
    header = lines[0].split(",")
    rows = lines[1:]

    def edit(col: str, value: str, pick=lambda i, row: True) -> str:
        j = header.index(col)
        out = [lines[0]]
        for i, line in enumerate(rows):
            cells = _split_csv(line)
            if pick(i, cells):
                cells[j] = value
            out.append(",".join(_q(c) for c in cells))
        return "\n".join(out) + "\n"

    is_exec = lambda i, c: c[header.index("name")] == "Method::execute"  # noqa: E731
    return {
        "op_types_number": edit("op_types", "12"),
        "op_types_object": edit("op_types", '{"a": 1}'),
        "op_types_deep": edit("op_types", "[" * 5000 + "]" * 5000),
        "op_types_not_json": edit("op_types", "[aten.conv"),
        "duration_nan_exec": edit("duration_ms", "NaN", is_exec),
        "duration_inf_exec": edit("duration_ms", "inf", is_exec),
        "duration_negative_exec": edit("duration_ms", "-1", is_exec),
        "duration_huge_all": edit("duration_ms", "1e300"),
        "duration_text": edit("duration_ms", "fast"),
        "run_index_text": edit("run_index", "first"),
        "run_index_huge": edit("run_index", "9" * 30),
        "start_us_inf": edit("start_us", "inf"),
        "instruction_huge": edit("instruction_id", "99999999999"),
        "header_only": lines[0] + "\n",
    }


def _split_csv(line: str) -> list[str]:
    import csv

    return next(csv.reader([line]))


def _q(c: str) -> str:
    return '"' + c.replace('"', '""') + '"' if ("," in c or '"' in c) else c


def ane_variants(profile_doc: dict) -> dict[str, dict]:
    """anemll-profile documents with a wrong type in a field the renderers display."""
    out = {}
    for where, key, value in (("model", "display_name", True), ("model", "display_name", {"a": 1}),
                              ("model", "input_path", [1, 2]), ("compute", "mode", 3.5),
                              ("measured_prediction", "status", None), ("measured_prediction", "error", {"x": 1}),
                              ("model", "size_mb", "big")):
        doc = json.loads(json.dumps(profile_doc))
        doc.setdefault(where, {})[key] = value
        out[f"{where}.{key}={type(value).__name__}"] = doc
    doc = json.loads(json.dumps(profile_doc))
    doc["op_type_breakdown"][0]["short_type"] = 12
    out["op_type_breakdown.short_type=int"] = doc
    doc = json.loads(json.dumps(profile_doc))
    doc["unsupported_reasons_by_type"] = {"ios18.cast": [1, 2]}
    out["unsupported_reasons=ints"] = doc
    return out


def log_variants(tmp: Path, good_log: bytes) -> dict[str, Path]:
    """XNNPACK logs: a number past Python's digit limit, a gzip bomb, a 2 MiB line, UTF-16, binary."""
    out = {}
    p = tmp / "digits.log"
    p.write_bytes(good_log + b"Debug (XNNPACK): l1_data_cache_bytes=" + b"9" * 5000 + b"\n"
                  + b"Debug (XNNPACK): Setting assumed_datatype=qdint8 for node #" + b"7" * 6000 + b" (Fully Connected)\n"
                  + b"Debug (XNNPACK): Tile size for GEMM with num_groups=" + b"1" * 5000 + b", m=1, n=2 and mr=1, nr=2 "
                  b"set to [1, 2] (1 tiles)\n")
    out["huge_integers"] = p
    p = tmp / "bomb.log.gz"
    with gzip.open(p, "wb", compresslevel=9) as f:
        chunk = b"\n" * (1 << 20)
        for _ in range(160):
            f.write(chunk)
    out["gzip_bomb"] = p
    p = tmp / "longline.log"
    p.write_bytes(b"Note (XNNPACK): " + b"x" * (2 << 20) + b"\n")
    out["long_line"] = p
    p = tmp / "utf16.log"
    p.write_bytes(good_log.decode("utf-8", "replace").encode("utf-16"))
    out["utf16"] = p
    p = tmp / "binary.log"
    p.write_bytes(random.Random(1).randbytes(4096))
    out["binary"] = p
    return out
