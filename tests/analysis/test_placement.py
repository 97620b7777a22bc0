"""Placement on real builds: one model lowered with and without XNNPACK's sigmoid config (and without its ReLU
config, which moves nothing), ONNX Runtime with the OpenVINO provider on a graph it takes whole and on one where
a node falls back to the CPU provider, a LiteRT XNNPACK profile, and the anemll-profile / ane-costplan reports.
The operators a diff names are checked against executorch's own lowered graph (`*.oracle.json`) and hand lists;
the gates at their boundaries."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess

import pytest
from testdata import DATA, needs, edgeprof_cli

from edgeprof import api
from edgeprof.analysis import placement as pa
from edgeprof.analysis import placement_diff as pd

PLACE, ORT = DATA / "placement", DATA / "ort"


def cli(*args, code: int = 0) -> subprocess.CompletedProcess:
    return edgeprof_cli(*args, code=code)


def oracle(name: str) -> dict:
    return json.loads((PLACE / f"{name}.oracle.json").read_text())


# --------------------------------------------------------------------------------------------------
# one operator vocabulary across runtimes
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("names, family", [
    (["native_call_sigmoid.out", "aten::sigmoid.out", "aten.sigmoid.default", "Sigmoid (NC, F32) #3", "Sigmoid",
      "LOGISTIC", "ios18.sigmoid", "Delegate/Sigmoid (NC, F32):8"], "sigmoid"),
    (["native_call_convolution.out", "Convolution (NHWC, F32) IGEMM #1", "Conv2d", "Conv", "CONV_2D",
      "DEPTHWISE_CONV_2D", "Convolution (NHWC, F32) DWConv", "ios18.conv"], "conv"),
    (["native_call_addmm.out", "Fully Connected (NC, F32) GEMM", "FullyConnected", "Gemm", "MatMul",
      "FULLY_CONNECTED", "aten.linear.default", "ios18.linear"], "matmul"),
    (["native_call_max_pool2d_with_indices.out", "Max Pooling (NHWC, F32)", "MaxPooling2d", "MaxPool",
      "MAX_POOL_2D"], "max_pool"),
    (["native_call_relu.out", "Clamp (NC, F32)", "Relu", "aten.hardtanh.default", "ios18.relu"], "relu"),
    (["Hardmax", "ReorderOutput"], None),  # unknown ops keep their own normalized names
])
def test_one_family_per_operator_whatever_the_runtime_calls_it(names, family):
    got = {pa.op_family(n) for n in names}
    assert got == ({family} if family else {n.lower() for n in names})


# --------------------------------------------------------------------------------------------------
# ExecuTorch: the model built twice (and a third time, dropping ReLU's config)
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["gate_xnn", "gate_nosigmoid", "gate_norelu"])
def test_the_program_places_what_executorch_delegated(name):
    """Static placement of each .pte against executorch's own lowered graph: the portable instructions are the
    ops it left out of delegates, in order; one accelerated partition per delegate call."""
    d = api.placement(PLACE / f"{name}.pte").data
    truth = oracle(name)
    host = [o for o in d["operators"] if not o["accelerated"]]
    assert [o["family"] for o in host] == [pa.op_family(t) for t in truth["non_delegated_ops"]]
    assert d["summary"]["accelerated_partitions"] == truth["delegate_calls"]
    # each lowered module's compute ops are XNNPACK nodes of the same families, in order (layout nodes aside)
    nodes = [o["family"] for o in d["operators"] if o["accelerated"] and o["family"] not in ("transpose", "reshape")]
    want = [pa.op_family(t) for m in truth["lowered_modules"] for t in m["ops"]]
    want = [f for f in want if f not in ("transpose", "reshape", "relu")]  # relu: fused into the convolution node
    assert nodes == want
    assert d["evidence"] == "pte_static" and {o["basis"] for o in d["operators"]} == {"static"}


def test_dropping_the_sigmoid_config_moves_exactly_the_sigmoid():
    d = api.placement_diff(PLACE / "gate_xnn.pte", PLACE / "gate_nosigmoid.pte").data
    moved_by_executorch = set(oracle("gate_nosigmoid")["non_delegated_ops"]) - set(oracle("gate_xnn")["non_delegated_ops"])
    assert moved_by_executorch == {"aten.sigmoid.default"}
    assert [(m["family"], m["name"], m["candidate_name"], m["from"], m["to"], m["kind"]) for m in d["moved"]] == [
        ("sigmoid", "Sigmoid", "aten::sigmoid.out", "XnnpackBackend", "portable", "fallback")]
    assert d["verdict"] == "fallback" and d["fallbacks"] == 1
    assert d["moved_cost_ms"] is None and d["moved_cost_known"] is False  # a program times nothing
    assert d["partitions"]["split"] == [{"baseline_partition": 0, "placement": "XnnpackBackend", "into": [0, 1, 2]}]


def test_dropping_the_relu_config_moves_nothing():
    """XNNPACK's convolution config takes the ReLU after it as a fused activation, whatever ReLU's own config: the
    build is the same program, and executorch's graph leaves nothing to portable kernels."""
    assert oracle("gate_norelu")["non_delegated_ops"] == [] and oracle("gate_norelu")["delegate_calls"] == 1
    assert (PLACE / "gate_norelu.pte").read_bytes() == (PLACE / "gate_xnn.pte").read_bytes()
    d = api.placement_diff(PLACE / "gate_xnn.N10.etdp.gz", PLACE / "gate_norelu.N10.etdp.gz").data
    assert d["verdict"] == "same_placement" and d["moved"] == [] and d["only_baseline"] == d["only_candidate"] == []
    assert d["baseline_fingerprint"] == d["candidate_fingerprint"]
    assert d["run_ms"]["baseline"] != d["run_ms"]["candidate"]  # two recordings: other timings, same placement


def _builds(tmp_path):
    for n in ("gate_xnn", "gate_nosigmoid", "gate_norelu"):
        shutil.copy(PLACE / f"{n}.N10.etdp.gz", tmp_path)
    return tmp_path


def test_the_gate_fails_on_the_planted_fallback_and_passes_on_the_same_placement(tmp_path):
    d = _builds(tmp_path)
    r = cli("placement", "--diff", d / "gate_xnn.N10.etdp.gz", d / "gate_nosigmoid.N10.etdp.gz", "--fail-on",
            "fallback", code=1)
    (line,) = r.stderr.strip().splitlines()
    assert line == ("edgeprof: error: placement gate: 1 operator(s) fell back; first: Sigmoid (NC) (sigmoid#0) "
                    "XnnpackBackend → portable")
    cli("placement", "--diff", d / "gate_xnn.N10.etdp.gz", d / "gate_norelu.N10.etdp.gz", "--fail-on", "fallback",
        "--fail-on", "new-partition")
    r = cli("placement", "--diff", d / "gate_xnn.N10.etdp.gz", d / "gate_nosigmoid.N10.etdp.gz", "--fail-on",
            "new-partition", code=1)
    assert "partitions 1 → 3" in r.stderr
    # the other way round the sigmoid returns to XNNPACK: a promotion; the two partitions merge into one
    r = cli("placement", "--diff", d / "gate_nosigmoid.N10.etdp.gz", d / "gate_xnn.N10.etdp.gz", "--fail-on", "fallback",
            "--fail-on", "new-partition", "--json")
    back = json.loads(r.stdout)
    assert back["verdict"] == "promotion" and back["promotions"] == 1 and back["partitions"]["merged"] == [
        {"candidate_partition": 0, "placement": "XnnpackBackend", "from": [0, 1, 2]}]


def _placed(ops: list[tuple[str, str, bool]], name="x") -> pa.Placement:
    from edgeprof.placement_model import PlacedOp, Placement

    return Placement(name, "executorch", "etdump", "portable",
                     [PlacedOp(i, k, k, k, k.split("#")[0], p, acc) for i, (k, p, acc) in enumerate(ops)])


def test_the_new_partition_gate_at_its_boundary():
    """Equal partition counts pass; one more fails; a split with the same count (an operator swapped between two
    partitions) fails too."""
    base = _placed([("conv#0", "XNN", True), ("add#0", "portable", False), ("mul#0", "XNN", True)])
    same = _placed([("conv#0", "XNN", True), ("add#0", "portable", False), ("mul#0", "XNN", True)])
    assert pd.gate(pd.diff(base, same), "new-partition") is None
    more = _placed([("conv#0", "XNN", True), ("add#0", "portable", False), ("mul#0", "XNN", True),
                    ("relu#0", "portable", False)])
    assert pd.gate(pd.diff(base, more), "new-partition") == "partitions 3 → 4"
    fewer = _placed([("conv#0", "XNN", True), ("add#0", "XNN", True), ("mul#0", "XNN", True)])
    assert pd.gate(pd.diff(base, fewer), "new-partition") is None and pd.gate(pd.diff(base, fewer), "fallback") is None
    assert pd.diff(base, fewer)["verdict"] == "promotion"
    # one operator leaving XNNPACK for another accelerator is a fallback too (it left its accelerator)
    other = _placed([("conv#0", "GPU", True), ("add#0", "portable", False), ("mul#0", "XNN", True)])
    assert pd.diff(base, other)["moved"][0]["kind"] == "fallback" and pd.gate(pd.diff(base, other), "fallback")


def test_compare_carries_the_placement_and_gates_on_it(tmp_path):
    d = _builds(tmp_path)
    r = cli("compare", d / "gate_xnn.N10.etdp.gz", d / "gate_nosigmoid.N10.etdp.gz", "--no-write", "--fail-on",
            "fallback", code=1)
    assert r.stderr.strip().splitlines()[-1].startswith("edgeprof: error: placement: 1 operator(s) fell back")
    assert "placement: fallback: Sigmoid (NC) (sigmoid#0) XnnpackBackend → portable" in r.stdout.replace("\n", " ")
    cli("compare", d / "gate_xnn.N10.etdp.gz", d / "gate_norelu.N10.etdp.gz", "--no-write", "--fail-on", "fallback")
    cmp = api.compare(d / "gate_xnn.N10.etdp.gz", d / "gate_nosigmoid.N10.etdp.gz")
    alone = api.placement_diff(d / "gate_xnn.N10.etdp.gz", d / "gate_nosigmoid.N10.etdp.gz").data
    assert cmp["placement"]["moved"] == alone["moved"]  # one diff, whether asked alone or inside compare
    rep = api.report([d / "gate_xnn.N10.etdp.gz", d / "gate_nosigmoid.N10.etdp.gz"], write=True, out=d / "r.md")
    md = (d / "r.md").read_text()
    assert rep["comparison"]["placement"]["moved"] == alone["moved"]
    assert "## What ran where" in md and "fallback: Sigmoid (NC) (sigmoid#0) XnnpackBackend → portable" in md


# --------------------------------------------------------------------------------------------------
# ONNX Runtime: the OpenVINO provider, whole graph vs a node it leaves to the CPU provider
# --------------------------------------------------------------------------------------------------

MOVED_TO_CPU = ["/block0/conv/Conv", "/block0/act/Relu", "/block0/pool/MaxPool", "/block1/conv/Conv",
                "/block1/act/Relu", "/block1/pool/MaxPool", "/block2/conv/Conv", "/block2/act/Relu",
                "/block2/pool/MaxPool", "/dw/Conv", "/pw/Conv"]


def test_openvino_fallback_named_node_by_node_with_the_models():
    """cnn on OpenVINO: one provider subgraph holds every node. cnn_mixed (its Sigmoid replaced by Hardmax): the
    CPU provider times the convolution blocks (named after their outputs, r0_nchwc …), the Hardmax, and a layout
    reorder; the rest stays in one OpenVINO subgraph. Hand-listed: the eleven nodes before the gate moved."""
    needs("onnx", "ort")
    d = api.placement_diff(ORT / "cnn_ov_t1_l1.ort.json.gz", ORT / "cnn_mixed_ov_t1_l1.ort.json.gz",
                           model=ORT / "cnn.onnx", candidate_model=ORT / "cnn_mixed.onnx").data
    assert [m["key"] for m in d["moved"]] == MOVED_TO_CPU
    assert {(m["from"], m["to"], m["kind"]) for m in d["moved"]} == {
        ("OpenVINOExecutionProvider", "CPUExecutionProvider", "fallback")}
    assert [r["key"] for r in d["only_baseline"]] == ["/gate/Sigmoid"]
    assert [r["key"] for r in d["only_candidate"]] == ["runtime:ReorderOutput", "/gate/Hardmax"]
    assert d["verdict"] == "fallback" and d["fallbacks"] == 11
    cand = api.placement(ORT / "cnn_mixed_ov_t1_l1.ort.json.gz", model=ORT / "cnn_mixed.onnx").data
    by = {o["key"]: o for o in cand["operators"]}
    assert by["/block0/act/Relu"]["basis"] == "measured" and by["/block0/conv/Conv"]["basis"] == "inferred"
    assert by["/head/fc/Gemm"]["placement"] == "OpenVINOExecutionProvider" and by["/head/fc/Gemm"]["basis"] == "inferred"
    # the profile's own numbers: the relu's time is the fused conv+relu node's (r0_nchwc), the subgraph's its own
    raw = json.loads(gzip.decompress((ORT / "cnn_mixed_ov_t1_l1.ort.json.gz").read_bytes()))
    runs = [e for e in raw if e.get("cat") == "Node" and e["name"] == "r0_nchwc_kernel_time"]
    assert by["/block0/act/Relu"]["time_ms"] == pytest.approx(sum(e["dur"] for e in runs) / len(runs) / 1000)
    sub = [e for e in raw if e.get("cat") == "Node" and e["name"].startswith("OpenVINOExecutionProvider_")
           and e["name"].endswith("_kernel_time")]
    assert by["partition:OpenVINOExecutionProvider#0"]["time_ms"] == pytest.approx(
        sum(e["dur"] for e in sub) / len(sub) / 1000)


def test_openvino_fallback_without_the_models_is_still_caught():
    """Without the models the baseline's subgraph is opaque: the candidate's CPU nodes pair with nothing, and the
    gate still fails — as a suspected fallback, saying how to name them."""
    d = api.placement_diff(ORT / "cnn_ov_t1_l1.ort.json.gz", ORT / "cnn_mixed_ov_t1_l1.ort.json.gz").data
    assert d["moved"] == [] and d["verdict"] == "fallback" and len(d["suspected_fallbacks"]) == 10
    assert d["opaque_baseline_partitions"] == ["OpenVINOExecutionProvider"]
    assert pd.gate(d, "fallback").startswith("10 CPU operator(s) appear that the baseline may have run inside")
    assert any("--model" in s for s in d["statements"])


def test_openvino_same_graph_two_launches_pass_both_gates():
    d = api.placement_diff(ORT / "cnn_ov_t1_l1.ort.json.gz", ORT / "cnn_ov_t1_l2.ort.json.gz").data
    assert d["verdict"] == "same_placement" and pd.gate(d, "fallback") is None and pd.gate(d, "new-partition") is None
    assert d["run_ms"]["baseline"] != d["run_ms"]["candidate"]
    assert "CPUExecutionProvider" in d["fallback_means"]


def test_the_session_assignment_of_an_onnx_model(tmp_path):
    """ONNX Runtime's own assignment (record_ep_graph_assignment_info), made in a child process: every node of the
    model, by the model's names; a provider this build lacks is one line, exit 2; a file that is no model too."""
    needs("onnx", "ort")
    d = api.placement(ORT / "cnn.onnx").data
    import onnx

    nodes = [n.name for n in onnx.load(str(ORT / "cnn.onnx")).graph.node]
    assert [o["key"] for o in d["operators"]] == nodes
    assert {o["placement"] for o in d["operators"]} == {"CPUExecutionProvider"} and d["evidence"] == "ort_assignment"
    assert d["summary"]["partitions"] == 1
    conv = [o for o in d["operators"] if o["op"] == "Conv"]
    assert len(conv) == 5 and all(o["flops"] for o in conv)  # work where the counter knows it
    r = cli("placement", ORT / "cnn.onnx", "--providers", "NoSuchExecutionProvider", code=2)
    assert r.stderr.strip().splitlines() == [
        "edgeprof: error: execution provider NoSuchExecutionProvider is not in this onnxruntime build "
        f"(available: {', '.join(__import__('onnxruntime').get_available_providers())})"]
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage" * 10)
    r = cli("placement", bad, code=2)
    assert len(r.stderr.strip().splitlines()) == 1 and str(bad) in r.stderr


# --------------------------------------------------------------------------------------------------
# LiteRT and the Apple Neural Engine reports
# --------------------------------------------------------------------------------------------------

def test_litert_ops_the_xnnpack_delegate_left_to_the_cpu():
    """The log's op profile: two TILE ops between XNNPACK partitions (counted in the log by hand)."""
    d = api.placement(DATA / "litert" / "cnn_xnnpack_benchmark.log").data
    host = [o for o in d["operators"] if not o["accelerated"]]
    assert [o["op"] for o in host] == ["TILE", "TILE"] and {o["placement"] for o in host} == {"builtin CPU kernels"}
    assert [p["accelerated"] for p in d["partitions"]] == [True, False, True, False, True]
    assert d["summary"]["host_partitions_between_accelerated"] == 2


def _anemll(tmp_path, edit=None):
    doc = json.loads((DATA / "anemll" / "anemll_profile_0.4.1.illustrative.json").read_text())
    if edit:
        edit(doc)
    p = tmp_path / f"r{len(list(tmp_path.iterdir()))}.json"
    p.write_text(json.dumps(doc))
    return p


def test_anemll_compute_plan_diff_names_the_op_that_left_the_ane(tmp_path):
    def to_cpu(doc):
        for p in doc["ordered_placements"]:
            if p["name"] == "var_12":
                p["device"] = "CPU"

    a, b = _anemll(tmp_path), _anemll(tmp_path, to_cpu)
    d = api.placement_diff(a, b).data
    assert [(m["key"], m["from"], m["to"], m["kind"]) for m in d["moved"]] == [("infer/var_12", "ANE", "CPU", "fallback")]
    one = api.placement(a).data
    assert one["focus"] == "ANE" and one["evidence"] == "anemll_json" and {o["basis"] for o in one["operators"]} == {"planned"}
    ane = next(r for r in one["placements"] if r["placement"] == "ANE")
    assert ane["plan_weight"] == pytest.approx(0.0412) and ane["plan_weight_share_pct"] == pytest.approx(
        100 * 0.0412 / (0.0412 + 0.0011))
    assert "Neural Engine" in one["fallback_means"]


def test_a_cost_plan_without_devices_places_nothing_it_cannot_tell():
    d = api.placement(DATA / "anemll" / "ane_costplan.illustrative.json").data
    assert {o["placement"] for o in d["operators"]} == {"?"} and d["summary"]["unknown_operators"] == 1
    assert d["warnings"] and "no device" in d["warnings"][0]


def test_bad_input_is_one_line_naming_the_file(tmp_path):
    (tmp_path / "x.json").write_text('{"a": 1}')
    (tmp_path / "empty.pte").write_bytes(b"")
    for name, says in (("x.json", "placement also reads a .pte, an .onnx"), ("empty.pte", "too short"),
                       ("missing.etdp", "no such file")):
        r = cli("placement", tmp_path / name, code=2)
        (line,) = r.stderr.strip().splitlines()
        assert str(tmp_path / name) in line and says in line
    r = cli("placement", PLACE / "gate_xnn.pte", "--model", ORT / "cnn.onnx", code=2)
    assert r.stderr.strip() == "edgeprof: error: --model goes with an ONNX Runtime profile (the ONNX model it ran)"
    r = cli("placement", PLACE / "gate_xnn.pte", "--fail-on", "fallback", code=2)
    assert r.stderr.strip() == "edgeprof: error: --fail-on and --candidate-model go with --diff"


@pytest.mark.parametrize("name", ["gate_nosigmoid.pte", "gate_nosigmoid.N10.etdp.gz"])
def test_mutated_builds_are_placed_or_refused_in_one_line(tmp_path, name):
    """Bytes flipped at random in a real program and a real recording: each is placed (a document that passes the
    invariant walk) or refused as bad input — never another exception."""
    import numpy as np

    from edgeprof import invariants
    from edgeprof.errors import InputError

    raw = (PLACE / name).read_bytes()
    raw = gzip.decompress(raw) if name.endswith(".gz") else raw
    rng = np.random.default_rng(7)
    placed = refused = 0
    for k in range(120):
        b = bytearray(raw)
        for at in rng.integers(0, len(b), size=int(rng.integers(1, 6))):
            b[at] = int(rng.integers(0, 256))
        f = tmp_path / f"m{k}{'.pte' if name.endswith('.pte') else '.etdp'}"
        f.write_bytes(bytes(b))
        try:
            doc = api.placement(f).to_json()
        except InputError:
            refused += 1
            continue
        assert invariants.violations(doc) == [], k
        placed += 1
    assert placed and refused  # both outcomes are exercised


def test_a_program_against_a_recording_warns_that_the_evidence_differs():
    """A static program and a recording pair by family and occurrence (the recording lists layout ops the program
    may not): the diff says so; two recordings, or a recording and its timeline, do not need the warning."""
    d = api.placement_diff(PLACE / "gate_xnn.pte", PLACE / "gate_xnn.N10.etdp.gz").data
    assert len(d["warnings"]) == 1 and "different kinds of evidence (pte_static and etdump+pte_static)" in d["warnings"][0]
    assert d["moved"] == [] and d["verdict"] in ("same_placement", "changed")
    assert api.placement_diff(PLACE / "gate_xnn.N10.etdp.gz", PLACE / "gate_norelu.N10.etdp.gz").data["warnings"] == []
