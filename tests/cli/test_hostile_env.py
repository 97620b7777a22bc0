"""The hostile environment, continued: memory limits, bytes after an ETDump, names that are not UTF-8, full
disks under the history stores, and configs with the wrong kind of value — each ends in one line and exit 2
(or a clean success), never a traceback, and leaves nothing half-made behind."""

from __future__ import annotations

import gzip
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from testdata import DATA

EP = [sys.executable, "-m", "edgeprof"]


def _etdump(name: str = "toycnn_xnn") -> bytes:
    return gzip.decompress((DATA / "etdump" / f"{name}.N20.etdp.gz").read_bytes())


def _ep(*args, limit_as: int | None = None, cwd=None) -> subprocess.CompletedProcess:
    def limit():
        if limit_as:
            resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))
    return subprocess.run([*EP, *map(os.fsdecode, args)], capture_output=True, text=True, preexec_fn=limit, cwd=cwd,
                          timeout=300)


def _one_line_error(r: subprocess.CompletedProcess, *words: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr[-800:])
    errors = [line for line in r.stderr.splitlines() if line.startswith("edgeprof: error:")]
    assert errors and "Traceback" not in r.stderr, r.stderr[-800:]
    for w in words:
        assert w in r.stderr, (w, r.stderr[-800:])


def test_a_small_file_reads_under_a_strict_address_space_limit(tmp_path):
    """10: the reader reserves the file's size, not its limit (4 GiB for an ETDump) — under a 3 GB address
    space (a small board with strict overcommit) a 15 KB ETDump is read."""
    f = tmp_path / "toy_t1.etdump"
    f.write_bytes(_etdump())
    r = _ep("latency", f, "--json", limit_as=3 << 30)
    assert r.returncode == 0, r.stderr[-500:]


def test_bytes_after_the_etdump_are_an_input_error(tmp_path):
    """11: one trailing NUL, or a 2 GB zero-padded sparse file, is refused from its first 12 bytes (naming the
    offset where the ETDump ends), not read into memory, and never taken for another measurement."""
    data = _etdump()
    one = tmp_path / "one_t1.etdump"
    one.write_bytes(data + b"\0")
    r = _ep("latency", one)
    _one_line_error(r, "1 byte(s) after the end of the ETDump", f"at byte offset {len(data)}")
    padded = tmp_path / "pad_t1.etdump"
    with open(padded, "wb") as fh:
        fh.write(data)
        fh.truncate(2 << 30)
    orig = tmp_path / "orig_t1.etdump"
    orig.write_bytes(data)
    # a fresh parent whose only child is edgeprof: RUSAGE_CHILDREN is then edgeprof's own peak
    probe = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
             "sys.stderr.write(r.stderr); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
             "sys.exit(r.returncode)")
    r = subprocess.run([sys.executable, "-c", probe, *EP, "compare", str(orig), str(padded)], capture_output=True,
                       text=True, timeout=300)
    _one_line_error(r, "pad_t1.etdump", "trailing data")
    assert int(r.stdout.split()[-1]) < 400_000  # KB: the 2 GB of padding were never read


def test_names_that_are_not_utf8(tmp_path):
    """12: a file name from another system (bytes that are not UTF-8) through validate, report, ingest and
    history: clean results, the name shown with U+FFFD."""
    run = tmp_path / "runs"
    (run / "exp").mkdir(parents=True)
    with open(os.fsencode(run / "exp") + b"/toy\xff\xfe_t1.etdump", "wb") as fh:
        fh.write(_etdump())
    assert _ep("analyze", run).returncode == 0
    for args in (("validate", run), ("report", run, "--out", tmp_path / "r.md", "--html", tmp_path / "r.html"),
                 ("ingest", run, "--store", tmp_path / "s.duckdb"), ("ingest", run, "--store", f"{tmp_path}/pq/"),
                 ("history", "--store", tmp_path / "s.duckdb"), ("history", "--store", f"{tmp_path}/pq/")):
        r = _ep(*args)
        assert r.returncode in (0, 1) and "Traceback" not in r.stderr, (args, r.stderr[-800:])
    assert "toy\ufffd\ufffd" in (tmp_path / "r.md").read_text()


def test_a_config_value_of_the_wrong_kind(tmp_path):
    """12: ``compare_pairs`` with a list where an experiment name belongs."""
    pte = DATA / "pte" / "toycnn_xnn.pte"
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[[experiments]]\nname = "a"\nmodel = "{pte}"\n[[experiments]]\nname = "b"\nmodel = "{pte}"\n'
                   '[analysis]\ncompare_pairs = [{baseline = ["a"], candidate = "b"}]\n')
    _one_line_error(_ep("run", "--config", cfg, "--dry-run"), "compare_pairs[0].baseline", "not an experiment name")


def _tmpfs(path: Path, size: str) -> bool:
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    path.mkdir()
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True).returncode == 0


@pytest.fixture()
def full_disk(tmp_path):
    small = tmp_path / "small"
    if not _tmpfs(small, "16k"):
        if os.environ.get("EDGEPROF_REQUIRE_MCP"):  # CI runs as root: the real full disk must be tested there
            raise AssertionError("cannot mount a tmpfs here")
        pytest.skip("mounting a small tmpfs needs root")
    yield small
    subprocess.run(["umount", str(small)], check=False)


def test_a_full_disk_under_the_history_stores(full_disk, tmp_path):
    """12: a full disk while creating a DuckDB store, writing a Parquet batch, or exporting: one line, exit 2,
    and no store left that later calls would refuse (a 0-byte file, staged parts)."""
    runs = tmp_path / "in"
    runs.mkdir()
    for k, name in enumerate(("mobilenet_v3_small_xnnq8", "mobilenet_v3_small_xnn", "mobilenet_v3_small_portable",
                              "tel_xnnq8", "tel_xnn", "tel_portable")):
        (runs / f"m_t1_l{k}.etdump").write_bytes(_etdump(name))
    r = _ep("ingest", runs, "--store", full_disk / "new.duckdb")
    _one_line_error(r, "new.duckdb")
    assert "no space left" in r.stderr.lower()
    assert not list(full_disk.iterdir())  # no 0-byte store, no temporary
    r = _ep("ingest", runs, "--store", f"{full_disk}/pq/")
    _one_line_error(r)
    assert "no space left" in r.stderr.lower()
    assert not [p for p in full_disk.rglob("*") if p.is_file() and p.suffix in (".parquet", ".tmp")]
    good = tmp_path / "good.duckdb"
    assert _ep("ingest", runs, "--store", good).returncode == 0
    r = _ep("export", "--store", good, "--to", full_disk / "copy.duckdb")
    _one_line_error(r, "copy.duckdb")
    assert "no space left" in r.stderr.lower()
    assert not (full_disk / "copy.duckdb").exists()
    ok = _ep("ingest", runs, "--store", tmp_path / "later.duckdb")  # and the next call is not refused
    assert ok.returncode == 0, ok.stderr


def test_stores_and_bundles_from_elsewhere_in_the_cli(tmp_path):
    """4 and 6 in the CLI: a store with a view reading another file or spinning over range(1e11), a FIFO as the
    store, a database that is not edgeprof's, a model.mil that is /dev/zero — refused, one line, promptly."""
    import duckdb
    import traps

    t = traps.build(tmp_path / "t")
    root = t["root"]
    for store, words in (("view.duckdb", ("not an edgeprof history store", "launches (view)")),
                         ("huge.duckdb", ("runs (view)",)), ("fifo_store", ("FIFO",))):
        r = _ep("history", "--store", root / store)
        _one_line_error(r, *words)
        assert traps.SECRET not in r.stdout + r.stderr
    _one_line_error(_ep("coreml", root / "zero.mlmodelc"), "character device")
    user = tmp_path / "user.duckdb"
    con = duckdb.connect(str(user))
    con.execute("CREATE TABLE invoices (id INTEGER)")
    con.execute("INSERT INTO invoices VALUES (7)")
    con.close()
    before = user.read_bytes()
    _one_line_error(_ep("ingest", root / "tel_xnn.etdp", "--store", user), "not an edgeprof history store",
                    "invoices")
    assert user.read_bytes() == before
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()  # an empty database becomes a store
    assert _ep("ingest", root / "tel_xnn.etdp", "--store", empty).returncode == 0
