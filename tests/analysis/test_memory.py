"""Memory: allocation events of real ETDumps recorded by ExecuTorch's C++ runtime (tests/data/memory/alloc) against
ExecuTorch's own deserializer; a worker's per-phase peaks against the bytes numpy allocates; ONNX Runtime's per-node
sizes against numpy's byte counts of the tensors; every key of `memory --json`; the memory invariants at their
boundary."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from testdata import DATA

from edgeprof import api, invariants

ALLOC = DATA / "memory" / "alloc"
MiB = 2**20


def truth(name: str) -> dict:
    return json.loads((ALLOC / f"{name}.alloc.N3.truth.json").read_text())


@pytest.mark.parametrize("name", ["gate_xnn", "toycnn_portable"])
def test_allocation_events_equal_executorchs_deserializer(name):
    """Per block and allocator: the number of events, their sizes in order, the allocator each id names (ETDumpGen
    numbers allocators from 1)."""
    from edgeprof.io.readers import read_profile

    t = truth(name)
    prof = read_profile(ALLOC / f"{name}.alloc.N3.etdp.gz")
    a = prof.allocations
    for block_index, block in enumerate(t["run_blocks"]):
        run = -1 if block["name"] == "Default" else block_index - 1
        mine = a.filter(a["run_index"] == run)
        for alloc, got in block["allocations"].items():
            rows = mine.filter(mine["allocator"] == alloc)
            assert rows["size_bytes"].to_list() == got["sizes"], (block_index, alloc)
            assert set(rows["allocator_id"].to_list()) <= {got["allocator_id"]}
    doc = api.memory([ALLOC / f"{name}.alloc.N3.etdp.gz"]).data["etdumps"][0]
    totals = {(r["allocator"], r["phase"]): (r["events"], r["bytes"]) for r in doc["allocators"]}
    for alloc, tot in t["totals_per_allocator"].items():
        if tot["count"]:
            assert totals[(alloc, "load")] == (tot["count"], tot["total_bytes"])  # every event is in the load block
    assert doc["events"] == sum(x["count"] for x in t["totals_per_allocator"].values())
    assert doc["runs_recorded"] == t["n_run_blocks"] - 1


def test_a_recording_without_allocation_events_says_so():
    doc = api.memory([DATA / "placement" / "gate_xnn.N10.etdp.gz"]).data["etdumps"][0]
    assert doc["allocators"] == [] and doc["events"] == 0 and "Python runtime" in doc["note"]


_PHASES = r'''
import json, numpy as np
from edgeprof.collect.procmem import Phases
m = Phases()
m.end()                                   # start
m.begin("load"); a = np.ones(64 * 2**20 // 8); m.end()          # 64 MiB touched
del a                                                            # freed between phases
m.begin("init"); m.end()                                         # so this phase's peak is lower
m.begin("warmup"); b = np.ones(16 * 2**20 // 8); del b; m.end()  # 16 MiB, freed within the phase
print(json.dumps(m.report({"x": 1})))
'''


def test_phase_peaks_follow_what_the_process_allocated():
    """In a fresh process: a phase that touches 64 MiB peaks ≥ 64 MiB above where it began; the next phase, after the
    array is freed, peaks below that (the high-water mark was reset); a phase that holds 16 MiB briefly peaks
    ≥ 16 MiB above its end. Tolerance: the interpreter's own pages (≤ 4 MiB)."""
    r = subprocess.run([sys.executable, "-c", _PHASES], capture_output=True, text=True, check=True)
    doc = json.loads(r.stdout)
    assert doc["peak_scope"] == "phase" and doc["options"] == {"x": 1} and doc["cost_ms"] >= 0
    ph = {p["phase"]: p for p in doc["phases"]}
    assert list(ph) == ["start", "load", "init", "warmup"]
    assert ph["load"]["peak_rss_bytes"] - ph["start"]["rss_bytes"] >= 64 * MiB
    assert ph["load"]["peak_rss_bytes"] - ph["start"]["rss_bytes"] <= 68 * MiB
    assert ph["init"]["peak_rss_bytes"] < ph["load"]["peak_rss_bytes"] - 32 * MiB
    assert ph["warmup"]["peak_rss_bytes"] - ph["warmup"]["rss_bytes"] >= 15 * MiB  # the phase's own pages, up to 1 MiB, stay
    for p in doc["phases"]:
        assert p["peak_rss_bytes"] >= p["rss_bytes"] > 0 and p["pss_bytes"] > 0


def test_ort_node_sizes_are_numpys_byte_counts():
    """The first convolution (fused with its ReLU, `r0_nchwc`) reads the 1×3×64×64 float input, writes 16×64×64
    floats and holds 16×3×3×3 weights plus 16 biases; the classifier's Gemm holds its 64×10 weights prepacked (its
    parameter size is the 10 biases only)."""
    ort = DATA / "ort"
    d = api.memory([ort / "cnn_cpu_t1_l1.ort.json"], model=ort / "cnn.onnx").data["ort_profiles"][0]
    by = {n["name"]: n for n in d["nodes"]}
    f32 = np.float32
    assert by["r0_nchwc"]["activation_size"] == np.zeros((1, 3, 64, 64), f32).nbytes
    assert by["r0_nchwc"]["output_size"] == np.zeros((1, 16, 64, 64), f32).nbytes
    assert by["r0_nchwc"]["parameter_size"] == np.zeros((16, 3, 3, 3), f32).nbytes + np.zeros(16, f32).nbytes
    gemm = by["/head/fc/Gemm"]
    assert gemm["activation_size"] == np.zeros((1, 64), f32).nbytes and gemm["output_size"] == np.zeros((1, 10), f32).nbytes
    assert gemm["parameter_size"] == np.zeros(10, f32).nbytes and gemm["parameters"] == "prepacked"
    assert gemm["model_weight_bytes"] == np.zeros((64, 10), f32).nbytes + np.zeros(10, f32).nbytes
    (cpu,) = d["by_provider"]
    assert cpu["nodes"] == len(d["nodes"]) and cpu["parameter_size"] == sum(n["parameter_size"] for n in d["nodes"])
    assert cpu["prepacked_nodes"] == 1


def test_memory_invariants_at_their_boundary():
    ok = {"phase": "runs", "peak_rss_bytes": 100, "rss_bytes": 100}
    assert invariants.violations(ok) == []
    assert [v.rule for v in invariants.violations({**ok, "peak_rss_bytes": 99})] == ["memory"]
    gap = {"footprint_bytes": 30, "parts": [{"part": "runtime", "bytes": 500}, {"part": "weights", "bytes": 10},
                                             {"part": "unexplained", "bytes": 20}]}
    assert invariants.violations(gap) == []
    gap["parts"][2]["bytes"] = 21
    assert [v.rule for v in invariants.violations(gap)] == ["memory"]


def test_a_folder_without_recorded_memory_is_bad_input(tmp_path):
    (tmp_path / "empty").mkdir()
    r = subprocess.run([sys.executable, "-m", "edgeprof", "memory", tmp_path / "empty"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        f"edgeprof: error: {tmp_path / 'empty'}: no launch in it recorded memory (collect it with edgeprof run)"]


def test_the_memory_comparison_interval_is_welchs_and_needs_no_scipy():
    """The arms' peak-RSS ratio: its interval against a recomputation with SciPy's t quantile (Welch–Satterthwaite
    degrees of freedom on the log values), computed in a fresh process that must not import scipy.stats (1.2 s)."""
    import json
    import math
    import subprocess
    import sys

    from scipy import stats

    b, c = [100e6, 104e6, 98e6], [110e6, 111e6, 109e6, 118e6]
    script = ("import json, sys\nfrom edgeprof.analysis.memory import compare_memory\n"
              f"r = compare_memory([{{'phases': [{{'phase': 'runs', 'peak_rss_bytes': v}}]}} for v in {b}], "
              f"[{{'phases': [{{'phase': 'runs', 'peak_rss_bytes': v}}]}} for v in {c}], threshold=0.05)\n"
              "print(json.dumps([r['phases'][0]['ci_low'], r['phases'][0]['ci_high'], 'scipy.stats' in sys.modules]))")
    got = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    lo, hi, loaded = json.loads(got.stdout)
    assert loaded is False
    lb, lc = [math.log(x) for x in b], [math.log(x) for x in c]
    vb, vc = stats.tvar(lb) / len(lb), stats.tvar(lc) / len(lc)
    df = (vb + vc) ** 2 / (vb ** 2 / (len(lb) - 1) + vc ** 2 / (len(lc) - 1))
    d, half = sum(lc) / len(lc) - sum(lb) / len(lb), stats.t.ppf(0.975, df) * math.sqrt(vb + vc)
    assert lo == pytest.approx(math.exp(d - half), rel=1e-12) and hi == pytest.approx(math.exp(d + half), rel=1e-12)
