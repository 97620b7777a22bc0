"""`edgeprof program` against what ExecuTorch's own tools say about the fixture programs (flatc with
ExecuTorch's schemas, recorded once by tools/make_pte_ground_truth.py; no torch here), and malformed programs."""

from __future__ import annotations

import gzip
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from edgeprof.analysis.pte_program import size_parts, summarize
from edgeprof.errors import InputError
from edgeprof.io.pte import read_pte

DATA = Path(__file__).resolve().parent.parent / "data" / "pte"
NAMES = sorted(p.stem for p in DATA.glob("*.pte"))
BYTES = {"FLOAT": 4, "HALF": 2, "DOUBLE": 8, "LONG": 8, "INT": 4, "SHORT": 2, "CHAR": 1, "BYTE": 1, "BOOL": 1,
         "QINT8": 1, "QUINT8": 1, "QINT32": 4, "BFLOAT16": 2}
BIN = Path(sys.executable).parent


def _gt(name):
    with gzip.open(DATA / f"{name}.ground_truth.json.gz", "rt") as f:
        return json.load(f)


@pytest.mark.parametrize("name", NAMES)
def test_sizes_add_up_and_segments_match(name):
    gt, prog = _gt(name), read_pte(DATA / f"{name}.pte")
    assert prog.file_size == gt["file_size"] == os.path.getsize(DATA / f"{name}.pte")
    assert {k: prog.header[k] for k in gt["header"]} == gt["header"]
    assert [(s.offset, s.size) for s in prog.segments] == [(s["offset"], s["size"]) for s in gt["program"]["segments"]]
    parts = size_parts(prog)
    assert sum(p["bytes"] for p in parts) == prog.file_size
    pad = next(p for p in parts if p["kind"] == "padding")["bytes"]
    # independent: the file is the program, then padding up to the segment base, then the segments and their gaps
    segs = gt["program"]["segments"]
    if segs:
        end = gt["header"]["segment_base_offset"] + max(s["offset"] + s["size"] for s in segs)
        assert pad == gt["file_size"] - gt["header"]["program_size"] - sum(s["size"] for s in segs)
        assert end <= gt["file_size"]


@pytest.mark.parametrize("name", NAMES)
def test_memory_plan_tensors_and_instructions_match_executorch(name):
    gt, prog = _gt(name), read_pte(DATA / f"{name}.pte")
    for plan, gp in zip(prog.plans, gt["program"]["execution_plan"], strict=True):
        assert plan.name == gp["name"] and plan.non_const_buffer_sizes == gp["non_const_buffer_sizes"]
        assert plan.inputs == gp["inputs"] and plan.outputs == gp["outputs"]
        assert plan.operators == [(o["name"], o.get("overload", "")) for o in gp["operators"]]
        for i, v in enumerate(gp["values"]):
            if v["val_type"] != "Tensor":
                assert i not in plan.tensors
                continue
            t, g = plan.tensors[i], v["val"]
            assert list(t.sizes) == g.get("sizes", []) and t.data_buffer_idx == g.get("data_buffer_idx", 0)
            n = 1
            for s in g.get("sizes", []):
                n *= s
            assert t.nbytes == n * BYTES[g["scalar_type"]]
            ai = g.get("allocation_info")
            assert t.allocation == (None if ai is None else (ai.get("memory_id", 0), ai.get("memory_offset_low", 0)
                                                             + (ai.get("memory_offset_high", 0) << 32)))
        want = []
        for c in gp["chains"]:
            for ins in c["instructions"]:
                a, k = ins["instr_args"], ins["instr_args_type"]
                if k == "KernelCall":
                    op = gp["operators"][a["op_index"]]
                    want.append(("kernel", op["name"], op.get("overload", ""), None, a.get("args", [])))
                elif k == "DelegateCall":
                    want.append(("delegate", "", "", a["delegate_index"], a.get("args", [])))
                else:
                    want.append((k, "", "", None, None))
        got = [(i.kind, i.op, i.overload, i.delegate, i.args) if i.kind in ("kernel", "delegate")
               else ({"move": "MoveCall", "free": "FreeCall", "jump_false": "JumpFalseCall"}[i.kind], "", "", None, None)
               for i in plan.instructions]
        assert got == want and len(got) > 0


@pytest.mark.parametrize("name", [n for n in NAMES if "xnn" in n])
def test_xnnpack_node_lists_match_flatc(name):
    gt, prog = _gt(name), read_pte(DATA / f"{name}.pte")
    dels = [d for pl in prog.plans for d in pl.delegates if d.backend == "XnnpackBackend"]
    assert len(dels) == len(gt["xnnpack"]) > 0
    for d, g in zip(dels, gt["xnnpack"]):
        assert d.size == g["blob_size"]
        nodes = g["graph"]["xnodes"]
        assert [n.type for n in d.xnnpack.nodes] == [x["xnode_union_type"].removeprefix("XNN") for x in nodes]
        assert [n.debug_handle for n in d.xnnpack.nodes] == [x.get("debug_handle", 0) for x in nodes]
        for n, x in zip(d.xnnpack.nodes, nodes):
            for k, v in x["xnode_union"].items():
                if k in n.attrs:
                    assert n.attrs[k] == v, (n.type, k)
        for x in g["graph"]["xvalues"]:
            v = x["xvalue_union"].get("tensor_value", x["xvalue_union"])
            mine = d.xnnpack.values[v.get("id_out", 0)]
            assert list(mine.dims) == v.get("dims", []) and mine.dtype == v["datatype"].removeprefix("xnn_datatype_")
            if x["xvalue_union_type"] == "XNNQuantizedTensorValue":
                assert mine.quant is not None


def test_int8_build_against_fp32_build():
    d = subprocess.run([str(BIN / "edgeprof"), "program", DATA / "tel_xnn.pte", DATA / "tel_xnnq8.pte", "--json"],
                       capture_output=True, text=True)
    assert d.returncode == 0, d.stderr
    doc = json.loads(d.stdout)
    assert doc["kind"] == "program_diff"
    assert {"name": "Convert", "before": 0, "after": 7} in doc["xnnpack_nodes"]
    nd = next(r for r in doc["sizes"] if r["name"] == "named_data")
    assert nd["after"] < nd["before"] / 3  # int8 weights


def test_summary_json_and_owners():
    s = summarize(read_pte(DATA / "tel_portable.pte"))
    assert s["sizes_add_up"] and s["methods"] == ["forward"]
    big = s["constants"]["largest"][0]
    assert big["bytes"] == 3 * 128 * 128 * 4 and big["sizes"] == [384, 128]  # the attention's packed q/k/v weight
    assert big["owners"] and all(o.startswith("aten::") for o in big["owners"])
    mp = s["memory_plan"][0]
    assert mp["planned_bytes"] == 278528 and all(a["fits"] for a in mp["arenas"])
    lives = [t for a in mp["arenas"] for t in a["tensors"] if t["first_use"] is not None]
    assert lives and all(t["first_use"] <= t["last_use"] for t in lives)


def _err(data: bytes, tmp_path) -> str:
    p = tmp_path / "x.pte"
    p.write_bytes(data)
    with pytest.raises(InputError) as e:
        summarize(read_pte(p))
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(str(p))
    return msg


def test_malformed_programs_are_one_line_errors(tmp_path):
    good = (DATA / "tel_xnnq8.pte").read_bytes()
    assert "truncated" in _err(good[:100_000], tmp_path) or "past the end" in _err(good[:100_000], tmp_path)
    lying = bytearray(good)
    lying[24:32] = struct.pack("<Q", len(good) + 10)  # segment base beyond the file
    assert "(at byte offset 24)" in _err(bytes(lying), tmp_path)
    short = bytearray(good)
    short[16:24] = struct.pack("<Q", 10**9)
    assert "program is 1000000000 bytes" in _err(bytes(short), tmp_path)
    etdump = gzip.decompress((DATA.parent / "etdump" / "mobilenet_v3_small_xnn.N20.etdp.gz").read_bytes())
    assert "not an ExecuTorch program" in _err(etdump, tmp_path)
    assert "too short" in _err(b"ET12", tmp_path)
    # an XNNPACK header that lies about its graph
    seg = read_pte(DATA / "tel_xnnq8.pte").plans[0].delegates[0].file_offset
    bad = bytearray(good)
    bad[seg + 14:seg + 18] = struct.pack("<I", 10**6)
    msg = _err(bytes(bad), tmp_path)
    assert "XNNPACK header" in msg and f"(at byte offset {seg + 8})" in msg


def test_another_backends_blob_is_sized_not_decoded(tmp_path):
    good = (DATA / "tel_xnnq8.pte").read_bytes()
    other = good.replace(b"XnnpackBackend", b"VulkanBackend\x00")  # same length: every delegate's id string
    p = tmp_path / "v.pte"
    p.write_bytes(other)
    d = read_pte(p).plans[0].delegates
    assert all(x.backend.startswith("VulkanBackend") and x.xnnpack is None for x in d) and d[0].size == 1616
    assert sum(x["bytes"] for x in size_parts(read_pte(p))) == len(other)


def test_cli_errors_exit_2(tmp_path):
    p = tmp_path / "t.pte"
    p.write_bytes((DATA / "toycnn_xnn.pte").read_bytes()[:5000])
    r = subprocess.run([str(BIN / "edgeprof"), "program", p], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and str(p) in r.stderr


# Hand counts of the fixture programs' matrix work (2 FLOPs per multiply-add), from the models they were exported
# from (fixtures/executorch/recipes/models.py): ToyCNN on 1×3×32×32 (conv 3→16 and 16→32, 3×3 same padding, then
# fc 8192→10); TEL, nn.TransformerEncoderLayer(d=128, heads=4, ff=256) on 1×32×128.
TOYCNN = 2 * (16 * 32 * 32 * 3 * 9 + 32 * 32 * 32 * 16 * 9 + 10 * 32 * 16 * 16)
TEL = 2 * (32 * 3 * 128 * 128          # packed q/k/v projection
           + 2 * 4 * 32 * 32 * 32      # QKᵀ and PV, 4 heads of 32
           + 32 * 128 * 128            # output projection
           + 2 * 32 * 256 * 128)       # feed-forward up and down


@pytest.mark.parametrize("name", NAMES)
def test_matrix_flops_equal_hand_counts(name):
    from edgeprof.analysis.pte_cost import instruction_costs

    rows = instruction_costs(read_pte(DATA / f"{name}.pte"))
    want = TOYCNN if name.startswith("toycnn") else TEL
    assert 2 * sum(r["macs"] for r in rows) == want
    assert all(r["flops"] is not None for r in rows)


def test_breakdown_with_the_program_against_inspector(tmp_path):
    """Time per instruction from ExecuTorch Inspector's own numbers (ground-truth CSV), work from the hand count."""
    import csv

    et = tmp_path / "tel_xnnq8.etdp"
    et.write_bytes(gzip.decompress((DATA.parent / "etdump" / "tel_xnnq8.N20.etdp.gz").read_bytes()))
    r = subprocess.run([str(BIN / "edgeprof"), "breakdown", et, "--program", DATA / "tel_xnnq8.pte", "--no-write",
                        "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    j = (doc["breakdowns"][0] if "breakdowns" in doc else doc)["program"]
    assert j["matched"] == j["program_instructions"] == 26
    with gzip.open(DATA.parent / "ground_truth" / "tel_xnnq8.N20.inspector.csv.gz", "rt") as f:
        rows = [x for x in csv.DictReader(f) if x["event_name"] == "DELEGATE_CALL" and x["instruction_id"] == "0"
                and x["block_name"] != "Default"]
    runs = {x["run_index"] for x in rows}
    ms_per_run = sum(float(x["duration_ms"]) for x in rows) / len(runs)
    first = next(x for x in j["instructions"] if x["index"] == 0)
    assert first["ms_per_run"] == pytest.approx(ms_per_run, rel=1e-4)
    flops = 2 * 32 * 3 * 128 * 128 + 32 * 3 * 128  # the q/k/v fully-connected node, with its bias
    assert first["flops"] == flops and first["gflops"] == pytest.approx(flops / ms_per_run / 1e6, rel=1e-4)
    assert "FullyConnected" in first["nodes"]
    assert sum(c["weight_share_pct"] for c in j["categories"]) == pytest.approx(100.0)


KIND_OPS = {"FullyConnected": "aten.linear", "Conv2d": "aten.convolution", "BatchMatrixMultiply": "aten.bmm",
            "Softmax": "aten._softmax", "StaticTranspose": "permute"}


@pytest.mark.parametrize("name", NAMES)
def test_etrecord_maps_every_instruction_and_xnnpack_node(name):
    """Oracle: the ETRecord ExecuTorch wrote at export maps each instruction to its graph nodes; every XNNPACK node
    that came from a graph node carries one of its delegate instruction's debug handles, and its kind fits the ops."""
    from edgeprof import api

    doc = api.program(DATA / f"{name}.pte", etrecord=DATA.parent / "etrecord" / f"{name}.etrecord").data
    checked = 0
    for i in doc["instructions"]:
        if i["kind"] == "kernel":
            op = i["name"].split("::")[-1].split(".")[0].lstrip("_")
            assert any(op in t for t in i["op_types"]), (i["name"], i["op_types"])
        for nd in ((i.get("delegate") or {}).get("nodes") or {}).get("nodes", []):
            want = KIND_OPS.get(nd["type"])
            if want and nd["op_types"]:
                assert any(want in t for t in nd["op_types"]), (nd["type"], nd["op_types"])
                checked += 1
    assert checked > 0 or "portable" in name


def test_a_foreign_etrecord_is_refused(tmp_path):
    r = subprocess.run([str(BIN / "edgeprof"), "program", DATA / "tel_xnnq8.pte", "--etrecord",
                        DATA.parent / "etrecord" / "toycnn_xnnq8.etrecord"], capture_output=True, text=True)
    assert r.returncode == 2 and "does not match the program" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_the_etrecord_beside_the_program_is_found(tmp_path):
    """``program model.pte`` with ``model.etrecord`` beside it attaches it, as ``--etrecord`` would (the same op types
    per instruction); a foreign one found beside it is left out and said why; none beside it: nothing attached."""
    import shutil

    from edgeprof import api

    pte = tmp_path / "tel_xnn.pte"
    shutil.copy(DATA / "tel_xnn.pte", pte)
    alone = api.program(pte).data
    assert "etrecord" not in alone and "etrecord_found" not in alone
    shutil.copy(DATA.parent / "etrecord" / "tel_xnn.etrecord", tmp_path / "tel_xnn.etrecord")
    found = api.program(pte).data
    given = api.program(DATA / "tel_xnn.pte", etrecord=DATA.parent / "etrecord" / "tel_xnn.etrecord").data
    assert found["etrecord"].endswith("tel_xnn.etrecord") and found["etrecord_found"].startswith("beside the program")
    assert [i.get("op_types") for i in found["instructions"]] == [i.get("op_types") for i in given["instructions"]]
    (tmp_path / "tel_xnn.etrecord").unlink()
    shutil.copy(DATA.parent / "etrecord" / "toycnn_xnnq8.etrecord", tmp_path / "tel_xnn.etrecord")
    foreign = api.program(pte).data
    assert "etrecord" not in foreign and "was not used" in foreign["etrecord_found"]


def test_softmax_is_five_flops_per_element_in_every_counter():
    """One FLOP convention for .pte (aten and XNNPACK), ONNX and Core ML: softmax is 5 per element (max, subtract,
    exp, sum, divide). TEL's attention softmax over 4 heads × 32 × 32 scores: 20,480, by hand."""
    from edgeprof.analysis.pte_cost import kernel_cost, xnn_node_cost

    want = 5 * 4 * 32 * 32
    portable = read_pte(DATA / "tel_portable.pte").plans[0]
    (ins,) = [i for i in portable.instructions if i.kind == "kernel" and "softmax" in i.op]
    assert kernel_cost(portable, ins)["flops"] == want
    xnn = [d.xnnpack for d in read_pte(DATA / "tel_xnn.pte").plans[0].delegates if d.xnnpack is not None]
    (node_cost,) = [xnn_node_cost(g, nd) for g in xnn for nd in g.nodes if nd.type == "Softmax"]
    assert node_cost["flops"] == want
