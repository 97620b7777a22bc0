"""``edgeprof run --force`` removes only what a previous collection wrote and recorded with its content, and a
collection never writes through a file or link it finds where its outputs go (the runner faked at its process
boundary, tests/helpers/fake_device.py)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_device import install

from edgeprof.examples import example_root

PTE = example_root() / "artifacts" / "toycnn_xnnpack_fp32.pte"  # its ETRecord lies beside it
STEM = "toycnn_xnnpack_fp32"


@pytest.fixture()
def env(tmp_path):
    f = install(tmp_path)
    return {**os.environ, **f["env"], "FAKE_RUNNER": str(f["runner"])}


def _ep(args, env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edgeprof", *map(str, args)], env=env, capture_output=True, text=True,
                          timeout=300)


def _run(out: Path, env, *extra) -> subprocess.CompletedProcess:
    return _ep(["run", PTE, "--runner", env["FAKE_RUNNER"], "--launches", 1, "--runs", 3, "--warmup", 0, "--out", out,
                *extra], env)


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def test_the_manifest_records_the_content_of_every_file_the_collection_wrote(env, tmp_path):
    out = tmp_path / "c"
    r = _run(out, env, "--report")
    assert r.returncode == 0, r.stderr
    files = _manifest(out)["files"]
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} - {"manifest.json", "metrics.json"}
    assert set(files) == on_disk  # ETDump, log, ETRecord copy, noise profile, analysis outputs, report
    assert {f"{STEM}/{STEM}_t1_l1.etdump", f"artifacts/{STEM}.etrecord", "report.md", "report.html"} <= set(files)
    assert all(files[k] == _sha(out / k) for k in files)  # checked with hashlib, not with edgeprof's own digest


def test_force_keeps_what_a_forged_manifest_names(env, tmp_path):
    out = tmp_path / "forged"
    out.mkdir()
    precious = {"notes.txt": b"precious notes", "report.md": b"# my own report", "sub/data.csv": b"a,b\n1,2\n"}
    for rel, data in precious.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    forged = {"tool": "edgeprof",
              "results": [{"experiment": "sub", "metrics": {"etdump": "notes.txt", "log": "sub/data.csv"},
                           "set_aside": ["data.csv"]}],
              "etrecords": {"../notes": "x"},
              # names with a wrong content, a way out and an absolute path
              "files": {"notes.txt": "0" * 64, "sub/data.csv": _sha(out / "sub/data.csv")[::-1],
                        "../outside.txt": "0" * 64, str(tmp_path / "abs.txt"): "0" * 64}}
    (out / "manifest.json").write_text(json.dumps(forged))
    (tmp_path / "outside.txt").write_text("outside")
    (tmp_path / "abs.txt").write_text("abs")
    r = _run(out, env, "--force")
    assert r.returncode == 0, r.stderr
    for rel, data in precious.items():
        assert (out / rel).read_bytes() == data, rel
    assert (tmp_path / "outside.txt").read_text() == "outside" and (tmp_path / "abs.txt").read_text() == "abs"
    assert "--force kept 4 file(s)" in r.stderr and "notes.txt" in r.stderr and r.stderr.count("\n") == 1
    assert _manifest(out)["status"] == "complete"


def test_force_removes_the_previous_collection_but_not_a_file_changed_since(env, tmp_path):
    out = tmp_path / "c"
    assert _run(out, env, "--report").returncode == 0
    before = _manifest(out)["files"]
    (out / "report.md").write_text("edited by hand\n")
    (out / "mine.txt").write_text("mine")
    r = _run(out, env, "--force")
    assert r.returncode == 0, r.stderr
    assert not (out / "report.html").exists() and (out / "report.md").read_text() == "edited by hand\n"
    assert (out / "mine.txt").read_text() == "mine"
    assert "kept 1 file(s)" in r.stderr and "report.md" in r.stderr
    assert set(before) - set(_manifest(out)["files"]) >= {"report.md", "report.html"}
    # a recorded file changed by hand where the new collection writes: refused, not written over
    log = out / STEM / f"{STEM}_t1_l1_latency.log"
    log.write_text("my notes on this launch\n")
    r = _run(out, env, "--force")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "changed since" in r.stderr
    assert log.read_text() == "my notes on this launch\n"


def test_a_manifest_without_recorded_contents_is_not_replaced(env, tmp_path):
    out = tmp_path / "old"
    assert _run(out, env).returncode == 0
    m = _manifest(out)
    del m["files"]
    (out / "manifest.json").write_text(json.dumps(m))
    etdump = next(out.rglob("*.etdump"))
    data = etdump.read_bytes()
    r = _run(out, env, "--force")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "records no file contents" in r.stderr
    assert etdump.read_bytes() == data


@pytest.mark.parametrize("where", ["artifacts/{stem}.etrecord", "{stem}/{stem}_t1_l1.etdump",
                                   "{stem}/{stem}_t1_l1_latency.log"])
def test_a_link_where_the_collection_writes_is_refused_never_written_through(env, tmp_path, where):
    out = tmp_path / "c"
    assert _run(out, env).returncode == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("do not overwrite")
    link = out / where.format(stem=STEM)
    if os.path.lexists(link):
        link.unlink()
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(victim)
    r = _run(out, env, "--force")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "symbolic link is where the collection writes" in r.stderr
    assert victim.read_text() == "do not overwrite" and link.is_symlink()


def test_a_refused_force_leaves_the_previous_collection_as_it_was(env, tmp_path):
    """Whatever stands in the new collection's way is found before ``--force`` removes anything: a refusal leaves
    the folder — the previous collection, its record — exactly as it was."""
    out = tmp_path / "c"
    assert _run(out, env).returncode == 0
    (out / STEM / f"{STEM}_t1_l1_latency.log").write_text("my notes on this launch\n")  # changed since: kept
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    r = _run(out, env, "--force")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "changed since" in r.stderr
    assert {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
