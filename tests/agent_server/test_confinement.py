"""The agent server touches nothing outside its root: driven through the MCP SDK's client, on a root full of
traps (:mod:`traps`) — arguments pointing out, symlinks found in folders, manifests naming outside files, a
deeper root with trace logs and artifacts above it, FIFOs and devices, stores with views — and with budgets.

The last test runs every tool under ``strace -f`` and a Python audit hook (in the server and in every worker)
and checks from the system calls themselves that nothing outside the root was opened or written."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import mcp  # noqa: F401
except ImportError:
    if os.environ.get("EDGEPROF_REQUIRE_MCP"):
        raise
    pytest.skip("the mcp extra is not installed", allow_module_level=True)

import traps
from mcp_client import run_calls
from strace_log import OPENS, STRACE, parse, under

HELPERS = Path(__file__).resolve().parents[1] / "helpers"


@pytest.fixture()
def t(tmp_path):
    return traps.build(tmp_path)


def _digest(folder: Path) -> dict:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def _relaxed(text: str) -> str:
    return text.replace("\n", " ")


def _chain(n: int) -> str:
    """A model.mil of ``n`` relu ops in a chain (the static analysis takes seconds at 20,000)."""
    lines = ["program(1.0)", "{", "    func main<ios16>(tensor<fp32, [1, 64]> x) {"]
    prev = "x"
    for i in range(n):
        lines.append(f'            tensor<fp32, [1, 64]> y{i} = relu(x = {prev})[name = string("y{i}")];')
        prev = f"y{i}"
    return "\n".join([*lines, f"        }} -> ({prev});", "}"]) + "\n"


def test_arguments_found_files_manifests_and_stores_stay_inside(t):
    root, out = t["root"], t["outside"]
    before = _digest(out)
    calls = [
        ("compare", {"baseline": "../outside/secret_t1.etdump", "candidate": "tel_xnn.etdp", "run_dir": "."}),  # 1
        ("compare", {"baseline": str(out / "secret_t1.etdump"), "candidate": "tel_xnn.etdp", "run_dir": "."}),
        ("compare", {"baseline": str(out / "secret_t1.etdump"), "candidate": "tel_xnn.etdp"}),
        ("compare", {"baseline": "tel_xnn.etdp", "candidate": "linked_t1.etdump"}),
        ("validate", {"run_dir": "."}),  # 2: the symlink found in the folder
        ("breakdown", {"path": "mf_abs/secret_t1.etdump"}),  # 2: manifests naming the outside model
        ("breakdown", {"path": "mf_rel/secret_t1.etdump"}),
        ("coreml", {"path": "leak.mlmodelc"}),  # 2: model.mil → an outside text file
        ("coreml", {"path": "zero.mlmodelc"}),  # 6: model.mil → /dev/zero
        ("latency", {"path": "fifo.etdp"}),  # 6: a FIFO
        ("history", {"store": "fifo_store"}),  # 6: a FIFO as the store
        ("history", {"store": "view.duckdb"}),  # 4: a view reading an outside file
        ("history", {"store": "huge.duckdb"}),  # 6: a view over range(1e11)
        ("program", {"path": "tel_xnnq8.pte"}),  # honest calls still work
    ]
    _, _, _, res = run_calls(root, calls)
    texts = [_relaxed(text) for _, _, text in res]
    assert all(traps.SECRET not in x for x in texts)
    for i in range(4):
        assert res[i][0] and "outside the allowed roots" in texts[i], texts[i]
    assert not res[4][0] and "linked_t1" not in texts[4] and "secret_t1.etdump" not in texts[4].replace(
        "mf_abs/secret_t1.etdump", "").replace("mf_rel/secret_t1.etdump", "")
    for k in (5, 6):
        doc = res[k][1]["result"]
        assert not res[k][0] and doc["etrecord_status"] == "absent" and "program" not in doc
        assert str(out) not in texts[k]
    assert res[7][0] and "outside the allowed roots" in texts[7] and "TOPSECRET" not in texts[7]
    assert res[8][0] and "outside the allowed roots" in texts[8]
    assert res[9][0] and "FIFO" in texts[9]
    assert res[10][0] and "FIFO" in texts[10]
    assert res[11][0] and "not an edgeprof history store" in texts[11] and "launches (view)" in texts[11]
    assert res[12][0] and "not an edgeprof history store" in texts[12] and "runs (view)" in texts[12]
    assert not res[13][0]
    assert _digest(out) == before


def test_writes_stay_inside_and_never_through_links_or_fifos(t):
    root, out = t["root"], t["outside"]
    before = _digest(out)
    calls = [
        ("analyze", {"path": "."}),
        ("report", {"run_dir": "r6"}),  # 5: report.md → an outside file
        ("report", {"run_dir": "r7"}),  # 5/6: report.md is a FIFO (used to hang the call forever)
        ("report", {"run_dir": "r8"}),  # 5: report.md → /proc/self/fd/1
        ("report", {"run_dir": "deep/out_toycnn/runs/linux", "baseline": "portable", "candidate": "xnnpack_fp32"}),
    ]
    _, _, _, res = run_calls(root, calls, "--allow-write", call_timeout=120)
    texts = [_relaxed(x) for _, _, x in res]
    assert not res[0][0], texts[0]
    assert not list(root.rglob("linked_t1*.csv"))  # the outside ETDump's events never reached a CSV
    assert list(root.rglob("tel_xnn_exec_all_runs_timeline.csv"))
    assert res[1][0] and "symbolic link" in texts[1]
    assert res[2][0] and "not a regular file" in texts[2]
    assert res[3][0] and "symbolic link" in texts[3]
    assert not res[4][0] and (t["deep_run"] / "report.md").is_file()
    assert _digest(out) == before
    assert (root / "r6" / "report.md").is_symlink() and (out / "report_target.md").read_text() == traps.SECRET
    assert not [p for p in root.rglob("*") if ".edgeprof-" in p.name]  # no temporary left behind


def test_a_deeper_root_discovers_nothing_above_it(t):
    """3: rooted at out_toycnn/runs/linux, the trace folder beside it, the manifest and the artifacts above it
    are never read (the CLI, pointed at the same folder, finds them)."""
    run = t["deep_run"]
    _, _, _, res = run_calls(run, [("validate", {"run_dir": "."}),
                                   ("compare", {"baseline": "portable", "candidate": "xnnpack_fp32", "run_dir": "."}),
                                   ("report", {"run_dir": ".", "baseline": "portable", "candidate": "xnnpack_fp32"})],
                             "--allow-write")
    for is_error, _, text in res:
        assert not is_error, text
        assert traps.SECRET not in text and "linux_trace" not in text and "artifacts" not in text
    md = (run / "report.md").read_text()
    assert traps.SECRET not in md and "xnntrace" not in md
    cli = subprocess.run([sys.executable, "-m", "edgeprof", "report", str(run), "-b", "portable", "-c", "xnnpack_fp32",
                          "--json"], capture_output=True, text=True)
    assert cli.returncode == 0 and traps.SECRET in cli.stdout  # the CLI's documented search does climb


def test_budgets_stop_a_call_without_stopping_the_server(t):
    root = t["root"]
    (root / "slow.mlmodelc").mkdir()
    (root / "slow.mlmodelc" / "model.mil").write_text(_chain(20000))  # seconds of static analysis
    calls = [("coreml", {"path": "slow.mlmodelc"}), ("program", {"path": "tel_xnnq8.pte"}),
             ("kernels", {"path": "xnn.log"})]
    _, _, _, res = run_calls(root, calls, "--timeout", "1.5", concurrent=True, call_timeout=60)
    texts = [_relaxed(x) for _, _, x in res]
    assert res[0][0] and "time budget of 1.5 s spent" in texts[0]
    assert not res[1][0] and not res[2][0]  # the calls beside the stuck one answered

    big = root / "big_exec_all_runs_timeline.csv"
    with open(big, "wb") as f:  # 1.5 GB, sparse: reading it needs more than the memory budget allows
        f.truncate(1536 << 20)
    _, _, _, res = run_calls(root, [("latency", {"path": big.name}), ("program", {"path": "tel_xnnq8.pte"})],
                             "--memory-limit", "1GB", call_timeout=60)
    assert res[0][0] and "memory budget of 1 GB spent" in _relaxed(res[0][2])
    assert not res[1][0]


@pytest.mark.parametrize("part", ["root-even", "root-odd", "deeper-root"])
def test_the_server_opens_and_writes_nothing_outside_under_strace(t, tmp_path, part):
    """Every tool on the trap root, the server and its workers traced by strace (native opens included) and
    by a Python audit hook; then the same for the deeper root. (The trap root's calls in two halves, each
    with its own server, so that they run in parallel.)"""
    if shutil.which("strace") is None:
        if os.environ.get("EDGEPROF_REQUIRE_MCP"):
            raise AssertionError("strace is needed for this test (Debian package strace)")
        pytest.skip("strace is not installed")
    root, out, run = t["root"], t["outside"], t["deep_run"]
    calls = [("latency", {"path": "tel_xnn.etdp"}), ("latency", {"path": "linked_t1.etdump"}),
             ("compare", {"baseline": "../outside/secret_t1.etdump", "candidate": "tel_xnn.etdp", "run_dir": "."}),
             ("compare", {"baseline": "tel_xnn.etdp", "candidate": "tel_xnnq8.etdp"}),
             ("breakdown", {"path": "mf_abs/secret_t1.etdump"}), ("breakdown", {"path": "mf_rel/secret_t1.etdump"}),
             ("breakdown", {"path": "tel_xnnq8.etdp", "program": "tel_xnnq8.pte"}),
             ("kernels", {"path": "xnn.log"}), ("validate", {"run_dir": "."}), ("ane", {"path": "profile.json"}),
             ("program", {"path": "tel_xnnq8.pte"}), ("coreml", {"path": "kv.mlpackage"}),
             ("coreml", {"path": "leak.mlmodelc"}), ("coreml", {"path": "zero.mlmodelc"}),
             ("phases", {"path": "tel_xnn.etdp"}), ("history", {"store": "view.duckdb"}),
             ("history", {"store": "huge.duckdb"}), ("history", {"store": "fifo_store"}),
             ("latency", {"path": "fifo.etdp"}), ("analyze", {"path": "."}), ("report", {"run_dir": "r6"}),
             ("report", {"run_dir": "r7"}), ("report", {"run_dir": "r8"})]
    deep_calls = [("validate", {"run_dir": "."}), ("report", {"run_dir": ".", "baseline": "portable",
                                                              "candidate": "xnnpack_fp32"})]
    server_root, todo, forbidden_extra = {"root-even": (root, calls[0::2], []), "root-odd": (root, calls[1::2], []),
                                          "deeper-root": (run, deep_calls, [str(t["deep"])])}[part]
    log, audit = tmp_path / f"strace_{server_root.name}.log", tmp_path / f"audit_{server_root.name}.jsonl"
    cmd = [*STRACE, "-o", str(log), sys.executable, "-m", "edgeprof"]
    _, _, _, res = run_calls(server_root, todo, "--allow-write", "--timeout", "60", command=cmd, call_timeout=200,
                             env={"PYTHONPATH": str(HELPERS / "audit_site"), "EDGEPROF_AUDIT_LOG": str(audit)})
    assert all(traps.SECRET not in text for _, _, text in res)
    real_root = os.path.realpath(server_root)
    forbidden = [os.path.realpath(out), "/dev/zero"] + [os.path.realpath(f) for f in forbidden_extra]
    allowed_writes = [real_root, os.path.realpath(tmp_path), "/dev/null", "/dev/tty"]

    def outside(p: str) -> bool:
        return under(p, forbidden) and not under(p, [real_root])

    syscalls = parse(log.read_text(errors="replace"), real_root)
    assert len(syscalls) > 1000 and any(c.name == "clone" or c.name == "clone3" for c in syscalls) is not None
    opened_out = [c for c in syscalls if c.name in OPENS | {"execve"} and c.ok and any(outside(p) for p in c.paths)]
    assert not opened_out, opened_out[:5]
    tried_out = [c for c in syscalls if c.name in OPENS and any(outside(p) for p in c.paths)]
    assert not tried_out, tried_out[:5]  # not even an attempt the kernel had to refuse
    wrote_out = [c for c in syscalls if c.writes and c.ok and not all(
        under(p, allowed_writes) or p.startswith("/tmp/edgeprof-") or "__pycache__" in p for p in c.paths)]
    assert not wrote_out, wrote_out[:5]
    events = [json.loads(x) for x in audit.read_text().splitlines()]
    assert len({e["pid"] for e in events}) >= len(todo)  # the server and a worker per call were watched
    assert not [e for e in events if outside(e["real"])], [e for e in events if outside(e["real"])][:5]
