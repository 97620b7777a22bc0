"""The ETDump reader's tests run once per walk: the compiled one (edgeprof._core) and the numpy one, its oracle
(edgeprof.io.etdump_core; ``EDGEPROF_CORE`` chooses). Where the compiled core is not built the ``c`` runs skip,
saying so — unless EDGEPROF_REQUIRE_CORE is set (CI), where they fail."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

from testdata import need_core

from edgeprof.conventions import CORE_ENV

BOTH_WALKS = ("test_etdump_*.py", "test_corrupt_inputs.py")


def pytest_generate_tests(metafunc):
    if "etdump_walk" in metafunc.fixturenames and any(fnmatch.fnmatch(Path(metafunc.module.__file__).name, p)
                                                      for p in BOTH_WALKS):
        metafunc.parametrize("etdump_walk", ["c", "python"], indirect=True)


@pytest.fixture(autouse=True)
def etdump_walk(request, monkeypatch):
    """The walk this test reads with (``c`` / ``python``), or None outside the modules run with both."""
    walk = getattr(request, "param", None)
    if walk == "c":
        need_core()
    if walk is not None:
        monkeypatch.setenv(CORE_ENV, walk)
    return walk
