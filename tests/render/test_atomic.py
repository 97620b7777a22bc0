"""Atomic outputs: a file is replaced whole or not at all, a batch of files all or none, and the
temporary files of killed runs are cleaned up without touching anything else."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import time

import pytest

from edgeprof.errors import OutputError
from edgeprof.render.atomic import Batch, atomic_path, output_error, sweep_stale, write_bytes, write_text


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
    with pytest.raises(RuntimeError):
        with atomic_path(f) as tmp:
            tmp.write_text("half")
            raise RuntimeError("renderer failed")
    assert f.read_text() == "old" and _leftovers(tmp_path) == []
    with pytest.raises(OutputError) as e:
        with atomic_path(f) as tmp:
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
    with pytest.raises(OutputError) as e:
        with Batch() as batch:
            batch.path(a).write_text("new")
            p = batch.path(tmp_path / "b.csv")
            raise OSError(28, "No space left on device", os.fspath(p))
    assert str(e.value).startswith(str(tmp_path / "b.csv"))  # the target is named, not its temporary file
    assert a.read_text() == "old" and not (tmp_path / "b.csv").exists() and _leftovers(tmp_path) == []


def test_devices_and_fifos_are_written_in_place_and_folders_refused(tmp_path):
    write_text("/dev/null", "discarded")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    write_bytes(fifo, b"streamed")
    reader.join(10)
    assert got == [b"streamed"] and stat.S_ISFIFO(os.stat(fifo).st_mode)
    with pytest.raises(OutputError, match="it is a folder"):
        write_text(tmp_path, "x")


def test_stale_temporaries_of_dead_runs_are_swept_and_nothing_else(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    me = os.getpid()
    files = {
        f".out.csv.edgeprof-{dead_pid}-0123abcd.tmp": True,     # its process is gone
        f".old.csv.edgeprof-{me}-89abcdef.tmp": True,           # alive, but a day old
        f".new.csv.edgeprof-{me}-00000000.tmp": False,          # alive and recent: a write in progress
        "out.csv": False, f"out.csv.edgeprof-{dead_pid}-0123abcd.tmp": False,  # not our pattern (no dot)
        f".x.edgeprof-{dead_pid}-0123abcd.tmp.bak": False,
    }
    for name in files:
        (tmp_path / name).write_text("x")
    day_ago = time.time() - 25 * 3600
    os.utime(tmp_path / f".old.csv.edgeprof-{me}-89abcdef.tmp", (day_ago, day_ago))
    (tmp_path / f".dir.edgeprof-{dead_pid}-11111111.tmp").mkdir()  # a folder of that name is left alone
    assert sweep_stale(tmp_path) == 2
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {n for n, gone in files.items() if not gone} | {f".dir.edgeprof-{dead_pid}-11111111.tmp"}
    assert sweep_stale(tmp_path) == 0  # once per folder and process
