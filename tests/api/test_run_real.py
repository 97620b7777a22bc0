"""`edgeprof run` for real: the bundled toy CNN (portable and XNNPACK programs) through the ExecuTorch Python
runtime, 3 interleaved launches × 20 runs each, then validate, compare and the report.

Needs the ``run`` extra (torch + executorch). CI sets ``EDGEPROF_REQUIRE_RUN=1``: there a missing runtime fails
the test instead of skipping it."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from edgeprof import api
from edgeprof.examples import example_root
from edgeprof.io.etdump_read import read_etdump

ART = example_root() / "artifacts"

if importlib.util.find_spec("executorch") is None:
    if os.environ.get("EDGEPROF_REQUIRE_RUN"):
        raise RuntimeError("EDGEPROF_REQUIRE_RUN is set but executorch is not installed (pip install '.[run]')")
    pytest.skip("the run extra (torch + executorch) is not installed", allow_module_level=True)


def _ep(*args):
    return subprocess.run([sys.executable, "-m", "edgeprof", *map(str, args)], capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    out = tmp_path_factory.mktemp("collect") / "out_toycnn" / "runs" / "linux"
    res = api.run([ART / "toycnn_portable.pte", ART / "toycnn_xnnpack_fp32.pte"], runs=20, warmup=2, launches=3,
                  out=out, report=True, overhead_check=True, seed=5)
    return out, res


def test_a_real_collection_is_complete_interleaved_and_consistent(collected):
    out, res = collected
    assert res.ok and res["launches_ok"] == 6 + 4, res.data
    m = json.loads((out / "manifest.json").read_text())
    assert m["status"] == "complete" and len(m["results"]) == 6 and len(m["overhead_launches"]) == 4
    order = [(r["experiment"], r["launch"]) for r in sorted(m["results"] + m["overhead_launches"],
                                                            key=lambda r: r["position"])]
    rounds = [r["round"] for r in sorted(m["results"], key=lambda r: r["position"])]
    assert rounds == sorted(rounds) and len(order) == 10
    for r in m["results"]:
        met = r["metrics"]
        prof = read_etdump(out / met["etdump_rel"])
        assert prof.n_runs == 20 and met["runs_recorded"] == 20 and met["threads_in_effect"] == 1
        np.testing.assert_allclose(met["latency_ms"], prof.latency_ms(), rtol=0, atol=1e-9)
        # the runtime's own Method::execute fits inside the host's wall clock around each call
        assert all(e <= w + 0.05 for e, w in zip(prof.latency_ms(), met["wall_ms"]))
    # one set of inputs for both programs (same signature, same seed)
    assert len({r["metrics"]["inputs"]["sha256"] for r in m["results"]}) == 1
    assert m["results"][0]["metrics"]["inputs"]["signature"] == ["float32[1x3x32x32]"]
    assert m["machines"]["host"]["versions"]["executorch"].startswith("1.")
    assert sorted(p.name for p in (out / "artifacts").iterdir()) == ["toycnn_portable.etrecord",
                                                                       "toycnn_xnnpack_fp32.etrecord"]


def test_validate_compare_and_the_report_on_the_new_folder(collected):
    out, res = collected
    v = _ep("validate", out, "--require", "manifest", "--require", "metrics")
    assert v.returncode == 0, v.stdout + v.stderr
    c = _ep("compare", "--run-dir", out, "-b", "toycnn_portable", "-c", "toycnn_xnnpack_fp32", "--json", "--no-write")
    assert c.returncode == 0, c.stderr
    cmp = json.loads(c.stdout)
    assert cmp["verdict"] == "faster" and cmp["speedup"]["ci_low"] > 5
    assert cmp["baseline"]["launches"] and len(cmp["baseline"]["launches"]) == 3
    assert "launch" in cmp["ci"]["scope"]
    md = (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    assert "toycnn_xnnpack_fp32 vs toycnn_portable" in md and "faster" in md and "<svg" in html
    assert res["report"]["verdict"] == "faster"
    assert "| attached |" in md  # the ETRecords edgeprof run copied in are used
    # both programs named in the Run table, and the runs of all three launches used everywhere
    assert "| Models | toycnn_portable: `" in md and "toycnn_xnnpack_fp32: `" in md
    assert re.search(r"toycnn_portable: \d+ of 60 runs in 3 launches", md)


def test_the_overhead_check_states_what_etdump_costs(collected):
    _out, res = collected
    ov = res["overhead"]
    assert ov and {e["experiment"] for e in ov["per_configuration"]} == {"toycnn_portable", "toycnn_xnnpack_fp32"}
    for e in ov["per_configuration"]:
        assert e["launches_without"] == 2 and e["launches_with"] == 3 and e["ci_percent"] is not None
        lo, hi = e["ci_percent"]
        assert lo <= e["overhead_percent"] <= hi
    assert ov["statement"].startswith("ETDump tracing overhead")


def test_inputs_from_files_reach_the_program_unchanged(tmp_path, collected):
    import torch

    x = np.random.default_rng(11).standard_normal((1, 3, 32, 32)).astype("float32")
    np.savez(tmp_path / "in.npz", x)
    np.save(tmp_path / "in.npy", x)
    torch.save([torch.from_numpy(x)], tmp_path / "in.pt")
    digests = {}
    for name in ("in.npz", "in.npy", "in.pt"):
        out = tmp_path / name.replace(".", "_")
        res = api.run([ART / "toycnn_xnnpack_fp32.pte"], runs=3, warmup=0, launches=1, out=out,
                      inputs=tmp_path / name)
        assert res.ok, res.data
        m = json.loads((out / "manifest.json").read_text())["results"][0]["metrics"]["inputs"]
        assert m["source"] == str(tmp_path / name)
        digests[name] = m["sha256"]
    generated = json.loads((collected[0] / "manifest.json").read_text())["results"][0]["metrics"]["inputs"]["sha256"]
    assert len(set(digests.values())) == 1 and generated not in digests.values()
    # two arrays for a one-input program: the launch fails and says why
    np.savez(tmp_path / "two.npz", x, x)
    res = api.run([ART / "toycnn_xnnpack_fp32.pte"], runs=3, warmup=0, launches=1, out=tmp_path / "two",
                  inputs=tmp_path / "two.npz")
    assert not res.ok
    tail = json.loads((tmp_path / "two" / "manifest.json").read_text())["results"][0]["output_tail"]
    assert "holds 2 input(s), the model takes 1" in tail


def test_a_thread_sweep_is_two_configurations_compared(tmp_path):
    """`run --threads 1,2 --report` of one program: the two thread counts are two configurations — a report of t2
    against t1, each arm holding only its own launches — never one configuration of both (README: Invariants)."""
    out = tmp_path / "sweep"
    res = api.run([ART / "toycnn_xnnpack_fp32.pte"], runs=10, warmup=1, launches=2, threads=(1, 2), out=out,
                  report=True, seed=5)
    assert res.ok and res["launches_ok"] == 4, res.data
    rep = res["report"]
    assert rep["markdown"].endswith("report_t1_vs_t2.md") and (out / "report_t1_vs_t2.html").is_file()
    assert rep["summary_line"].startswith("toycnn_xnnpack_fp32 t2 vs toycnn_xnnpack_fp32 t1")
    assert "2 vs 2 launch(es)" in rep["summary_line"]
    m = json.loads((out / "manifest.json").read_text())
    by_threads = {t: sorted(r["metrics"]["etdump_rel"] for r in m["results"] if r["threads"] == t) for t in (1, 2)}
    assert all(len(v) == 2 for v in by_threads.values())
    rows = {line.split("|")[2].strip(): line for line in (out / "report_t1_vs_t2.md").read_text().splitlines()
            if line.startswith("| toycnn_xnnpack_fp32 t")}
    for t, role in ((1, "baseline"), (2, "candidate")):  # each arm: its thread count, its first launch (+1 more)
        cells = [c.strip() for c in rows[role].split("|")]
        assert cells[1] == f"toycnn_xnnpack_fp32 t{t}" and cells[4] == str(t)
        assert by_threads[t][0].rsplit("/", 1)[-1] in rows[role] and "(+1)" in rows[role]
    assert "report_t1_vs_t2.md" in m["files"]  # recorded, so --force can remove it
