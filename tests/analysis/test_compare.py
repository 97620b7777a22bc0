"""baseline-vs-candidate comparison: simulation on real noise, real fixture pairs, CLI and CI gate."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

from edgeprof import api, load_etdump
from edgeprof.analysis.compare import Arm, compare_latency
from edgeprof.cli import main
from simulate import noise_shape, run

# simulation size: each number below is deterministic (fixed seeds); bench/bench_stats.py runs 5× more


@pytest.fixture(scope="module")
def shape(etdump):
    return noise_shape(load_etdump(etdump("mobilenet_v3_small_xnnq8.N200"), warn=False).latency_ms())


# one launch per arm without the launch allowance (launch_cv = 0): the interval about these two launches

def test_aa_false_verdict_rate_at_zero_threshold(shape):
    r = run(shape, sims=600, n=100, cv=0.05, threshold=0.0, seed=101, launch_cv=0)
    assert r["faster"] + r["slower"] <= 0.05, r


def test_interval_coverage_of_a_true_5_percent_speedup(shape):
    r = run(shape, sims=600, n=100, cv=0.05, true_speedup=1.05, seed=202, launch_cv=0)
    assert r["coverage"] >= 0.93, r


def test_power_for_a_5_percent_speedup_at_5_percent_cv(shape):
    r = run(shape, sims=300, n=100, cv=0.05, true_speedup=1.05, threshold=0.02, seed=303, launch_cv=0)
    assert r["faster"] >= 0.80, r


def test_aa_with_warmup_and_drift_injected(shape):
    r = run(shape, sims=300, n=100, cv=0.05, threshold=0.0, warmup=3, drift=3.0, seed=404, launch_cv=0)
    assert r["faster"] + r["slower"] <= 0.05 and r["coverage"] >= 0.93, r


def test_three_launches_per_arm_with_launch_to_launch_variation(shape):
    # launch medians vary ~20 % (σ = 0.2 on the log scale) while runs vary 7 % within a launch
    r = run(shape, sims=300, n=50, cv=0.07, launches=3, launch_sigma=0.2, threshold=0.0, seed=505)
    assert r["coverage"] >= 0.93 and r["faster"] + r["slower"] <= 0.05, r


def test_real_pair_xnnpack_vs_portable(etdump):
    r = api.compare([etdump("toycnn_portable.N20")], [etdump("toycnn_xnn.N20")])
    assert r["verdict"] == "faster" and 40 < r["speedup"]["estimate"] < 80
    # one launch each: the default 25 % launch SD per arm → the interval spans exp(±1.96·√(2·0.25²)) ≈ ×/÷ 2.0
    est = r["speedup"]["estimate"]
    assert est / 2.2 < r["ci"]["low"] < est / 1.99 and r["speedup"]["median_based"] == pytest.approx(est)
    assert r["tests"]["cliffs_delta"] == 1.0 and r["tests"]["mann_whitney"]["p_value"] < 1e-6
    assert r["regime"] == "single-launch" and r["launch_allowance"] == {"launch_cv": 0.25, "applied": True,
                                                                        "source": "default", "from_arms": False}
    assert r["launch_noise"]["source"] == "default" and r["launch_noise"]["sd"] == 0.25
    assert any("launch-to-launch variation cannot be measured" in w for w in r["warnings"])
    swapped = api.compare([etdump("toycnn_xnn.N20")], [etdump("toycnn_portable.N20")])
    assert swapped["verdict"] == "slower" and swapped["speedup"]["estimate"] == pytest.approx(1 / r["speedup"]["estimate"])


def test_real_pair_int8_vs_fp32(etdump):
    r = api.compare([etdump("tel_xnn.N20")], [etdump("tel_xnnq8.N20")])
    # noisy 20-run launches: no honest verdict, and the output says why; 20 runs are too few to call the shape
    # multimodal (the shape hint needs 30), so no such claim is made
    assert r["verdict"] == "inconclusive"
    assert r["ci"]["low"] < 1 < r["ci"]["high"]
    assert any("one launch per arm cannot separate this from launch-to-launch variation" in w and "record ≥" in w
               for w in r["warnings"]) and not any("multimodal" in w for w in r["warnings"])


def test_kit_keys_and_determinism(etdump):
    a = api.compare([etdump("toycnn_xnn.N20")], [etdump("toycnn_xnnq8.N20")], seed=7)
    b = api.compare([etdump("toycnn_xnn.N20")], [etdump("toycnn_xnnq8.N20")], seed=7)
    assert a == b
    for key in ("config1", "config2", "speedup", "variability"):
        assert key in a
    assert set(a["speedup"]) >= {"median_based", "trimmed_mean_based", "description"}
    assert a["config1"]["name"].startswith("toycnn_xnn") and "faster than" in a["speedup"]["description"]
    assert a["variability"]["more_variable"] in (a["config1"]["name"], a["config2"]["name"])


def test_degenerate_arms_never_give_nan():
    r = compare_latency(Arm("a", [np.array([1.0])]), Arm("b", [np.array([2.0, 2.1])]))
    from edgeprof.render.jsonfmt import dumps

    doc = json.loads(dumps(r))
    assert doc["verdict"] == "inconclusive" and doc["ci"] is None


def _copy(src, dst):
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    return dst


def test_cli_roles_by_sme2_names_and_fail_on_regression(tmp_path, etdump):
    on = _copy(etdump("toycnn_portable.N20"), tmp_path / "m_mac_sme2_on_t1.etdump")  # slow one named "on"
    off = _copy(etdump("toycnn_xnn.N20"), tmp_path / "m_mac_sme2_off_t1.etdump")
    res = CliRunner().invoke(main, ["compare", str(on), str(off), "--json", "--fail-on", "regression",
                                    "--output-dir", str(tmp_path)])  # with --json, the file only when asked
    doc = json.loads(res.stdout)
    # off is the baseline although given second; the kit's grammar names it: model m, experiment mac_sme2_off
    assert doc["config1"]["name"] == "mac_sme2_off" and doc["config2"]["name"] == "mac_sme2_on"
    assert doc["verdict"] == "slower" and res.exit_code == 1
    written = tmp_path / ("m_mac_sme2_off_t1_exec_all_runs_timeline_vs_m_mac_sme2_on_t1_exec_all_runs_timeline"
                          "_robust_comparison.json")
    assert json.loads(written.read_text())["verdict"] == "slower"
    ok = CliRunner().invoke(main, ["compare", "-b", str(on), "-c", str(off), "--fail-on", "regression", "--no-write"])
    assert ok.exit_code == 0 and "faster" in ok.output


def test_cli_kit_spelling_and_timeline_csvs(tmp_path, etdump):
    d = tmp_path / "runs"
    _copy(etdump("tel_xnn.N20"), d / "tel_xnn_t1.etdump")
    _copy(etdump("tel_portable.N20"), d / "tel_portable_t1.etdump")
    assert CliRunner().invoke(main, ["analyze", str(d), "--no-progress"]).exit_code == 0
    # the kit's analyze_etdump_csv.py spelling: --compare names the reference (baseline), each name stays with its file
    res = CliRunner().invoke(main, ["compare", "--timeline-csv", str(d / "tel_xnn_t1_exec_all_runs_timeline.csv"),
                                    "--compare", str(d / "tel_portable_t1_exec_all_runs_timeline.csv"),
                                    "--name1", "XNNPACK", "--name2", "portable", "--json", "--no-write"])
    doc = json.loads(res.stdout)
    assert res.exit_code == 0 and doc["config1"]["name"] == "portable" and doc["config2"]["name"] == "XNNPACK"
    assert doc["verdict"] == "faster" and "--compare input is the reference" in doc["roles"]
    assert "roles: baseline portable, candidate XNNPACK" in res.stderr
    direct = api.compare([d / "tel_portable_t1.etdump"], [d / "tel_xnn_t1.etdump"])
    assert doc["speedup"]["estimate"] == pytest.approx(direct["speedup"]["estimate"], abs=1e-6)  # JSON keeps 6 decimals


def test_cli_run_dir_experiments_with_several_launches(tmp_path, etdump):
    run_dir = tmp_path / "out_m" / "runs" / "linux"
    for i, src in enumerate(("toycnn_xnn.N20", "toycnn_xnn.N3.debug")):
        _copy(etdump(src), run_dir / "fp32" / f"launch{i}" / "m_fp32_t1.etdump")
    for i, src in enumerate(("toycnn_xnnq8.N20", "toycnn_xnnq8.N20")):
        _copy(etdump(src), run_dir / "int8" / f"launch{i}" / "m_int8_t1.etdump")
    res = CliRunner().invoke(main, ["compare", str(run_dir / "fp32"), str(run_dir / "int8"), "--json", "--no-write"])
    doc = json.loads(res.stdout)
    assert res.exit_code == 0, res.output
    # the int8 folders hold one recording twice: one launch, said so (two would fake a launch spread of zero)
    assert len(doc["baseline"]["launches"]) == 2 and len(doc["candidate"]["launches"]) == 1
    assert any(w.startswith("1 candidate input(s) repeat a recording") for w in doc["warnings"])
    assert doc["ci"]["scope"].startswith("2 and 1 launch(es): launch-to-launch variation cannot be measured")


def test_cli_latency_writes_the_kit_robust_stats(tmp_path, etdump):
    f = _copy(etdump("toycnn_xnn.N20"), tmp_path / "m_t1.etdump")
    res = CliRunner().invoke(main, ["latency", str(f), "--json", "--output-dir", str(tmp_path)])  # asked for
    assert res.exit_code == 0
    rep = json.loads(res.stdout)["reports"][0]
    written = json.loads((tmp_path / "m_t1_exec_all_runs_timeline_robust_stats.json").read_text())
    for key in ("count", "mean_ms", "median_ms", "std_dev_ms", "cv_percent", "min_ms", "max_ms", "percentiles",
                "outliers", "trimmed_mean_5_ms", "trimmed_mean_10_ms", "robust_stats", "schema_version", "ci",
                "warmup", "drift"):
        assert key in written
    assert written["count"] == 20 and rep["warmup"]["count"] == 1
    assert set(written["outliers"]) >= {"count", "percentage", "values", "bounds"}
    human = CliRunner().invoke(main, ["latency", str(f), "--no-write"])
    assert human.exit_code == 0 and "warm-up" in human.output and "first 1 run(s) slower" in human.output


def test_cli_bad_inputs(tmp_path):
    res = CliRunner().invoke(main, ["compare", str(tmp_path / "a.etdp"), str(tmp_path / "b.etdp")])
    assert res.exit_code == 2 and "a.etdp" in res.output
    bad = tmp_path / "x.csv"
    bad.write_text("a,b\n1,2\n")
    res = CliRunner().invoke(main, ["latency", str(bad)])
    assert res.exit_code == 2 and "missing column" in res.output
    res = CliRunner().invoke(main, ["compare", "-b", str(bad)])
    assert res.exit_code == 2
