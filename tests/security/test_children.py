"""Every process edgeprof starts is started by one rule (edgeprof.child): an isolated interpreter running the
parent's edgeprof, an environment from an allow-list, a working folder of its own.

Started in folders holding a module named after every top-level module a process here could import
(tests/helpers/module_traps.py: the standard library, everything installed — numpy, polars, duckdb, dask,
distributed, torch, executorch, onnxruntime, ai_edge_litert … — ``sitecustomize``, ``usercustomize`` and an
``edgeprof/`` package), the MCP server's workers (driven through the SDK client), ``ingest --workers 2``'s Dask
workers and ``run``'s collection workers (ExecuTorch, ONNX Runtime, LiteRT) import none of them; variables
outside the allow-list never reach a child; the local Dask cluster admits no one without its key and serves no
HTTP unless asked; a memory budget no worker can start under is refused in one line."""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from module_traps import fired, installed_names, plant
from testdata import DATA, ROOT
from security_cli import etdump, need, worker_environments

BIN = Path(sys.executable).parent
EP = [str(BIN / "edgeprof")]  # the console script: the parent's own path holds no working folder
SECRET = "s3cr3t-token-7f2a"


def _pythonpath(*first: Path) -> str:
    """PYTHONPATH for a parent: ``first``, then whatever the tests run with (a copy of edgeprof on trial)."""
    return os.pathsep.join([*map(str, first), *filter(None, [os.environ.get("PYTHONPATH")])])


def _hostile_env(empty: Path) -> dict:
    """Variables a child must never see, set in the parent."""
    empty.mkdir(exist_ok=True)
    return {"SECRET_TOKEN": SECRET, "PYTHONSTARTUP": str(empty / "startup.py"), "PYTHONPATH": _pythonpath(empty)}


def _check_env(env: dict, what: str) -> None:
    leaked = sorted(k for k in ("SECRET_TOKEN", "PYTHONSTARTUP", "PYTHONPATH") if k in env)
    assert not leaked, f"{what} got {leaked}"
    assert SECRET not in json.dumps(env), what


@pytest.fixture()
def traps(tmp_path):
    """A trap folder and the folder its markers go to. Its names cover what the children import: every module
    this test process has loaded but the tests' own, and what each kind of child was seen to import."""

    work, marks = tmp_path / "work", tmp_path / "marks"
    here = {name for name, mod in list(sys.modules.items()) if "." not in name
            and getattr(mod, "__spec__", None) is not None  # (not a name an extension put there itself)
            and not str(getattr(mod, "__file__", None) or "").startswith(str(ROOT / "tests"))}
    here -= {"__main__", "__mp_main__"}
    plant(work, marks, here)
    every = {p.stem for p in work.iterdir()}
    assert here <= every
    assert {n for n in SEEN if importlib.util.find_spec(n)} <= every
    assert {"sitecustomize", "usercustomize", "json", "signal"} <= every
    assert (work / "edgeprof" / "__init__.py").is_file()
    return work, marks


# beyond the standard library, the top-level modules edgeprof's children were seen to import (sys.modules at their
# exit: tool-call workers over every tool, the three collection workers, Dask workers) — all of them are traps
SEEN = ("edgeprof", "numpy", "polars", "_polars_runtime_32", "duckdb", "_duckdb", "ruptures", "scipy", "torch",
        "torchgen", "executorch", "tqdm", "charset_normalizer", "onnxruntime", "ai_edge_litert", "dask", "distributed",
        "tornado", "msgpack", "cloudpickle", "psutil", "toolz", "tlz", "zict", "tblib", "yaml", "sortedcontainers",
        "locket", "jinja2", "markupsafe", "packaging", "importlib_metadata", "zipp", "click", "lazy_importer",
        "typing_extensions", "_distutils_hack", "_sysconfigdata__linux_x86_64-linux-gnu")


# --------------------------------------------------------------------------------------------------
# the MCP server's workers
# --------------------------------------------------------------------------------------------------

def _serve(root: Path, calls, *extra: str, env: dict | None = None):
    """The answers to ``calls`` and the environments of the workers alive after them."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client
    from mcp_client import _answer, server_params

    async def go():
        async with stdio_client(server_params(root, *extra, env=env)) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            answers = [_answer(await asyncio.wait_for(s.call_tool(n, a), 300)) for n, a in calls]
            return answers, worker_environments(root)
    return asyncio.run(go())


def _mcp_root(root: Path) -> None:
    import edgeprof

    root.mkdir(exist_ok=True)
    (root / "toy_t1.etdump").write_bytes(etdump())
    (root / "tel_t1.etdump").write_bytes(etdump("tel_xnn"))
    shutil.copy(DATA / "pte" / "tel_xnnq8.pte", root)
    edgeprof.ingest([root / "toy_t1.etdump"], store=root / "h.duckdb", commit="c1", time="2026-01-01T00:00:00")
    edgeprof.ingest([root / "tel_t1.etdump"], store=root / "h.duckdb", commit="c2", time="2026-01-02T00:00:00")


CALLS = [("latency", {"path": "toy_t1.etdump"}), ("program", {"path": "tel_xnnq8.pte"}),
         ("history", {"store": "h.duckdb"}), ("breakdown", {"path": "toy_t1.etdump"})]


def test_mcp_workers_import_nothing_from_the_root_and_see_no_outside_variable(traps, tmp_path):
    need("mcp", "EDGEPROF_REQUIRE_MCP")
    root, marks = traps
    _mcp_root(root)
    answers, envs = _serve(root, CALLS, env=_hostile_env(tmp_path / "empty"))
    for (name, _), (is_error, _, text) in zip(CALLS, answers):
        assert not is_error, (name, text)
    assert fired(marks) == []
    assert envs, "no worker was alive after the calls"
    for env in envs:
        _check_env(env, "a tool-call worker")
        # its own folder, private, and its temporary folder
        assert env["TMPDIR"] == env["EDGEPROF_SCRATCH"] and env["(mode of EDGEPROF_SCRATCH)"] == "0o700"


# --------------------------------------------------------------------------------------------------
# edgeprof run's collection workers
# --------------------------------------------------------------------------------------------------

def test_collection_workers_import_nothing_from_the_working_folder(traps, tmp_path):
    """One run of an ExecuTorch program, an ONNX model and a LiteRT model, from the trap folder (``--out`` relative
    to it); PYTHONPATH in the parent names a folder whose sitecustomize records the processes that load it."""
    need("executorch", "EDGEPROF_REQUIRE_RUN")
    need("onnxruntime", "EDGEPROF_REQUIRE_ORT")
    need("ai_edge_litert", "EDGEPROF_REQUIRE_LITERT")
    work, marks = traps
    probe = tmp_path / "probe"
    probe.mkdir()
    seen = tmp_path / "loaded_by"
    (probe / "sitecustomize.py").write_text(f"import os\nopen({str(seen)!r}, 'a').write(f'{{os.getpid()}}\\n')\n")
    env = {**os.environ, **_hostile_env(tmp_path / "empty"), "PYTHONPATH": _pythonpath(probe)}
    models = [DATA / "pte" / "toycnn_xnn.pte", DATA / "ort" / "cnn.onnx", DATA / "litert" / "cnn.tflite"]
    p = subprocess.Popen([*EP, "run", *map(str, models), "--runs", "2", "--warmup", "0", "--launches", "1",
                          "--threads", "1", "--out", "out", "--no-progress"], cwd=work, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _out, err = p.communicate(timeout=900)
    assert p.returncode == 0, err[-2000:]
    m = json.loads((work / "out" / "manifest.json").read_text())
    assert m["status"] == "complete" and len(m["results"]) == 3
    assert list((work / "out").rglob("*.etdump"))  # the ExecuTorch worker wrote its ETDump where asked
    assert fired(marks) == []
    assert {int(x) for x in seen.read_text().split()} == {p.pid}  # PYTHONPATH reached no worker


def test_an_external_runner_gets_the_allow_listed_environment(tmp_path):
    """A runner binary runs in its launch folder (as the Arm kit runs it) with the allow-listed environment, what
    it needs (XNN_LOG_LEVEL) and what the user names in EDGEPROF_PASS_ENV; nothing else of the parent's."""
    from fake_device import install

    f = install(tmp_path / "fakes")
    dump = tmp_path / "runner_env.json"
    runner = tmp_path / "runner"
    runner.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                      f"json.dump({{'env': dict(os.environ), 'cwd': os.getcwd()}}, open({str(dump)!r}, 'w'))\n"
                      f"os.execv({str(f['runner'])!r}, [{str(f['runner'])!r}, *sys.argv[1:]])\n")
    runner.chmod(0o755)
    env = {**os.environ, **f["env"], **_hostile_env(tmp_path / "empty"), "LC_ALL": "C.UTF-8",
           "EDGEPROF_NOTE": "kept", "VK_ICD_FILENAMES": "/opt/icd.json", "EDGEPROF_PASS_ENV": "VK_ICD_FILENAMES"}
    r = subprocess.run([*EP, "run", str(DATA / "pte" / "toycnn_xnn.pte"), "--runner", str(runner), "--runs", "2",
                        "--warmup", "0", "--launches", "1", "--out", str(tmp_path / "out"), "--no-progress"],
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(dump.read_text())
    _check_env(got["env"], "the runner")
    assert got["env"]["XNN_LOG_LEVEL"] == "0" and got["env"]["LC_ALL"] == "C.UTF-8"
    assert got["env"]["EDGEPROF_NOTE"] == "kept" and got["env"]["PATH"] == env["PATH"]
    assert got["env"]["VK_ICD_FILENAMES"] == "/opt/icd.json"  # named by the user in EDGEPROF_PASS_ENV
    assert Path(got["cwd"]).is_relative_to(tmp_path / "out")  # its launch folder, as the kit runs it


# --------------------------------------------------------------------------------------------------
# Dask: ingest --workers, and the local cluster itself
# --------------------------------------------------------------------------------------------------

def test_dask_workers_import_nothing_from_the_working_folder(traps, tmp_path):
    need("distributed", "EDGEPROF_REQUIRE_DASK")
    work, marks = traps
    (work / "toy_t1.etdump").write_bytes(etdump())  # named relative to the working folder
    r = subprocess.run([*EP, "ingest", "toy_t1.etdump", "--store", str(tmp_path / "s.duckdb"), "--workers", "2",
                        "--commit", "c1", "--json"], cwd=work, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    d = json.loads(r.stdout)
    assert d["engine"] == "dask local cluster (2 worker processes)" and len(d["added"]) == 1
    assert fired(marks) == []


@pytest.fixture()
def cluster(monkeypatch, tmp_path):
    need("distributed", "EDGEPROF_REQUIRE_DASK")
    from edgeprof.collect.cluster import dask_client

    for k, v in _hostile_env(tmp_path / "empty").items():
        monkeypatch.setenv(k, v)
    before = _listening(os.getpid())
    with dask_client(workers=2) as (client, engine):
        yield client, engine, before


def _listening(pid: int) -> set[tuple[str, int]]:
    import psutil

    return {(c.laddr.ip, c.laddr.port) for c in psutil.Process(pid).net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN}


def test_a_local_cluster_admits_no_one_without_its_key(cluster):
    """Client, scheduler and workers speak TLS with a key made for this cluster: without it — plain TCP, TLS with
    no certificate, TLS with another key — no connection to the scheduler or a worker is established, so no
    request (let alone code to run) is ever read."""
    from distributed.core import rpc
    from distributed.security import Security

    client, _, _ = cluster
    addr = client.scheduler.address
    assert addr.startswith("tls://127.0.0.1:")
    workers = list(client.scheduler_info()["workers"])
    assert len(workers) == 2 and all(w.startswith("tls://127.0.0.1:") for w in workers)
    assert len(set(client.run(os.getpid).values()) - {os.getpid()}) == 2

    async def identity(target: str, args: dict):
        r = rpc(target, connection_args=args, timeout=5)
        try:
            return await r.identity()
        finally:
            await r.close_rpc()

    for target in (addr, *workers):
        port = target.rsplit(":", 1)[1]
        for where, args in ((f"tcp://127.0.0.1:{port}", {}), (target, {}),
                            (target, Security.temporary().get_connection_args("client"))):
            with pytest.raises(Exception):  # noqa: B017 - refused, whichever way
                asyncio.run(identity(where, args))
    assert asyncio.run(identity(addr, client.security.get_connection_args("client")))["type"] == "Scheduler"
    # a TLS client presenting no certificate at all: the scheduler ends the connection
    import ssl

    host, port = addr[len("tls://"):].rsplit(":", 1)
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    try:
        with socket.create_connection((host, int(port)), timeout=5) as s, ctx.wrap_socket(s) as t:
            t.sendall(b"\0" * 64)
            answer = t.recv(1)
    except (ssl.SSLError, OSError):
        answer = b""
    assert answer == b""


def test_local_dask_workers_see_no_outside_variable(cluster):
    client, _, _ = cluster
    envs = client.run(lambda: dict(os.environ))
    assert len(envs) == 2
    for env in envs.values():
        _check_env(env, "a Dask worker")


def test_no_http_server_listens_unless_a_dashboard_is_asked_for(cluster):
    client, engine, before = cluster
    assert "dashboard" not in engine
    ports = {int(a.rsplit(":", 1)[1]) for a in [client.scheduler.address, *client.scheduler_info()["workers"]]}
    here = _listening(os.getpid()) - before
    assert {p for _, p in here} == {int(client.scheduler.address.rsplit(":", 1)[1])}
    for pid in client.run(os.getpid).values():
        got = _listening(pid)
        assert got and {p for _, p in got} <= ports and all(ip == "127.0.0.1" for ip, _ in got), got


def test_a_dashboard_asked_for_listens_on_127_0_0_1_only(tmp_path):
    need("distributed", "EDGEPROF_REQUIRE_DASK")
    import urllib.request

    from click.testing import CliRunner

    from edgeprof.cli import main

    f = tmp_path / "toy_t1.etdump"
    f.write_bytes(etdump())
    r = CliRunner().invoke(main, ["ingest", str(f), "--store", str(tmp_path / "x.duckdb"), "--dashboard"])
    assert r.exit_code == 2 and "--workers" in r.stderr and r.stderr.count("\n") == 1
    from edgeprof.collect.cluster import dask_client

    before = _listening(os.getpid())
    with dask_client(workers=1, dashboard=True) as (client, engine):
        link = re.search(r"http://127\.0\.0\.1:(\d+)/status", engine)
        assert link
        extra = _listening(os.getpid()) - before
        tls = int(client.scheduler.address.rsplit(":", 1)[1])
        assert extra == {("127.0.0.1", tls), ("127.0.0.1", int(link.group(1)))}
        with urllib.request.urlopen(link.group(0), timeout=30) as page:
            assert page.status == 200


# --------------------------------------------------------------------------------------------------
# the MCP memory budget
# --------------------------------------------------------------------------------------------------

def test_a_memory_budget_no_worker_can_start_under_is_refused_at_once(tmp_path):
    """300MB: one line naming the minimum, exit 2, at start. The minimum named is real: a server given it (and
    one 64 MB step more, as it is measured anew) answers every kind of call (history loads DuckDB)."""
    need("mcp", "EDGEPROF_REQUIRE_MCP")
    root = tmp_path / "root"
    _mcp_root(root)
    r = subprocess.run([*EP, "mcp", "--root", str(root), "--memory-limit", "300MB"], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, (r.returncode, r.stderr[-1500:])
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    m = re.fullmatch(r"edgeprof: error: --memory-limit 300 MB is below the minimum of (\d+)MB a tool-call worker "
                     r"needs here \(.*\)\n", r.stderr)
    assert m, r.stderr
    minimum = int(m.group(1))
    assert 300 < minimum < 4096
    answers, _ = _serve(root, CALLS, "--memory-limit", f"{minimum + 64}MB")
    for (name, _), (is_error, _, text) in zip(CALLS, answers):
        assert not is_error, (name, text)


def test_a_worker_that_cannot_start_says_so_in_one_line(tmp_path):
    """Its one line goes to the server, which hands it to the agent; nothing on stderr, no traceback."""
    from edgeprof import child

    r = child.run(child.python_argv("edgeprof.server.worker", "--root", str(tmp_path / "gone"), "--memory",
                                    str(4 << 30)), timeout=300)
    assert r.stderr == "" and r.returncode == 0
    msg = json.loads(r.stdout)
    assert r.stdout.count("\n") == 1 and msg["ready"] is False
    assert msg["error"].startswith("the worker could not start") and "gone" in msg["error"]


# --------------------------------------------------------------------------------------------------
# the parent's copy of edgeprof, and what measures it
# --------------------------------------------------------------------------------------------------

def test_children_run_the_parent_s_copy_and_carry_coverage(tmp_path):
    """A copy of edgeprof on trial (links to the package's files, as the mutation tool makes one) named by
    PYTHONPATH with the mutation tool's coverage start-up: a child runs that copy, gets the coverage settings and
    the test's context, and records its lines under that context — though PYTHONPATH never reaches it."""
    import coverage

    import edgeprof

    src = Path(next(iter(edgeprof.__path__)))
    copy = tmp_path / "copy"
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        rel = Path(dirpath).relative_to(src.parent)
        (copy / rel).mkdir(parents=True, exist_ok=True)
        for name in filenames:
            (copy / rel / name).symlink_to(Path(dirpath) / name)
    probe = copy / "edgeprof" / "_child_probe.py"  # only this copy has it
    probe.write_text("import json, os, sys\nimport edgeprof\n"
                     "print(json.dumps({'edgeprof': edgeprof.__file__, 'isolated': sys.flags.isolated,\n"
                     "                  'cwd': os.getcwd(), 'env': dict(os.environ)}))\n")
    data = tmp_path / "subcov"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(copy), str(ROOT / "tools" / "mutation" / "subcov")]),
           "EDGEPROF_MUTATION_CONTEXT": "tests/x.py::test_y", "EDGEPROF_MUTATION_SUBCOV": str(data),
           "EDGEPROF_MUTATION_INCLUDE": str(probe), "SECRET_TOKEN": SECRET}
    parent = ("from edgeprof import child\n"
              "r = child.run(child.python_argv('edgeprof._child_probe'), timeout=120)\n"
              "print(r.stdout, end='')\nassert r.returncode == 0, r.stderr\n")
    r = subprocess.run([sys.executable, "-c", parent], env=env, capture_output=True, text=True, timeout=300,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout)
    assert got["edgeprof"] == str(copy / "edgeprof" / "__init__.py") and got["isolated"] == 1
    assert got["cwd"] != str(tmp_path) and not os.path.exists(got["cwd"])  # its own folder, removed after it
    _check_env(got["env"], "a child")
    assert got["env"]["EDGEPROF_MUTATION_CONTEXT"] == "tests/x.py::test_y" and "COVERAGE_PROCESS_START" in got["env"]
    measured = {}
    for part in tmp_path.glob("subcov.*"):
        d = coverage.CoverageData(basename=str(part))
        d.read()
        for f in d.measured_files():
            measured[f] = {c for cs in d.contexts_by_lineno(f).values() for c in cs}
    assert measured.get(str(probe)) == {"tests/x.py::test_y"}, measured


def test_python_m_edgeprof_imports_nothing_more_from_its_folder(tmp_path):
    """``python -m edgeprof`` starts with the current folder on its path (what Python imports before edgeprof
    runs is Python's matter); from edgeprof's first line on, nothing more comes from there: modules named after
    every installed library (click, numpy, polars, duckdb …) in that folder stay unused."""
    work, marks = tmp_path / "work", tmp_path / "marks"
    work.mkdir()
    marks.mkdir()
    from module_traps import TRAP

    for name in installed_names() - {"edgeprof", "_distutils_hack"}:
        (work / f"{name}.py").write_text(TRAP.format(marks=str(marks), name=name))
    (work / "toy_t1.etdump").write_bytes(etdump())
    r = subprocess.run([sys.executable, "-m", "edgeprof", "latency", "toy_t1.etdump", "--json", "--no-write"], cwd=work,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-1500:]
    assert json.loads(r.stdout)["schema_version"]
    assert fired(marks) == []
