"""The example GitHub Actions workflow of docs/ci.md, every `run:` step as written, in order, as the runner runs it:
in a checkout of the project (its tracked sources copied), in a fresh virtual environment (`python -m pip install .`
really installs edgeprof there, the compiled core built), with the variables GitHub sets. The gates then report as
the page says: the step summary, one notice per passed check, the JUnit reports."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import venv
import xml.etree.ElementTree as ET

import pytest
from testdata import ROOT

yaml = pytest.importorskip("yaml", reason="the workflow is YAML: install edgeprof[test]")

PAGE = ROOT / "docs" / "ci.md"


def workflow() -> dict:
    block = re.search(r"```yaml\n(.*?)```", PAGE.read_text(), re.S).group(1)
    return yaml.safe_load(block)


def test_the_page_shows_one_workflow_whose_steps_run_edgeprof():
    steps = workflow()["jobs"]["gate"]["steps"]
    runs = [s["run"] for s in steps if "run" in s]
    assert runs[0] == "python -m pip install ." and len(runs) == 4
    assert all("edgeprof " in r for r in runs[1:])


def _checkout(dest):
    """The project as actions/checkout leaves it: its tracked files (no build products)."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False).stdout.split(b"\0")
    if not files or files == [b""]:  # not a git checkout (a source tree): its sources
        shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.so", "__pycache__",
                                                                  "edgeprof-example", "bench"))
        return
    for f in files:
        if f and f.decode().startswith(("src/", "pyproject.toml", "setup.py", "MANIFEST.in", "README.md")):
            (dest / f.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f.decode(), dest / f.decode())


def test_every_run_step_of_the_example_workflow_runs(tmp_path):
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    _checkout(checkout)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    summary = tmp_path / "step_summary.md"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "VIRTUAL_ENV", "PYTHON"))}
    env.update(PATH=f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}", VIRTUAL_ENV=str(env_dir), GITHUB_ACTIONS="true",
               GITHUB_STEP_SUMMARY=str(summary), GITHUB_SHA="4b825dc642cb6eb9a060e54bf8d69288fbee4904",
               GITHUB_HEAD_REF="feature")
    outputs = []
    for step in workflow()["jobs"]["gate"]["steps"]:
        if "run" not in step:
            continue
        r = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=checkout, env=env, capture_output=True, text=True)
        assert r.returncode == 0, (step["name"], r.stdout[-2000:], r.stderr[-2000:])
        outputs.append(r.stdout)
    # the edgeprof the steps ran is the one the install step built, with its compiled core
    probe = subprocess.run([str(env_dir / "bin" / "python"), "-c", "import edgeprof, edgeprof._core; "
                            "print(edgeprof.__file__)"], capture_output=True, text=True, cwd=tmp_path)
    assert probe.returncode == 0 and str(env_dir) in probe.stdout, probe.stderr
    # both gates passed and said so where the page says they do
    text = summary.read_text()
    assert "### edgeprof compare: xnnpack_fp32 vs portable — gate passed" in text
    assert "### edgeprof history: median_ms — gate passed" in text
    assert "::notice title=edgeprof compare%3A regression::" in outputs[2]
    assert "::notice title=edgeprof history%3A regression::" in outputs[3]
    for name in ("edgeprof-compare.xml", "edgeprof-history.xml"):
        root = ET.parse(checkout / name).getroot()
        assert root.get("tests") == "1" and root.get("failures") == "0", name
