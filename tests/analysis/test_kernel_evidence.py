"""Kernel view (baseline vs candidate), executed evidence from ETDumps, and `edgeprof validate`."""

from __future__ import annotations

import json
import os
import shutil

import polars as pl
import pytest
from click.testing import CliRunner
from testdata import DATA

from edgeprof import api, load_etdump
from edgeprof.analysis.kernels import executed_from_profile
from edgeprof.cli import main
from edgeprof.render.markdown import kernel_view as kernel_view_md

X = DATA / "xnnpack"
ON, OFF, ANDROID_ON = X / "mac_sme2_on_xnntrace.log", X / "mac_sme2_off_xnntrace.log", X / "android_sme2_on_xnntrace.log"


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


# --------------------------------------------------------------------------------------------------
# kernel view
# --------------------------------------------------------------------------------------------------

def test_kernel_view_sme2_on_vs_off():
    v = api.kernel_view(OFF, ON, filter_op="gemm")
    assert v["baseline_name"] == "mac_sme2_off" and v["candidate_name"] == "mac_sme2_on"
    assert v["status"] == "sme2_in_candidate"
    assert v["verdict"] == ("GEMM/IGEMM: SME2 kernels registered in mac_sme2_on; mac_sme2_off uses NEON neondot "
                            "neonfma neoni8mm")
    names = [k["kernel_name"] for k in v["kernels"]]
    assert all("gemm" in n for n in names) and not any("dwconv" in n for n in names)
    sme2 = {k["kernel_name"] for k in v["kernels"] if k["isa_family"] == "SME2"}
    assert sme2 == set(v["only_in_candidate"]) - {n for n in v["only_in_candidate"] if "neonsme2" not in n}
    assert all(k["candidate"] and not k["baseline"] for k in v["kernels"] if k["isa_family"] == "SME2")
    fam = {f["family"]: (f["baseline"], f["candidate"]) for f in v["by_family"]}
    assert fam["SME2"] == (0, 9) and fam["NEON"][0] == 6
    md = kernel_view_md(v)
    assert md.startswith("#### **mac_sme2_off vs mac_sme2_on: GEMM/IGEMM kernel view (XNNPACK delegated)**")
    assert "| Kernel | mac_sme2_off | mac_sme2_on | ISA family | ISA | Kind | KleidiAI |" in md
    assert md.count("✅ registered") == sum(bool(k["baseline"]) + bool(k["candidate"]) for k in v["kernels"])
    assert "kai_matmul_clamp_f32_f32p2vlx1_f32p2vlx1biasf32_sme2_mopa" in md and "does not prove" in md


def test_kernel_view_names_filters_and_cli(tmp_path):
    out = tmp_path / "kernel_view.md"
    res = _run("kernel-view", "--baseline", OFF, "--candidate", ON, "--baseline-name", "SME2 off",
               "--candidate-name", "SME2 on", "--filter-op", "DWCONV", "--out", out, "--require-sme2")
    assert res.exit_code == 0, res.output
    md = out.read_text()
    assert "SME2 off vs SME2 on: Kernel view" in md and "| Kernel | SME2 off | SME2 on |" in md
    assert "dwconv" in md and "gemm_minmax" not in md.split("##### By ISA family")[0]
    assert "SME2 kernels registered in SME2 on" in res.output  # verdict printed, computed on all kernels
    # the Arm kit's spelling and stdout output
    res = _run("kernel-view", "--sme2-off", OFF, "--sme2-on", ON, "--title", "toy: GEMM/IGEMM Kernel view")
    assert res.exit_code == 0 and res.output.startswith("#### **toy: GEMM/IGEMM Kernel view**")
    res = _run("kernel-view", "-b", OFF, "-c", ON, "--filter-op", "nothing_matches")
    assert "No kernels found matching the filter criteria." in res.output
    res = _run("kernel-view", "-b", OFF)
    assert res.exit_code == 2 and "need --baseline and --candidate" in res.output
    js = json.loads(_run("kernel-view", "-b", OFF, "-c", ON, "--json").stdout)
    assert js["status"] == "sme2_in_candidate" and js["evidence"] == "registered"


def test_sme2_on_build_that_shows_only_neon_fails_the_gate():
    v = api.kernel_view(OFF, ANDROID_ON)
    assert v["status"] == "no_sme2"
    assert v["verdict"].startswith("GEMM/IGEMM: no SME2 kernels registered in android_sme2_on; it uses NEON neonfma neoni8mm")
    res = _run("kernel-view", "-b", OFF, "-c", ANDROID_ON, "--require-sme2")
    assert res.exit_code == 1 and "no SME2 kernels registered" in res.output


def _log(tmp_path, name, kernels):
    p = tmp_path / name
    p.write_text("".join(f"Note (XNNPACK): Using {k} microkernel '{n}'. (init_x_config, gemm-config.c:1)\n"
                         for k, n in kernels))
    return p


def test_verdicts_for_sme_baselines_and_both_sides(tmp_path):
    sme = _log(tmp_path, "sme_only.log", [("gemm", "xnn_pf32_gemm_minmax_ukernel_32x32__neonsme"),
                                          ("gemm", "xnn_f32_gemm_minmax_ukernel_6x8__asm_aarch64_neonfma_ld128")])
    assert api.kernel_view(sme, ON)["status"] == "sme_baseline"
    assert "not a NEON-only baseline" in api.kernel_view(sme, ON)["verdict"]
    assert api.kernel_view(OFF, sme)["status"] == "sme_only_candidate"
    assert api.kernel_view(ON, ON, baseline_name="a", candidate_name="b")["status"] == "sme2_in_both"
    empty = tmp_path / "empty.log"
    empty.write_text("nothing here\n")
    assert api.kernel_view(empty, empty)["status"] == "no_gemm"
    # names that collide are told apart
    v = api.kernel_view(OFF, OFF)
    assert v["baseline_name"] != v["candidate_name"]


def test_kernel_view_from_csvs_equals_from_logs(tmp_path):
    for src in (OFF, ON):
        shutil.copy(src, tmp_path / src.name)
        assert _run("kernels", tmp_path / src.name).exit_code == 0
    from_csv = api.kernel_view(tmp_path / "mac_sme2_off_kernels.csv", tmp_path / "mac_sme2_on_kernels.csv")
    from_log = api.kernel_view(OFF, ON)
    assert from_csv["kernels"] == from_log["kernels"] and from_csv["verdict"] == from_log["verdict"]


# --------------------------------------------------------------------------------------------------
# executed evidence
# --------------------------------------------------------------------------------------------------

def _xnn_profile(tmp_path, ops, runs=4):
    from etdump_builder import build, xnnpack_runs

    p = tmp_path / "sme.etdp"
    p.write_bytes(build(xnnpack_runs(ops, runs)))
    return p


def test_executed_evidence_from_pf32_and_qp8_operators(tmp_path):
    p = _xnn_profile(tmp_path, [("Convolution (NHWC, PF32) IGEMM #1", 300), ("Fully Connected (NC, PF32) GEMM #1", 200),
                                ("Fully Connected (NC, QP8, F32, QC4W) GEMM #1", 100),
                                ("Fully Connected (NC, F32) GEMM #2", 100), ("Add (ND) #1", 50)])
    e = executed_from_profile(load_etdump(p, warn=False))
    assert e["sme_executed"] and e["kleidiai_executed"] and e["evidence"] == "executed"
    assert e["sme_ms_per_run"] == pytest.approx(0.5) and e["qp8_ms_per_run"] == pytest.approx(0.1)
    assert e["gemm_conv_ms_per_run"] == pytest.approx(0.7)
    assert e["kleidiai_share_of_gemm_conv"] == pytest.approx(0.6 / 0.7)
    ops = {o["op"]: o for o in e["operators"]}
    conv = ops["Convolution (NHWC, PF32) IGEMM"]
    assert conv["marker"] == "PF32" and conv["calls_per_run"] == 1
    assert ops["Fully Connected (NC, QP8, F32, QC4W) GEMM"]["implies"].startswith("KleidiAI (NEON")
    assert [o["op"] for o in e["other_gemm_conv_operators"]] == ["Fully Connected (NC, F32) GEMM"]
    assert e["statement"].startswith("SME/SME2 path executed: PF32 operators take 0.500 ms per run (71 % of GEMM/CONV")
    res = _run("kernels", p, "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["executed"][0]["sme_executed"]


@pytest.mark.parametrize("name", ["toycnn_xnn.N20", "toycnn_xnnq8.N20", "tel_xnnq8.N20", "mobilenet_v3_small_xnn.N20"])
def test_x86_fixture_profiles_show_no_sme_path(name, etdump):
    prof = load_etdump(etdump(name), warn=False)
    e = executed_from_profile(prof)
    assert not e["sme_executed"] and not e["kleidiai_executed"] and e["operators"] == []
    assert e["statement"].startswith("no PF32/PF16/PQS8/QP8 operator ran")
    # the GEMM/CONV time is the delegate ops' time in those categories (checked against the event table)
    ev = prof.execute_events().filter(pl.col("kind") == "delegate_op")
    gc = ev.filter(pl.col("name").cast(pl.String).str.contains(r"^(Convolution|Fully Connected|Batch Matrix|Deconvolution)"))
    assert e["gemm_conv_ms_per_run"] == pytest.approx(gc["duration_ns"].sum() / prof.n_runs / 1e6)


def test_portable_profile_has_no_xnnpack_ops(etdump):
    e = executed_from_profile(load_etdump(etdump("toycnn_portable.N20"), warn=False))
    assert e["statement"].startswith("no XNNPACK delegate operators")


# --------------------------------------------------------------------------------------------------
# validate
# --------------------------------------------------------------------------------------------------

@pytest.fixture
def analysed(tmp_path):
    from edgeprof.examples import copy_example

    copy_example(tmp_path / "ex")
    run_dir = tmp_path / "ex" / "runs" / "linux"
    api.analyze([run_dir], jobs=1)
    return run_dir


def _statuses(report):
    return [(c["status"], c["check"]) for c in report["checks"]]


def test_validate_a_fresh_analysis_passes(analysed):
    r = api.validate(analysed)
    assert r["ok"] and r["counts"]["fail"] == 0
    checks = {c["check"] for c in r["checks"]}
    assert {"etdump", "timeline_all", "timeline_run0", "ops_stats", "analysis_summary"} <= checks
    assert sum(1 for c in r["checks"] if c["check"] == "etdump" and c["status"] == "pass") == 3
    # manifest/metrics are not required by default (the Arm pipeline never writes them) …
    assert not any(c["check"] in ("manifest.json", "metrics.json") for c in r["checks"])
    # … and fail when required
    r = api.validate(analysed, require=("manifest",))
    assert not r["ok"] and ("fail", "manifest.json") in _statuses(r) and ("fail", "metrics.json") in _statuses(r)
    res = _run("validate", analysed)
    assert res.exit_code == 0 and "✓" in res.output and "validate: OK" in res.output
    # analyze records the executed kernel evidence per ETDump
    summary = json.loads((analysed / "analysis_summary.json").read_text())
    per = {e["experiment"]: e["kernel_evidence"] for e in summary["per_etdump"]}
    assert per["xnnpack_fp32"]["evidence"] == "executed" and not per["xnnpack_fp32"]["sme_executed"]
    assert per["xnnpack_fp32"]["gemm_conv_ms_per_run"] > 0 and per["portable"]["gemm_conv_ms_per_run"] == 0


def test_validate_catches_stale_missing_and_inconsistent_outputs(analysed):
    etd = next(analysed.rglob("toycnn_xnnpack_fp32_t1.etdump"))
    csv = etd.parent / "toycnn_xnnpack_fp32_t1_exec_all_runs_timeline.csv"
    future = os.path.getmtime(csv) + 100
    os.utime(etd, (future, future))                                  # ETDump newer than its outputs
    r = api.validate(analysed)
    failed = [c for c in r["checks"] if c["status"] == "fail"]
    assert {c["check"] for c in failed} == {"timeline_all", "timeline_run0", "ops_stats", "analysis_summary"}
    assert all("stale" in c["message"] or "older" in " ".join(c["items"]) for c in failed)
    os.utime(etd, (future - 200, future - 200))
    assert api.validate(analysed)["ok"]
    # a timeline whose latency disagrees with the ETDump by more than 1 %
    df = pl.read_csv(csv)
    df.with_columns(pl.when(pl.col("name") == "Method::execute").then(pl.col("duration_ms") * 1.05)
                    .otherwise(pl.col("duration_ms")).alias("duration_ms")).write_csv(csv)
    r = api.validate(analysed)
    bad = [c for c in r["checks"] if c["status"] == "fail"]
    assert len(bad) == 1 and bad[0]["check"] == "timeline_all" and "more than 1 % apart" in bad[0]["message"]
    assert api.validate(analysed, tolerance=0.06)["ok"]
    # a missing output and a summary that lost an ETDump
    (etd.parent / "toycnn_xnnpack_fp32_t1_exec_ops_stats.csv").unlink()
    summary = analysed / "analysis_summary.json"
    doc = json.loads(summary.read_text())
    doc["per_etdump"] = doc["per_etdump"][1:]
    summary.write_text(json.dumps(doc))
    r = api.validate(analysed, tolerance=0.06)
    msgs = {c["check"]: c for c in r["checks"] if c["status"] == "fail"}
    assert "missing" in msgs["ops_stats"]["message"] and any("not in the summary" in i for i in msgs["analysis_summary"]["items"])
    res = _run("validate", analysed, "--json")
    assert res.exit_code == 1 and json.loads(res.stdout)["ok"] is False


def test_validate_reports_a_corrupt_etdump(analysed):
    etd = next(analysed.rglob("toycnn_portable_t1.etdump"))
    etd.write_bytes(etd.read_bytes()[:100])
    r = api.validate(analysed)
    c = next(c for c in r["checks"] if c["check"] == "etdump" and c["status"] == "fail")
    assert c["subject"].endswith("toycnn_portable_t1.etdump") and "byte offset" in c["message"]


def _traces(run_dir, on_src, off_src, on_name="toycnn_sme2_on_t1_xnntrace.log", off_name="toycnn_sme2_off_t1_xnntrace.log"):
    d = run_dir.parent / f"{run_dir.name}_trace"
    d.mkdir(exist_ok=True)
    shutil.copy(on_src, d / on_name)
    shutil.copy(off_src, d / off_name)
    return d


def test_require_sme2_kernels(analysed):
    r = api.validate(analysed, require_sme2_kernels=True)
    assert not r["ok"] and "no XNNPACK trace log found" in r["checks"][-1]["message"]
    _traces(analysed, ON, OFF)
    r = api.validate(analysed, require_sme2_kernels=True)
    assert r["ok"], r
    sme = [c for c in r["checks"] if c["check"] == "sme2_kernels"]
    assert [c["status"] for c in sme] == ["pass", "pass"]
    on = next(c for c in sme if "sme2_on" in c["subject"])
    assert on["subject"] == "../linux_trace/toycnn_sme2_on_t1_xnntrace.log" and len(on["items"]) == 9
    assert {t["role"] for t in r["trace_logs"]} == {"on", "off"}
    # without the flag the traces are only described
    assert all(c["status"] == "info" for c in api.validate(analysed)["checks"] if c["check"] == "trace_log")


def test_sme2_on_trace_with_only_neon_fails_listing_the_fallback_kernels(analysed):
    _traces(analysed, ANDROID_ON, OFF)
    r = api.validate(analysed, require_sme2_kernels=True)
    assert not r["ok"]
    fail = next(c for c in r["checks"] if c["status"] == "fail")
    assert "SME2-on trace log registers no SME2 GEMM/IGEMM kernel" in fail["message"]
    assert fail["items"] == ["xnn_f32_gemm_minmax_ukernel_6x8__asm_aarch64_neonfma_cortex_a75_prfm (NEON neonfma, gemm)",
                             "xnn_f32_gemm_minmax_ukernel_6x8__asm_aarch64_neonfma_cortex_a53_prfm (NEON neonfma, gemm)",
                             "xnn_f32_igemm_minmax_ukernel_6x8__asm_aarch64_neonfma_cortex_a75_prfm (NEON neonfma, igemm)",
                             "xnn_qp8_f32_qc4w_gemm_minmax_ukernel_8x8c16s2__neoni8mm_mstep2 (NEON neoni8mm, qp8gemm)",
                             "xnn_qd8_f32_qc8w_gemm_minmax_ukernel_4x16c8__neoni8mm (NEON neoni8mm, dqgemm)"]
    res = _run("validate", analysed, "--require-sme2-kernels")
    assert res.exit_code == 1 and "✗" in res.output and "neoni8mm_mstep2" in res.output
    # an SME2-off trace that registers SME2 kernels fails too
    _traces(analysed, ON, ON)
    r = api.validate(analysed, require_sme2_kernels=True)
    off = next(c for c in r["checks"] if c["status"] == "fail")
    assert "sme2_off" in off["subject"] and "still has SME2 on" in off["message"] and len(off["items"]) == 9


def test_trace_roles_from_the_manifest_and_logs_in_the_run_folder(analysed):
    exp = analysed / "xnnpack_fp32"
    shutil.copy(ANDROID_ON, exp / "toycnn_xnnpack_fp32_t1_xnntrace.log")
    (analysed / "manifest.json").write_text(json.dumps({"model": "m.pte", "results": [
        {"experiment": "xnnpack_fp32", "sme2": True, "metrics": {}}]}))
    r = api.validate(analysed, require_sme2_kernels=True)
    t = r["trace_logs"][0]
    assert t["role"] == "on" and t["role_source"] == "manifest.json"
    assert t["path"] == "xnnpack_fp32/toycnn_xnnpack_fp32_t1_xnntrace.log"
    assert not r["ok"]
    # unmarked logs cannot be checked
    (analysed / "manifest.json").unlink()
    r = api.validate(analysed, require_sme2_kernels=True)
    assert any("cannot tell which trace logs are SME2-on" in c["message"] for c in r["checks"] if c["status"] == "fail")


def test_validate_usage_errors(tmp_path):
    res = _run("validate", tmp_path / "nope")
    assert res.exit_code == 2 and "nope: no such folder" in res.output
    empty = tmp_path / "empty"
    empty.mkdir()
    res = _run("validate", empty)  # nothing to check is bad input (exit 2), not a failed check (exit 1)
    assert res.exit_code == 2 and "nothing to validate: no ETDumps, XNNPACK trace logs or kernel CSVs" in res.output
