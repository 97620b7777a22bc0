"""pytest plugin for the mutation run's test map: each test's setup, call and teardown are recorded under its
node id (coverage "dynamic contexts"), and each test's duration goes to $EDGEPROF_MUTATION_DURATIONS.

The package's memoized functions (``functools.lru_cache``) are emptied before each test: otherwise a line runs
only for the first test that asks for a value, and the later tests that check it would be missing from the map."""

from __future__ import annotations

import json
import os
import sys
import time

import coverage
import pytest

_durations: dict[str, float] = {}
_RC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "subcov", "coveragerc")


def _clear_caches() -> None:
    for name, mod in list(sys.modules.items()):
        if name.split(".")[0] != "edgeprof" or mod is None:
            continue
        for value in list(vars(mod).values()):
            for v in (value, *getattr(value, "__dict__", {}).values()):  # module functions and singletons' members
                clear = getattr(v, "cache_clear", None)
                if callable(clear) and not isinstance(v, type):
                    clear()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _clear_caches()
    cov = coverage.Coverage.current()
    if cov is not None:
        cov.switch_context(item.nodeid)
    os.environ["EDGEPROF_MUTATION_CONTEXT"] = item.nodeid  # the processes the test starts record under it too
    if os.environ.get("EDGEPROF_MUTATION_SUBCOV"):  # ... through coverage's start-up hook (they may be isolated)
        os.environ["COVERAGE_PROCESS_START"] = _RC
    t0 = time.perf_counter()
    yield
    _durations[item.nodeid] = time.perf_counter() - t0
    os.environ.pop("EDGEPROF_MUTATION_CONTEXT", None)
    if os.environ.get("EDGEPROF_MUTATION_SUBCOV"):
        os.environ.pop("COVERAGE_PROCESS_START", None)
    if cov is not None:
        cov.switch_context("")


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("EDGEPROF_MUTATION_DURATIONS")
    if path:
        with open(path, "w") as f:
            json.dump(_durations, f)
