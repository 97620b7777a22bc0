"""Shared fixtures: real ETDumps/ETRecords copied into tests/data (see tools/make_test_data.py).

Tests mirror the package: tests/io, tests/analysis, tests/render, tests/api, tests/cli, tests/core (the
modules every layer shares); tests/helpers holds builders and oracles (on the path, see pyproject.toml)."""

from __future__ import annotations

import gzip
import os
import re
import shutil
from pathlib import Path

import pytest

from edgeprof.conventions import CHECK_JSON_ENV as CHECK_ENV
from testdata import DATA, ETDUMP_NAMES

# Every JSON document the tests make — printed, written to a file, returned by an MCP tool; in this process or a
# child — is checked against its kind's declared type (src/edgeprof/documents.py) before it leaves edgeprof.
os.environ[CHECK_ENV] = "1"

# Under pytest-xdist (`-n auto`, pyproject.toml) the tests of a module run on one worker — its module fixtures
# are built once, and tests that run in order (tests/cli/test_readme_runs.py) keep it — except in these long
# statistical and tracing modules with cheap fixtures, whose tests are spread over the workers one by one.
SPREAD = {"tests/analysis/test_noise_corpus.py", "tests/analysis/test_compare.py", "tests/analysis/test_launches.py",
          "tests/io/test_corrupt_inputs.py", "tests/agent_server/test_confinement.py"}

# the longest first, so that no worker is left with one of them at the end (seconds under load, measured)
LONGEST_FIRST = ("tests/analysis/test_launches.py", "tests/agent_server/test_confinement.py",
                 "tests/analysis/test_noise_corpus.py", "tests/api/test_run_real.py",
                 "tests/analysis/test_history_truth.py", "tests/skills/test_skill_blocks.py",
                 "tests/cli/test_readme_runs.py", "tests/analysis/test_compare.py", "tests/io/test_xnnlog_limits.py",
                 "tests/cli/test_compare_launches.py", "tests/cli/test_hostile_env.py", "tests/analysis/test_history.py")


def pytest_collection_modifyitems(config, items):
    rank = {m: i for i, m in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable: order within kept


class _ModulesOnOneWorker:
    """The xdist scheduler (registered only when xdist runs: without it the hook would be unknown)."""

    @staticmethod
    def pytest_xdist_make_scheduler(config, log):
        from xdist.scheduler import LoadScopeScheduling

        class ModuleScheduling(LoadScopeScheduling):
            def _split_scope(self, nodeid: str) -> str:
                module = nodeid.split("::", 1)[0]
                return nodeid if module in SPREAD else module

        return ModuleScheduling(config, log)


def _skip_missing_extra(outcome):
    """A test that needs an extra this install lacks skips, saying which — unless EDGEPROF_REQUIRE_<EXTRA> is set
    (CI sets it for every extra, so there the test runs or fails)."""
    from edgeprof.errors import MissingExtraError

    try:
        return (yield)
    except MissingExtraError as e:
        if os.environ.get(f"EDGEPROF_REQUIRE_{e.extra.upper()}"):
            raise
        pytest.skip(f"the {e.extra} extra is not installed (pip install 'edgeprof[{e.extra}]' runs this test)")


_EXTRA_NAMED = re.compile(r"install edgeprof\[(\w+)\]|pip install 'edgeprof\[(\w+)\]'")


def _missing_extra_said(text: str) -> str | None:
    """The extra an edgeprof error in ``text`` asks for, when this environment really lacks it."""
    from edgeprof.extras import missing

    for m in _EXTRA_NAMED.finditer(text):
        extra = m.group(1) or m.group(2)
        if missing(extra):
            return extra
    return None


_current: list = [None]  # the test item running (its fixtures' setup included)


def _said_missing(code, *texts) -> None:
    """Raise MissingExtraError when a CLI run that failed (``code``) said which extra to install and this environment
    lacks it — unless the running test checks that message itself (@pytest.mark.missing_extra_expected)."""
    item = _current[0]
    if not code or (item is not None and item.get_closest_marker("missing_extra_expected")):
        return
    extra = _missing_extra_said("\n".join(t if isinstance(t, str) else (t or b"").decode("utf-8", "replace")
                                          for t in texts))
    if extra:
        from edgeprof.errors import MissingExtraError

        raise MissingExtraError(extra, "this test's edgeprof command")


def _watch_the_cli() -> None:
    """The same skip rule for the CLI a test (or its fixture) starts — a child process (subprocess.run) or click's
    runner: a command that fails saying which extra to install, where that extra is missing, raises
    MissingExtraError in the test, which then skips (or fails where EDGEPROF_REQUIRE_<EXTRA> is set)."""
    import subprocess

    from click.testing import CliRunner

    real_run, real_invoke = subprocess.run, CliRunner.invoke

    def run(*args, **kwargs):
        r = real_run(*args, **kwargs)
        _said_missing(r.returncode, r.stdout, r.stderr)
        return r

    def invoke(self, *args, **kwargs):
        r = real_invoke(self, *args, **kwargs)
        _said_missing(r.exit_code, r.output, r.stderr if getattr(r, "stderr_bytes", None) is not None else "")
        return r

    subprocess.run = run
    CliRunner.invoke = invoke


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _current[0] = item
    try:
        return (yield)
    finally:
        _current[0] = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _skip_missing_extra(None))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _skip_missing_extra(None))


def pytest_configure(config):
    _watch_the_cli()
    config.addinivalue_line("markers", "missing_extra_expected: the test checks edgeprof's message for a missing extra "
                                       "itself (the skip rule leaves it alone)")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_ModulesOnOneWorker(), "edgeprof-modules-on-one-worker")


@pytest.fixture(scope="session")
def etdump_dir(tmp_path_factory) -> Path:
    """All fixture ETDumps, decompressed once per session."""
    out = tmp_path_factory.mktemp("etdumps")
    for name in ETDUMP_NAMES:
        with gzip.open(DATA / "etdump" / f"{name}.etdp.gz") as fin, open(out / f"{name}.etdp", "wb") as fout:
            shutil.copyfileobj(fin, fout)
    return out


@pytest.fixture(scope="session")
def etdump(etdump_dir):
    def path(name: str) -> Path:
        return etdump_dir / f"{name}.etdp"

    return path


@pytest.fixture(scope="session")
def etrecord():
    def path(model: str, full: bool = False) -> Path:
        return DATA / "etrecord" / (f"{model}.full.etrecord" if full else f"{model}.etrecord")

    return path


@pytest.fixture(scope="session")
def ground_truth():
    import polars as pl

    def read(name: str, kind: str = "inspector") -> pl.DataFrame:
        return pl.read_csv(DATA / "ground_truth" / f"{name}.{kind}.csv.gz",
                           schema_overrides={"delegate_debug_identifier": pl.String})

    return read


@pytest.fixture
def arm_run_dir(tmp_path, etdump, etrecord) -> Path:
    """A copy of a run folder shaped like the Arm kit's: out_<model>/runs/<platform>/<experiment>/..."""
    root = tmp_path / "out_tel"
    for exp, src in (("linux_xnn", "tel_xnn"), ("linux_xnnq8", "tel_xnnq8"), ("linux_portable", "tel_portable")):
        d = root / "runs" / "linux" / exp
        d.mkdir(parents=True)
        shutil.copyfile(etdump(f"{src}.N20"), d / f"tel_{exp}_t1.etdump")
        (root / "artifacts").mkdir(exist_ok=True)
        shutil.copyfile(etrecord(src), root / "artifacts" / f"tel_{exp}.etrecord")
    return root / "runs" / "linux"
