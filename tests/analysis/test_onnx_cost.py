"""The static side of an ONNX model: FLOPs by hand count, bytes against ONNX Runtime's own per-node
``activation_size``/``output_size`` (recorded in the real profiles of tests/data/ort) and weights against numpy's
size of the initializers; joined with a profile by node name, and by category whatever the runtime fused."""

from __future__ import annotations

import gzip
import json
import os

import pytest
from testdata import DATA

from edgeprof.analysis.onnx_cost import category_rates, node_cost
from edgeprof.api.breakdown import breakdown
from edgeprof.errors import InputError

try:
    import onnx
    from onnx import numpy_helper
except ImportError:
    if os.environ.get("EDGEPROF_REQUIRE_ORT"):
        raise
    pytest.skip("the ort extra is not installed", allow_module_level=True)

from edgeprof.io.onnx_model import read_onnx

ORT = DATA / "ort"


def _profile_nodes(name: str) -> list[dict]:
    raw = (ORT / name).read_bytes()
    return [e for e in json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw) if e["cat"] == "Node"]


def test_flops_of_the_cnn_by_hand():
    nodes = {n["name"]: n for n in read_onnx(ORT / "cnn.onnx")["nodes"]}
    # out numel × (C_in / group) × k_h × k_w multiply-adds; 2 FLOPs each, plus one add per output for the bias
    hand = {"/block0/conv/Conv": (16 * 64 * 64, 3 * 9, True), "/block1/conv/Conv": (32 * 32 * 32, 16 * 9, True),
            "/block2/conv/Conv": (64 * 16 * 16, 32 * 9, True), "/dw/Conv": (64 * 8 * 8, 1 * 9, False),
            "/pw/Conv": (64 * 8 * 8, 64, False), "/head/fc/Gemm": (10, 64, True)}
    for name, (n_out, k, bias) in hand.items():
        c = node_cost(nodes[name])
        assert c["macs"] == n_out * k, name
        assert c["flops"] == 2 * n_out * k + (n_out if bias else 0), name
    assert node_cost(nodes["/block0/act/Relu"])["flops"] == 16 * 64 * 64
    # one convention with the Core ML counter (mil_cost): softmax 5 per element; a windowed pool the window per
    # output element; a global pool or a reduction one per input element (GlobalAveragePool was 64 — its outputs)
    assert node_cost(nodes["/head/Softmax"])["flops"] == 5 * 10
    assert node_cost(nodes["/block0/pool/MaxPool"])["flops"] == 16 * 32 * 32 * (2 * 2)
    assert node_cost(nodes["/head/GlobalAveragePool"])["flops"] == 64 * 16 * 16
    assert node_cost(nodes["/head/Flatten"])["flops"] == 0
    assert node_cost(nodes["/up/Resize"])["flops"] is None  # no formula: not guessed


def test_flops_of_the_transformer_matmuls_by_hand():
    nodes = {n["name"]: n for n in read_onnx(ORT / "tfm_int8.onnx")["nodes"]}
    seq, d = 32, 64
    assert node_cost(nodes["/layers.0/attn/q_proj/MatMul_quant"])["macs"] == seq * d * d  # MatMulInteger
    assert node_cost(nodes["/layers.0/mlp/fc1/MatMul_quant"])["macs"] == seq * d * 4 * d
    # scores: (1, 4, seq, d/4) @ (1, 4, d/4, seq)
    assert node_cost(nodes["/layers.0/attn/scores/MatMul"])["macs"] == 4 * seq * seq * (d // 4)
    assert node_cost(nodes["/layers.0/norm/LayerNormalization"])["flops"] == 8 * seq * d


@pytest.mark.parametrize("model,profile", [("cnn", "cnn_cpu_t1_l1.ort.json"), ("tfm_int8", "tfm_int8_cpu_t1_l1.ort.json.gz"),
                                           ("cnn_int8", "cnn_int8_cpu_t1_l1.ort.json.gz")])
def test_bytes_agree_with_what_onnx_runtime_reports_per_node(model, profile):
    m = read_onnx(ORT / f"{model}.onnx")
    nodes = {n["name"]: n for n in m["nodes"]}
    checked = 0
    for e in _profile_nodes(profile):
        n = nodes.get(e["name"].removesuffix("_kernel_time"))
        if n is None or n["op"] != e["args"]["op_name"]:
            continue  # fused or rewritten by the runtime's optimizer: another node than the model's
        c = node_cost(n)
        if not c["bytes_complete"]:
            continue
        assert c["act_read"] == int(e["args"]["activation_size"]), n["name"]
        assert c["written"] == int(e["args"]["output_size"]), n["name"]
        checked += 1
    assert checked >= 4
    # weights: numpy's size of each node's initializers
    inits = {t.name: numpy_helper.to_array(t).nbytes for t in onnx.load(str(ORT / f"{model}.onnx")).graph.initializer}
    for node in onnx.load(str(ORT / f"{model}.onnx")).graph.node:
        assert node_cost(nodes[node.name])["weight_bytes"] == sum(inits.get(x, 0) for x in node.input), node.name


def test_breakdown_with_the_model_joins_by_name_and_by_category():
    bd = breakdown(ORT / "cnn_cpu_t1_l1.ort.json", program=ORT / "cnn.onnx")
    j = bd["program"]
    assert j["evidence"] == "ort_json+onnx" and j["program_instructions"] == 18
    assert {r["name"] for r in j["instructions"]} >= {"Gemm", "Resize", "Softmax"}
    # what the optimizer fused (conv + relu into NCHWc kernels, the gate into QuickGelu) is unmatched, not dropped
    assert j["unmatched"]["nodes"] == 10 and "dw_nchwc" in j["unmatched"]["names"]
    matched_ms = sum(r["ms_per_run"] for r in j["instructions"])
    cats = {c["line"]: c["avg_ms"] for c in bd["categories"] if c["kind"] == "category"}
    assert matched_ms + j["unmatched"]["ms_per_run"] == pytest.approx(sum(cats.values()), rel=1e-9)
    rates = {r["category"]: r for r in j["category_rates"]}
    conv_flops = 2 * (16 * 64 * 64 * 27 + 32 * 32 * 32 * 144 + 64 * 16 * 16 * 288 + 64 * 64 * 9 + 64 * 64 * 64) \
        + 16 * 64 * 64 + 32 * 32 * 32 + 64 * 16 * 16
    # ONNX Runtime folded each Relu into its Conv and the gate (Sigmoid, Mul) into the layers around it: no Relu,
    # Sigmoid or Mul is timed, so their work goes with the Conv that produced their input — never divided by the
    # time of the ACTIVATION nodes that were timed (Softmax, QuickGelu; the rate was 24 GFLOP/s of Relu work before)
    relu = 16 * 64 * 64 + 32 * 32 * 32 + 64 * 16 * 16
    gate = 4 * 64 * 8 * 8 + 64 * 8 * 8
    assert rates["CONV"]["flops"] == conv_flops + relu + gate
    assert rates["ACTIVATION"]["flops"] == 5 * 10  # the Softmax alone
    conv_flops += relu + gate
    assert rates["CONV"]["ms_per_run"] == pytest.approx(cats["CONV"])
    assert rates["CONV"]["gflops"] == pytest.approx(conv_flops / cats["CONV"] / 1e6)
    assert rates["RESIZE"]["gflops"] is None  # FLOPs unknown: no rate


def test_category_rates_at_their_edges():
    model = {"nodes": [{"op": "Relu", "inputs": [], "outputs": [{"shape": [4], "itemsize": 4, "weight": False}]}]}
    rows = {r["category"]: r for r in category_rates(model, {"ACTIVATION": 0.0, "CONV": 1.0})}
    assert rows["ACTIVATION"]["gflops"] is None  # FLOPs but no time (folded into another op)
    assert rows["CONV"]["flops"] is None and rows["CONV"]["gflops"] is None  # time but no node


def test_not_an_onnx_model_is_one_line(tmp_path):
    bad = tmp_path / "m.onnx"
    bad.write_bytes(b"\x08\x07garbage\xff\xff\xff")
    with pytest.raises(InputError) as e:
        read_onnx(bad)
    assert str(e.value).startswith(str(bad)) and "\n" not in str(e.value)


def test_with_the_optimizer_off_every_node_joins_by_name():
    path = "cnn_noopt_parallel_cpu_t1_l1.ort.json.gz"
    j = breakdown(ORT / path, program=ORT / "cnn.onnx")["program"]
    assert j["matched"] == j["program_instructions"] == 18 and j["unmatched"]["nodes"] == 0
    runs = sum(1 for e in json.loads(gzip.decompress((ORT / path).read_bytes())) if e["name"] == "model_run")
    per_node: dict[str, int] = {}
    for e in _profile_nodes(path):
        per_node[e["name"].removesuffix("_kernel_time")] = per_node.get(e["name"].removesuffix("_kernel_time"), 0) + e["dur"]
    names = {n["index"]: n["name"] for n in read_onnx(ORT / "cnn.onnx")["nodes"]}
    for row in j["instructions"]:
        assert row["ms_per_run"] == pytest.approx(per_node[names[row["index"]]] / runs / 1000, abs=1e-12)
    conv0 = next(r for r in j["instructions"] if names[r["index"]] == "/block0/conv/Conv")
    flops = 2 * 16 * 64 * 64 * 27 + 16 * 64 * 64
    assert conv0["gflops"] == pytest.approx(flops / conv0["ms_per_run"] / 1e6)
