"""compare and plan on folders `edgeprof run` wrote (fake runner on PATH): the regime and the allowance in the
JSON, the comparability table from the manifests, not_comparable and --allow-different, and a plan checked by
simulating the design it recommends."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from fake_device import install

from edgeprof.analysis.compare import Arm, compare_latency
from edgeprof.examples import example_root

PTE = example_root() / "artifacts" / "toycnn_xnnpack_fp32.pte"


def _ep(args, env=None):
    return subprocess.run([sys.executable, "-m", "edgeprof", *map(str, args)], env=env or os.environ,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cmp")
    f = install(tmp)
    env = {**os.environ, **f["env"]}
    cfg = tmp / "c.toml"
    cfg.write_text(f'runs = 12\nwarmup = 0\nlaunches = 3\nrunner = "{f["runner"]}"\nthreads = [1, 2]\n'
                   f'[[experiment]]\nname = "a"\nmodel = "{PTE}"\n[[experiment]]\nname = "b"\nmodel = "{PTE}"\n')
    host = tmp / "host"
    assert _ep(["run", "--config", cfg, "--out", host], env).returncode == 0
    dev = tmp / "device"
    r = _ep(["run", PTE, "--runner", f["runner"], "--device", "adb:R5CX", "--runs", 12, "--warmup", 0,
             "--launches", 3, "--out", dev], env)
    assert r.returncode == 0, r.stderr
    return host, dev, env


def _cmp(*args, env):
    r = _ep(["compare", *args, "--json", "--no-write"], env)
    return r, json.loads(r.stdout) if r.stdout.strip() else None


def test_threads_alone_are_the_variable_under_test(folders):
    host, _, env = folders
    a = sorted((host / "a").glob("*_t1_l*.etdump"))
    a2 = sorted((host / "a").glob("*_t2_l*.etdump"))
    r, doc = _cmp(*(x for p in a for x in ("-b", p)), *(x for p in a2 for x in ("-c", p)), env=env)
    assert r.returncode == 0, r.stderr
    comp = doc["comparability"]
    assert comp["comparable"] and comp["variable_under_test"] == ["threads"]
    assert doc["regime"] == "multi-launch" and doc["launch_allowance"]["applied"] is False
    assert doc["ci"]["degrees_of_freedom"] == 4 and doc["launch_sd_estimate"] is not None


def test_another_experiment_at_another_thread_count_is_not_comparable(folders):
    host, _, env = folders
    a = sorted((host / "a").glob("*_t1_l*.etdump"))
    b2 = sorted((host / "b").glob("*_t2_l*.etdump"))
    args = [*(x for p in a for x in ("-b", p)), *(x for p in b2 for x in ("-c", p))]
    r, doc = _cmp(*args, env=env)
    assert r.returncode == 0 and doc["verdict"] == "not_comparable"
    assert doc["comparability"]["critical_differences"] == ["threads"] and "verdict_if_comparable" in doc
    gate = _ep(["compare", *args, "--no-write", "--fail-on", "regression"], env)
    assert gate.returncode == 1 and "cannot gate: not comparable" in gate.stderr
    r, doc = _cmp(*args, "--allow-different", env=env)
    assert doc["verdict"] != "not_comparable" and any("compared anyway" in w for w in doc["warnings"])


def test_a_device_against_the_host_is_not_comparable_for_another_experiment(folders):
    host, dev, env = folders
    a = sorted((host / "a").glob("*_t1_l*.etdump"))
    d = sorted(dev.rglob("*.etdump"))
    _r, doc = _cmp(*(x for p in a for x in ("-b", p)), *(x for p in d for x in ("-c", p)), env=env)
    rows = {row["aspect"]: row for row in doc["comparability"]["rows"]}
    assert rows["device"]["candidate"] == ["Pixel 9 Pro"] and rows["device"]["critical"]
    assert doc["verdict"] == "not_comparable"
    rep = _ep(["report", "-b", a[0], "-c", d[0], "--out", host.parent / "r.md"], env)
    text = (host.parent / "r.md").read_text()
    assert rep.returncode == 0 and "invalidates the comparison" in text and "not comparable" in text


def test_one_launch_each_states_the_allowance_and_zero_removes_it(folders):
    host, _, env = folders
    a1 = next((host / "a").glob("*_t1_l1.etdump"))
    b1 = next((host / "b").glob("*_t1_l1.etdump"))
    # edgeprof run kept the noise its 2 × 2 × 3 launches showed (noise.json): one launch each uses it, at its upper
    # 80 % bound — recomputed here from the launches themselves
    noise = json.loads((host / "noise.json").read_text())
    assert noise["kind"] == "noise_profile" and noise["launch_sd"]["median"]["launches"] == 12
    assert [c["launches"] for c in noise["configurations"]] == [3, 3, 3, 3]
    from edgeprof.analysis.latency import detect_warmup
    ys = {}
    for x in json.loads((host / "metrics.json").read_text())["results"]:
        lat = np.array(x["metrics"]["latency_ms"])
        ys.setdefault((x["experiment"], x["threads"]), []).append(math.log(np.median(lat[detect_warmup(lat)["count"]:])))
    from scipy.stats import chi2
    # the noisiest of the four configurations (2 df each) is the evidence: its SD and its upper 80 % bound
    sd = max(float(np.std(v, ddof=1)) for v in ys.values())
    _, doc = _cmp("-b", a1, "-c", b1, env=env)
    assert doc["regime"] == "single-launch" and doc["launch_noise"]["source"] == "noise profile"
    assert doc["launch_noise"]["estimate"] == pytest.approx(sd, rel=1e-4)
    assert doc["launch_allowance"]["launch_cv"] == pytest.approx(sd * math.sqrt(2 / chi2.ppf(0.2, 2)), rel=1e-4)
    given = _cmp("-b", a1, "-c", b1, "--launch-cv", "25%", env=env)[1]
    assert given["launch_noise"]["source"] == "given" and "allowance of 25 %" in given["summary_line"]
    _, zero = _cmp("-b", a1, "-c", b1, "--launch-cv", 0, env=env)
    assert zero["regime"] == "single-launch, no allowance" and zero["launch_allowance"]["source"] == "given"
    assert (math.log(zero["ci"]["high"]) - math.log(zero["ci"]["low"])
            < math.log(given["ci"]["high"]) - math.log(given["ci"]["low"]))


def test_plan_recommends_a_design_that_simulation_confirms(folders):
    host, _, env = folders
    # three launches measure the launch SD on 2 df: the plan takes its upper 80 % bound, so a 30 % change it can plan
    r = _ep(["plan", "--from", host / "a", "--threads", 1, "--effect", "30%", "--json", "--no-write"], env)
    assert r.returncode == 0, r.stderr
    p = json.loads(r.stdout)
    assert p["kind"] == "plan" and p["recommended"] and p["statement"].startswith("to resolve a 30 % change")
    assert p["launch_noise"]["df"] == 2 and p["launch_sd"] > p["launch_noise"]["estimate"]
    rec = p["recommended"]
    k, n = rec["launches_per_arm"], rec["runs_per_launch"]
    within, tau = max(p["within_sd"], 1e-3), p["launch_sd"]
    rng = np.random.default_rng(4)
    found = 0
    for i in range(150):
        arm = [[np.exp(rng.normal(0, within, n) + rng.normal(0, tau)) * f for _ in range(k)] for f in (1.30, 1.0)]
        found += compare_latency(Arm("b", arm[0]), Arm("c", arm[1]), threshold=0.0, seed=i, resamples=200,
                                 warmup=0)["verdict"] == "faster"
    assert found / 150 >= 0.70  # the plan aims at 80 % power


def test_plan_groups_per_launch_timeline_csvs_as_compare_does(folders, tmp_path):
    """``plan --from DIR`` of ``<model>_t1_l1…l3`` timeline CSVs: one configuration of three launches (each file
    was its own configuration before, and the plan fell back to a guess)."""
    import shutil

    host, _, env = folders
    csvs = tmp_path / "csvs"
    csvs.mkdir()
    assert _ep(["analyze", host / "a", "--output-dir", csvs, "--no-progress", "--quiet"], env).returncode == 0
    for f in csvs.rglob("*_t2_*"):
        f.unlink()
    only = tmp_path / "only"
    only.mkdir()
    for f in csvs.rglob("*_t1_l*_exec_all_runs_timeline.csv"):
        shutil.copy(f, only / f.name)
    assert len(list(only.iterdir())) == 3
    r = _ep(["plan", "--from", only, "--effect", "30%", "--json", "--no-write"], env)
    assert r.returncode == 0, r.stderr
    p = json.loads(r.stdout)
    assert [(c["launches"], len(c["runs"])) for c in p["configurations"]] == [(3, 3)]
    assert p["launch_noise"]["source"] == "arms" and p["launch_noise"]["launches"] == 3
