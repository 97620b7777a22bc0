"""The code passes the linters the project pins (``edgeprof[lint]``: ruff over src/ and tests/, mypy over
src/edgeprof, both configured in pyproject.toml), and the package says it is typed (PEP 561: ``py.typed``, shipped
as package data). Without the extra the linter tests skip, naming it; with EDGEPROF_REQUIRE_LINT set they fail."""

from __future__ import annotations

import importlib.resources
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _need(module: str) -> None:
    if os.environ.get("EDGEPROF_REQUIRE_LINT"):
        __import__(module)
    else:
        pytest.importorskip(module, reason="install edgeprof[lint]")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing():
    _need("ruff")
    r = _run("ruff", "check", "--no-fix", "src", "tests")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_mypy_finds_nothing():
    _need("mypy")
    r = _run("mypy")  # files and options: pyproject.toml
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_the_package_is_marked_typed():
    assert importlib.resources.files("edgeprof").joinpath("py.typed").is_file()
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "py.typed" in data["edgeprof"]  # shipped in the wheel, not only present in the source tree
