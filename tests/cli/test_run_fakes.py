"""`edgeprof run` against an executor_runner and an Android device faked at their process boundary (fake
``executor_runner`` and ``adb`` on PATH, see tests/helpers/fake_device.py): the commands, the interleaving, the
files, the manifest, and every fault — a crash, a hang, a corrupt ETDump, a missing device, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_device import calls, install

from edgeprof.examples import example_root

PTE = example_root() / "artifacts" / "toycnn_xnnpack_fp32.pte"
PTE_PORTABLE = example_root() / "artifacts" / "toycnn_portable.pte"


@pytest.fixture()
def fakes(tmp_path):
    f = install(tmp_path)
    f["run_env"] = {**os.environ, **f["env"]}
    return f


def _ep(args, env, cwd=None, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edgeprof", *map(str, args)], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


def _processes_with(text: str) -> list[int]:
    """PIDs whose command line contains ``text`` (read from /proc, no pgrep needed)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if text.encode() in (d / "cmdline").read_bytes():
                    out.append(int(d.name))
            except OSError:
                pass
    return out


def _manifest(run_dir: Path) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())


def test_an_external_runner_is_run_as_the_kit_runs_it(fakes, tmp_path):
    out = tmp_path / "out_toy" / "runs" / "linux"
    r = _ep(["run", PTE, "--runner", fakes["runner"], "--runs", 12, "--warmup", 3, "--launches", 2, "--threads", "1,2",
             "--out", out], fakes["run_env"])
    assert r.returncode == 0, r.stderr
    runner_calls = [c for c in calls(fakes["log"]) if "argv" in c]
    warm = [c for c in runner_calls if "--etdump_path" not in c["argv"]]
    timed = [c for c in runner_calls if "--etdump_path" in c["argv"]]
    assert len(warm) == len(timed) == 4  # a warm-up process before every timed one
    assert all(c["XNN_LOG_LEVEL"] == "0" for c in runner_calls)
    a = timed[0]["argv"]
    assert a[1:7] == ["--model_path", str(PTE), "--num_executions", "12", "--cpu_threads", a[6]]
    assert a[a.index("--etdump_path") + 1].endswith(f"_l{1}.etdump") and warm[0]["argv"][4] == "3"
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.etdump"))
    assert names == [f"toycnn_xnnpack_fp32/toycnn_xnnpack_fp32_t{t}_l{k}.etdump" for t in (1, 2) for k in (1, 2)]
    m = _manifest(out)
    assert m["tool"] == "edgeprof" and m["status"] == "complete" and m["failed_launches"] == 0
    # the manifest's order is the order the processes ran in
    order = [f"t{c['argv'][c['argv'].index('--cpu_threads') + 1]} l{c['argv'][-1][-8]}" for c in timed]
    assert order == [f"t{r['threads']} l{r['launch']}" for r in sorted(m["results"], key=lambda r: r["position"])]
    res = m["results"][0]["metrics"]
    assert res["runs_recorded"] == 12 and len(res["latency_ms"]) == 12 and res["runner_executions"] == 12
    assert m["config"]["experiments"][0]["runner"]["sha256"] and m["machines"]["host"]["cores"] == os.cpu_count()
    assert all("loadavg" in r["fingerprint"]["before"] for r in m["results"])
    v = _ep(["validate", out, "--require", "manifest", "--require", "metrics"], fakes["run_env"])
    assert "manifest.json present and valid" in v.stdout and "metrics.json present and valid" in v.stdout


def test_crash_hang_and_corrupt_launches_are_recorded_and_the_collection_goes_on(fakes, tmp_path):
    cfg = tmp_path / "faulty.toml"
    cfg.write_text(f'runs = 10\nwarmup = 0\nlaunches = 4\ntimeout = 3\nrunner = "{fakes["runner"]}"\n'
                   f'[[experiment]]\nname = "good"\nmodel = "{PTE}"\n'
                   f'[[experiment]]\nname = "faulty"\nmodel = "{PTE}"\n'
                   f'extra_args = ["--fake", "crash:l1,hang:l2,corrupt:l3,none:l4"]\n')
    out = tmp_path / "run"
    r = _ep(["run", "--config", cfg, "--out", out], fakes["run_env"])
    assert r.returncode == 1, r.stderr  # a gate: some launches failed
    assert r.stderr.count("\n") == 1 and "4 launch(es) failed" in r.stderr
    m = _manifest(out)
    by = {(x["experiment"], x["launch"]): x for x in m["results"]}
    assert [by[("good", k)]["status"] for k in (1, 2, 3, 4)] == ["ok"] * 4
    f = [by[("faulty", k)] for k in (1, 2, 3, 4)]
    assert [x["status"] for x in f] == ["crashed", "timeout", "corrupt ETDump", "no ETDump"]
    assert f[0]["error"] == "exit code 139" and "Segmentation fault" in f[0]["output_tail"]
    assert f[1]["error"].startswith("timed out after 3 s")
    assert "not an ETDump" in f[2]["error"] and f[2]["set_aside"] == ["toycnn_xnnpack_fp32_faulty_t1_l3.etdump.failed"]
    # only good measurements remain under .etdump names; the analysis of the folder works
    etdumps = sorted(p.name for p in out.rglob("*.etdump"))
    assert etdumps == [f"toycnn_xnnpack_fp32_good_t1_l{k}.etdump" for k in (1, 2, 3, 4)]
    assert (out / "faulty" / "toycnn_xnnpack_fp32_faulty_t1_l3.etdump.failed").exists()
    a = _ep(["analyze", out, "--json", "--no-progress"], fakes["run_env"])
    assert a.returncode == 0 and json.loads(a.stdout)["analysed_count"] == 4
    # no runner process left behind by the timeout
    assert _processes_with("hang:l2") == []


def test_xnntrace_mode_captures_the_log_the_kernel_commands_read(fakes, tmp_path):
    out = tmp_path / "trace_run"
    r = _ep(["run", PTE, "--runner", fakes["runner"], "--mode", "xnntrace", "--launches", 1, "--warmup", 0,
             "--out", out], fakes["run_env"])
    assert r.returncode == 0, r.stderr
    log = out / "toycnn_xnnpack_fp32" / "toycnn_xnnpack_fp32_t1_l1_xnntrace.log"
    (c,) = [c for c in calls(fakes["log"]) if "argv" in c]
    assert c["XNN_LOG_LEVEL"] == "5" and c["argv"][4] == "1" and "--etdump_path" not in c["argv"]
    k = _ep(["kernels", out, "--json", "--no-write"], fakes["run_env"])
    assert k.returncode == 0, k.stderr
    table = json.loads(k.stdout)["logs"][0]
    assert table["summary"]["sme2_gemm_kernels"] and log.exists()


def test_an_android_device_through_adb(fakes, tmp_path):
    out = tmp_path / "out_toy" / "runs" / "android"
    r = _ep(["run", PTE, PTE_PORTABLE, "--runner", fakes["runner"], "--device", "adb:R5CX", "--cpu-affinity", "0x80",
             "--runs", 8, "--warmup", 2, "--launches", 2, "--out", out], fakes["run_env"])
    assert r.returncode == 0, r.stderr
    adb = [c["adb"] for c in calls(fakes["log"]) if "adb" in c]
    assert all(a[0] == "R5CX" for a in adb)  # always the explicit serial
    pushes = [a for a in adb if a[1] == "push"]
    assert len(pushes) == 4  # model and runner once per experiment, not per launch
    runs = [a[2] for a in adb if a[1] == "shell" and "--etdump_path" in a[2]]
    assert len(runs) == 4 and all(s.startswith("cd /data/local/tmp/edgeprof && export LD_LIBRARY_PATH=/data/local/tmp/"
                                              "edgeprof && export XNN_LOG_LEVEL=0 && { taskset 0x80 ./executor_runner_")
                                 for s in runs)
    assert (fakes["device"] / "taskset.log").read_text().split() == ["0x80"] * 8  # warm-up and timed processes
    pulls = [a for a in adb if a[1] == "pull"]
    assert len(pulls) == 4 and not list((fakes["device"] / "data/local/tmp/edgeprof").glob("*.etdump"))
    m = _manifest(out)
    dev = m["machines"]["adb:R5CX"]
    assert dev["model"] == "Pixel 9 Pro" and "sme2" in dev["cpu_flags"] and dev["cores"] == 8
    assert m["device"] == "Pixel 9 Pro — 0xd87 (bf16, i8mm, sme, sme2)"
    fp = m["results"][0]["fingerprint"]["before"]
    assert fp == {"loadavg": [1.5, 1.2, 0.9], "governor": "schedutil", "temperatures_c": {"cpu-big": 41.5}}
    assert sorted(p.name for p in out.rglob("*.etdump")) == sorted(
        f"{e}_t1_l{k}.etdump" for e in ("toycnn_xnnpack_fp32", "toycnn_portable") for k in (1, 2))
    rep = _ep(["report", out, "--out", tmp_path / "r.md"], fakes["run_env"])
    assert rep.returncode == 0 and "Pixel 9 Pro" in (tmp_path / "r.md").read_text()


def test_names_from_files_never_run_on_the_device(fakes, tmp_path):
    """Every word of every device command line is quoted: models named to inject commands run nothing."""
    import shutil

    models = tmp_path / "models"
    models.mkdir()
    names = ["m$(touch PWNED1).pte", "m`touch PWNED2`.pte", "m;touch PWNED3;.pte", "m' && touch PWNED4 '.pte"]
    for n in names:
        shutil.copy(PTE, models / n)
    out = tmp_path / "inj"
    r = _ep(["run", *[models / n for n in names], "--runner", fakes["runner"], "--device", "adb:R5CX", "--runs", 3,
             "--warmup", 1, "--launches", 1, "--out", out], fakes["run_env"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert not list(tmp_path.rglob("PWNED*"))  # the device's shell runs in the fake device's folder or here
    shells = [a[2] for a in (c["adb"] for c in calls(fakes["log"]) if "adb" in c) if a[1] == "shell"]
    assert any("--model_path" in s and "'m$(touch PWNED1).pte'" in s for s in shells)
    assert len(list(out.rglob("*.etdump"))) == len(names)  # each model really ran, under its own name


def test_adb_xnntrace_writes_logcat_and_runner_output_as_the_kit_did(fakes, tmp_path):
    out = tmp_path / "adb_trace"
    r = _ep(["run", PTE, "--runner", fakes["runner"], "--device", "adb:R5CX", "--mode", "xnntrace", "--launches", 1,
             "--warmup", 0, "--out", out], fakes["run_env"])
    assert r.returncode == 0, r.stderr
    text = (out / "toycnn_xnnpack_fp32" / "toycnn_xnnpack_fp32_t1_l1_xnntrace.log").read_text()
    assert text.startswith("=== XNNPACK Logcat Output ===\n") and "\n=== Runner stdout ===\n" in text
    assert "microkernel" in text.split("=== Runner stdout ===")[0]
    adb = [c["adb"][1:] for c in calls(fakes["log"]) if "adb" in c]
    assert ["logcat", "-c"] in adb and ["logcat", "-d", "-s", "XNNPACK"] in adb


def test_a_missing_device_fails_its_launches_with_adbs_message(fakes, tmp_path):
    out = tmp_path / "nodev"
    r = _ep(["run", PTE, "--runner", fakes["runner"], "--device", "adb:NOPE", "--launches", 1, "--out", out],
            fakes["run_env"])
    assert r.returncode == 1 and "launch(es) failed" in r.stderr
    res = _manifest(out)["results"][0]
    assert res["status"] == "crashed" and "device 'NOPE' not found" in res["output_tail"]


def test_dry_run_prints_every_command_and_writes_nothing(fakes, tmp_path):
    out = tmp_path / "dry"
    r = _ep(["run", PTE, PTE_PORTABLE, "--runner", fakes["runner"], "--device", "adb:R5CX", "--launches", 2,
             "--runs", 5, "--dry-run", "--out", out], fakes["run_env"])
    assert r.returncode == 0 and not out.exists() and not calls(fakes["log"])
    lines = r.stdout.splitlines()
    assert sum(line.startswith("# ") for line in lines) == 4
    assert sum(" push " in line for line in lines) == 4 and sum(" pull " in line for line in lines) == 4
    assert any("--num_executions 5" in line and "--etdump_path" in line for line in lines)


@pytest.mark.missing_extra_expected
def test_python_runtime_dry_run_and_a_missing_extra(tmp_path):
    r = _ep(["run", PTE, "--launches", 2, "--dry-run", "--out", tmp_path / "x"], os.environ)
    assert r.returncode == 0 and r.stdout.count("-m edgeprof.collect.worker") == 2
    blocked = ("import sys; sys.modules['executorch'] = None; from edgeprof.cli import main; "
               "main(sys.argv[1:])")
    r = subprocess.run([sys.executable, "-c", blocked, "run", str(PTE), "--out", str(tmp_path / "y")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "pip install 'edgeprof[run]'" in r.stderr and not (tmp_path / "y").exists()


def test_an_existing_folder_is_never_overwritten_without_force(fakes, tmp_path):
    out = tmp_path / "runs"
    base = ["run", PTE, "--runner", fakes["runner"], "--launches", 1, "--runs", 3, "--warmup", 0, "--out", out]
    assert _ep(base, fakes["run_env"]).returncode == 0
    first = _manifest(out)["generated_at"]
    again = _ep(base, fakes["run_env"])
    assert again.returncode == 2 and "give --force" in again.stderr
    time.sleep(1.1)
    assert _ep([*base, "--force"], fakes["run_env"]).returncode == 0
    assert _manifest(out)["generated_at"] != first
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("precious")
    r = _ep([*base[:-1], other, "--force"], fakes["run_env"])
    assert r.returncode == 2 and "not replaced, even with --force" in r.stderr
    assert (other / "notes.txt").read_text() == "precious"


def test_force_replaces_only_what_edgeprof_wrote_and_never_an_input(fakes, tmp_path):
    """``--force`` removes the files the folder's manifest lists (and their analysis outputs), nothing else; an
    output folder holding an input is refused outright."""
    import shutil

    d1 = tmp_path / "d1"
    base = ["run", PTE, "--runner", fakes["runner"], "--launches", 2, "--runs", 3, "--warmup", 0, "--out", d1]
    assert _ep([*base, "--report"], fakes["run_env"]).returncode == 0
    (d1 / "notes.txt").write_text("precious")
    (d1 / "toycnn_xnnpack_fp32" / "my_plot.png").write_bytes(b"png")
    first = sorted(p.relative_to(d1) for p in d1.rglob("*") if p.is_file())
    assert len(first) > 10  # ETDumps, logs, CSVs, manifest, metrics, report
    r = _ep([*base[:-1], d1, "--force", "--launches", 1], fakes["run_env"])
    assert r.returncode == 0, r.stderr
    assert (d1 / "notes.txt").read_text() == "precious" and (d1 / "toycnn_xnnpack_fp32" / "my_plot.png").exists()
    assert not list(d1.rglob("*_l2.etdump")) and not list(d1.rglob("*_l2*_timeline.csv"))  # the old launch 2: gone
    assert not (d1 / "report.md").exists() and len(list(d1.rglob("*.etdump"))) == 1
    shutil.copy(PTE, d1 / "model.pte")
    r = _ep(["run", d1 / "model.pte", "--runner", fakes["runner"], "--launches", 1, "--runs", 3, "--out", d1, "--force"],
            fakes["run_env"])
    assert r.returncode == 2 and "holds an input" in r.stderr and r.stderr.count("\n") == 1
    assert (d1 / "model.pte").read_bytes() == PTE.read_bytes() and (d1 / "notes.txt").read_text() == "precious"


def test_ctrl_c_leaves_a_consistent_folder_whose_manifest_says_partial(fakes, tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'runs = 5\nwarmup = 0\nlaunches = 3\nseed = 1\nrunner = "{fakes["runner"]}"\n'
                   f'[[experiment]]\nname = "a"\nmodel = "{PTE}"\nextra_args = ["--fake", "hang:l2"]\n')
    out = tmp_path / "interrupted"
    p = subprocess.Popen([sys.executable, "-m", "edgeprof", "run", "--config", str(cfg), "--out", str(out)],
                         env=fakes["run_env"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:  # wait until launch 2 hangs
        if any("_l2.etdump" in " ".join(c.get("argv", [])) for c in calls(fakes["log"])):
            break
        time.sleep(0.1)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    assert err.strip().startswith("edgeprof: error: interrupted:") and err.count("\n") == 1
    assert "partial (1 of 3 launches recorded)" in err
    m = _manifest(out)
    assert m["status"] == "partial" and [r["launch"] for r in m["results"]] == [1]
    assert m["interrupted"]["launch"] == "a t1 launch 2"
    assert sorted(p.name for p in out.rglob("*.etdump")) == ["toycnn_xnnpack_fp32_a_t1_l1.etdump"]
    assert not [p for p in out.rglob("*") if p.name.endswith((".tmp", ".worker.json"))]
    assert _processes_with("hang:l2") == []
    assert json.loads((out / "metrics.json").read_text())["results"] == m["results"]


def test_a_relative_out_folder_reaches_the_runner_as_a_path_it_can_write(fakes, tmp_path):
    """The runner runs in the launch's folder: the ETDump path it is given must not be relative to ours."""
    r = _ep(["run", PTE, "--runner", fakes["runner"], "--runs", 4, "--launches", 1, "--out", "rel/runs/linux"],
            fakes["run_env"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    timed = [c for c in calls(fakes["log"]) if "--etdump_path" in c.get("argv", [])]
    given = timed[0]["argv"][timed[0]["argv"].index("--etdump_path") + 1]
    assert Path(given).is_absolute() and not Path(given).exists()  # its private staging folder, removed after
    assert (tmp_path / "rel/runs/linux/toycnn_xnnpack_fp32" / Path(given).name).is_file()  # put in place
