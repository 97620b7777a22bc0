"""Outside CI a test that needs an extra this install lacks skips, naming the extra; with EDGEPROF_REQUIRE_<EXTRA> set
(CI sets one for every extra) it fails instead — checked by running a test that meets each case."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEST = '''
from edgeprof.errors import MissingExtraError


def test_needs_coreml():
    raise MissingExtraError("coreml", "reading .mlpackage / .mlmodel files")


def test_needs_nothing():
    assert True
'''


def _run(tmp_path, **env) -> subprocess.CompletedProcess:
    d = tmp_path / "t"
    d.mkdir(exist_ok=True)
    (d / "test_x.py").write_text(TEST)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("EDGEPROF_REQUIRE_")}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-o", "addopts=", "-rs", "-q",
                           "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"),
                           "--confcutdir", str(ROOT / "tests"), str(d / "test_x.py")],
                          capture_output=True, text=True, env={**base_env, **env}, cwd=ROOT / "tests", timeout=300)


def test_skips_outside_ci_and_fails_where_required(tmp_path):
    conftest = ROOT / "tests" / "conftest.py"
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "conftest.py").write_text(conftest.read_text())  # the suite's hooks, for the test beside it
    r = _run(tmp_path)
    assert r.returncode == 0 and "1 passed, 1 skipped" in r.stdout and "the coreml extra is not installed" in r.stdout
    r = _run(tmp_path, EDGEPROF_REQUIRE_COREML="1")
    assert r.returncode == 1 and "1 failed, 1 passed" in r.stdout
    r = _run(tmp_path, EDGEPROF_REQUIRE_ORT="1")  # another extra required: this one still skips
    assert r.returncode == 0 and "1 skipped" in r.stdout
