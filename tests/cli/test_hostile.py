"""Hostile input and a hostile environment, command by command.

Every command meets every class of bad input it can be given, and must: exit 0 or 2 (1 only for a failed
check or gate), print no traceback and no internal error, leave no file under a temporary name, and leave
its inputs unchanged. The inputs are real fixtures bent out of shape (see :mod:`hostile`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from testdata import DATA
from hostile import (
    ALL_INVALID,
    ane_variants,
    csv_variants,
    etdump_variants,
    etrecord_variants,
    fixture_etdump,
    log_variants,
)

from edgeprof.cli import main

BIN = Path(sys.executable).parent
PROFILE_JSON = DATA / "anemll" / "anemll_profile_0.4.1.illustrative.json"
PLAN_JSON = DATA / "anemll" / "ane_costplan.illustrative.json"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def clean(res, codes=(0, 2)):
    """The result of one hostile invocation is a clean one."""
    out = res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code in codes, (res.exit_code, out[-600:])
    assert "Traceback" not in out and "internal error" not in out, out[-600:]
    if res.exit_code == 2:
        errors = [line for line in out.splitlines() if line.startswith("edgeprof: error:")]
        assert errors, out[-600:]
    return res


def temps(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if ".edgeprof-" in p.name and p.name.endswith(".tmp")]


def digest(paths) -> dict:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths if p.is_file()}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    (root / "in").mkdir()
    good = root / "in" / "good.etdp"
    good.write_bytes(fixture_etdump("toycnn_xnn.N20"))
    variants = {}
    for name, data in etdump_variants(good.read_bytes()).items():
        p = root / "in" / f"{name}.etdp"
        p.write_bytes(data)
        variants[name] = p
    # a good timeline CSV of the same profile, then bent ones
    res = run("analyze", good, "--output-dir", root / "csv", "--no-progress", "--op-types", "inline")
    assert res.exit_code == 0, res.output
    good_csv = root / "csv" / "good_exec_all_runs_timeline.csv"
    csvs = {}
    for name, text in csv_variants(good_csv.read_text()).items():
        p = root / "in" / f"{name}_exec_all_runs_timeline.csv"
        p.write_text(text)
        csvs[name] = p
    recs = {}
    for name, data in etrecord_variants(DATA / "etrecord" / "toycnn_xnn.etrecord").items():
        p = root / "in" / f"{name}.etrecord"
        p.write_bytes(data)
        recs[name] = p
    anes = {}
    doc = json.loads(PROFILE_JSON.read_text())
    for i, (name, d) in enumerate(ane_variants(doc).items()):
        p = root / "in" / f"ane_{i}.json"
        p.write_text(json.dumps(d))
        anes[name] = p
    logs = log_variants(root / "in", (DATA / "xnnpack" / "mac_sme2_on_xnntrace.log").read_bytes())
    inputs = list((root / "in").iterdir())
    before = digest(inputs)
    yield {"root": root, "good": good, "etdumps": variants, "good_csv": good_csv, "csvs": csvs, "etrecords": recs,
           "anes": anes, "logs": logs}
    assert digest(inputs) == before, "an input was modified"
    assert not temps(root), temps(root)


# --------------------------------------------------------------------------------------------------
# 1–2: semantic ETDump oddities and runs without profiling events
# --------------------------------------------------------------------------------------------------

def test_semantic_etdumps_in_every_command(world, tmp_path):
    good = world["good"]
    for name, p in world["etdumps"].items():
        out = tmp_path / name
        expect = 2 if name in ALL_INVALID else 0
        cmds = [("analyze", p, "--output-dir", out, "--no-progress"), ("latency", p, "--no-write", "--json"),
                ("compare", good, p, "--no-write", "--json"), ("breakdown", p, "--no-write", "--json"),
                ("kernels", p, "--json"), ("report", p, "--out", out / "r.md", "--html", out / "r.html"),
                ("trace", p, "--out", out / "t.json", "--json")]
        for cmd in cmds:
            res = clean(run(*cmd))
            assert res.exit_code == expect, (name, cmd[0], res.output[-400:])
            if expect == 2:
                assert ("valid end-to-end time" in res.output or "nothing to analyse" in res.output), res.output
            elif cmd[0] == "latency":
                rep = json.loads(res.stdout)["reports"][0]
                assert rep["median_ms"] > 0 and rep["count"] >= 1
        if expect == 0 and name != "one_run":
            assert (out / "r.md").is_file() and (out / "t.json").is_file()
        assert not temps(out)


def test_some_invalid_runs_are_left_out_and_counted(world):
    res = clean(run("latency", world["etdumps"]["exec_zero_some"], "--no-write", "--json"), codes=(0,))
    rep = json.loads(res.stdout)["reports"][0]
    assert rep["count"] == 10 and rep["run_indices"] == list(range(1, 20, 2))
    assert any("10 of 20 run(s) have no valid end-to-end time (10: zero duration)" in w for w in rep["warnings"])
    res = clean(run("latency", world["etdumps"]["exec_zero_all"], "--no-write"), codes=(2,))
    assert "none of its 20 execute run(s) has a valid end-to-end time (20 zero duration)" in res.output
    res = clean(run("latency", world["etdumps"]["alloc_only_runs"], "--no-write"), codes=(2,))
    assert "20 no profiling events" in res.output
    res = clean(run("latency", world["etdumps"]["default_only"], "--no-write"), codes=(2,))
    assert "holds only a load/init block" in res.output
    res = clean(run("latency", world["etdumps"]["no_blocks"], "--no-write"), codes=(2,))
    assert "holds no RunData block" in res.output


# --------------------------------------------------------------------------------------------------
# 3: ETRecords with out-of-range values — a warning when optional, an input error when strict
# --------------------------------------------------------------------------------------------------

def test_etrecord_values_out_of_range(world, tmp_path):
    good = world["good"]
    for name, rec in world["etrecords"].items():
        res = clean(run("breakdown", good, "--etrecord", rec, "--no-write", "--json"), codes=(0,))
        assert json.loads(res.stdout)["breakdowns"][0]["etrecord_status"] in ("unreadable", "mismatch", "attached")
        res = clean(run("breakdown", good, "--etrecord", rec, "--strict-etrecord", "--no-write"), codes=(0, 2))
        clean(run("analyze", good, "--etrecord", rec, "--output-dir", tmp_path / name, "--no-progress"), codes=(0,))
        clean(run("trace", good, "--etrecord", rec, "--out", tmp_path / f"{name}.json"), codes=(0,))
    # the ones that cannot be used at all are errors with --strict-etrecord
    for name in ("map_key_huge", "map_deep", "graph_nodes_not_list", "nan_everywhere"):
        res = clean(run("analyze", good, "--etrecord", world["etrecords"][name], "--strict-etrecord",
                        "--output-dir", tmp_path / "strict", "--no-progress"), codes=(2,))
        assert str(world["etrecords"][name]) in res.output


# --------------------------------------------------------------------------------------------------
# 4: XNNPACK logs — huge numbers, a gzip bomb, a giant line, UTF-16, binary
# --------------------------------------------------------------------------------------------------

def test_logs(world, tmp_path):
    good_log = DATA / "xnnpack" / "mac_sme2_on_xnntrace.log"
    for name, p in world["logs"].items():
        expect = {"huge_integers": 0, "utf16": 0, "gzip_bomb": 2, "long_line": 2, "binary": 2}[name]
        res = clean(run("kernels", p, "--json", "--output-dir", tmp_path), codes=(expect,))
        clean(run("kernel-view", "-b", good_log, "-c", p), codes=(expect,))
        if name == "gzip_bomb":
            assert "refused as a possible gzip bomb" in res.output
        if name == "long_line":
            assert "line 1 is longer than 1 MiB" in res.output
        if name == "binary":
            assert "binary data" in res.output
        if name == "utf16":  # decoded: the same kernels as the UTF-8 log
            got = {k["kernel_name"] for k in json.loads(res.stdout)["logs"][0]["kernels"]}
            want = {line.split("'")[1] for line in good_log.read_text().splitlines() if "microkernel '" in line}
            assert got == want
        if name == "huge_integers":
            facts = json.loads(res.stdout)["logs"][0]["log"]
            # the 5,000-digit values are not numbers XNNPACK prints: ignored, the log's real value kept
            assert facts["hardware"]["l1_data_cache_bytes"] == 131072 and "qdint8" not in facts["assumed_datatypes"]
    folder = tmp_path / "runs" / "mac_trace"
    folder.mkdir(parents=True)
    for p in world["logs"].values():
        shutil.copy(p, folder / (p.name.split(".")[0] + "_sme2_on_xnntrace" + "".join(p.suffixes)))
    clean(run("validate", folder, "--require-sme2-kernels"), codes=(0, 1, 2))


# --------------------------------------------------------------------------------------------------
# 5: ANE reports with wrong types where the renderers display them
# --------------------------------------------------------------------------------------------------

def test_ane_field_types(world, tmp_path):
    # a number where a string belongs reads as its text, a null as absent; any other kind is an error naming the
    # JSON path — decided where the document is read, never in a renderer
    coerced = {"compute.mode=float", "measured_prediction.status=NoneType", "op_type_breakdown.short_type=int"}
    for name, p in world["anes"].items():
        expect = 0 if name in coerced else 2
        res = clean(run("ane", p), codes=(expect,))
        if expect == 2:
            assert str(p) in res.output and "expected" in res.output, (name, res.output)
        clean(run("ane", "diff", PROFILE_JSON, p), codes=(expect,))
        clean(run("ane", p, "--costplan", PLAN_JSON, "--json"), codes=(expect,))
        clean(run("ane", p, "--markdown", "-"), codes=(expect,))
    folder = tmp_path / "models"
    folder.mkdir()
    for p in world["anes"].values():
        shutil.copy(p, folder)
    shutil.copy(PROFILE_JSON, folder / "llama_prefill.json")
    res = clean(run("ane", folder, "--markdown", tmp_path / "ane.md"), codes=(2,))
    assert "llama_FFN_chunk_01of02" in res.output  # the good report is still analysed (named by its bundle)


# --------------------------------------------------------------------------------------------------
# 6: timeline CSVs with cells of the wrong type
# --------------------------------------------------------------------------------------------------

def test_timeline_csv_cells(world, tmp_path):
    good_csv = world["good_csv"]
    for name, p in world["csvs"].items():
        for cmd in (("latency", p, "--no-write", "--json"), ("compare", good_csv, p, "--no-write"),
                    ("breakdown", p, "--no-write"), ("trace", p, "--out", tmp_path / f"{name}.json"),
                    ("kernels", p)):
            res = clean(run(*cmd))
            if cmd[0] == "latency" and res.exit_code == 0:
                rep = json.loads(res.stdout)["reports"][0]
                assert rep["median_ms"] is not None and rep["median_ms"] > 0, name
        if (name.startswith("duration_") and name.endswith(("_exec", "_all"))) or name == "header_only":
            assert run("latency", p, "--no-write").exit_code == 2, name


# --------------------------------------------------------------------------------------------------
# 7–11: the operating system: unwritable places, full disks, long and undecodable names, FIFOs, devices
# --------------------------------------------------------------------------------------------------

def test_outputs_that_cannot_be_written(world, tmp_path):
    good = world["good"]
    a_dir = tmp_path / "a_dir"
    a_dir.mkdir()
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    for cmd in (("report", good, "--out", a_dir), ("trace", good, "--out", a_dir),
                ("kernels", DATA / "xnnpack" / "x86_avx2_stderr.log", "--out", a_dir),
                ("latency", good, "--output-dir", a_file), ("analyze", good, "--output-dir", a_file, "--no-progress"),
                ("compare", good, world["etdumps"]["one_run"], "--out", a_dir),
                ("breakdown", good, "--output-dir", a_file), ("analyze", good, "--taxonomy", a_dir, "--no-progress",
                                                               "--output-dir", tmp_path / "o"),
                ("kernel-view", "-b", good, "-c", good, "--out", a_dir)):
        res = clean(run(*cmd), codes=(2,))
        assert res.output.count("edgeprof: error:") == 1, res.output
    assert a_file.read_text() == "x" and not any(a_dir.iterdir())
    # several outputs: all or none — the Markdown is not written when the HTML cannot be
    res = clean(run("report", good, "--out", tmp_path / "r.md", "--html", a_dir), codes=(2,))
    assert not (tmp_path / "r.md").exists() and not temps(tmp_path)
    # a device is written to, never replaced
    res = clean(run("trace", good, "--out", "/dev/null"), codes=(0,))
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    res = clean(run("report", good, "--out", "/dev/full"), codes=(2,))
    assert "no space left on the device" in res.output and stat.S_ISCHR(os.stat("/dev/full").st_mode)


def _tmpfs(path: Path, size: str) -> bool:
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    path.mkdir()
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True).returncode == 0


def test_disk_full(world, tmp_path):
    small = tmp_path / "small"
    big = tmp_path / "big.etdp"
    big.write_bytes(fixture_etdump("mobilenet_v3_small_xnnq8.N20"))  # its all-runs timeline needs ~1 MB
    if _tmpfs(small, "256k"):
        try:
            res = clean(run("analyze", big, "--output-dir", small, "--no-progress"), codes=(2,))
            assert "no space left on the device" in res.output
            assert not temps(small) and not list(small.rglob("*.csv"))
        finally:
            subprocess.run(["umount", str(small)], check=False)
    # and where no file system can be mounted: the device that is always full
    res = clean(run("trace", world["good"], "--out", "/dev/full"), codes=(2,))
    assert "no space left on the device" in res.output


def test_unwritable_folder_as_a_regular_user(world):
    """Permissions mean nothing to root: the command runs as `nobody` when the tests run as root."""
    base = Path(tempfile.mkdtemp(prefix="edgeprof-perm-"))
    try:
        os.chmod(base, 0o755)
        locked = base / "locked"
        locked.mkdir()
        shutil.copy(world["good"], base / "good.etdp")
        os.chmod(base / "good.etdp", 0o644)
        if os.geteuid() == 0:
            prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
        else:
            os.chmod(locked, 0o555)
            prefix = []
        env = dict(os.environ, HOME=str(base))
        cmd = [str(BIN / "edgeprof"), "analyze", str(base / "good.etdp"), "--output-dir", str(locked), "--no-progress"]
        # can another user run this installation at all? (not when it sits in root's home or in a 0700 folder)
        runnable = not prefix or subprocess.run([*prefix, str(BIN / "python"), "-c", "import edgeprof.cli"],
                                                capture_output=True, env=env, cwd=base, timeout=120).returncode == 0
        r = subprocess.run(prefix + cmd, capture_output=True, text=True, env=env, cwd=base, timeout=120)
        reason = "permission denied"
        if not runnable:
            # this installation cannot be started by another user: make the folder read-only for root instead,
            # with a read-only bind mount
            assert subprocess.run(["mount", "--bind", "-o", "ro", str(locked), str(locked)]).returncode == 0
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=base, timeout=120)
            finally:
                subprocess.run(["umount", str(locked)], check=False)
            reason = "read-only file system"
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.count("edgeprof: error:") == 1 and reason in r.stderr, r.stderr
        assert not list(locked.iterdir())
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_long_and_undecodable_names(world, tmp_path):
    stem = "m" * 245
    long = tmp_path / "long"
    long.mkdir()
    shutil.copy(world["good"], long / f"{stem}.etdp")
    clean(run("analyze", long, "--no-progress"), codes=(0,))
    names = [p.name for p in long.iterdir()]
    assert all(len(os.fsencode(n)) <= 255 for n in names) and len(names) == 5
    assert any("~" in n and n.endswith("_all_runs_timeline.csv") for n in names)
    clean(run("validate", long), codes=(0,))
    clean(run("latency", long / f"{stem}.etdp"), codes=(0,))
    clean(run("compare", long / f"{stem}.etdp", world["etdumps"]["one_run"]), codes=(0,))
    # a name that is not UTF-8
    raw = tmp_path / "raw"
    raw.mkdir()
    bad = os.fsdecode(b"bad\xff\xfe")
    shutil.copy(world["good"], raw / f"{bad}.etdp")
    clean(run("analyze", raw, "--no-progress"), codes=(0,))
    res = clean(run("latency", raw / f"{bad}.etdp", "--json"), codes=(0,))
    json.loads(res.stdout)
    clean(run("report", raw / f"{bad}.etdp", "--html", raw / "r.html"), codes=(0,))
    # a manifest naming a 5,000-character model
    man = tmp_path / "man"
    man.mkdir()
    shutil.copy(world["good"], man / "toy_t1.etdp")
    (man / "manifest.json").write_text(json.dumps({"model": "x" * 5000, "results": []}))
    clean(run("analyze", man, "--no-progress"), codes=(0,))
    clean(run("report", man), codes=(0,))


def _cli(args, timeout=30):
    return subprocess.run([str(BIN / "edgeprof"), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def test_fifos_and_devices_are_refused_not_read(world, tmp_path):
    fifo = tmp_path / "pipe.etdp"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.etdp"
    zero.symlink_to("/dev/zero")
    zrec = tmp_path / "zero.etrecord"
    zrec.symlink_to("/dev/zero")
    for args in (("trace", fifo), ("analyze", fifo, "--no-progress"), ("latency", zero), ("trace", zero),
                 ("kernels", fifo), ("ane", zero), ("breakdown", world["good"], "--etrecord", zrec, "--strict-etrecord",
                                                    "--no-write"), ("compare", fifo, world["good"])):
        r = _cli(args)  # a hang would be killed by the timeout and fail the test
        assert r.returncode == 2 and "Traceback" not in r.stderr, (args, r.stderr)
        assert "not a regular file" in r.stderr, (args, r.stderr)
    r = _cli(("breakdown", world["good"], "--etrecord", zrec, "--no-write"))
    assert r.returncode == 0 and "not a regular file" in r.stderr  # optional: a warning


def test_files_named_like_temporary_files_are_left_alone(world, tmp_path):
    """Only what this process made is removed: nothing is found by a name pattern (such a name may be anyone's)."""
    out = tmp_path / "out"
    out.mkdir()
    dead = out / ".x_all_runs_timeline.csv.edgeprof-999999999-0123abcd.tmp"
    dead.write_bytes(b"half")
    mine = out / f".y.edgeprof-{os.getpid()}-89abcdef.tmp"
    mine.write_bytes(b"in progress")
    other = out / ".not-ours.tmp"
    other.write_bytes(b"keep")
    clean(run("analyze", world["good"], "--output-dir", out, "--no-progress"), codes=(0,))
    assert dead.exists() and mine.exists() and other.exists()
    assert sorted(p.name for p in temps(out)) == sorted([dead.name, mine.name])  # and no new one
    dead.unlink()
    mine.unlink()


def test_killed_run_leaves_nothing_final_and_the_next_run_cleans(world, tmp_path):
    import signal
    import time

    big = tmp_path / "big.etdp"
    runs = fixture_etdump("mobilenet_v3_small_xnnq8.N200")
    big.write_bytes(runs)
    out = tmp_path / "out"
    for delay in (0.3, 0.6, 0.9):
        p = subprocess.Popen([str(BIN / "edgeprof"), "trace", str(big), "--out", str(out / "t.json")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        assert not (out / "t.json").exists() or json.loads((out / "t.json").read_text())
    clean(run("trace", big, "--out", out / "t.json"), codes=(0,))
    assert not temps(out) and json.loads((out / "t.json").read_text())["traceEvents"]


def test_a_big_run_count_is_bounded(tmp_path):
    """60,000 runs of a timeline CSV: statistics in O(n log n) (the drift test was O(n²))."""
    n = 60_000
    import numpy as np

    rng = np.random.default_rng(0)
    lat = rng.lognormal(0, 0.05, n)
    p = tmp_path / "many_exec_all_runs_timeline.csv"
    with open(p, "w") as f:
        f.write("name,duration_ms,run_index\n")
        f.writelines(f"Method::execute,{x:.6f},{i}\n" for i, x in enumerate(lat))
    r = _cli(("latency", p, "--json", "--no-write"), timeout=120)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)["reports"][0]
    assert rep["count"] == n and rep["median_ms"] == pytest.approx(float(np.median(lat)), abs=1e-6)
    assert rep["ci"]["median"]["method"] == "order statistics (binomial)"


def test_markdown_escapes_hostile_operator_names(tmp_path):
    from etdump_builder import PE, Run, build

    runs, t = [], 0
    for _ in range(12):
        ev = [PE("native_call_<script>alert(1)</script>.out", t + 10, t + 800_010, 0),
              PE("OPERATOR_CALL", t + 5, t + 800_015, 0), PE("Method::execute", t, t + 1_000_000, -1)]
        runs.append(Run("Execute", ev))
        t += 2_000_000
    p = tmp_path / "x.etdp"
    p.write_bytes(build(runs))
    clean(run("report", p, "--out", tmp_path / "r.md"), codes=(0,))
    md = (tmp_path / "r.md").read_text()
    outside_code = "".join(part for i, part in enumerate(md.split("`")) if i % 2 == 0)
    assert "<script" not in outside_code and "&lt;script" in outside_code  # no tag can open: every "<" escaped


def test_no_raw_numpy_warnings(world):
    r = _cli(("latency", world["etdumps"]["one_run"], "--no-write"))
    assert r.returncode == 0 and "RuntimeWarning" not in r.stderr, r.stderr


def test_numbers_past_the_digit_limit_in_names_and_cells(world, tmp_path):
    """Python refuses to parse integers of more than 4,300 digits: no such number reaches int()."""
    csv = tmp_path / "k_kernels.csv"
    csv.write_text("kernel_name,count,first_line\nxnn_f32_gemm_minmax_ukernel_" + "9" * 5000 + "x8__neon,1," + "7" * 5000
                   + "\nxnn_f32_gemm_minmax_ukernel_4x8__neon," + "9" * 5000 + ",1\n")
    res = clean(run("kernels", csv), codes=(2,))
    assert "line 3" in res.output and "not a whole number" in res.output
    log = tmp_path / "t_xnntrace.log"
    log.write_text("Note (XNNPACK): Using gemm microkernel 'xnn_f32_gemm_minmax_ukernel_" + "9" * 5000 + "x8__neon'.\n")
    res = clean(run("kernels", log, "--json", "--no-write"), codes=(0,))
    assert json.loads(res.stdout)["logs"][0]["kernels"][0]["tile_mr"] is None
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(world["good"], folder / f"m_exp_t{'9' * 235}.etdp")  # a 'thread count' of 235 digits
    clean(run("analyze", folder, "--no-progress"), codes=(0,))
    clean(run("report", folder), codes=(0,))
