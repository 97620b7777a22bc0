"""Memory of a runner on an Android device, through adb (faked at its process boundary: tests/helpers/fake_device.py).

The device's shell samples the timed runner's /proc/PID/status while it runs; the runner here is the fake
executor_runner, a real process whose /proc is this kernel's. Two experiments hold 16 and 80 MiB (every page
touched, 0.6 s: several samples): their recorded peaks differ by the 64 MiB held, within 4 MiB (the interpreter's own
allocations around the buffer); the manifest records the whole process's peak (scope `process`), and compare's
memory gate fails on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from fake_device import calls, install

from edgeprof.examples import example_root

PTE = example_root() / "artifacts" / "toycnn_xnnpack_fp32.pte"
MiB = 2**20


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    d = tmp_path_factory.mktemp("devmem")
    f = install(d)
    env = {**os.environ, **f["env"]}
    cfg = d / "mem.toml"
    cfg.write_text(f'runs = 3\nwarmup = 0\nlaunches = 2\ndevice = "adb:R5CX"\nrunner = "{f["runner"]}"\n'
                   f'[[experiment]]\nname = "small"\nmodel = "{PTE}"\nextra_args = ["--hold-mib", "16"]\n'
                   f'[[experiment]]\nname = "big"\nmodel = "{PTE}"\nextra_args = ["--hold-mib", "80"]\n')
    r = subprocess.run([sys.executable, "-m", "edgeprof", "run", "--config", cfg, "--out", d / "out", "--no-progress"],
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return d, env, f, json.loads((d / "out" / "manifest.json").read_text())


def test_the_device_shell_samples_the_runners_peak(collected):
    _d, _env, f, man = collected
    mem = {(r["experiment"], r["launch"]): r["metrics"]["memory"] for r in man["results"]}
    assert sorted(mem) == [("big", 1), ("big", 2), ("small", 1), ("small", 2)]
    for m in mem.values():
        assert m["peak_scope"] == "process" and "sampled every 0.2 s" in m["source"]
        (p,) = m["phases"]
        assert p["phase"] == "process" and p["pss_bytes"] is None and p["peak_rss_bytes"] >= p["rss_bytes"] > 0
    for k in (1, 2):
        diff = mem[("big", k)]["phases"][0]["peak_rss_bytes"] - mem[("small", k)]["phases"][0]["peak_rss_bytes"]
        assert abs(diff - 64 * MiB) <= 4 * MiB, diff / MiB
    shells = [a[2] for a in (c["adb"] for c in calls(f["log"]) if "adb" in c) if a[1] == "shell" and "--etdump_path" in a[2]]
    assert len(shells) == 4 and all("/proc/$p/status" in s and "edgeprof-memory" in s for s in shells)


def test_compares_memory_gate_reads_the_device_peaks(collected):
    d, env, _, man = collected
    r = subprocess.run([sys.executable, "-m", "edgeprof", "compare", "--run-dir", d / "out", "-b", "small", "-c", "big",
                        "--no-write", "--fail-on", "memory-regression", "--json"], env=env, capture_output=True,
                       text=True)
    assert r.returncode == 1 and "memory regression" in r.stderr.strip().splitlines()[-1]
    (row,) = json.loads(r.stdout)["memory"]["phases"]
    peaks = {e: [x["metrics"]["memory"]["phases"][0]["peak_rss_bytes"] for x in man["results"] if x["experiment"] == e]
             for e in ("small", "big")}
    gm = {e: (v[0] * v[1]) ** 0.5 for e, v in peaks.items()}
    assert row["phase"] == "process" and row["estimate"] == pytest.approx(gm["big"] / gm["small"], rel=1e-12)
    assert "peak memory of phase process: " in r.stderr
