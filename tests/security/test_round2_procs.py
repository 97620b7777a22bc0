"""Issue 47, round 2 — processes and the edges they cross: what an attack on the first round still got through.

* ``analyze --workers N`` refuses exactly what the local path refuses: every output is checked against every input
  of the command and every other output before anything is written, wherever it is written (threads in any order,
  Dask workers whose own scope knows one file).
* A library search path naming the working folder (an empty entry of ``LD_LIBRARY_PATH``, what
  ``export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/x`` gives when it was unset) loads nothing from there: a real shared
  library built here (a filter of the system's, with a constructor leaving a mark) in the working folder or the MCP
  root never runs in ``edgeprof``, ``python -m edgeprof``, ``edgeprof mcp`` or their children.
* The MCP answers' summary line and tool errors are escaped as the CLI escapes them (through the SDK client).
* ``ingest --git DIR`` runs no program DIR's own ``.git/config`` names.
* A name is escaped once: messages quote names as they are and the one escaping function shows them.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from testdata import DATA
from security_cli import etdump, need, worker_environments

BIN = Path(sys.executable).parent
EP = [str(BIN / "edgeprof")]
PYM = [sys.executable, "-m", "edgeprof"]
UNSAFE_LD = ":/nonexistent-edgeprof-lib"  # an empty first entry: the working folder
# what a terminal acts on: C0 controls (but tab and newline), DEL, C1, bidi controls and line separators
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def _run(argv, cwd, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=timeout, check=False)


# --------------------------------------------------------------------------------------------------
# F4: analyze on Dask workers (and in threads in any order) keeps the output rule
# --------------------------------------------------------------------------------------------------

@pytest.fixture()
def timeline_beside(tmp_path):
    """``c/x.etdp`` and, beside it, a real timeline CSV under the name analysing ``c/x.etdp`` writes — an input
    of the same command."""
    gen, c = tmp_path / "gen", tmp_path / "c"
    gen.mkdir()
    c.mkdir()
    (gen / "x.etdp").write_bytes(etdump("toycnn_portable"))
    r = _run([*EP, "analyze", "gen/x.etdp", "--no-progress", "--quiet"], tmp_path)
    assert r.returncode == 0, r.stderr
    (c / "x.etdp").write_bytes(etdump())
    shutil.copy(gen / "x_exec_all_runs_timeline.csv", c)
    return c, (c / "x_exec_all_runs_timeline.csv").read_bytes()


@pytest.mark.parametrize("how", [["--workers", "2"], ["--jobs", "1"]])
def test_analyze_never_replaces_an_input_timeline_wherever_it_writes(timeline_beside, tmp_path, how):
    """The timeline CSV is read by the command and would be written by it: refused in one line before anything
    is written — on Dask workers (each task a scope of its own file) and with the ETDump analysed first."""
    if how[0] == "--workers":
        need("distributed", "EDGEPROF_REQUIRE_DASK")
    c, before = timeline_beside
    r = _run([*EP, "analyze", "c/x.etdp", "c/x_exec_all_runs_timeline.csv", *how, "--no-progress", "--quiet"],
             tmp_path)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.strip().splitlines() == [
        "edgeprof: error: c/x_exec_all_runs_timeline.csv: cannot write: it is an input of this command: refused"]
    assert (c / "x_exec_all_runs_timeline.csv").read_bytes() == before
    assert sorted(p.name for p in c.iterdir()) == ["x.etdp", "x_exec_all_runs_timeline.csv"]  # nothing written


@pytest.mark.parametrize("how", [["--workers", "2"], []])
def test_two_inputs_with_one_stem_are_refused_before_anything_is_written(tmp_path, how):
    """``m.etdp`` and ``m.etdump`` map to the same outputs: the second would silently replace the first's."""
    if how:
        need("distributed", "EDGEPROF_REQUIRE_DASK")
    d = tmp_path / "d"
    d.mkdir()
    (d / "m.etdp").write_bytes(etdump())
    (d / "m.etdump").write_bytes(etdump("toycnn_portable"))
    r = _run([*EP, "analyze", "d/m.etdp", "d/m.etdump", *how, "--no-progress", "--quiet"], tmp_path)
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("edgeprof: error: d/m_exec_"), lines
    assert "already writes this file (for another input, d/m.etdp)" in lines[0]
    assert sorted(p.name for p in d.iterdir()) == ["m.etdp", "m.etdump"]


# --------------------------------------------------------------------------------------------------
# F5: a library search path naming the working folder
# --------------------------------------------------------------------------------------------------

MARK_C = r"""
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void planted(void) {
    FILE *f = fopen(MARK, "a");
    if (f) { fprintf(f, "%d\n", (int)getpid()); fclose(f); }
}
"""
PLANTED = {"zlib": "libz.so", "lzma": "liblzma.so", "bz2": "libbz2.so", "uuid": "libuuid.so"}


def _system_libraries() -> dict[str, str]:
    """{soname: path} of the libraries a Python process loads for zlib, lzma, bz2 and uuid (from /proc/self/maps
    of a process that imported them)."""
    probe = ("import zlib, lzma, bz2, uuid\nimport re\n"
             "print('\\n'.join(sorted({l.split()[-1] for l in open('/proc/self/maps') if '.so' in l})))")
    out = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, check=True).stdout
    found = {}
    for path in out.split():
        base = os.path.basename(path)
        if any(base.startswith(stem + ".") for stem in PLANTED.values()):
            soname = subprocess.run(["objdump", "-p", path], capture_output=True, text=True, check=True).stdout
            m = re.search(r"SONAME\s+(\S+)", soname)
            found[m.group(1) if m else base] = path
    return found


@pytest.fixture()
def planted(tmp_path):
    """A folder holding filter libraries named as libraries edgeprof's processes load (libz.so.1, liblzma.so.5,
    libbz2.so.1.0, libuuid.so.1): each forwards every symbol to the system's library, so nothing breaks, and its
    constructor appends the loading process's id to the mark file. Checked to work: a plain ``python -c 'import
    zlib'`` in that folder with the unsafe path leaves a mark."""
    if not sys.platform.startswith("linux") or shutil.which("gcc") is None or shutil.which("objdump") is None:
        pytest.skip("needs Linux, gcc and objdump (a glibc loader)")
    root, mark = tmp_path / "root", tmp_path / "mark.txt"
    root.mkdir()
    src = tmp_path / "mark.c"
    src.write_text(MARK_C)
    libs = _system_libraries()
    assert "libz.so.1" in libs, libs
    for soname, real in libs.items():
        subprocess.run(["gcc", "-shared", "-fPIC", f'-DMARK="{mark}"', "-o", str(root / soname), str(src),
                        f"-Wl,-soname,{soname}", f"-Wl,--filter={real}"], check=True, capture_output=True)
    r = _run([sys.executable, "-I", "-c", "import zlib; print(zlib.crc32(b'x'))"], root,
             {"LD_LIBRARY_PATH": UNSAFE_LD})
    assert r.returncode == 0 and mark.exists(), "the planted library did not load: the trap would prove nothing"
    mark.unlink()
    (root / "toy_t1.etdp").write_bytes(etdump())
    return root, mark, sorted(libs)


@pytest.mark.parametrize("argv", [EP, PYM], ids=["edgeprof", "python -m edgeprof"])
def test_a_library_in_the_working_folder_never_loads_into_edgeprof(planted, argv):
    root, mark, _ = planted
    r = _run([*argv, "latency", "toy_t1.etdp", "--json", "--no-write"], root, {"LD_LIBRARY_PATH": UNSAFE_LD})
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout)["kind"] == "latency"
    assert not mark.exists(), f"planted library ran in pid(s) {mark.read_text().split()}"
    assert r.stderr.splitlines() == [("edgeprof: warning: LD_LIBRARY_PATH holds an empty or relative entry (the "
                                      "loader would search the working folder for libraries): started again "
                                      "without it")]


def test_an_unsafe_path_left_after_the_restart_is_refused_in_one_line(planted):
    """The restart happens once (a marker in the environment): should the path still hold such an entry — a
    wrapper setting it again — the program stops in one line rather than loading from the folder."""
    root, mark, _ = planted
    r = _run([*EP, "latency", "toy_t1.etdp", "--json", "--no-write"], root,
             {"LD_LIBRARY_PATH": UNSAFE_LD, "EDGEPROF_RESTARTED": "1"})
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [("edgeprof: error: LD_LIBRARY_PATH holds an empty or relative entry (the loader "
                                      "would search the working folder for libraries): refused — give absolute "
                                      "folders only")]
    assert not mark.exists()


def test_mcp_started_in_its_root_loads_no_library_from_it(planted):
    """``edgeprof mcp`` started in its root (as agents start it) with the unsafe path: the server, and the workers
    it starts, load nothing from the root — before and after a tool call — and the workers' path holds only the
    absolute folder."""
    need("mcp", "EDGEPROF_REQUIRE_MCP")
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client
    from mcp_client import _answer, server_params

    root, mark, _ = planted

    async def go():
        async with stdio_client(server_params(root, env={"LD_LIBRARY_PATH": UNSAFE_LD})) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            before = mark.exists()
            answer = _answer(await asyncio.wait_for(s.call_tool("latency", {"path": "toy_t1.etdp"}), 300))
            return before, answer, [env.get("LD_LIBRARY_PATH") for env in worker_environments(root)]

    before, (is_error, doc, text), paths = asyncio.run(go())
    assert not before and not is_error, text
    assert doc["result"]["kind"] == "latency"
    assert not mark.exists(), f"planted library ran in pid(s) {mark.read_text().split()}"
    assert paths and set(paths) == {UNSAFE_LD.lstrip(":")}, paths


def test_children_get_library_search_paths_of_absolute_folders_only(planted, monkeypatch):
    """A child started in a folder holding the libraries (as a runner is started in its launch folder), under a
    parent whose path names the working folder three ways (an empty entry, ``.``, a relative ``lib``; glibc also
    splits at ``;``): it loads none of them, and its path keeps only the absolute folder."""
    from edgeprof import child

    root, mark, _ = planted
    (root / "lib").mkdir()
    for so in root.glob("lib*.so*"):
        shutil.copy(so, root / "lib" / so.name)
    monkeypatch.setenv("LD_LIBRARY_PATH", "::lib:/nonexistent-a;.:/nonexistent-b:")
    probe = "import os, zlib, lzma, bz2, uuid; print(os.environ.get('LD_LIBRARY_PATH'))"
    r = child.run([sys.executable, "-I", "-c", probe], cwd=root, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "/nonexistent-a:/nonexistent-b"
    assert not mark.exists(), f"planted library ran in pid(s) {mark.read_text().split()}"


# --------------------------------------------------------------------------------------------------
# F8: MCP answers are escaped as the CLI's lines are
# --------------------------------------------------------------------------------------------------

HOSTILE = "h\x1b]0;MCP\x07\u202e_t1.etdp"
SHOWN = r"h\x1b]0;MCP\x07\u202e_t1"


def _strings(doc):
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for v in doc.values():
            yield from _strings(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _strings(v)


def test_mcp_summaries_and_tool_errors_carry_no_raw_control_character(tmp_path):
    need("mcp", "EDGEPROF_REQUIRE_MCP")
    from mcp_client import run_calls

    root = tmp_path / "root"
    root.mkdir()
    (root / HOSTILE).write_bytes(etdump())
    calls = [("latency", {"path": HOSTILE}), ("breakdown", {"path": HOSTILE}),
             ("compare", {"baseline": HOSTILE, "candidate": HOSTILE}),  # a usage error naming the file
             ("latency", {"path": "x\x1b]0;T\x07.etdp"}),  # an input error: no such file
             ("latency", {"path": "../y\x1b]0;T\x07.etdp"})]  # outside the root
    _, _, _, answers = run_calls(root, calls)
    for (name, _), (is_error, doc, text) in zip(calls[:2], answers[:2]):
        assert not is_error, (name, text)
        assert not RAW.findall(doc["summary"]) and SHOWN in doc["summary"], doc["summary"]
        assert any(HOSTILE[:-5] in s for s in _strings(doc["result"])), name  # the result keeps raw names
    for (name, _args), (is_error, _, text) in zip(calls[2:], answers[2:]):
        assert is_error, (name, text)
        assert not RAW.findall(text), (name, text)
        assert "\\\\x1b" not in text, (name, text)  # escaped once
    assert SHOWN in answers[2][2] and "is in both the baseline and the candidate" in answers[2][2]
    assert r"x\x1b]0;T\x07.etdp: no such file" in answers[3][2]
    assert r"'../y\x1b]0;T\x07.etdp'" in answers[4][2]


# --------------------------------------------------------------------------------------------------
# F9: ingest --git runs nothing the checkout's configuration names
# --------------------------------------------------------------------------------------------------

def _git(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b",
           "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b", "GIT_COMMITTER_DATE": "2025-03-04T05:06:07+0200",
           "GIT_AUTHOR_DATE": "2025-03-04T05:06:07+0200"}
    return subprocess.run(["git", "-C", str(repo), *args], input=data, capture_output=True, check=True,
                          env=env).stdout


def test_ingest_git_runs_no_program_the_checkout_names(tmp_path):
    """A checkout from elsewhere (owned by the user, so git's safe.directory lets it pass) whose HEAD carries a
    signature and whose configuration names a signature checker, an fsmonitor, a pager and hooks — each a script
    relative to the checkout leaving a mark: none runs, and the commit, branch and committer time are right."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo, mark = tmp_path / "repo", tmp_path / "git_mark.txt"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main", ".")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "x")
    raw = _git(repo, "cat-file", "commit", "HEAD")
    head, body = raw.split(b"\n\n", 1)
    signed = head + b"\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n x\n -----END PGP SIGNATURE-----\n\n" + body
    sha = _git(repo, "hash-object", "-t", "commit", "-w", "--stdin", data=signed).decode().strip()
    _git(repo, "update-ref", "HEAD", sha)
    for name in ("sig.sh", "fsmonitor.sh", "pager.sh"):
        (repo / name).write_text(f"#!/bin/sh\necho {name} >> {mark}\nexit 1\n")
        (repo / name).chmod(0o755)
    (repo / "hooks").mkdir()
    shutil.copy(repo / "pager.sh", repo / "hooks" / "post-checkout")
    for key, value in (("log.showSignature", "true"), ("gpg.program", "./sig.sh"), ("core.fsmonitor", "./fsmonitor.sh"),
                       ("core.pager", "./pager.sh"), ("pager.show", "./pager.sh"), ("core.hooksPath", "hooks")):
        _git(repo, "config", key, value)
    (tmp_path / "a.etdp").write_bytes(etdump())
    r = _run([*EP, "ingest", "a.etdp", "--store", "s.duckdb", "--git", "repo", "--json"], tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert not mark.exists(), f"git ran {mark.read_text().split()}"
    added = json.loads(r.stdout)["added"]
    assert [(a["commit"], a["time"]) for a in added] == [(sha, "2025-03-04T03:06:07")]  # committer time, in UTC


# --------------------------------------------------------------------------------------------------
# F11: a name is escaped once
# --------------------------------------------------------------------------------------------------

def test_names_in_messages_are_escaped_once(tmp_path):
    """An ESC in an ANE report's tool, in a model.mil, in a run configuration's experiment name and in an argument
    shows as ``\\x1b`` (an ESC), never as ``\\\\x1b`` (which by the display rule means the four characters)."""
    doc = json.loads((DATA / "anemll" / "anemll_profile_0.4.1.illustrative.json").read_text())
    doc["tool"] += "\x1b]0;T\x07"
    (tmp_path / "p.json").write_text(json.dumps(doc))
    text = (DATA / "coreml" / "sample_conv_palettized4_ios16.model.mil.txt").read_text()
    body = text.index("{", text.index("func"))
    (tmp_path / "x.mlmodelc").mkdir()
    (tmp_path / "x.mlmodelc" / "model.mil").write_text(text[:body + 1] + "\n \x1b]0;T\x07\n" + text[body + 1:])
    cfg = {"model": str(DATA / "pte" / "toycnn_xnn.pte"), "experiments": [{"name": "e\x1b]0;T\x07"}]}
    (tmp_path / "c.json").write_text(json.dumps(cfg))
    cases = [(["ane", "p.json"], r"(its tool is 'anemll-profile\x1b]0;T\x07')"),
             (["coreml", "x.mlmodelc"], r"unexpected character '\x1b'"),
             (["run", "--config", "c.json", "--dry-run"], r"experiments[0].name: 'e\x1b]0;T\x07' must be letters"),
             (["schema", "k\x1b]0;T\x07"], r"unknown document kind 'k\x1b]0;T\x07'")]
    for args, want in cases:
        r = _run([*EP, *args], tmp_path)
        assert r.returncode == 2, (args, r.stderr)
        assert want in r.stderr and "\\\\x1b" not in r.stderr and not RAW.findall(r.stderr), (args, r.stderr)
