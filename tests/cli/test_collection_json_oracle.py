"""Every key of `run --json` (a collection through an executor_runner faked at its process boundary, and its dry
run) against what is independently observable: the runner invocations the fake logged, the ETDumps on disk read
with the reference FlatBuffers runtime (tests/helpers/etdump_rewrite.py, not edgeprof's reader), the manifest
and metrics files parsed here. A key the document gains without a check here fails the test."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from etdump_rewrite import read
from fake_device import calls, install

from edgeprof.examples import example_root

PTE = example_root() / "artifacts" / "toycnn_xnnpack_fp32.pte"
THREADS, LAUNCHES, RUNS = (1, 2), 2, 12


def execute_ms(path) -> list[float]:
    runs, _ = read(path.read_bytes())
    return [(e.end - e.start) / 1e6 for r in runs for e in r.events if getattr(e, "name", None) == "Method::execute"]


def collect(tmp_path, *extra):
    f = install(tmp_path)
    env = {**os.environ, **f["env"]}
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "edgeprof", "run", str(PTE), "--runner", f["runner"], "--runs", str(RUNS),
                        "--warmup", "3", "--launches", str(LAUNCHES), "--threads", ",".join(map(str, THREADS)),
                        "--out", str(out), "--json", *extra], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), out, f


def _metrics(d, out, f):
    m = json.loads((out / "metrics.json").read_text())
    assert d["metrics"] == str(out / "metrics.json")
    for res in m["results"]:
        assert res["metrics"]["latency_ms"] == pytest.approx(execute_ms(out / res["metrics"]["etdump_rel"]), abs=1e-6)


def _launches_ok(d, out, f):
    timed = [c for c in calls(f["log"]) if "argv" in c and "--etdump_path" in c["argv"]]
    files = sorted(out.rglob("*.etdump"))
    assert d["launches_ok"] == len(timed) == len(files) == len(THREADS) * LAUNCHES
    assert all(len(execute_ms(p)) == RUNS for p in files)


def _manifest(d, out, f):
    m = json.loads((out / "manifest.json").read_text())
    assert d["manifest"] == str(out / "manifest.json") and m["status"] == d["status"] == "complete"
    assert m["failed_launches"] == len(d["failed"]) == 0


KEYS = {
    "commands": "only in a dry run: test_a_dry_run_lists_every_command_and_nothing_else",
    "failed": lambda d, out, f: d["failed"] == [],
    "kind": lambda d, out, f: d["kind"] == "collection",
    "launches_ok": _launches_ok,
    "launches_planned": lambda d, out, f: d["launches_planned"] == len(THREADS) * LAUNCHES,
    "manifest": _manifest,
    "metrics": _metrics,
    "noise_profile": lambda d, out, f: d["noise_profile"] == str(out / "noise.json")
    and json.loads((out / "noise.json").read_text())["kind"] == "noise_profile",
    "overhead": lambda d, out, f: d["overhead"] is None,  # no --overhead-check
    "report": lambda d, out, f: d["report"] is None,  # no --report
    "run_dir": lambda d, out, f: d["run_dir"] == str(out),
    "schema_version": lambda d, out, f: d["schema_version"] == 1,
    "status": _manifest,
    "warnings": lambda d, out, f: d["warnings"] == [],
}


def test_every_key_of_a_collection_has_a_check(tmp_path):
    d, out, f = collect(tmp_path)
    assert set(d) | {"commands"} == set(KEYS), "a key of the collection needs its check here"
    for key, check in KEYS.items():
        if callable(check):
            assert check(d, out, f) is not False, key


def test_a_dry_run_lists_every_command_and_nothing_else(tmp_path):
    d, out, f = collect(tmp_path, "--dry-run")
    assert not out.exists() and [c for c in calls(f["log"]) if "argv" in c] == []
    timed = [c for c in d["commands"] if "--etdump_path" in c]
    assert len(timed) == len(THREADS) * LAUNCHES  # one timed process per thread count and launch
    assert sorted(c.split("--cpu_threads ")[1].split()[0] for c in timed) == sorted(
        str(t) for t in THREADS for _ in range(LAUNCHES))
