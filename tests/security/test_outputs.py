"""The output rule and the removal rule, through the real CLI: a command never writes over a file it reads (by
whatever spelling: the same name, ``./``, ``../d/``, a hard link, a symlink), over the history store it reads, or
twice over one output; a view command asked for ``--json`` writes no files nobody asked for; a FIFO nobody reads
is refused at once; and only files a process made are ever removed (never a file found by its name)."""

from __future__ import annotations

import gzip
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from testdata import DATA
from security_cli import cli, refused, sha


LOG_ON = DATA / "xnnpack" / "mac_sme2_on_xnntrace.log"
LOG_OFF = DATA / "xnnpack" / "mac_sme2_off_xnntrace.log"


def listing(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): (sha(p) if p.is_file() else "dir") for p in sorted(folder.rglob("*"))}


def recording(folder: Path, name: str, fixture: str = "toycnn_xnn.N20") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_bytes(gzip.decompress((DATA / "etdump" / f"{fixture}.etdp.gz").read_bytes()))
    return p


@pytest.fixture()
def inputs(tmp_path):
    d = tmp_path / "d"
    a = recording(d, "a.etdp")
    b = recording(d, "b.etdp", "toycnn_portable.N20")
    log = d / "on_xnntrace.log"
    log.write_bytes(LOG_ON.read_bytes())
    log2 = d / "off_xnntrace.log"
    log2.write_bytes(LOG_OFF.read_bytes())
    return {"dir": d, "a": a, "b": b, "log": log, "log2": log2}


def test_an_output_that_is_an_input_is_refused_whatever_its_spelling(inputs, tmp_path):
    d, a = inputs["dir"], inputs["a"]
    os.link(a, d / "hard.etdp")
    (d / "soft.etdp").symlink_to("a.etdp")
    (tmp_path / "elsewhere").mkdir()
    before = listing(d)
    spellings = [(a, None), ("./a.etdp", d), ("../d/a.etdp", tmp_path / "elsewhere"), (d / "hard.etdp", None),
                 (d / "soft.etdp", None), (f"{d}//./a.etdp", None)]
    for out, cwd in spellings:
        refused(cli("trace", a, "--out", out, cwd=cwd), "is an input of this command")
        refused(cli("report", a, "--out", out, cwd=cwd), "is an input of this command")
    assert listing(d) == before  # every input's bytes, and no file added


def test_every_command_with_an_output_option_refuses_its_input(inputs):
    a, b, log, log2 = inputs["a"], inputs["b"], inputs["log"], inputs["log2"]
    d = inputs["dir"]
    before = listing(d)
    cases = [("report", a, "--html", a), ("report", a, b, "--out", d / "r.md", "--html", b),
             ("kernels", log, "--out", log), ("kernel-view", "-b", log, "-c", log2, "--out", log2),
             ("compare", a, b, "--out", b), ("compare", a, b, "--out", a)]
    for args in cases:
        refused(cli(*args), "is an input of this command")
    assert listing(d) == before  # report's Markdown was not written either: all outputs or none


def _store(tmp_path: Path, recordings: list[Path], store) -> None:
    res = cli("ingest", *recordings, "--store", store, "--commit", "c1", "--device", "pixel")
    assert res.exit_code == 0, res.output


def test_history_never_writes_over_or_into_the_store_it_reads(inputs, tmp_path):
    store = tmp_path / "s.duckdb"
    _store(tmp_path, [inputs["a"]], store)
    kept = sha(store)
    for args in (("--html", store), ("--markdown", store), ("--html", tmp_path / "." / "s.duckdb")):
        refused(cli("history", "--store", store, *args), "is an input of this command")
    refused(cli("history", "--store", store, "--html", f"{store}.wal"), "belongs to the history store")
    assert sha(store) == kept and not Path(f"{store}.wal").exists()
    res = cli("history", "--store", store, "--json")
    assert (res.exit_code == 0 and '"launches"' in res.output) or '"points"' in res.output, res.output[-400:]

    dataset = tmp_path / "ds"
    _store(tmp_path, [inputs["a"]], f"{dataset}/")
    before = listing(dataset)
    for target in (dataset / "trend.html", dataset / "launches" / "x.html"):
        refused(cli("history", "--store", f"{dataset}/", "--html", target), "inside the history store")
    assert listing(dataset) == before
    res = cli("history", "--store", f"{dataset}/", "--html", tmp_path / "trend.html")
    assert res.exit_code == 0 and (tmp_path / "trend.html").stat().st_size > 0, res.output[-400:]


def test_json_view_commands_write_no_files_unless_asked(inputs, tmp_path):
    d, a, b, log = inputs["dir"], inputs["a"], inputs["b"], inputs["log"]
    before = listing(d)
    for args in (("breakdown", a), ("latency", a), ("compare", a, b), ("kernels", log),
                 ("plan", a, b, "--effect", "5%"), ("breakdown", a, "--no-write")):
        res = cli(*args, "--json")
        assert res.exit_code == 0 and res.stdout.lstrip().startswith("{"), (args, res.output[-400:])
        assert listing(d) == before, (args, sorted(set(listing(d)) - set(before)))
    out = tmp_path / "asked"
    res = cli("breakdown", a, "--json", "--output-dir", out)  # asked: written where asked
    written = {p.name for p in out.iterdir()}
    assert res.exit_code == 0 and {"a_category_summary.csv", "a_operator_details.csv", "a_breakdown.json"} <= written
    assert listing(d) == before
    res = cli("compare", a, b, "--json", "--out", tmp_path / "cmp.json")
    assert res.exit_code == 0 and (tmp_path / "cmp.json").is_file()
    res = cli("breakdown", a)  # without --json: the documented default, beside the input
    assert res.exit_code == 0 and (d / "a_breakdown.json").is_file()


def test_two_recordings_of_one_model_get_two_traces(tmp_path):
    d = tmp_path / "runs"
    first = recording(d, "gpt_xnn.run1.etdp")
    second = recording(d, "gpt_xnn.run2.etdp", "toycnn_portable.N20")
    for p in (first, second):
        res = cli("trace", p, "--json")
        assert res.exit_code == 0, res.output
    traces = sorted(p.name for p in d.glob("*.trace.json"))
    assert traces == ["gpt_xnn.run1.trace.json", "gpt_xnn.run2.trace.json"]
    assert sha(d / traces[0]) != sha(d / traces[1])


def test_one_command_never_writes_one_output_twice_for_different_inputs(tmp_path):
    a = recording(tmp_path / "x", "model.etdp")
    b = recording(tmp_path / "y", "model.etdp", "toycnn_portable.N20")
    out = tmp_path / "out"
    line = refused(cli("breakdown", a, b, "--output-dir", out), "already wrote this file")
    assert "model_" in line
    first = (out / "model_breakdown.json").read_text()
    assert '"input": "' + str(a) in first.replace("\\/", "/")  # the first input's files stay, never replaced
    logs = [tmp_path / "p" / "dev_xnntrace.log", tmp_path / "q" / "dev_xnntrace.log"]
    for p, src in zip(logs, (LOG_ON, LOG_OFF)):
        p.parent.mkdir()
        p.write_bytes(src.read_bytes())
    refused(cli("kernels", *logs, "--output-dir", out), "already wr")


def test_a_file_named_like_a_temporary_file_is_an_input_like_any_other(tmp_path):
    """The removal rule: nothing is removed because of its name (the old sweep removed this input first)."""
    d = tmp_path / "in"
    p = recording(d, ".toy.edgeprof-999998-abcdef01.tmp")
    other = recording(d, ".x.edgeprof-999998-abcdef02.tmp")
    kept = sha(p)
    res = cli("analyze", p, "--no-progress", "--json")
    assert res.exit_code == 0, res.output[-600:]
    assert p.exists() and sha(p) == kept and other.exists()
    assert (d / ".toy.edgeprof-999998-abcdef01_exec_ops_stats.csv").is_file()
    res = cli("trace", other, "--out", d / "t.json")
    assert res.exit_code == 0 and p.exists() and other.exists(), res.output[-600:]


def test_the_scope_is_one_command_and_includes_its_threads(inputs):
    """In a long-lived process each API call has its own scope (a file one command read may be the next one's
    output), and a file read in a thread of the command counts as its input."""
    import edgeprof
    from edgeprof.errors import OutputError
    from edgeprof.files import command_scope, read_regular
    from edgeprof.writer import write_text

    a, b = inputs["a"], inputs["b"]
    with pytest.raises(OutputError, match="is an input of this command"):
        edgeprof.trace(a, out=a)
    edgeprof.breakdown(a)
    kept = sha(b)
    edgeprof.trace(a, out=inputs["dir"] / "b_copy.json")
    victim = inputs["dir"] / "victim.txt"
    victim.write_text("read by another command")
    edgeprof.trace(a, out=victim)  # not an input of this command: replaced
    assert victim.read_bytes().startswith(b"{") and sha(b) == kept
    with command_scope():
        t = threading.Thread(target=read_regular, args=(b, 1 << 30))
        t.start()
        t.join()
        with pytest.raises(OutputError, match="is an input of this command"):
            write_text(b, "x")
    assert sha(b) == kept


def _edgeprof(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "edgeprof", *map(str, args)], check=False, capture_output=True,
                          text=True, timeout=timeout)


def test_a_fifo_output_is_refused_at_once_without_a_reader_and_written_with_one(inputs, tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    r = _edgeprof("report", inputs["a"], "--out", fifo)  # the timeout only guards against a hang
    assert r.returncode == 2 and "no reader" in r.stderr and "Traceback" not in r.stderr, r.stderr[-600:]

    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader is there before the command starts
    try:
        p = subprocess.Popen([sys.executable, "-m", "edgeprof", "report", str(inputs["a"]), "--out", str(fifo)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        got = bytearray()
        deadline = time.monotonic() + 120  # a guard, not a measurement
        while time.monotonic() < deadline:
            ready, _, _ = select.select([reader], [], [], 0.2)
            chunk = b""
            if ready:
                try:
                    chunk = os.read(reader, 1 << 16)
                except BlockingIOError:
                    chunk = b""
            got += chunk
            if not chunk and p.poll() is not None:
                break
        _, err = p.communicate(timeout=60)
    finally:
        os.close(reader)
    assert p.returncode == 0, err[-600:]
    assert got.startswith(b"#") and b"a.etdp" in got
