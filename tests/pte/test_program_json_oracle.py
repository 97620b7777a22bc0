"""Every key of `program --json` (one program, and two: the diff) against ExecuTorch's own reading of the same
programs: the flatc JSON of the program and of each XNNPACK delegate that ExecuTorch's tools dumped beside the
fixtures (`tests/data/pte/*.ground_truth.json.gz`), the file's size from the file system. A key the documents
gain without a check here fails the test."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections import Counter

import pytest
from testdata import DATA

PTE = DATA / "pte"
ETRECORD = DATA / "etrecord" / "tel_xnnq8.etrecord"
ELSEWHERE = "checked on known truth elsewhere"


def truth(name: str) -> dict:
    return json.loads(gzip.decompress((PTE / f"{name}.ground_truth.json.gz").read_bytes()))


def edgeprof(*args) -> dict:
    r = subprocess.run([sys.executable, "-m", "edgeprof", "program", *map(str, args), "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def case():
    return edgeprof(PTE / "tel_xnnq8.pte", "--etrecord", ETRECORD), truth("tel_xnnq8")


def _plan(g):
    (p,) = g["program"]["execution_plan"]
    return p


def _instructions(d, g):
    p = _plan(g)
    ins = p["chains"][0]["instructions"]
    assert len(d["instructions"]) == len(ins) and [i["index"] for i in d["instructions"]] == list(range(len(ins)))
    for mine, theirs in zip(d["instructions"], ins):
        args = theirs["instr_args"]
        if theirs["instr_args_type"] == "KernelCall":
            op = p["operators"][args["op_index"]]
            name = f"aten::{op['name'].removeprefix('aten::')}" + (f".{op['overload']}" if op["overload"] else "")
            assert mine["kind"] == "kernel" and mine["name"] == name
        else:
            assert mine["kind"] == "delegate" and mine["delegate"]["index"] == args["delegate_index"]
        assert len(mine["args"]) == len(args["args"]) and mine["module_path"] is not None


def _delegates(d, g):
    p = _plan(g)
    segs = g["program"]["segments"]
    xnn = {x["delegate_index"]: x for x in g["xnnpack"]}
    assert [x["backend"] for x in d["delegates"]] == [x["id"] for x in p["delegates"]]
    for mine, theirs in zip(d["delegates"], p["delegates"]):
        assert mine["bytes"] == segs[theirs["processed"]["index"]]["size"] == xnn[mine["index"]]["blob_size"]
        nodes = xnn[mine["index"]]["graph"]["xnodes"]
        assert mine["xnnpack"]["count"] == len(nodes)
        assert mine["xnnpack"]["by_type"] == dict(Counter(n["xnode_union_type"].removeprefix("XNN") for n in nodes))


def _sizes(d, g):
    segs = g["program"]["segments"]
    base = g["header"]["segment_base_offset"]
    rows = [r for r in d["sizes"] if r["kind"] != "padding"]
    assert rows[0] == {"bytes": g["header"]["program_size"], "kind": "program", "offset": 0,
                       "part": "program flatbuffer"}
    assert [(r["offset"], r["bytes"]) for r in rows[1:]] == [(base + s["offset"], s["size"]) for s in segs]
    assert sum(r["bytes"] for r in d["sizes"]) == d["file_size"]


def _memory(d, g):
    p = _plan(g)
    (m,) = d["memory_plan"]
    sizes = p["non_const_buffer_sizes"]
    assert [(a["id"], a["bytes"]) for a in m["arenas"]] == [(i, b) for i, b in enumerate(sizes) if i]
    assert m["planned_bytes"] == sum(sizes)
    assert [x["value"] for x in m["io"] if x["role"] == "input"] == p["inputs"]
    assert [x["value"] for x in m["io"] if x["role"] == "output"] == p["outputs"]
    for a in m["arenas"]:
        assert a["highest_byte_used"] == max(t["offset"] + t["bytes"] for t in a["tensors"]) <= a["bytes"]


def _work(d, g):
    assert sum(w["instructions"] for w in d["work"]) == len(d["instructions"])
    assert sum(w["flops"] for w in d["work"]) == sum(i["flops"] for i in d["instructions"])
    dele = next(w for w in d["work"] if w["category"] == "DELEGATE")
    assert dele["instructions"] == sum(i["kind"] == "delegate" for i in d["instructions"])
    named = sum(s["size"] for s in g["program"]["segments"][1 + len(_plan(g)["delegates"]):])
    assert dele["weight_bytes"] == named  # the XNNPACK weights live in named data


def _constants(d, g):
    seg = g["program"]["constant_segment"]
    assert d["constants"]["bytes"] == g["program"]["segments"][seg["segment_index"]]["size"]
    assert all(c["bytes"] == 4 * c["sizes"][0] for c in d["constants"]["largest"] if c["dtype"] == "fp32")


KEYS = {
    "constants": _constants,
    "delegates": _delegates,
    "etrecord": lambda d, g: d["etrecord"] == str(ETRECORD),
    "file": lambda d, g: d["file"].endswith(g["file"]),
    "file_size": lambda d, g: d["file_size"] == g["file_size"] == os.path.getsize(PTE / g["file"]),
    "header": lambda d, g: d["header"] == {**g["header"], "length": 32, "present": True},
    "instructions": _instructions,
    "kind": lambda d, g: d["kind"] == "program",
    "memory_plan": _memory,
    "methods": lambda d, g: d["methods"] == [p["name"] for p in g["program"]["execution_plan"]],
    "schema_version": lambda d, g: d["schema_version"] == 1,
    "sizes": _sizes,
    "sizes_add_up": lambda d, g: d["sizes_add_up"] is True,
    "version": lambda d, g: d["version"] == g["program"]["version"],
    "work": _work,
}
# "etrecord_found" (an ETRecord found beside the .pte, not given: absent here):
# tests/pte/test_program.py::test_the_etrecord_beside_the_program_is_found;
# the FLOPs per instruction: tests/pte/test_program.py::test_matrix_flops_equal_hand_counts (hand counts);
# module paths and op types per instruction: test_etrecord_maps_every_instruction_and_xnnpack_node


def test_every_key_of_a_program_has_a_check(case):
    d, g = case
    assert sorted(d) == sorted(KEYS), "a key of the program document needs its check here"
    for key, check in KEYS.items():
        assert check(d, g) is not False, key


def _named(g) -> int:
    return sum(s["size"] for s in g["program"]["segments"][1 + len(_plan(g)["delegates"]):])


def _diff_sizes(d, b, a):
    rows = {r["name"]: (r["before"], r["after"]) for r in d["sizes"]}
    assert rows["program"] == (b["header"]["program_size"], a["header"]["program_size"])
    assert rows["named_data"] == (_named(b), _named(a))
    dele = [sum(x["blob_size"] for x in t["xnnpack"]) for t in (b, a)]
    assert rows["delegate"] == tuple(dele)


def _xnn_nodes(g) -> Counter:
    return Counter(n["xnode_union_type"].removeprefix("XNN") for x in g["xnnpack"] for n in x["graph"]["xnodes"])


DIFF_KEYS = {
    "after": lambda d, b, a: d["after"].endswith("tel_xnnq8.pte"),
    "before": lambda d, b, a: d["before"].endswith("tel_xnn.pte"),
    "instructions": lambda d, b, a: d["instructions"] == [] and Counter(
        i["instr_args_type"] for i in _plan(b)["chains"][0]["instructions"]) == Counter(
        i["instr_args_type"] for i in _plan(a)["chains"][0]["instructions"]),
    "kind": lambda d, b, a: d["kind"] == "program_diff",
    "planned_bytes": lambda d, b, a: d["planned_bytes"] == {"before": sum(_plan(b)["non_const_buffer_sizes"]),
                                                            "after": sum(_plan(a)["non_const_buffer_sizes"])},
    "schema_version": lambda d, b, a: d["schema_version"] == 1,
    "sizes": _diff_sizes,
    "statements": lambda d, b, a: d["statements"][0] == f"file: {b['file_size']:,} → {a['file_size']:,} bytes",
    "xnnpack_nodes": lambda d, b, a: d["xnnpack_nodes"] == [
        {"name": k, "before": _xnn_nodes(b)[k], "after": _xnn_nodes(a)[k]}
        for k in sorted(_xnn_nodes(b) | _xnn_nodes(a)) if _xnn_nodes(b)[k] != _xnn_nodes(a)[k]],
}


def test_every_key_of_a_program_diff_has_a_check():
    d, b, a = edgeprof(PTE / "tel_xnn.pte", PTE / "tel_xnnq8.pte"), truth("tel_xnn"), truth("tel_xnnq8")
    assert sorted(d) == sorted(DIFF_KEYS), "a key of the program diff needs its check here"
    for key, check in DIFF_KEYS.items():
        assert check(d, b, a) is not False, key
