"""Where the test data is, and what it holds."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
ETDUMP_NAMES = sorted(p.name[: -len(".etdp.gz")] for p in (DATA / "etdump").glob("*.etdp.gz"))
ETRECORD_MODELS = ("toycnn_portable", "toycnn_xnn", "toycnn_xnnq8", "tel_portable", "tel_xnn", "tel_xnnq8")


def recording(tmp_path: Path, name: str) -> Path:
    """A fixture ETDump (``tests/data/etdump/<name>.etdp.gz``) unpacked into ``tmp_path/in``."""
    import gzip

    d = tmp_path / "in"
    d.mkdir(exist_ok=True)
    f = d / f"{name}.etdp"
    f.write_bytes(gzip.decompress((DATA / "etdump" / f"{name}.etdp.gz").read_bytes()))
    return f


def needs(module: str, extra: str) -> None:
    """Raise the library's own MissingExtraError when ``module`` (installed by edgeprof[``extra``]) is missing: the
    suite's one skip rule (tests/conftest.py) then skips the test, or fails it where EDGEPROF_REQUIRE_<EXTRA> is set."""
    import importlib.util

    from edgeprof.errors import MissingExtraError

    if importlib.util.find_spec(module) is None:
        raise MissingExtraError(extra, f"this test ({module})")


def edgeprof_cli(*args, cwd=None, code: int | None = 0):
    """``edgeprof ARGS…`` as its own process (``python -m edgeprof``); its exit code must be ``code`` (None: any)."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "edgeprof", *map(str, args)], capture_output=True, text=True, cwd=cwd)
    if code is not None:
        assert r.returncode == code, (r.returncode, r.stderr[-3000:])
    return r


def need_core() -> None:
    """Skip (saying why) where edgeprof's compiled core is not built — or fail, where EDGEPROF_REQUIRE_CORE is set (CI)."""
    import os

    import pytest

    try:
        from edgeprof import _core  # noqa: F401
    except ImportError:
        if os.environ.get("EDGEPROF_REQUIRE_CORE"):
            pytest.fail("edgeprof's compiled core is not built in this install (EDGEPROF_REQUIRE_CORE is set)")
        pytest.skip("edgeprof's compiled core is not built in this install (it needs a C compiler at pip install)")


def documentation() -> str:
    """What the documentation says: the README and every page of docs/, in reading order (tools/docs_pages.py)."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import docs_pages

    return docs_pages.text()
