"""The report picks up the .pte each configuration ran (inside the folder the user named) and shows work vs time."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent


def _ep(*args):
    return subprocess.run([str(BIN / "edgeprof"), *map(str, args)], capture_output=True, text=True, timeout=300)


def _example(dest: Path) -> Path:
    r = _ep("example", dest, "--force")
    assert r.returncode == 0, r.stderr
    return dest


def test_report_joins_each_configuration_with_its_program(tmp_path):
    root = _example(tmp_path / "out_toycnn")
    r = _ep("report", root / "runs" / "linux", "-b", "portable", "-c", "xnnpack_fp32", "--out", tmp_path / "r.md",
            "--html", tmp_path / "r.html", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    cfgs = {c["name"]: c for c in doc["configs"]}
    port, xnn = cfgs["portable"]["program"], cfgs["xnnpack_fp32"]["program"]
    assert port["program"].endswith("artifacts/toycnn_portable.pte") and xnn["program"].endswith("toycnn_xnnpack_fp32.pte")
    assert port["matched"] == port["program_instructions"] == 9 and xnn["matched"] == 1
    conv = next(c for c in port["categories"] if c["category"] == "CONV")
    # hand count: two 3×3 convolutions (3→16, 16→32, 32×32 outputs) with their bias adds
    assert conv["flops"] == 2 * (16 * 32 * 32 * 27 + 32 * 32 * 32 * 144) + 16 * 32 * 32 + 32 * 32 * 32
    assert abs(conv["gflops"] - conv["flops"] / conv["ms_per_run"] / 1e6) <= 1e-3 * conv["gflops"]  # JSON rounds to 4 digits
    md = (tmp_path / "r.md").read_text()
    assert "## Work vs time (the program that ran)" in md
    assert 'class="chart roofline"' in (tmp_path / "r.html").read_text()


def test_no_program_outside_the_named_folder(tmp_path):
    """``<D>/runs/<platform>`` beside ``<D>/artifacts`` (the example's layout, as the kit's): the programs there are
    used, as every command finds ETRecords there. The same run folder elsewhere (not under a ``runs/``) looks no
    higher than the folder named: an unrelated ``artifacts/`` above it is not read."""
    root = _example(tmp_path / "example")
    r = _ep("report", root / "runs" / "linux", "-b", "portable", "-c", "xnnpack_fp32", "--out", tmp_path / "r.md",
            "--json")
    assert r.returncode == 0, r.stderr
    cfgs = {c["name"]: c for c in json.loads(r.stdout)["configs"]}
    assert cfgs["portable"]["program"]["matched"] == 9 and cfgs["xnnpack_fp32"]["program"] is not None
    other = tmp_path / "elsewhere" / "linux"
    shutil.copytree(root / "runs" / "linux", other)
    shutil.copytree(root / "artifacts", tmp_path / "elsewhere" / "artifacts")  # above the named folder: not read
    r = _ep("report", other, "-b", "portable", "-c", "xnnpack_fp32", "--out", tmp_path / "r2.md", "--json")
    assert r.returncode == 0, r.stderr
    assert all(c["program"] is None for c in json.loads(r.stdout)["configs"])
    shutil.copy(root / "artifacts" / "toycnn_portable.pte", other / "portable")
    r = _ep("report", other, "-b", "portable", "-c", "xnnpack_fp32", "--out", tmp_path / "r2.md", "--json")
    cfgs = {c["name"]: c for c in json.loads(r.stdout)["configs"]}
    assert cfgs["portable"]["program"]["matched"] == 9 and cfgs["xnnpack_fp32"]["program"] is None
