"""The open rule under a race: with the Python confinement alone (``access.confine`` in this process, no
Landlock — as on macOS or Linux before 5.13), another process keeps swapping a symlink (a file or a folder on the
path) between a target inside the root and one outside it while edgeprof reads a history store, writes
``report.md`` and reads an ETDump through it, over and over. A kernel watch (inotify) on the outside folder
counts every open, read, create and write there, by any code in the process (Python, DuckDB, Polars): it must see
none, and no answer may hold the outside file's content. Each test makes tens of thousands of swaps
(:mod:`open_race`); the three together well over 10^5."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from open_race import Swapper, Watch
from testdata import DATA

import edgeprof
from edgeprof import access
from edgeprof.errors import InputError, OutputError

SWAPS = {"history": 24_000, "report": 12_000, "etdump": 66_000}  # at least, per test: 102,000 in all
assert sum(SWAPS.values()) >= 100_000


def _etdump(p: Path, fixture: str) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(gzip.decompress((DATA / "etdump" / f"{fixture}.etdp.gz").read_bytes()))
    return p


@pytest.fixture()
def world(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    return root, outside


def _race(link: Path, inside: str, outside_target: str, watch_dir: Path, op, *, ops: int, swaps: int,
          dwell_us=(0, 0)):
    """``op()`` while ``link`` swaps (staying ``dwell_us`` µs inside, then outside): at least ``ops`` times, and
    until ``swaps`` swaps were made, however slowly a loaded machine lets the swapper run (the only guard is the
    swapper staying alive). Returns (outcomes, swaps made, events seen in ``watch_dir``)."""
    watch = Watch(watch_dir)
    swapper = Swapper(link, inside, outside_target, dwell_us)
    outcomes: dict[str, int] = {}
    access.confine([str(link.parent)])
    try:
        i = 0
        while i < ops or swapper.count() < swaps:
            if swapper.proc.poll() is not None:
                raise RuntimeError("the swapping process ended early")
            i += 1
            kind = op()
            outcomes[kind] = outcomes.get(kind, 0) + 1
    finally:
        access.release()
        made = swapper.stop()
        events = list(watch.poll())
        watch.close()
    return outcomes, made, events


def _outside(e: Exception) -> str:
    """A refusal because the path led outside; anything else is an outcome of its own (and fails the test)."""
    return "refused" if "outside the allowed roots" in str(e) else f"failed: {e}"


def test_history_never_reads_a_store_a_swapped_link_puts_outside(world):
    root, outside = world
    a = _etdump(root / "in" / "a.etdp", "toycnn_xnn.N20")
    edgeprof.ingest([a], store=root / "inside.duckdb", model="inside_model", commit="c1", device="pixel")
    s = _etdump(outside / "s.etdp", "toycnn_portable.N20")
    edgeprof.ingest([s], store=outside / "secret.duckdb", model="SECRET_MODEL", commit="c9", device="pixel")
    s.unlink()
    link = root / "s.duckdb"

    def op():
        try:
            doc = json.dumps(edgeprof.history(store=link).to_json())
        except InputError as e:
            return _outside(e)
        assert "SECRET_MODEL" not in doc and "inside_model" in doc
        return "read inside"

    outcomes, swaps, events = _race(link, "inside.duckdb", str(outside / "secret.duckdb"), outside, op, ops=60,
                                    swaps=SWAPS["history"], dwell_us=(500, 500))
    assert events == [], events[:5]  # not one open of the outside store (nor its .wal), by DuckDB or anyone
    assert swaps >= SWAPS["history"] and outcomes.get("read inside", 0) > 0
    assert set(outcomes) <= {"read inside", "refused"}


def test_report_never_writes_through_a_folder_link_swapped_outside(world):
    root, outside = world
    a = _etdump(root / "a.etdp", "toycnn_xnn.N20")
    (root / "real_out").mkdir()
    target = outside / "dir"
    target.mkdir()
    link = root / "out"

    def op():
        try:
            edgeprof.report([a], out=link / "report.md", write=True)
        except OutputError as e:
            return _outside(e)
        return "written inside"

    outcomes, swaps, events = _race(link, "real_out", str(target), target, op, ops=10, swaps=SWAPS["report"],
                                    dwell_us=(1000, 1000))
    assert events == [] and list(target.iterdir()) == [], events[:5]  # nothing created, opened or written there
    assert swaps >= SWAPS["report"] and outcomes.get("written inside", 0) > 0
    assert set(outcomes) <= {"written inside", "refused"}
    assert (root / "real_out" / "report.md").read_text().startswith("#")
    assert sorted(p.name for p in (root / "real_out").iterdir()) == ["report.md"]  # no temporary file left


def test_an_etdump_reader_never_opens_the_file_a_swapped_link_puts_outside(world):
    from edgeprof.io.etdump_read import read_etdump

    root, outside = world
    inside = read_etdump(_etdump(root / "inside.etdp", "toycnn_xnn.N20")).n_events
    secret = _etdump(outside / "secret.etdp", "toycnn_portable.N20")
    assert read_etdump(secret).n_events != inside
    link = root / "x.etdp"

    def op():
        try:
            prof = read_etdump(link)
        except InputError as e:
            return _outside(e)
        assert prof.n_events == inside  # the recording inside, never the secret
        return "read inside"

    outcomes, swaps, events = _race(link, "inside.etdp", str(secret), outside, op, ops=300, swaps=SWAPS["etdump"])
    assert events == [], events[:5]  # no open of the outside ETDump, even one refused after the fact
    assert swaps >= SWAPS["etdump"] and outcomes.get("read inside", 0) > 0
    assert set(outcomes) <= {"read inside", "refused"}
