"""A collection's processes write only into private folders; the parent alone puts files in the run folder — into real
folders of it, under names where nothing is, through the one writer — and records what it put there. So a link
planted at a name a worker or runner writes, a launch folder, ``artifacts/`` or ``inputs/`` that is a link to a
folder outside, or a generated-inputs cache left in ``inputs/``, is never written through, never read, and files
outside the run folder stay as they were.

Runs the fake ``executor_runner`` and ``adb`` (tests/helpers/fake_device.py) and the real Python workers
(ExecuTorch, ONNX Runtime, LiteRT) on the test models, each with ``--runs 2 --launches 1 --warmup 1``."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fake_device import calls, install
from testdata import DATA
from security_cli import need

from edgeprof.examples import example_root

FAKE_PTE = example_root() / "artifacts" / "toycnn_xnnpack_fp32.pte"  # its ETRecord lies beside it
FAKE_STEM = "toycnn_xnnpack_fp32"
PTE, ONNX, TFLITE = DATA / "pte" / "toycnn_xnn.pte", DATA / "ort" / "cnn.onnx", DATA / "litert" / "cnn.tflite"
QUICK = ["--runs", 2, "--launches", 1, "--warmup", 1, "--threads", 1, "--no-progress"]
FORGED = {"tool": "edgeprof", "files": {}}  # a minimal manifest, so that --force goes on to collect


def _ep(args, env=None, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edgeprof", *map(str, args)], env=env or dict(os.environ),
                          capture_output=True, text=True, timeout=timeout, check=False)


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _forged(out: Path) -> Path:
    out.mkdir(parents=True)
    (out / "manifest.json").write_text(json.dumps(FORGED))
    return out


def _outside(tmp_path: Path) -> tuple[Path, dict]:
    """A folder outside the run folder holding one precious file, and its content."""
    d = tmp_path / "outside"
    d.mkdir()
    (d / "precious.txt").write_text("precious")
    return d, _tree(d)


def _tree(d: Path) -> dict:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if not p.is_dir()}


def _refused(r: subprocess.CompletedProcess, *words: str) -> None:
    assert r.returncode == 2, r.stderr[-2000:]
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


# --------------------------------------------------------------------------------------------------
# the fake executor_runner and adb: folder links
# --------------------------------------------------------------------------------------------------

@pytest.fixture()
def fakes(tmp_path):
    f = install(tmp_path / "fakes")
    f["run_env"] = {**os.environ, **f["env"]}
    return f


@pytest.mark.parametrize("how,folder", [("runner", FAKE_STEM), ("adb", FAKE_STEM), ("xnntrace", FAKE_STEM),
                                        ("runner", "artifacts")])
def test_a_link_where_a_folder_of_the_run_folder_belongs_is_refused(fakes, tmp_path, how, folder):
    """The launch folder (where the runner runs and its ETDump, log, xnntrace log or pulled ETDump go) or
    ``artifacts/`` (the ETRecord's copy) linked to a folder outside: refused before anything is written."""
    outside, before = _outside(tmp_path)
    out = _forged(tmp_path / "out")
    (out / folder).symlink_to(outside, target_is_directory=True)
    extra = {"runner": [], "adb": ["--device", "adb:R5CX"], "xnntrace": ["--mode", "xnntrace"]}[how]
    r = _ep(["run", FAKE_PTE, "--runner", fakes["runner"], *extra, *QUICK, "--out", out, "--force"], fakes["run_env"])
    _refused(r, "symbolic link where the collection writes a folder")
    assert _tree(outside) == before and (out / folder).is_symlink()
    assert not [c for c in calls(fakes["log"]) if "argv" in c]  # no runner started


def test_the_runner_writes_its_etdump_and_output_into_a_private_folder(fakes, tmp_path):
    """The runner runs in its launch folder (as the Arm kit runs it), but what it writes goes to a folder only this
    collection made; the parent puts it in place (so a link at the launch's names is never written through)."""
    out = tmp_path / "out"
    r = _ep(["run", FAKE_PTE, "--runner", fakes["runner"], *QUICK, "--out", out], fakes["run_env"])
    assert r.returncode == 0, r.stderr
    timed = [c for c in calls(fakes["log"]) if "--etdump_path" in c.get("argv", [])]
    given = Path(timed[0]["argv"][timed[0]["argv"].index("--etdump_path") + 1])
    assert Path(timed[0]["cwd"]) == out / FAKE_STEM  # its launch folder
    assert given.parent != out / FAKE_STEM and not given.parent.exists()  # a private folder, removed after
    placed = out / FAKE_STEM / given.name
    files = json.loads((out / "manifest.json").read_text())["files"]
    assert files[f"{FAKE_STEM}/{given.name}"] == _sha(placed) and not placed.is_symlink()


# --------------------------------------------------------------------------------------------------
# the real Python workers
# --------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def first(tmp_path_factory):
    """One ExecuTorch collection (generated inputs): its folder and the name of its inputs cache."""
    need("executorch", "EDGEPROF_REQUIRE_RUN")
    out = tmp_path_factory.mktemp("first") / "out"
    r = _ep(["run", PTE, *QUICK, "--out", out])
    assert r.returncode == 0, r.stderr
    (cache,) = (out / "inputs").glob("inputs_*.npz")
    return out, cache.name


def test_links_and_files_at_the_names_the_workers_wrote_are_left_alone(tmp_path):
    """Links at the scratch names the ExecuTorch, ONNX Runtime and LiteRT workers used to write beside their
    profiles (ETDump ``.tmp``, warm-up ``.warmup.tmp``, the report's ``.worker.json(.tmp)``, ``.ort.json.tmp``,
    ``.litert.csv.tmp``) and files at the debug-buffer scratch names they removed by name: the workers write in a
    private folder now, so none is written through or removed; the recorded profiles are regular files."""
    need("executorch", "EDGEPROF_REQUIRE_RUN")
    need("onnxruntime", "EDGEPROF_REQUIRE_ORT")
    need("ai_edge_litert", "EDGEPROF_REQUIRE_LITERT")
    out = _forged(tmp_path / "out")
    et, ort, lite = "toycnn_xnn/toycnn_xnn_t1_l1", "cnn/cnn_t1_l1", "cnn_2/cnn_cnn_2_t1_l1"
    links = [f"{et}.etdump.tmp", f"{et}.etdump.warmup.tmp", "toycnn_xnn/.toycnn_xnn_t1_l1.worker.json.tmp",
             f"{ort}.ort.json.tmp", "cnn/.cnn_t1_l1.worker.json.tmp",
             f"{lite}.litert.csv.tmp", "cnn_2/.cnn_cnn_2_t1_l1.worker.json.tmp"]
    kept = [f"{et}.etdump.warmup.tmp.bin", f"{et}.etdump.tmp.bin"]
    victims = tmp_path / "victims"
    victims.mkdir()
    for i, rel in enumerate(links):
        (victims / f"v{i}").write_text(f"precious {i}")
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).symlink_to(victims / f"v{i}")
    for rel in kept:
        (out / rel).write_text("mine")
    before = _tree(victims)
    r = _ep(["run", PTE, ONNX, TFLITE, *QUICK, "--out", out, "--force"])
    assert r.returncode == 0, r.stderr[-2000:]
    assert _tree(victims) == before
    assert all((out / rel).is_symlink() for rel in links) and all((out / rel).read_text() == "mine" for rel in kept)
    m = json.loads((out / "manifest.json").read_text())
    assert m["status"] == "complete" and [r["status"] for r in m["results"]] == ["ok"] * 3
    for rel in (f"{et}.etdump", f"{ort}.ort.json", f"{lite}.litert.csv"):
        assert not (out / rel).is_symlink() and m["files"][rel] == _sha(out / rel)


@pytest.mark.parametrize("folder", ["toycnn_xnn", "inputs"])
def test_a_launch_or_inputs_folder_linked_outside_is_refused(tmp_path, folder):
    need("executorch", "EDGEPROF_REQUIRE_RUN")
    outside, before = _outside(tmp_path)
    out = _forged(tmp_path / "out")
    (out / folder).symlink_to(outside, target_is_directory=True)
    r = _ep(["run", PTE, *QUICK, "--out", out, "--force"])
    _refused(r, "symbolic link where the collection writes a folder", folder)
    assert _tree(outside) == before and (out / folder).is_symlink()


def test_the_manifest_records_every_file_put_in_place_and_force_replaces_them(tmp_path):
    """The ETDump, the trimmed debug buffer, the log and the generated inputs are recorded with the SHA-256 of
    their bytes (checked here with hashlib); ``--force`` removes them all and writes them again; no private folder
    is left behind."""
    need("executorch", "EDGEPROF_REQUIRE_RUN")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    out = tmp_path / "out"
    for extra in ([], ["--force"]):
        r = _ep(["run", PTE, *QUICK, "--debug-buffer", "2MB", "--out", out, *extra], env)
        assert r.returncode == 0, r.stderr[-2000:]
        files = json.loads((out / "manifest.json").read_text())["files"]
        on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
        assert set(files) == on_disk - {"manifest.json", "metrics.json"}
        assert all(files[k] == _sha(out / k) for k in files)
        (npz,) = [k for k in files if k.startswith("inputs/")]
        assert {"toycnn_xnn/toycnn_xnn_t1_l1.etdump", "toycnn_xnn/toycnn_xnn_t1_l1.bin"} <= set(files)
        assert 0 < (out / "toycnn_xnn/toycnn_xnn_t1_l1.bin").stat().st_size < 2 << 20  # what the recording used
        assert list(tmp.iterdir()) == []
    inputs = json.loads((out / "manifest.json").read_text())["results"][0]["metrics"]["inputs"]
    with np.load(out / npz) as z:
        assert inputs["source"] == "generated (seed 0)" and np.isfinite(z[z.files[0]]).all()


@pytest.mark.parametrize("plant", ["changed", "unrecorded", "link", "fifo"])
def test_an_inputs_cache_the_collection_did_not_write_is_never_read(first, tmp_path, plant):
    """A cache at the predictable ``inputs/inputs_<hash>.npz`` whose content is not what the previous collection
    recorded (replaced with NaNs), one no collection recorded, a link to a file outside, a FIFO: refused in one line
    before any launch, the folder left as it was (never measured and recorded as "generated (seed 0)")."""
    done, name = first
    outside, before = _outside(tmp_path)
    if plant == "changed":
        out = tmp_path / "out"
        shutil.copytree(done, out, symlinks=True)
    else:
        out = _forged(tmp_path / "out")
        (out / "inputs").mkdir()
    cache = out / "inputs" / name
    if plant in ("changed", "unrecorded"):
        np.savez(cache, np.full((1, 3, 32, 32), np.nan, dtype=np.float32))
    elif plant == "link":
        cache.symlink_to(outside / "precious.txt")
    else:
        os.mkfifo(cache)
    manifest = (out / "manifest.json").read_bytes()
    r = _ep(["run", PTE, *QUICK, "--timeout", 60, "--out", out, "--force"], timeout=300)
    _refused(r, name, "is where the collection writes")
    assert (out / "manifest.json").read_bytes() == manifest and _tree(outside) == before


# --------------------------------------------------------------------------------------------------
# the one rule: edgeprof.collect.staging.place
# --------------------------------------------------------------------------------------------------

def test_place_writes_into_real_folders_only_and_never_through_a_link(tmp_path, monkeypatch):
    import io

    from edgeprof.collect import staging
    from edgeprof.errors import EdgeprofError

    outside, before = _outside(tmp_path)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    h = staging.place(run_dir, run_dir / "a" / "x.etdump", io.BytesIO(b"abc" * 1000), limit=10)
    assert (run_dir / "a" / "x.etdump").read_bytes() == b"abcabcabca" and h == hashlib.sha256(b"abcabcabca").hexdigest()
    (run_dir / "b").symlink_to(outside, target_is_directory=True)
    (run_dir / "a" / "link").symlink_to(outside / "precious.txt")
    os.mkfifo(run_dir / "a" / "fifo")
    cases = [(run_dir / "b" / "x", False, "symbolic link where the collection writes a folder"),
             (run_dir / "b" / "deeper" / "x", False, "symbolic link where the collection writes a folder"),
             (run_dir / "a" / "x.etdump" / "x", False, "not a folder"),
             (run_dir / "a" / "link", False, "symbolic link is where the collection writes"),
             (run_dir / "a" / "x.etdump", False, "is where the collection writes"),
             (run_dir / "a" / "link", True, "symbolic link"),  # the record, rewritten: still never through a link
             (run_dir / "a" / "fifo", True, "not a regular file")]
    for target, again, words in cases:
        with pytest.raises(EdgeprofError, match=words):
            staging.place(run_dir, target, io.BytesIO(b"new"), again=again)
    # the folder swapped for another between the walk and the write
    (run_dir / "c").mkdir()
    key = staging.real_folder(run_dir, run_dir / "a")
    monkeypatch.setattr(staging, "real_folder", lambda run_dir, folder, make=True: key)
    with pytest.raises(EdgeprofError, match="not the one checked"):
        staging.place(run_dir, run_dir / "c" / "x", io.BytesIO(b"new"))
    assert _tree(outside) == before and not list((run_dir / "c").iterdir())
    assert (run_dir / "a" / "x.etdump").read_bytes() == b"abcabcabca"
