"""Static hazards, the ANE placement estimate, islands and the roofline: rules on the fixtures, thresholds at
their boundaries, the island algorithm against hand-worked placements."""

from __future__ import annotations

import pytest

from edgeprof.analysis.ane import KV_OPS_MIN, LUT_SHARE_PCT
from edgeprof.analysis.ane_islands import Placement, focus_device, islands, summary
from edgeprof.analysis.mil_cost import op_costs
from edgeprof.analysis.mil_static import CHIPS, analyze_program, chip, op_hazards, program_hazards, role, roofline
from edgeprof.io.coreml import read_bundle
from edgeprof.io.mil_text import parse_mil_text

from .conftest import package


def _rules(name: str) -> dict:
    prog = read_bundle(package(name))
    return {h["rule"]: h for h in program_hazards(prog, op_costs(prog), op_hazards(prog))}


def test_hazards_of_the_int32_and_state_fixtures():
    g = _rules("int32_gather_fp32prec_ios17")
    assert {"int32", "gather", "fp32"} <= set(g) and "kv_state" not in g
    assert "gather" in g["int32"]["evidence"]["types"] and "reduce_argmax" in g["int32"]["evidence"]["types"]
    kv = _rules("int32_kvcache_state_ios18")
    assert {"int32", "gather", "kv_state"} <= set(kv) and "fp32" not in kv
    assert kv["kv_state"]["evidence"]["counts"] == {"read_state": 2, "slice_update": 1, "write_state": 1}
    assert kv["kv_state"]["severity"] == "warning"  # 4 ops = KV_OPS_MIN


@pytest.mark.parametrize("name", ["conv_palettized4_ios16", "conv_palettized4_ios18", "attention_palettized6_ios17"])
def test_palettized_models_have_the_lut_expansion_hazard(name):
    h = _rules(name)["lut_expansion"]
    assert h["evidence"]["share_pct"] >= LUT_SHARE_PCT and h["evidence"]["dense_bytes"] > 2.5 * h["evidence"]["stored_bytes"]


@pytest.mark.parametrize("name", ["conv_relu_linear_ios16", "conv_int8_ios16", "attention_block_ios17", "sdpa_block_ios18"])
def test_plain_fp16_models_have_no_hazard(name):
    assert _rules(name) == {}


def _prog(body: str, inputs: str = "tensor<fp16, [1, 64]> x", outputs: str = "a"):
    return parse_mil_text("program(1.3)\n{\n func main<ios18>(" + inputs + ") {\n" + body + "\n } -> (" + outputs + ");\n}\n")


def _blob(t: str, off: int) -> str:
    return f'{t}(BLOBFILE(path = string("@model_path/weights/weight.bin"), offset = uint64({off})))'


def _lut_prog(n_lut: int, n_dense: int):
    return _prog(
        f'  tensor<fp16, [{n_lut}, 64]> w1 = constexpr_lut_to_dense(indices = {_blob(f"tensor<uint4, [{n_lut}, 64]>", 64)}, '
        f'lut = {_blob("tensor<fp16, [1, 1, 16, 1]>", 128)})[name = string("w1")];\n'
        f'  tensor<fp16, [{n_dense}, 64]> w2 = const()[name = string("w2"), '
        f'val = {_blob(f"tensor<fp16, [{n_dense}, 64]>", 192)}];\n'
        f'  tensor<fp16, [1, {n_lut}]> a = linear(x = x, weight = w1)[name = string("a")];\n'
        f'  tensor<fp16, [1, {n_dense}]> b = linear(x = x, weight = w2)[name = string("b")];', outputs="a, b")


@pytest.mark.parametrize("n_lut, n_dense, fires", [(1, 9, True), (1, 10, False), (2, 17, True), (2, 19, False)])
def test_lut_share_threshold_at_its_boundary(n_lut, n_dense, fires):
    assert LUT_SHARE_PCT == 10.0
    prog = _lut_prog(n_lut, n_dense)
    rules = {h["rule"]: h for h in program_hazards(prog, op_costs(prog), op_hazards(prog))}
    assert ("lut_expansion" in rules) is fires
    if fires:
        assert rules["lut_expansion"]["evidence"]["share_pct"] == pytest.approx(100 * n_lut / (n_lut + n_dense))


@pytest.mark.parametrize("n_states, severity", [(KV_OPS_MIN - 1, "info"), (KV_OPS_MIN, "warning"), (0, None)])
def test_kv_state_needs_a_state_op_and_is_a_warning_from_the_threshold(n_states, severity):
    lines = [f'  tensor<fp16, [1, 64, 8]> r{i} = read_state(input = s)[name = string("r{i}")];' for i in range(n_states)]
    lines += [f'  tensor<fp16, [1, 8]> c{i} = slice_by_index(x = x, begin = b, end = e)[name = string("c{i}")];'
              for i in range(6 if n_states == 0 else 0)]
    prog = _prog('  tensor<int32, [2]> b = const()[name = string("b"), val = tensor<int32, [2]>([0, 0])];\n'
                 '  tensor<int32, [2]> e = const()[name = string("e"), val = tensor<int32, [2]>([1, 8])];\n'
                 + "\n".join(lines) + '\n  tensor<fp16, [1, 64]> a = relu(x = x)[name = string("a")];',
                 inputs="tensor<fp16, [1, 64]> x, state<tensor<fp16, [1, 64, 8]>> s")
    rules = {h["rule"]: h for h in program_hazards(prog, op_costs(prog), op_hazards(prog))}
    assert (rules["kv_state"]["severity"] if "kv_state" in rules else None) == severity


@pytest.mark.parametrize("n, cpu", [(16, False), (17, True)])
def test_int32_constant_parameters_up_to_64_bytes_are_not_int32_work(n, cpu):
    prog = _prog(f'  tensor<int32, [{n}]> k = const()[name = string("k"), val = tensor<int32, [{n}]>({list(range(n))})];\n'
                 f'  tensor<fp16, [1, 64]> a = add(x = x, y = k)[name = string("a")];')
    add = next(o for o in op_hazards(prog) if o["short_type"] == "add")
    assert ("int32" in add["hazards"]) is cpu
    assert add["device"] == ("CPU" if cpu else "ANE")


def test_placement_of_the_kv_fixture_ops():
    per = {o["name"]: o for o in op_hazards(read_bundle(package("int32_kvcache_state_ios18")))}
    assert per["embed_cast_uint16_cast_uint16"]["device"] == "CPU" and per["embed_cast_uint16_cast_uint16"]["rule"] == "gather"
    assert per["cast_3"]["device"] == "CPU" and per["cast_3"]["rule"] == "int32"  # int16 → int32 index guard
    assert per["scores"]["device"] == "ANE" and per["probs"]["device"] == "ANE"
    assert per["read_cache"]["device"] == "?"  # no rule speaks about state reads: not known, never guessed
    assert per["argmax"]["device"] == "CPU"


def test_roofline_against_hand_arithmetic():
    prog = read_bundle(package("conv_relu_linear_ios18"))
    rows = op_costs(prog)
    fc = next(r for r in rows if r.type == "linear")
    m2 = chip("M2")
    est = roofline(rows, m2)[(fc.function, fc.index)]
    moved = 1 * 4096 * 2 + 10 * 4096 * 2 + 10 * 2  # fp16 input, dense weight, output
    assert est["ms"] == pytest.approx(1e3 * moved / 100e9) and est["bound"] == "Mem"
    conv = next(r for r in rows if r.type == "conv")
    m4 = chip("M4")  # quoted in INT8 TOPS: half for fp16 work
    assert m4["fp16_flops_per_s"] == 19e12 and chip("M1")["fp16_flops_per_s"] == 11e12
    e4 = roofline(rows, m4)[(conv.function, conv.index)]
    assert e4["ms"] == pytest.approx(1e3 * max(901120 / 19e12, ((3 * 32 * 32 + 16 * 32 * 32) * 2 + 864) / 120e9))
    assert all(c["source"] for c in CHIPS.values())


def _p(i, dev, sup=False, reason="", fn="main", ms=None, const=False):
    return Placement(fn, i, f"op{i}", f"ios18.t{i}", dev, 0.01, sup, ms, reason, const)


def test_islands_follow_the_published_algorithm():
    ps = [_p(0, "CPU", True), _p(1, "ANE"), _p(2, "CPU", False, "int32"), _p(3, "?"), _p(4, "CPU", True),
          _p(5, "ANE", const=True), _p(6, "GPU", False, "gather"), _p(7, "ANE"), _p(8, "CPU", False, "x", ms=0.5), _p(9, "ANE"),
          _p(10, "CPU")]
    isl = islands(ps, boundary_ms=0.2)
    # interruptions first (the 0.5 ms island outranks the other), then edge runs; ids 1.. for interruptions
    assert [(i.id, i.start_index, i.end_index, i.op_count, i.path, i.edge_kind) for i in isl] == [
        (1, 8, 8, 1, "ANE->CPU->ANE", ""), (2, 2, 6, 3, "ANE->CPU+GPU->ANE", ""),
        (0, 0, 0, 1, "CPU->ANE", "lead"), (0, 10, 10, 1, "ANE->CPU", "trail")]
    big = isl[1]
    assert big.soft_ops == 1 and big.hard_ops == 2 and big.reason == "int32 (+mixed)" and big.missing_runtime_ops == 3
    assert isl[0].total_penalty_ms == pytest.approx(0.4 + 0.5) and isl[3].switch_penalty_ms == 0.2
    s = summary(isl)
    assert s["graph_interruptions"] == 2 and s["interrupted_ops"] == 4 and s["estimated_total_tax_ms"] == pytest.approx(1.3)
    assert s["edge_runs_ignored"] == 2 and s["total_non_focus_ops"] == 6


def test_a_function_without_focus_ops_is_one_all_run_and_gpu_focus():
    isl = islands([_p(0, "CPU"), _p(1, "CPU", fn="other"), _p(2, "ANE", fn="other")], boundary_ms=1.0)
    assert [(i.function, i.path, i.edge_kind, i.switch_penalty_ms) for i in isl] == [
        ("other", "CPU->ANE", "lead", 1.0), ("main", "CPU", "all", 0.0)]
    gpu = [_p(0, "GPU"), _p(1, "GPU"), _p(2, "ANE")]
    assert focus_device(gpu, compute_units_all=True) == "GPU" and focus_device(gpu) == "ANE"


def test_whole_analysis_document_and_roles():
    doc = analyze_program(read_bundle(package("int32_kvcache_state_ios18")), boundary_ms=0.2)
    assert doc["estimate"]["label"] == "estimate" and doc["estimate"]["evidence"] == "mil_static"
    assert doc["estimate"]["graph_interruptions"]["graph_interruptions"] >= 1
    assert {o["predicted_device"] for o in doc["ops"]} >= {"ANE", "CPU", "?", "const"}
    assert [role(n) for n in ("llama_embeddings.mlpackage", "model_prefill_chunk1.mlmodelc", "FFN_decode.mlpackage",
                              "lm_head.mlpackage", "encoder.mlpackage")] == ["embeddings", "prefill", "decode", "lm_head", ""]


def test_multifunction_package_gives_each_function_its_own_ops_and_islands(tmp_path):
    """A two-function package (one weight file shared) made with coremltools' save_multifunction, the way
    LLM packages put prefill and decode side by side."""
    import contextlib
    import io

    from .conftest import require_coremltools

    require_coremltools()
    import coremltools as ct

    out = tmp_path / "multi.mlpackage"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        desc = ct.utils.MultiFunctionDescriptor()
        desc.add_function(str(package("conv_relu_linear_ios18")), src_function_name="main", target_function_name="fp16")
        desc.add_function(str(package("int32_gather_fp32prec_ios17")), src_function_name="main", target_function_name="ids")
        desc.default_function_name = "fp16"
        ct.utils.save_multifunction(desc, str(out))
    prog = read_bundle(out)
    assert list(prog.functions) == ["fp16", "ids"]  # the default function first
    single = {n: read_bundle(package(src)) for n, src in (("fp16", "conv_relu_linear_ios18"),
                                                          ("ids", "int32_gather_fp32prec_ios17"))}
    rows = op_costs(prog)
    for fn, p in single.items():
        mine = [(r.index, r.type, r.flops, r.weight_read) for r in rows if r.function == fn]
        assert mine == [(r.index, r.type, r.flops, r.weight_read) for r in op_costs(p)]
    doc = analyze_program(prog, boundary_ms=0.2)
    isl = doc["estimate"]["graph_interruptions"]["interruptions"] + doc["estimate"]["graph_interruptions"]["edge_runs"]
    assert {i["function"] for i in isl} == {"fp16", "ids"}
    assert {h["rule"] for h in doc["hazards"]} >= {"int32", "gather"}
    assert [f["name"] for f in doc["functions"]] == ["fp16", "ids"]


def test_no_agreement_is_claimed_from_zero_evidence():
    """A profile joined with a model that is not the one profiled: no placed op matches, so no agreement is
    claimed; the finding asks whether it is the right model."""
    import edgeprof
    from testdata import DATA

    r = edgeprof.ane(DATA / "anemll" / "anemll_profile_0.4.1.illustrative.json",
                     model=DATA / "coreml" / "conv_relu_linear_ios18.mlpackage")
    (f,) = [x for x in r.data["findings"] if x["title"].startswith("Static estimate")]
    assert f["evidence"]["matched_ops"] == 0 and "agrees" not in f["title"]
    assert f["title"].startswith("Static estimate not compared: none of the profile's")


def test_the_roofline_times_only_the_ops_placed_on_the_ane():
    """The ANE's peak figures apply to the ops the estimate places on the ANE; an op placed on the CPU or GPU gets
    no time (its device's figures are not known) instead of the ANE's — so it cannot become the hotspot."""
    from edgeprof import api
    from testdata import DATA

    m = api.coreml(DATA / "coreml" / "int32_gather_fp32prec_ios17.mlpackage").data["models"][0]
    elsewhere = [o for o in m["ops"] if o["predicted_device"] not in ("ANE", "const")]
    on_ane = [o for o in m["ops"] if o["predicted_device"] == "ANE"]
    assert elsewhere and all(o["estimated_ms"] is None for o in elsewhere)
    assert m["estimate"]["ops_not_timed"] == len(elsewhere)
    assert m["estimate"]["estimated_ms"] == pytest.approx(sum(o["estimated_ms"] or 0 for o in on_ane))
