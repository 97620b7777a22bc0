"""Every key of `plan --json` on three real ONNX Runtime launches of one configuration against an independent
computation from the runtime's own `model_run` durations (read with the standard library): the pooled SD of the
log run times within launches (warm-up run left out), the median lag-1 autocorrelation, the SD of the launch
medians pooled with the 25 % default allowance counted as 2 df and taken at its upper 80 % χ² bound, each
design's t interval half-width and power (scipy's t distribution; with 2 launches per arm, compare's interval
widened by that allowance), the cheapest design that resolves the effect. A key the plan gains without a check here
fails the test."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats
from testdata import DATA

FILES = ["cnn_cpu_t1_l1.ort.json", "cnn_cpu_t1_l2.ort.json.gz", "cnn_cpu_t1_l3.ort.json.gz"]
EFFECT, POWER, LEVEL, EXTRA = 0.30, 0.80, 0.95, 200  # the run cost of one more launch
DEFAULT_SD, PRIOR_DF = 0.25, 2  # the allowance a single launch would use, counted as 2 df


def log_runs(path) -> np.ndarray:
    raw = path.read_bytes()
    ev = json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)
    return np.log([e["dur"] for e in sorted(ev, key=lambda e: e["ts"]) if e["name"] == "model_run"])[1:]


def lag1(x: np.ndarray) -> float:
    d = x - x.mean()
    return float((d[1:] * d[:-1]).sum() / (d * d).sum())


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    d = tmp_path_factory.mktemp("plan")
    for f in FILES:
        shutil.copy(DATA / "ort" / f, d / f)
    r = subprocess.run([sys.executable, "-m", "edgeprof", "plan", *(str(d / f) for f in FILES), "--effect", "30%",
                        "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert not (d / "noise.json").exists()  # --json: the plan on stdout, no file nobody asked for
    human = subprocess.run([sys.executable, "-m", "edgeprof", "plan", *(str(d / f) for f in FILES), "--effect", "30%"],
                           capture_output=True, text=True)  # the documented default: noise.json beside the run
    assert human.returncode == 0, human.stderr
    runs = [log_runs(d / f) for f in FILES]
    within = np.sqrt(sum(((x - x.mean()) ** 2).sum() for x in runs) / sum(x.size - 1 for x in runs))
    rho = min(max(float(np.median([lag1(x) for x in runs])), 0.0), 0.95)
    est = float(np.std([np.median(x) for x in runs], ddof=1))
    df = len(runs) - 1
    pooled = np.sqrt((df * est ** 2 + PRIOR_DF * DEFAULT_SD ** 2) / (df + PRIOR_DF))
    truth = {"runs": runs, "within": within, "rho": rho, "within_eff": within * np.sqrt((1 + rho) / (1 - rho)),
             "estimate": est, "df": df, "pooled": pooled,
             "launch_sd": pooled * np.sqrt((df + PRIOR_DF) / stats.chi2.ppf(0.20, df + PRIOR_DF)), "dir": d}
    return json.loads(r.stdout), truth


def _design(k: int, n: int, t: dict) -> tuple[float, float]:
    """Half-width (%) of the expected t interval of the log ratio, and the t test's power, for k launches × n runs."""
    var = t["launch_sd"] ** 2 + np.pi / 2 * t["within_eff"] ** 2 / n
    se = np.sqrt(2 * var / k)
    df = 2 * k - 2
    crit = stats.t.ppf(1 - (1 - LEVEL) / 2, df)
    if df <= 2:  # compare widens a 2 vs 2 interval to the default allowance counted as 2 df, when that is wider
        se_f = np.sqrt((df * var + 2 * DEFAULT_SD ** 2) / (df + 2) * 2 / k)
        crit_f = stats.t.ppf(1 - (1 - LEVEL) / 2, df + 2)
        if crit_f * se_f > crit * se:
            se, crit, df = se_f, crit_f, df + 2
    # beyond compare's default verdict threshold (δ = 2 %): the power plan promises is that of compare's verdict
    return 100 * (np.exp(crit * se) - 1), float(stats.t.cdf((np.log1p(EFFECT) - np.log1p(0.02)) / se - crit, df))


def _options(d, t):
    for o in d["options"]:
        hw, pw = _design(o["launches_per_arm"], o["runs_per_launch"], t)
        assert o["half_width_percent"] == pytest.approx(hw, rel=1e-5) and o["power"] == pytest.approx(pw, abs=1e-5)
        assert o["resolves"] == (pw >= POWER) and o["total_runs"] == 2 * o["launches_per_arm"] * o["runs_per_launch"]


def _cheapest(t_doc):
    ok = [o for o in t_doc["options"] if o["resolves"]]
    return min(ok, key=lambda o: o["launches_per_arm"] * (o["runs_per_launch"] + EXTRA))


def _configurations(d, t):
    (c,) = d["configurations"]
    assert c["name"] == "cnn_cpu" and c["launches"] == 3 and c["runs"] == [x.size for x in t["runs"]]
    assert c["launch_sd_measured"] == pytest.approx(t["estimate"], abs=1e-6)
    assert c["launch_sd"] == pytest.approx(t["launch_sd"], abs=1e-6)
    assert c["within_sd"] == pytest.approx(t["within"], abs=1e-6) and c["recommended"] == d["recommended"]
    assert c["launch_sd_source"] == d["launch_sd_source"] and "launch-to-launch variation dominates" in c["note"]


def _noise(d, t):
    n = d["launch_noise"]
    assert (n["source"], n["df"], n["launches"], n["by_metric"]) == ("arms", t["df"], 3, None)
    assert n["estimate"] == pytest.approx(t["estimate"], abs=1e-6) and n["sd"] == pytest.approx(t["launch_sd"], abs=1e-6)
    assert f"{100 * t['estimate']:.1f} % measured on these 3 launches of 1 configuration ({t['df']} df), pooled " \
           f"with 25 % (default) counted as 2 df: {100 * t['pooled']:.1f} %" in n["detail"]


def _written(d, t):
    f = t["dir"] / "noise.json"
    assert d["written"] is None  # (written by the run without --json)
    saved = json.loads(f.read_text())
    assert saved["within_sd"] == pytest.approx(t["within"], abs=1e-6)
    assert saved["lag1_autocorrelation"] == pytest.approx(t["rho"], abs=1e-6)
    assert saved["launch_sd"]["median"]["estimate"] == pytest.approx(t["estimate"], abs=1e-6)


KEYS = {
    "configurations": _configurations,
    "effect": lambda d, t: d["effect"] == EFFECT,
    "inputs": lambda d, t: d["inputs"] == [str(t["dir"] / f) for f in FILES],
    "kind": lambda d, t: d["kind"] == "plan",
    "lag1_autocorrelation": lambda d, t: d["lag1_autocorrelation"] == pytest.approx(t["rho"], abs=1e-6),
    "launch_noise": _noise,
    "launch_sd": lambda d, t: d["launch_sd"] == pytest.approx(t["launch_sd"], abs=1e-6),
    "launch_sd_source": lambda d, t: d["launch_sd_source"] == d["launch_noise"]["detail"],
    "level": lambda d, t: d["level"] == LEVEL,
    "method": lambda d, t: "(π/2)" in d["method"] and f"runs + {EXTRA} per launch" in d["method"],
    "options": _options,
    "power": lambda d, t: d["power"] == POWER,
    # 30 × 10: the pilot's 12.6 % pooled with the default allowance (20 × 20 from the pilot's spread alone)
    "recommended": lambda d, t: d["recommended"] == _cheapest(d) and (d["recommended"]["launches_per_arm"],
                                                                      d["recommended"]["runs_per_launch"]) == (30, 10)
    and _design(30, 10, t)[1] >= POWER > _design(20, 1000, t)[1],
    "schema_version": lambda d, t: d["schema_version"] == 1,
    "statement": lambda d, t: d["statement"].startswith("to resolve a 30 % change (power 80 %, 95 % interval, "
                                                        "beyond a 2 % threshold): 30 launches × 10 runs per arm")
    and f"at most {100 * t['launch_sd']:.1f} %" in d["statement"],
    "threshold": lambda d, t: d["threshold"] == 0.02,
    "within_sd": lambda d, t: d["within_sd"] == pytest.approx(t["within"], abs=1e-6),
    "within_sd_effective": lambda d, t: d["within_sd_effective"] == pytest.approx(t["within_eff"], abs=1e-6),
    "written": _written,
}


def test_every_key_of_the_plan_has_a_check(case):
    d, t = case
    assert sorted(d) == sorted(KEYS), "a key of the plan needs its check here"
    for key, check in KEYS.items():
        assert check(d, t) is not False, key


def test_every_design_of_the_grid_up_to_the_cheapest_is_listed(case):
    d, t = case
    listed = {(o["launches_per_arm"], o["runs_per_launch"]) for o in d["options"]}
    cheaper = [(k, n) for (k, n) in listed if k * (n + EXTRA) < 20 * (10 + EXTRA)]
    assert all(_design(k, n, t)[1] < POWER for k, n in cheaper)  # nothing cheaper resolves the 30 % change
