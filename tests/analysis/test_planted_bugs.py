"""Tests that kill the bugs an audit planted and the suite let through (issue: mutation testing): taxonomy and
kernel-marker facts from their sources, and the ANE signal thresholds at their boundaries (just below, at, just
above), each against numbers written here, not computed by the code under test."""

from __future__ import annotations

import pytest
from ane_builder import op_type, profile

from edgeprof.analysis.ane import analyze_profile, signals
from edgeprof.io.anemll import profile_from_doc
from edgeprof.taxonomy import classify

# clamp bounds its input to [min, max]: an activation (ATen's hardtanh is the same op with fixed bounds; PyTorch's
# nn.Hardtanh / ReLU6 lower to it). It runs in the real MobileNetV3 fixture (hardswish decomposes to clamp).
ACTIVATION_NAMES = ["aten.clamp.default", "native_call_clamp.out", "aten::clamp", "aten.hardtanh.default",
                    "native_call_hardtanh.out", "Clamp (NC, F32)", "clamp"]


@pytest.mark.parametrize("name", ACTIVATION_NAMES)
def test_clamp_and_hardtanh_are_activations(name):
    assert classify(name).category == "ACTIVATION", name


def _hot(shares):
    doc = profile(op_types=[op_type(f"op{i}", s, s / 10) for i, s in enumerate(shares)])
    res = analyze_profile(profile_from_doc(doc, "p.json"))
    f = next((x for x in res["findings"] if x["id"] == "hotspots"), None)
    return [h["type"] for h in f["evidence"]["hotspots"]] if f else []


def test_hotspot_threshold_is_five_percent_at_its_boundary():
    # 5.0 % is a hotspot (≥ 5 %), 4.99 % is not; the big one keeps the finding non-empty
    assert _hot([80.0, 5.0, 4.99]) == ["op0", "op1"]
    assert _hot([80.0, 5.01]) == ["op0", "op1"]


def _lut(share):
    doc = profile(op_types=[op_type("constexpr_lut_to_dense", share, share / 10), op_type("conv", 100 - share, 5.0)])
    return [s["id"] for s in signals(profile_from_doc(doc, "p.json"))]


@pytest.mark.parametrize("share, fires", [(9.99, False), (10.0, True), (10.01, True), (24.0, True)])
def test_lut_signal_threshold_is_ten_percent_at_its_boundary(share, fires):
    assert ("signal_lut" in _lut(share)) is fires


def test_compare_uses_every_steady_run_of_every_launch():
    """Oracle: numpy on the arrays given. Two launches per arm, no warm-up: counts and medians over all runs
    (a comparison that dropped each launch's last run would count 20, not 22, and shift the medians)."""
    import numpy as np

    from edgeprof.analysis.compare import Arm, compare_latency

    b = [np.arange(1.0, 12.0), np.arange(2.0, 13.0)]
    c = [np.arange(1.0, 12.0) * 0.5, np.arange(2.0, 13.0) * 0.5]
    r = compare_latency(Arm("b", b), Arm("c", c), warmup=0)
    assert r["baseline"]["count"] == 22 and r["candidate"]["count"] == 22
    assert r["baseline"]["median_ms"] == float(np.median(np.concatenate(b)))
    assert r["candidate"]["median_ms"] == float(np.median(np.concatenate(c)))


def test_compare_leaves_the_warmup_out_and_says_so():
    import numpy as np

    from edgeprof.analysis.compare import Arm, compare_latency

    steady = np.arange(1.0, 11.0)
    r = compare_latency(Arm("b", [np.concatenate([[100.0, 100.0], steady])]), Arm("c", [steady]), warmup=2)
    assert r["baseline"]["count"] == 10 and r["baseline"]["median_ms"] == float(np.median(steady)) == 5.5
    assert r["baseline"]["max_ms"] == 10.0  # the 100 ms warm-up runs are not among the compared runs
    assert any("2 warm-up run(s) left out" in w for w in r["warnings"])


@pytest.mark.parametrize("op, marker", [("Fully Connected (NC, PQS8, QC8W) GEMM #1", "PQS8"),
                                        ("Convolution (NHWC, PF16) IGEMM #1", "PF16"),
                                        ("Fully Connected (NC, PF32) GEMM #1", "PF32")])
def test_each_sme_operator_marker_proves_the_sme_path(tmp_path, op, marker):
    """XNNPACK names its packed-LHS SME/SME2 (KleidiAI) operators with PF32, PF16 and PQS8 (xnnpack_kernels.md):
    any of them in an ETDump is executed SME evidence."""
    from etdump_builder import PE, Run, build

    from edgeprof.analysis.kernels import executed_from_profile
    from edgeprof.api import load_etdump

    runs, t = [], 0
    for _ in range(3):
        runs.append(Run("Execute", [PE(None, t + 100, t + 400_100, 0, dd_str=op), PE("DELEGATE_CALL", t + 50, t + 400_200, 0),
                                     PE("Method::execute", t, t + 400_300, -1, chain_index=-1)]))
        t += 10_000_000
    p = tmp_path / "sme.etdp"
    p.write_bytes(build(runs))
    e = executed_from_profile(load_etdump(p, warn=False))
    assert e["sme_executed"] and e["statement"].startswith(f"SME/SME2 path executed: {marker}")
