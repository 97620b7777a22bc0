"""The compiled ETDump walk (edgeprof._core) against its oracle, the numpy reader: every column of every real
recording the tests hold, the hostile cases, a fuzz corpus (both refuse, or both give equal columns), reading in
blocks; how the walk is chosen (EDGEPROF_CORE); and the C code under AddressSanitizer/UBSan and valgrind, with a
planted over-read that must be caught."""

from __future__ import annotations

import gzip
import random
import shutil
import subprocess
import sys

import numpy as np
import polars as pl
import pytest
from testdata import DATA, need_core

from edgeprof.conventions import CORE_ENV
from edgeprof.errors import InputError, UsageError
from edgeprof import compiled
from edgeprof.io import etdump_core
from edgeprof.io.etdump_decode import decode

ROOT = DATA.parent.parent
RECORDINGS = sorted(DATA.rglob("*.etdp.gz"))


@pytest.fixture(autouse=True)
def _core():
    need_core()


def _decoded(data: bytes, walk: str, monkeypatch):
    monkeypatch.setenv(CORE_ENV, walk)
    try:
        return decode(data, "f.etdp")
    except InputError as e:
        return type(e)


def _same(a, b, where="") -> None:
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), where
    elif isinstance(a, (list, tuple)) and a and isinstance(a[0], np.ndarray):
        for x, y in zip(a, b, strict=True):
            _same(x, y, where)
    else:
        assert a == b, where


def test_every_recording_decodes_to_the_same_columns_by_both_walks(monkeypatch):
    assert len(RECORDINGS) >= 20
    for p in RECORDINGS:
        data = gzip.decompress(p.read_bytes())
        c, py = _decoded(data, "c", monkeypatch), _decoded(data, "python", monkeypatch)
        assert isinstance(c, dict), p.name
        _same(c, py, p.name)
        assert c["pe_run"].size > 0 and len(c["pe_names"]) > 1


def test_the_profiles_and_their_warnings_are_equal_read_whole_or_in_blocks(tmp_path, monkeypatch):
    import hostile_round3

    from edgeprof.io.etdump_read import ETDumpBlocks

    seed = gzip.decompress((DATA / "etdump" / "toycnn_xnn.N20.etdp.gz").read_bytes())
    path = tmp_path / "many.etdp"
    path.write_bytes(hostile_round3.with_blocks(seed, 60))
    got = {}
    for walk in ("c", "python"):
        monkeypatch.setenv(CORE_ENV, walk)
        for max_events in (None, 100):
            blocks = ETDumpBlocks(path, max_events=max_events)
            frames = [b.events for b in blocks]
            got[walk, max_events] = (pl.concat(frames).with_columns(pl.col(pl.Categorical).cast(pl.String)),
                                     blocks.warnings, blocks.n_blocks)
    assert got["c", 100][2] > 5  # really in blocks
    for key in (("c", 100), ("python", None), ("python", 100)):
        assert got[key][0].equals(got["c", None][0]) and got[key][1] == got["c", None][1], key


def test_every_field_absent_or_present_reads_alike(monkeypatch):
    # the runtime writes every field; a builder that leaves out defaults makes the walks fall back on them
    from etdump_builder import AE, DE, PE, Run, TensorMeta, build

    events = [PE(), PE("n", 1, 2), PE(None, 3, 4, 7, 2, dd_int=5), PE("d", 5, 6, dd_str="x", metadata=b"\x01\x02"),
              PE("Method::execute", 0, 9, instruction_id=0, chain_index=-3), AE(2, 64),
              DE(name="t", instruction_id=3, tensor=TensorMeta(6, [1, 2], [2, 1], 0)), (AE(1, 8), PE("both", 1, 1)),
              None, PE(b"\xff\xfe".decode("latin-1"), 2**40, 2**40 + 1, dd_int=-7)]
    data = build([Run("Execute", events, allocators=["a", "b"]), Run("Default", [PE("Program::load_method", 0, 1)])])
    c, py = _decoded(data, "c", monkeypatch), _decoded(data, "python", monkeypatch)
    _same(c, py)
    assert c["pe_instruction"].tolist()[:3] == [-1, -1, 7] and c["pe_chain"].tolist()[:3] == [0, 0, 2]
    assert c["pe_dd_int"].tolist()[:3] == [-1, -1, 5] and c["pe_start"].tolist()[:2] == [0, 1]
    assert (c["n_empty_events"], c["n_ambiguous_events"], c["ae_size"].tolist()) == (1, 1, [64])


def test_hostile_cases_are_refused_or_read_alike(monkeypatch):
    import hostile
    import hostile_round3

    seed = gzip.decompress((DATA / "etdump" / "toycnn_xnn.N20.etdp.gz").read_bytes())
    cases = dict(hostile.etdump_variants(seed))
    for how in ("run_table", "events_vector", "event_table", "events_of_runs", "payload"):
        cases[how] = hostile_round3.aliased(seed, how, times=50)
    refused = 0
    for name, data in cases.items():
        c, py = _decoded(data, "c", monkeypatch), _decoded(data, "python", monkeypatch)
        if isinstance(c, dict) and isinstance(py, dict):
            _same(c, py, name)
        else:
            assert c == py, name  # the same error type (offsets and wording may differ)
            refused += 1
    assert refused >= 4  # every aliasing case but one (events_of_runs is refused only when read in blocks)


def test_a_fuzz_corpus_is_refused_or_read_alike(monkeypatch):
    sys.path.insert(0, str(ROOT / "fuzz"))
    from fuzz_etdump import mutate

    seeds = [gzip.decompress(p.read_bytes()) for p in RECORDINGS]
    seeds = [s for s in seeds if len(s) < 300_000]
    rng = random.Random(52)
    accepted = refused = 0
    for i in range(800):
        data = mutate(rng, rng.choice(seeds))
        c, py = _decoded(data, "c", monkeypatch), _decoded(data, "python", monkeypatch)
        if isinstance(c, dict) or isinstance(py, dict):
            assert isinstance(c, dict) and isinstance(py, dict), (i, c if not isinstance(c, dict) else py)
            _same(c, py, f"mutant {i}")
            accepted += 1
        else:
            refused += 1
    assert accepted >= 20 and refused >= 300  # both outcomes are exercised


def test_strings_are_coded_in_the_order_they_first_appear_by_both_walks(monkeypatch):
    from etdump_builder import PE, Run, build

    names = ["zeta", "alpha", "a" * 200, "zeta", "mid", "b" * 120, "alpha"]
    data = build([Run("Execute", [PE(n, i, i + 1, i) for i, n in enumerate(names)]
                  + [PE("Method::execute", 0, 99, -1)])])
    for walk in ("c", "python"):
        d = _decoded(data, walk, monkeypatch)
        assert d["pe_names"] == ["zeta", "alpha", "a" * 200, "mid", "b" * 120, "Method::execute"], walk
        assert d["pe_name_codes"].tolist() == [0, 1, 2, 0, 3, 4, 1, 5], walk


def test_long_strings_that_claim_more_than_the_file_are_refused_by_both_walks(monkeypatch):
    # many events whose names are distinct windows into one long run of bytes: each window a "string" of 3/4 the
    # file; decoding each once would cost the file's size times the events — both walks refuse it as overlapping
    import struct

    from etdump_builder import PE, Run, build

    long = "x" * 4000
    data = bytearray(build([Run("Execute", [PE(long, i, i + 1, i) for i in range(4)]
                                + [PE("Method::execute", 0, 99, -1)])]))
    at = bytes(data).index(long.encode())
    length = len(data) * 3 // 4 - at
    data[at: at + 16] = struct.pack("<IIII", length, length, length, length)  # four length words in the first name
    for walk in ("c", "python"):
        monkeypatch.setenv(CORE_ENV, walk)
        from edgeprof.io.etdump_decode import RunDataIndex
        from edgeprof.io.flatbuf import Interner

        idx = RunDataIndex(bytes(data), "f.etdp")
        refs = at + 4 * np.arange(4, dtype=np.int64) - idx.fb.base  # four strings, each 3/4 of the file
        core = etdump_core.module()
        with pytest.raises(InputError, match="overlapping"):
            if core is None:
                idx.fb.strings(refs, "ProfileEvent.name", Interner())
            else:
                etdump_core.strings(core, idx.fb, refs, Interner())


def test_the_walk_is_chosen_by_the_environment_and_a_missing_core_is_one_line(monkeypatch):
    monkeypatch.setenv(CORE_ENV, "python")
    assert compiled.which() == "python"
    monkeypatch.setenv(CORE_ENV, "c")
    assert compiled.which() == "c"
    monkeypatch.delenv(CORE_ENV)
    assert compiled.which() == "c"  # built here: the default
    monkeypatch.setenv(CORE_ENV, "fast")
    with pytest.raises(UsageError, match="expected one of auto, c, python"):
        compiled.which()
    monkeypatch.setitem(sys.modules, "edgeprof._core", None)  # as if not built
    monkeypatch.setenv(CORE_ENV, "c")
    with pytest.raises(UsageError) as e:
        compiled.which()
    assert "not built" in str(e.value) and "\n" not in str(e.value)
    monkeypatch.setenv(CORE_ENV, "auto")
    assert compiled.which() == "python"


def test_a_bad_choice_on_the_command_line_is_exit_2_in_one_line(tmp_path):
    import os

    p = tmp_path / "a.etdp"
    p.write_bytes(gzip.decompress((DATA / "etdump" / "toycnn_xnn.N20.etdp.gz").read_bytes()))
    r = subprocess.run([sys.executable, "-m", "edgeprof", "analyze", str(p), "--output-dir", str(tmp_path / "o")],
                       capture_output=True, text=True, env={**os.environ, CORE_ENV: "fast"})
    assert r.returncode == 2 and "EDGEPROF_CORE" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def _sanitize(*args) -> subprocess.CompletedProcess:
    if shutil.which("gcc") is None:
        need_core()  # no compiler: the core cannot have been built either
        pytest.skip("no C compiler")
    return subprocess.run([sys.executable, str(ROOT / "fuzz" / "core_sanitize.py"), *args], capture_output=True,
                          text=True, timeout=1200)


def test_the_c_walk_has_no_finding_under_asan_and_ubsan_on_the_fuzz_corpus():
    r = _sanitize("--mutants", "300", "--python-mutants", "300", "--seed", "52")
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert "no finding" in r.stdout and " 0 accepted" not in r.stdout


def test_a_planted_over_read_is_caught_by_the_sanitizers():
    r = _sanitize("--mutants", "1", "--python-mutants", "1", "--plant")
    assert r.returncode == 1 and "AddressSanitizer" in r.stderr and "heap-buffer-overflow" in r.stderr


def test_the_c_walk_is_clean_under_valgrind():
    if shutil.which("valgrind") is None:
        import os

        if os.environ.get("EDGEPROF_REQUIRE_CORE"):
            pytest.fail("valgrind is not installed (EDGEPROF_REQUIRE_CORE is set)")
        pytest.skip("valgrind is not installed")
    r = _sanitize("--valgrind", "--mutants", "200", "--python-mutants", "100", "--seed", "7")
    assert r.returncode == 0 and "no finding" in r.stdout, r.stdout + r.stderr[-3000:]
