"""pytest plugin for the mutation run's test map: each test's setup, call and teardown are recorded under its
node id (coverage "dynamic contexts"), and each test's duration goes to $EDGEPROF_MUTATION_DURATIONS."""

from __future__ import annotations

import json
import os
import time

import coverage
import pytest

_durations: dict[str, float] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cov = coverage.Coverage.current()
    if cov is not None:
        cov.switch_context(item.nodeid)
    t0 = time.perf_counter()
    yield
    _durations[item.nodeid] = time.perf_counter() - t0
    if cov is not None:
        cov.switch_context("")


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("EDGEPROF_MUTATION_DURATIONS")
    if path:
        with open(path, "w") as f:
            json.dump(_durations, f)
