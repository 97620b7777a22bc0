"""Round 2 of the hostile-input work on files (issue 47): what the first round's rules still let through, each
reproduced from the real fixtures through the CLI.

* the history store's write-ahead log: DuckDB opens ``<store>.wal`` by name and follows a link there — ``ingest``
  and ``export --to`` refuse a link, a hard link, a FIFO there (nothing outside, no input, overwritten);
* compressed timeline CSVs: only gzip is decompressed (under the one rule); zlib, zstd, bzip2, xz, lz4 content —
  which Polars would decompress on its own, unbounded — is refused naming the format, in ``latency``, in the
  op-types side file and in ``validate`` (which metered nothing before);
* outputs written in place (``/dev/stdin``, ``/dev/fd/N``) are checked again once the command has read its inputs;
* ``skills install`` reads what is at its target through the one opener (a FIFO, a device: refused);
* an ETRecord's zip directory is bounded before :mod:`zipfile` parses it (counted: no entry object made);
* gzip data of several members is read whole, under the same bounds;
* ``example DIR --force`` never writes through a link found in DIR.
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest
from testdata import DATA
from security_cli import cli, refused, sha


TOY = DATA / "etdump" / "toycnn_xnn.N20.etdp.gz"
TEL = DATA / "etdump" / "tel_xnn.N20.etdp.gz"
REC = DATA / "etrecord" / "toycnn_xnn.etrecord"


def run(args, *, cwd, timeout=120, **kw):
    """The CLI in a child process (stdin, extra descriptors, limits), as a user runs it."""
    return subprocess.run([sys.executable, "-m", "edgeprof", *map(str, args)], check=False, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, **kw)


def refused_run(r, *why: str) -> str:
    assert r.returncode == 2, (r.returncode, r.stderr[-800:])
    errors = [line for line in r.stderr.splitlines() if line.startswith("edgeprof: error:")]
    assert len(errors) == 1 and all(w in errors[0] for w in why) and "Traceback" not in r.stderr, r.stderr[-800:]
    return errors[0]


def unpack(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(gzip.decompress(src.read_bytes()))
    return dst


# ---- F2: the store's write-ahead log --------------------------------------------------------------------------

@pytest.fixture()
def store(tmp_path):
    """A store holding one launch, and a second recording to ingest into it."""
    d = tmp_path / "shared"
    a, t = unpack(TOY, d / "a.etdp"), unpack(TEL, d / "t.etdp")
    res = cli("ingest", a, "--store", d / "s.duckdb", "--commit", "c1")
    assert res.exit_code == 0, res.output
    assert not os.path.lexists(d / "s.duckdb.wal")
    return {"dir": d, "store": d / "s.duckdb", "wal": d / "s.duckdb.wal", "t": t, "victim": tmp_path / "victim.txt"}


@pytest.mark.parametrize("aim", ["outside", "the input", "nothing"])
def test_ingest_refuses_a_link_at_the_store_wal(store, aim):
    victim, t, wal = store["victim"], store["t"], store["wal"]
    victim.write_text("precious notes\n")
    target = {"outside": victim, "the input": t, "nothing": victim.with_name("made.txt")}[aim]
    wal.symlink_to(target)
    kept = sha(t), sha(victim), sha(store["store"])
    line = refused(cli("ingest", t, "--store", store["store"], "--commit", "c2"), "s.duckdb.wal", "symbolic link")
    assert "s.duckdb" in line
    assert (sha(t), sha(victim), sha(store["store"])) == kept  # nothing written through it, the store unchanged
    assert not victim.with_name("made.txt").exists()  # a dangling link's target is not created
    assert os.readlink(wal) == str(target)  # and the link is left to be seen


def test_ingest_refuses_a_hard_link_or_fifo_at_the_store_wal(store):
    t, wal = store["t"], store["wal"]
    kept = sha(t)
    os.link(t, wal)  # the WAL's name and the input ingested are one file
    refused(cli("ingest", t, "--store", store["store"], "--commit", "c2"), "s.duckdb.wal", "2 names")
    assert sha(t) == kept
    wal.unlink()
    os.mkfifo(wal)  # DuckDB would block on it for ever while opening the store (reading or writing)
    refused_run(run(["ingest", t, "--store", store["store"], "--commit", "c2"], cwd=store["dir"], timeout=60),
                "s.duckdb.wal", "not a regular file")
    refused_run(run(["history", "--store", store["store"]], cwd=store["dir"], timeout=60), "s.duckdb.wal")
    wal.unlink()
    ok = cli("ingest", t, "--store", store["store"], "--commit", "c2")  # nothing there: stored as ever
    assert ok.exit_code == 0 and "1 launch(es) added" in ok.output, ok.output


def test_export_to_a_store_refuses_a_link_at_its_wal(store, tmp_path):
    victim = store["victim"]
    victim.write_text("precious notes\n")
    kept = sha(victim)
    out = store["dir"] / "copy.duckdb"
    (store["dir"] / "copy.duckdb.wal").symlink_to(victim)
    refused(cli("export", "--store", store["store"], "--to", out), "copy.duckdb.wal", "symbolic link")
    assert sha(victim) == kept and not out.exists()  # the store it would have made is not left behind


# ---- F3: compressed timeline CSVs ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def analyzed(tmp_path_factory):
    """The timeline CSVs ``analyze`` writes for a fixture ETDump with its ETRecord (op types in a side file)."""
    d = tmp_path_factory.mktemp("analyzed")
    e = unpack(TOY, d / "toycnn_xnn.etdp")
    (d / "toycnn_xnn.etrecord").write_bytes(REC.read_bytes())
    res = cli("analyze", e, "--etrecord", d / "toycnn_xnn.etrecord")
    assert res.exit_code == 0, res.output
    timeline = d / "toycnn_xnn_exec_all_runs_timeline.csv"
    assert timeline.exists() and (d / "toycnn_xnn_exec_all_runs_timeline_op_types.csv").exists()
    return timeline


def _lz4_frame(data: bytes) -> bytes:
    """An LZ4 frame holding ``data`` in one uncompressed block (enough to carry the frame's magic and content)."""
    return b"\x04\x22\x4d\x18" + b"\x60\x40\x82" + struct.pack("<I", len(data) | 0x80000000) + data + b"\0\0\0\0"


COMPRESSORS = {
    "zlib": zlib.compress,
    "bzip2": __import__("bz2").compress,
    "xz": __import__("lzma").compress,
    "lz4": _lz4_frame,
}


@pytest.mark.parametrize("fmt", sorted(COMPRESSORS))
def test_a_timeline_csv_in_another_compression_is_refused_naming_it(analyzed, tmp_path, fmt):
    """zlib content was decompressed by Polars on its own (unbounded: 67 KB of zstd reached 3.8 GB); now no CSV
    reaches Polars compressed: refused, naming the format."""
    bad = tmp_path / "m_exec_all_runs_timeline.csv"
    bad.write_bytes(COMPRESSORS[fmt](analyzed.read_bytes()))
    refused(cli("latency", bad, "--no-write"), "m_exec_all_runs_timeline.csv", f"{fmt}-compressed")
    inner = tmp_path / "n_exec_all_runs_timeline.csv"  # compressed again inside gzip data
    inner.write_bytes(gzip.compress(COMPRESSORS[fmt](analyzed.read_bytes())))
    refused(cli("latency", inner, "--no-write"), "n_exec_all_runs_timeline.csv", f"{fmt}-compressed",
            "compressed twice")


def test_a_zstd_timeline_csv_is_refused_before_polars_sees_it(analyzed, tmp_path):
    """A zstd frame (Polars decompresses it whole) is refused by its magic: here a skippable frame, then the
    standard one's first bytes — nothing decompressed, whatever follows."""
    for head in (b"\x28\xb5\x2f\xfd", b"\x50\x2a\x4d\x18"):
        bad = tmp_path / "z_exec_all_runs_timeline.csv"
        bad.write_bytes(head + b"\x00" * 64)
        refused(cli("latency", bad, "--no-write"), "z_exec_all_runs_timeline.csv", "zstd-compressed")


def test_the_op_types_side_file_is_checked_as_the_timeline_is(analyzed, tmp_path):
    csv, side = tmp_path / "m_exec_all_runs_timeline.csv", tmp_path / "m_exec_all_runs_timeline_op_types.csv"
    csv.write_bytes(analyzed.read_bytes())
    side.write_bytes(zlib.compress(analyzed.with_name(analyzed.stem + "_op_types.csv").read_bytes()))
    refused(cli("latency", csv, "--no-write"), "m_exec_all_runs_timeline_op_types.csv", "zlib-compressed")
    side.write_bytes(analyzed.with_name(analyzed.stem + "_op_types.csv").read_bytes())
    assert cli("latency", csv, "--no-write").exit_code == 0


@pytest.fixture()
def run_folder(tmp_path):
    res = cli("example", tmp_path / "run")
    assert res.exit_code == 0, res.output
    assert cli("analyze", tmp_path / "run").exit_code == 0
    return tmp_path / "run"


def _validate_line(run_dir: Path, name: str) -> str:
    res = cli("validate", run_dir)
    lines = [ln for ln in res.output.splitlines() if name in ln and "all-runs timeline" in ln]
    assert lines, res.output[-2000:]
    return lines[0]


def test_validate_reads_a_timeline_csv_through_the_one_decompression_rule(run_folder):
    """``validate`` scanned the file with Polars, which decompressed gzip, zlib and zstd itself (unmetered)."""
    t = next(run_folder.rglob("toycnn_portable_t1_exec_all_runs_timeline.csv"))
    good = t.read_bytes()
    t.write_bytes(zlib.compress(good))
    assert "zlib-compressed" in _validate_line(run_folder, t.name)
    # gzip is read — under the rule: a bomb stops at the ratio bound, with the figures
    line = b"Method::execute,1.0,0\n"
    t.write_bytes(gzip.compress(b"name,duration_ms,run_index\n" + line * ((80 << 20) // len(line)), 9))
    assert "possible gzip bomb" in _validate_line(run_folder, t.name)
    t.write_bytes(gzip.compress(good))
    assert "unreadable" not in _validate_line(run_folder, t.name)


# ---- F6: outputs written in place, checked again before their first byte ----------------------------------------

def test_trace_to_a_descriptor_naming_its_input_is_refused_and_others_get_the_document(tmp_path):
    a = unpack(TOY, tmp_path / "a.etdp")
    r = tmp_path / "r.etrecord"
    r.write_bytes(REC.read_bytes())
    kept = sha(a), sha(r)
    with open(a, "rb") as stdin:  # the streaming path (every run) opened its output before it read the ETDump
        refused_run(run(["trace", a, "--out", "/dev/stdin"], cwd=tmp_path, stdin=stdin), "/dev/stdin",
                    "is an input of this command")
    with open(r, "rb") as three:
        refused_run(run(["trace", a, "--etrecord", r, "--out", f"/dev/fd/{three.fileno()}"], cwd=tmp_path,
                        pass_fds=(three.fileno(),)), "is an input of this command", "r.etrecord")
    with open(a, "rb") as stdin:  # the whole-file path (some runs) too
        refused_run(run(["trace", a, "--runs", "0:2", "--out", "/dev/stdin"], cwd=tmp_path, stdin=stdin),
                    "is an input of this command")
    assert (sha(a), sha(r)) == kept
    # a descriptor naming a regular file that is no input: the content, staged, poured in once the command is
    # done — the same document as a regular output
    from edgeprof import api

    api.trace(a, out=tmp_path / "plain.json")
    with open(tmp_path / "held.json", "wb") as held:
        held.write(b"old content, longer than nothing" * 4096)
        held.flush()
        api.trace(a, out=f"/dev/fd/{held.fileno()}")
    assert json.loads((tmp_path / "held.json").read_bytes()) == json.loads((tmp_path / "plain.json").read_bytes())


# ---- F10: skills install reads its target through the one opener -----------------------------------------------

def _limited():
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # the old reader of /dev/zero stops here, not the machine


def test_skills_install_refuses_a_fifo_or_a_device_at_its_target(tmp_path):
    d1 = tmp_path / "d1" / "analyze-results"
    d1.mkdir(parents=True)
    os.mkfifo(d1 / "SKILL.md")
    refused_run(run(["skills", "install", tmp_path / "d1"], cwd=tmp_path, timeout=60, preexec_fn=_limited),
                "SKILL.md", "FIFO")
    d2 = tmp_path / "d2" / "analyze-results"
    d2.mkdir(parents=True)
    (d2 / "SKILL.md").symlink_to("/dev/zero")
    refused_run(run(["skills", "install", tmp_path / "d2"], cwd=tmp_path, timeout=60, preexec_fn=_limited),
                "SKILL.md", "character device")


def test_skills_install_leaves_an_identical_skill_and_refuses_a_different_one(tmp_path):
    assert cli("skills", "install", tmp_path / "s").exit_code == 0
    f = tmp_path / "s" / "collect" / "SKILL.md"
    before = os.stat(f)
    assert cli("skills", "install", tmp_path / "s").exit_code == 0
    assert (os.stat(f).st_ino, os.stat(f).st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # not rewritten
    f.write_text(f.read_text() + "mine\n")
    refused(cli("skills", "install", tmp_path / "s"), "differs from the shipped skill")


# ---- F11: an ETRecord's zip directory bounded before it is parsed -----------------------------------------------

def _padded_etrecord(path: Path, extra: int, declared: int | None = None) -> Path:
    """The fixture ETRecord with ``extra`` more (empty-named) entries in its zip directory, the end record declaring
    ``declared`` entries (default: all of them)."""
    data = REC.read_bytes()
    e = data.rfind(b"PK\x05\x06")
    count, size, off = struct.unpack("<HII", data[e + 10:e + 20])
    cd = data[off:off + size]
    head = cd[:46]
    new = cd + b"".join(head[:28] + struct.pack("<HHH", 7, 0, 0) + head[34:46] + b"%07d" % i for i in range(extra))
    n = min(count + extra if declared is None else declared, 0xFFFF)
    path.write_bytes(data[:off] + new + b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, n, n, len(new), off, 0))
    return path


@pytest.fixture()
def zip_entries(monkeypatch):
    """How many zip entries :mod:`zipfile` builds (one object per entry of a directory it parses)."""
    made = []

    class Counted(zipfile.ZipInfo):
        __slots__ = ()

        def __init__(self, *a, **kw):
            made.append(1)
            super().__init__(*a, **kw)

    monkeypatch.setattr(zipfile, "ZipInfo", Counted)
    return made


@pytest.mark.parametrize("extra,declared,why", [
    (20_000, None, "{n} zip members: refused"),  # declared: refused by the end record
    (60_000, 1, "more than 10000 zip members"),   # declared 1, 60,000 there: counted, not parsed
    (100_000, 1, "zip directory of"),          # a directory larger than any ETRecord's
])
def test_an_etrecord_zip_directory_is_bounded_before_it_is_parsed(tmp_path, zip_entries, extra, declared, why):
    a = unpack(TOY, tmp_path / "a.etdp")
    big = _padded_etrecord(tmp_path / "big.etrecord", extra, declared)
    with zipfile.ZipFile(REC) as z:
        why = why.format(n=len(z.infolist()) + extra)
    zip_entries.clear()
    refused(cli("analyze", a, "--etrecord", big, "--strict-etrecord", "--output-dir", tmp_path / "o"), "big.etrecord",
            why)
    assert len(zip_entries) == 0  # refused from the end record and a count: no entry object made
    res = cli("trace", a, "--etrecord", big, "--out", tmp_path / "t.json")  # not strict: dropped, the trace written
    assert res.exit_code == 0 and json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    assert len(zip_entries) == 0


# ---- F11: gzip data of several members -------------------------------------------------------------------------

def _members(data: bytes, parts: int = 3) -> bytes:
    step = -(-len(data) // parts)
    return b"".join(gzip.compress(data[i:i + step]) for i in range(0, len(data), step))


def _latencies(res) -> list:
    assert res.exit_code == 0, res.output[-800:]
    return [r["latencies_ms"] for r in json.loads(res.output)["reports"]]


def test_multi_member_gzip_is_read_whole(tmp_path, analyzed):
    """``gzip a b > ab.gz`` (or ``cat a.gz b.gz``): every member read, as ``gzip -d`` reads them."""
    raw = gzip.decompress(TOY.read_bytes())
    (tmp_path / "one.etdp").write_bytes(raw)
    (tmp_path / "three.etdp.gz").write_bytes(_members(raw) + b"\0" * 16)  # zero padding after the last: ignored
    want = _latencies(cli("latency", tmp_path / "one.etdp", "--json"))
    assert _latencies(cli("latency", tmp_path / "three.etdp.gz", "--json")) == want
    csv = tmp_path / "m_exec_all_runs_timeline.csv"
    csv.write_bytes(_members(analyzed.read_bytes(), 4))
    (tmp_path / "m_exec_all_runs_timeline_op_types.csv").write_bytes(
        analyzed.with_name(analyzed.stem + "_op_types.csv").read_bytes())
    assert _latencies(cli("latency", csv, "--json")) == want
    (tmp_path / "bad.etdp.gz").write_bytes(_members(raw) + b"trailing")
    refused(cli("latency", tmp_path / "bad.etdp.gz", "--json"), "bytes after the end of the gzip data")


def test_a_bomb_in_a_later_gzip_member_is_stopped_by_the_same_bound(tmp_path):
    raw = gzip.decompress(TOY.read_bytes())
    bomb = gzip.compress(b"\0" * (96 << 20), 9)  # ~93 KB that would expand ~1000x
    (tmp_path / "b.etdp.gz").write_bytes(gzip.compress(raw) + bomb)
    line = refused(cli("latency", tmp_path / "b.etdp.gz", "--json"), "possible gzip bomb")
    assert "from the first" in line


# ---- F11: example DIR --force never writes through a link found in DIR ------------------------------------------

def test_example_force_never_writes_through_a_link_in_dest(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "ex"
    dest.mkdir()
    (dest / "artifacts").symlink_to(outside)  # a folder link
    refused(cli("example", dest, "--force"), "artifacts", "symbolic link")
    assert list(outside.iterdir()) == []
    (dest / "artifacts").unlink()
    assert cli("example", dest, "--force").exit_code == 0  # a real folder: copied (again) as ever
    victim = tmp_path / "victim.etrecord"
    victim.write_bytes(b"mine")
    name = next(p for p in (dest / "artifacts").iterdir() if p.suffix == ".etrecord")
    name.unlink()
    name.symlink_to(victim)  # a file link: refused, never followed nor silently replaced
    refused(cli("example", dest, "--force"), name.name, "symbolic link")
    assert victim.read_bytes() == b"mine" and name.is_symlink()
