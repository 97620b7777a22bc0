"""Atomic outputs: a file is replaced whole or not at all, a batch of files all or none, and the
temporary files are held by this process: nothing is ever removed by a name pattern."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time

import pytest

from edgeprof.errors import OutputError
from edgeprof.writer import Batch, atomic_path, output_error, write_bytes, write_text


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_new_file_gets_the_mode_a_plain_open_gives(tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    f = tmp_path / "sub" / "out.json"  # missing folders are made
    write_text(f, "{}\n")
    assert f.read_text() == "{}\n"
    assert stat.S_IMODE(f.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)
    assert _leftovers(f.parent) == []


def test_a_failure_mid_write_leaves_the_old_file_and_no_temporary(tmp_path):
    f = tmp_path / "report.md"
    f.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(f) as tmp:
        tmp.write_text("half")
        raise RuntimeError("renderer failed")
    assert f.read_text() == "old" and _leftovers(tmp_path) == []
    with pytest.raises(OutputError) as e, atomic_path(f) as tmp:
        raise OSError(28, "No space left on device")
    assert str(e.value) == f"{f}: cannot write (no space left on the device)"
    assert f.read_text() == "old" and _leftovers(tmp_path) == []


def test_reasons_from_errno_and_from_polars_messages():
    assert str(output_error("a.csv", OSError(13, "Permission denied"))) == "a.csv: cannot write (permission denied)"
    polars_like = RuntimeError("failed to write whole buffer (os error 28)")
    assert str(output_error("a.parquet", polars_like)) == "a.parquet: cannot write (no space left on the device)"
    assert str(output_error("a.csv", ValueError("Bad\nthing"))) == "a.csv: cannot write (bad)"


def test_a_batch_commits_all_or_puts_back_what_it_replaced(tmp_path):
    a, b, c = (tmp_path / n for n in ("a.csv", "b.csv", "c.csv"))
    a.write_text("old a")
    b.write_text("old b")
    batch = Batch()
    for t in (a, b, c):
        batch.path(t).write_text("new " + t.name)
    c.mkdir()  # the last target became a folder after staging: the commit must fail and undo a and b
    with pytest.raises(OutputError, match="it is a folder"):
        batch.commit()
    assert a.read_text() == "old a" and b.read_text() == "old b" and c.is_dir()
    assert _leftovers(tmp_path) == []
    c.rmdir()
    with Batch() as batch:
        for t in (a, b, c):
            batch.path(t).write_text("new " + t.name)
    assert [t.read_text() for t in (a, b, c)] == ["new a.csv", "new b.csv", "new c.csv"]
    assert _leftovers(tmp_path) == []


def test_an_error_inside_a_batch_writes_nothing(tmp_path):
    a = tmp_path / "a.csv"
    a.write_text("old")
    with pytest.raises(OutputError) as e, Batch() as batch:
        batch.path(a).write_text("new")
        p = batch.path(tmp_path / "b.csv")
        raise OSError(28, "No space left on device", os.fspath(p))
    assert str(e.value).startswith(str(tmp_path / "b.csv"))  # the target is named, not its temporary file
    assert a.read_text() == "old" and not (tmp_path / "b.csv").exists() and _leftovers(tmp_path) == []


def test_devices_and_fifos_are_written_in_place_and_folders_refused(tmp_path):
    write_text("/dev/null", "discarded")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader is there before the write starts
    write_bytes(fifo, b"streamed")
    got = os.read(reader, 100)
    os.close(reader)
    assert got == b"streamed" and stat.S_ISFIFO(os.stat(fifo).st_mode)
    with pytest.raises(OutputError, match="no reader"):  # nobody reads: refused at once, never blocked on
        write_bytes(fifo, b"lost")
    with pytest.raises(OutputError, match="it is a folder"):
        write_text(tmp_path, "x")


def test_files_named_like_temporaries_are_never_removed(tmp_path):
    """Only what this process made is removed: a file that merely looks like a dead run's temporary (an
    input may be named so) stays, however old and whoever's pid it names."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    names = [f".out.csv.edgeprof-{dead_pid}-0123abcd.tmp", f".old.csv.edgeprof-{os.getpid()}-89abcdef.tmp"]
    for name in names:
        (tmp_path / name).write_text("x")
    day_ago = time.time() - 25 * 3600
    os.utime(tmp_path / names[1], (day_ago, day_ago))
    write_text(tmp_path / "out.csv", "new")
    with Batch() as batch:
        batch.path(tmp_path / "b.csv").write_text("b")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*names, "b.csv", "out.csv"])


def test_a_discarded_batch_removes_the_folders_it_made_while_empty(tmp_path):
    """The folders a batch made for its outputs go with them when it is discarded (innermost first) — not a folder
    that was there before, nor one that holds something else by then."""
    (tmp_path / "there").mkdir()
    with pytest.raises(RuntimeError), Batch() as b:
        (b.path(tmp_path / "there" / "a" / "b" / "t.csv")).write_text("x")
        b.path(tmp_path / "there" / "a" / "c" / "u.csv")
        b.path(tmp_path / "new" / "v.csv")
        (tmp_path / "there" / "a" / "c" / "kept.txt").write_text("someone else's")
        raise RuntimeError("the input turned out corrupt")
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert left == ["there", "there/a", "there/a/c", "there/a/c/kept.txt"]


def test_a_corrupt_input_leaves_no_output_folder(tmp_path):
    """``analyze`` of a truncated ETDump into a folder that does not exist yet: exit 2, one line, no folder made."""
    from testdata import edgeprof_cli

    bad = tmp_path / "bad.etdump"
    bad.write_bytes((8000).to_bytes(4, "little") + b"\0" * 100)
    r = edgeprof_cli("analyze", bad, "--output-dir", tmp_path / "out" / "deeper", "--no-progress", code=2)
    assert len(r.stderr.strip().splitlines()) == 1 and "bad.etdump" in r.stderr
    assert not (tmp_path / "out").exists()


def test_an_append_keeps_what_was_there_and_is_refused_where_a_write_is(tmp_path):
    """writer.append_text (GitHub's step summary): made when absent, added to when present, refused on a folder, on
    a FIFO nobody reads and on an input of the running command — the input left as it was."""
    import os

    import pytest

    from edgeprof import files
    from edgeprof.errors import OutputError
    from edgeprof.writer import append_text

    target = tmp_path / "summary.md"
    append_text(target, "## one\n")
    append_text(target, "## two — ü\n")
    assert target.read_text() == "## one\n## two — ü\n"
    with pytest.raises(OutputError, match="folder"):
        append_text(tmp_path, "x")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OutputError):
        append_text(fifo, "x")
    with files.command_scope():
        files.read_regular(target, 1 << 20)  # read by the command: an input now
        with pytest.raises(OutputError, match="it is an input of this command"):
            append_text(target, "## three\n")
    assert target.read_text() == "## one\n## two — ü\n"
