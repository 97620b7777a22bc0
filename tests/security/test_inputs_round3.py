"""Hostile input, round 3: what a hostile user found that nobody had aimed at, each at its cause.

* **Decompression** — one rule for every compressed input (:mod:`edgeprof.io.sniff`): a bomb of each kind a reader
  takes (gzip'd ETDump, timeline CSV, ONNX Runtime profile, LiteRT op profile, XNNPACK log, debug buffer) is stopped
  *while* it is decompressed — the bytes every zlib decompressor of the process gave are counted by a spy, never
  timed — and refused in one line with the figures; the memory left (``RLIMIT_AS``) is a bound of its own.
* **Tracebacks** — an ONNX Runtime profile escaping a lone surrogate (``latency``, ``breakdown``, ``report``, and
  through the MCP SDK client), a LiteRT protobuf whose nodes are never called (``report``), ``numerics`` on a tensor
  of 65 dimensions and on a debug recording with one stride word changed, ETDumps whose runs time nothing read in
  blocks (``analyze``): one line naming the file (and the offset), exit 2 — or, where nothing is wrong, exit 0.
* **Silently accepted** — a history store with a generated column (or a default, a CHECK), ``--strict-etrecord``
  with NaN/Infinity debug handles, a 70-bit protobuf varint, ETDumps whose FlatBuffer offsets alias (one run table
  a million times in 4 MB), ``history --since garbage``: refused in one line.

Every input is built at test time from the real fixtures (:mod:`hostile_round3`).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from testdata import DATA

import hostile_round3 as h3
from edgeprof.cli import main

MB = 1 << 20
BIN = Path(sys.executable).parent


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line_error(res, *needles, code: int = 2) -> str:
    """The result is exit ``code`` with exactly one ``edgeprof: error:`` line holding every needle, and no
    traceback or internal error; returns that line."""
    out = res.output
    assert res.exit_code == code, (res.exit_code, repr(res.exception), out[-800:])
    assert "Traceback" not in out and "internal error" not in out, out[-800:]
    errors = [line for line in out.splitlines() if line.startswith("edgeprof: error:")]
    assert len(errors) == 1, out[-800:]
    for n in needles:
        assert n in errors[0], (n, errors[0])
    return errors[0]


def ok(res) -> str:
    assert res.exit_code == 0, (repr(res.exception), res.output[-800:])
    assert "Traceback" not in res.output
    return res.output


# --------------------------------------------------------------------------------------------------
# 1. gzip bombs: one decompression rule, bounded while decompressing
# --------------------------------------------------------------------------------------------------

BOMB_MB = 160            # each bomb expands to 160 MB (about 1,000×)
STOP_SPY = 100 * MB      # old code that would decompress a whole bomb is stopped here by the spy
ALLOWED = 64 * MB + 17 * MB  # the floor, then one 16 MB step (or one 1 MB block of a log) before the ratio is checked


@pytest.fixture(scope="module")
def bomb_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("bombs")
    files = h3.bombs(root / "in", BOMB_MB)
    numerics = h3.debug_recording(root / "num", "toycnn_xnn"), h3.debug_recording(root / "num", "toycnn_xnnq8")
    return files, numerics


def _bomb_command(kind, p, numerics, tmp):
    if kind == "log":
        return ("kernels", p)
    if kind == "debug_buffer":
        return ("numerics", numerics[0], numerics[1], "--debug-buffer", p)
    if kind == "litert":
        return ("breakdown", p, "--no-write")
    return ("latency", p, "--no-write")


@pytest.mark.parametrize("kind", ["etdump", "timeline_csv", "ort_json", "litert", "log", "debug_buffer"])
def test_every_compressed_input_is_stopped_while_it_is_decompressed(bomb_files, kind, monkeypatch, tmp_path):
    files, numerics = bomb_files
    p = files[kind]
    spy = h3.InflateSpy(monkeypatch, stop_at=STOP_SPY)
    res = run(*_bomb_command(kind, p, numerics, tmp_path))
    assert not spy.stopped, f"{spy.total} bytes were decompressed before anything stopped it"
    line = one_line_error(res, str(p), "gzip bomb", f"of its {p.stat().st_size} bytes")
    # the figures: bytes reached, from how many compressed bytes, the ratio, and the bound that stopped it
    m = re.search(r"expands (\d+)x \((\d+) bytes from the first (\d+) of its (\d+) bytes\)", line)
    assert m, line
    ratio, reached, consumed, _ = map(int, m.groups())
    assert 64 * MB < reached <= ALLOWED and reached <= spy.total <= ALLOWED + MB
    assert ratio == round(reached / consumed) and ratio > 200 and "200x" in line


def test_a_compressed_input_that_is_not_a_bomb_is_read_as_before(tmp_path, monkeypatch):
    """A real profile compressed 1,000× past the floor is refused; the same content below the floor, or real
    recordings (1–30×), are read whole."""
    etd = gzip.decompress((DATA / "etdump" / "mobilenet_v3_small_xnnq8.N200.etdp.gz").read_bytes())
    p = tmp_path / "real.etdp.gz"
    p.write_bytes(gzip.compress(etd, 9))
    spy = h3.InflateSpy(monkeypatch)
    ok(run("latency", p, "--no-write"))
    assert spy.largest == len(etd)


def test_the_memory_left_bounds_what_is_held(tmp_path):
    """Under an address-space limit (RLIMIT_AS) a little above what the process maps, a bomb is stopped by that
    bound — a third of the room left — before its ratio is ever looked at, and the error says which bound it was."""
    bomb = tmp_path / "bomb.etdp.gz"
    bomb.write_bytes(h3.gzip_bomb(b"\0" * MB, 200, head=h3.fixture_etdump()[:64]))
    child = (
        "import resource, sys\n"
        "from click.testing import CliRunner\n"
        "from edgeprof.cli import main\n"
        "import edgeprof.io.etdump_decode, edgeprof.io.sniff, polars, numpy\n"
        "size = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()\n"
        "limit = size + 150 * 2**20\n"
        "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
        "res = CliRunner().invoke(main, ['latency', sys.argv[1], '--no-write'])\n"
        "print(res.exit_code)\n"
        "print(res.output)\n"
    )
    r = subprocess.run([sys.executable, "-c", child, str(bomb)], check=False, capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, POLARS_MAX_THREADS="1"))
    code, _, out = r.stdout.partition("\n")
    assert code == "2", (r.stdout[-800:], r.stderr[-800:])
    assert "Traceback" not in out and "gzip bomb" in out and "RLIMIT_AS" in out, out
    m = re.search(r"\((\d+) bytes from the first", out)
    assert m and int(m.group(1)) < 64 * MB, out  # stopped below the ratio's floor: the memory bound did it


# --------------------------------------------------------------------------------------------------
# 2. tracebacks → one line naming the file and offset, exit 2
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["op_name", "name"])
def test_an_onnx_runtime_profile_with_a_lone_surrogate_is_one_line(tmp_path, where):
    p = h3.ort_with_surrogate(tmp_path / "sur.ort.json", where)
    at = p.read_bytes().index(b"\\ud800")
    for cmd in (("latency", p, "--no-write"), ("breakdown", p, "--no-write"), ("report", p, "--out", tmp_path / "r.md"),
                ("trace", p, "--out", tmp_path / "t.json"), ("analyze", p, "--output-dir", tmp_path / "a")):
        one_line_error(run(*cmd), str(p), "surrogate", f"(at byte offset {at})")
    assert not (tmp_path / "r.md").exists() and not (tmp_path / "t.json").exists()
    # a surrogate pair is a character, read as such
    pair = h3.ort_with_surrogate(tmp_path / "pair.ort.json", where, escape="\\ud83d\\ude00")
    res = run("breakdown", pair, "--no-write", "--json")
    shown = json.dumps(json.loads(ok(res)), ensure_ascii=False)
    assert ("\U0001f600" in shown) == (where == "op_name")  # the op name is shown, the node name is not
    ok(run("latency", pair, "--no-write"))


@pytest.mark.parametrize("value", ["Infinity", "1e308", '"' + "9" * 5000 + '"', "[3]", "-4"])
def test_an_onnx_runtime_node_index_that_is_no_index_is_left_out(tmp_path, value):
    """Found by fuzz/fuzz_profiles.py: ``"node_index": Infinity`` raised OverflowError. A node index that is not an
    int32's is no instruction id (-1), as a missing one."""
    doc = json.loads((DATA / "ort" / "cnn_cpu_t1_l1.ort.json").read_text())
    for e in doc:
        if e.get("cat") == "Node" and isinstance(e.get("args"), dict):
            e["args"]["node_index"] = "MARK"
    p = tmp_path / "idx.ort.json"
    p.write_text(json.dumps(doc).replace('"MARK"', value))
    ok(run("breakdown", p, "--no-write", "--json"))
    ok(run("latency", p, "--no-write"))


def test_a_timeline_csv_cell_with_a_lone_surrogate_is_left_empty_with_a_warning(tmp_path):
    import csv
    import io

    etd = tmp_path / "m.etdp"
    etd.write_bytes(h3.fixture_etdump())
    ok(run("analyze", etd, "--output-dir", tmp_path / "a", "--op-types", "inline", "--no-progress"))
    rows = list(csv.reader((tmp_path / "a" / "m_exec_all_runs_timeline.csv").open(newline="")))
    j = rows[0].index("op_types")
    for r in rows[1:4]:
        r[j] = '["conv\\ud800"]'
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    p = tmp_path / "sur_exec_all_runs_timeline.csv"
    p.write_text(buf.getvalue())
    out = ok(run("breakdown", p, "--no-write"))
    assert "op_types cell(s) are not JSON lists of strings: left empty" in out


def test_the_mcp_server_answers_a_lone_surrogate_with_the_reader_error(tmp_path):
    try:
        import mcp  # noqa: F401
    except ImportError:
        if os.environ.get("EDGEPROF_REQUIRE_MCP"):
            raise
        pytest.skip("the mcp extra is not installed")
    from mcp_client import run_calls

    root = tmp_path / "root"
    root.mkdir()
    p = h3.ort_with_surrogate(root / "sur.ort.json")
    at = p.read_bytes().index(b"\\ud800")
    _, _, _, res = run_calls(root, [("latency", {"path": "sur.ort.json"}), ("breakdown", {"path": "sur.ort.json"})])
    for is_error, _, text in res:
        assert is_error and "internal error" not in text.lower() and "Traceback" not in text, text
        assert "surrogate" in text and f"at byte offset {at}" in text and "sur.ort.json" in text, text


def _pb2():
    try:
        from ai_edge_litert import profiling_info_pb2
    except ImportError:
        if os.environ.get("EDGEPROF_REQUIRE_LITERT"):
            raise
        pytest.skip("the litert extra is not installed")
    return profiling_info_pb2


def test_a_litert_protobuf_whose_nodes_are_never_called_says_it_times_nothing(tmp_path):
    p = tmp_path / "never.pb"
    p.write_bytes(h3.litert_proto(_pb2(), times_called=0))
    for cmd in (("report", p, "--out", tmp_path / "r.md"), ("breakdown", p, "--no-write"), ("trace", p, "--out",
                tmp_path / "t.json"), ("analyze", p, "--output-dir", tmp_path / "a")):
        one_line_error(run(*cmd), str(p), "valid end-to-end time")
    good = tmp_path / "good.pb"
    good.write_bytes(h3.litert_proto(_pb2()))
    ok(run("report", good, "--out", tmp_path / "r.md"))


def test_a_70_bit_protobuf_varint_is_refused_at_its_offset(tmp_path):
    raw = h3.overlong_varint(h3.litert_proto(_pb2(), count=-1))
    p = tmp_path / "v70.pb"
    p.write_bytes(raw)
    at = raw.index(b"\xff" * 9 + b"\x7f") + 9
    for cmd in (("breakdown", p, "--no-write"), ("report", p, "--out", tmp_path / "r.md")):
        one_line_error(run(*cmd), str(p), "varint longer than 64 bits", f"(at byte offset {at})")
    # a 64-bit count (-1 as int64: ten bytes, the last 0x01) is a number, if a negative one: refused as such
    q = tmp_path / "neg.pb"
    q.write_bytes(h3.litert_proto(_pb2(), count=-1))
    one_line_error(run("breakdown", q, "--no-write"), "count is negative")


@pytest.fixture(scope="module")
def debug_pair(tmp_path_factory):
    d = tmp_path_factory.mktemp("numerics")
    return h3.debug_recording(d, "tel_xnn"), h3.debug_recording(d, "tel_xnnq8")


def _variant(src: Path, name: str) -> Path:
    for tail in (".debug.bin", ".etrecord"):
        shutil.copy2(src.with_name(src.name.replace(".debug.etdp", tail)), src.with_name(name + tail))
    return src.with_name(name + ".debug.etdp")


@pytest.mark.parametrize("rank", [65, 17])
def test_numerics_on_a_tensor_of_too_many_dimensions_is_one_line(debug_pair, rank):
    a, b = debug_pair
    bad = h3.reshaped_tensor(a, rank, _variant(a, f"rank{rank}"))
    one_line_error(run("numerics", bad, b), f"rank{rank}.debug.bin", f"tensor of {rank} dimensions", "byte offset")


def test_an_empty_tensor_of_an_impossible_shape_is_one_line(debug_pair):
    """Sizes (0, 2^40, 2^40): no element, but a shape numpy cannot make (found by fuzz/fuzz_debug_buffer.py)."""
    a, b = debug_pair
    bad = h3.reshaped_tensor(a, 3, _variant(a, "empty_huge"), sizes=[0, 2**40, 2**40])
    one_line_error(run("numerics", bad, b), "empty_huge.debug.bin", "a shape no debug buffer can hold")


def test_numerics_reads_a_tensor_of_sixteen_dimensions(debug_pair):
    a, b = debug_pair
    ok(run("numerics", h3.reshaped_tensor(a, 16, _variant(a, "rank16")), b, "--json"))


def test_one_changed_stride_word_of_a_size_one_dimension_changes_nothing(debug_pair):
    """The word a mutation of the debug fixtures found (OverflowError): the stride of a dimension of size 1 in a
    tensor laid out in another dim order. A dimension of size 1 is never stepped along, so its stride is not used."""
    a, b = debug_pair
    base = _variant(a, "strided")
    h3.size_one_stride(a, value=1, out=base)            # the permuted layout with an ordinary stride
    bent = h3.size_one_stride(a, value=-(2**63), out=_variant(a, "bent"))
    want = json.loads(ok(run("numerics", base, b, "--json")))
    got = json.loads(ok(run("numerics", bent, b, "--json")))
    for k in ("points", "outputs", "accuracy_lost"):
        assert got[k] == want[k]


@pytest.mark.parametrize("kind", ["alloc", "debug"])
def test_runs_that_time_nothing_read_in_blocks(tmp_path, monkeypatch, kind):
    """The streaming reader (blocks of whole runs): a block of runs that hold only allocation (or only debug)
    events made ``analyze`` fail with IndexError. Blocks are made small so the fixtures have many."""
    from edgeprof.io import etdump_read

    seed = h3.fixture_etdump("toycnn_xnn.N20")
    none = tmp_path / f"{kind}_all.etdp"
    none.write_bytes(h3.untimed_runs(seed, kind))
    some = tmp_path / f"{kind}_some.etdp"
    some.write_bytes(h3.untimed_runs(seed, kind, which=lambda i: i % 3 == 0))
    ok(run("analyze", some, "--output-dir", tmp_path / "whole", "--no-progress"))  # one block: the file is small
    monkeypatch.setattr(etdump_read, "BLOCK_EVENTS", 2)
    line = one_line_error(run("analyze", none, "--output-dir", tmp_path / "none", "--no-progress"), str(none))
    assert "no profiling events" in line and "nothing to measure" in line
    assert not (tmp_path / "none").exists() or not any((tmp_path / "none").iterdir())
    ok(run("analyze", some, "--output-dir", tmp_path / "blocks", "--no-progress"))
    for f in (tmp_path / "whole").glob("*.csv"):
        assert (tmp_path / "blocks" / f.name).read_bytes() == f.read_bytes(), f.name


def test_a_log_block_of_empty_lines_and_one_key_word_is_searched_not_looped(tmp_path):
    """A log of empty lines with one XNNPACK key word per 1 MB block (a gzip log expands to 64 MB of that from
    64 KB) used to cost a Python loop over every line of each such block (~4 s per 64 MB here); the blocks are now
    searched. Counted, not timed: the Python-level calls made while reading (the count stops the old loop early)."""
    head = b"Note (XNNPACK): Using gemm microkernel 'xnn_f32_gemm_minmax_ukernel_4x8__avx2_broadcast'.\n"
    unit = head + b"\n" * ((1 << 20) - len(head))
    p = tmp_path / "sparse.log"
    p.write_bytes(unit * 4)
    from edgeprof.io.xnnlog import read_xnnlog

    class TooMany(Exception):
        pass

    calls = [0]

    def count(frame, event, arg):
        if event == "call":
            calls[0] += 1
            if calls[0] > 50_000:  # a loop over the 4 million lines makes tens of millions
                raise TooMany

    sys.setprofile(count)
    try:
        log = read_xnnlog(p)
    except TooMany:
        log = None
    finally:
        sys.setprofile(None)
    assert log is not None, f"more than {calls[0]} calls"
    assert len(log.registrations) == 4 and log.lines == 4 * ((1 << 20) - len(head) + 1)


# --------------------------------------------------------------------------------------------------
# 3. silently accepted → refused in one line
# --------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("store")
    etd = d / "m.etdp"
    etd.write_bytes(h3.fixture_etdump())
    ok(run("ingest", etd, "--store", d / "good.duckdb", "--commit", "c1", "--time", "2026-01-01T00:00:00"))
    return d / "good.duckdb"


@pytest.mark.parametrize("table,column,definition,shown", [
    ("runs", "latency_ms", "DOUBLE GENERATED ALWAYS AS (length(repeat('x', 1000)) * 1.0) VIRTUAL", "GENERATED ALWAYS"),
    ("launches", "median_ms", "DOUBLE GENERATED ALWAYS AS (mean_ms * 2) VIRTUAL", "GENERATED ALWAYS"),
    ("store_meta", "value", "VARCHAR GENERATED ALWAYS AS (repeat(key, 1000)) VIRTUAL", "GENERATED ALWAYS"),
    ("categories", "share_pct", "DOUBLE DEFAULT 42.0", "DEFAULT 42"),
    ("operators", "mean_ms", "DOUBLE CHECK (mean_ms < 1e300)", "constraints"),
])
def test_a_store_whose_tables_are_defined_otherwise_is_refused(store, tmp_path, table, column, definition, shown):
    bad = h3.store_with(store, tmp_path / "bad.duckdb", table, column, definition)
    before = bad.read_bytes()
    for cmd in (("history", "--store", bad), ("history", "--store", bad, "--json"),
                ("export", "--store", bad, "--to", tmp_path / "ds")):
        line = one_line_error(run(*cmd), str(bad), "not an edgeprof history store", shown)
        assert column in line or "constraints" in line
    assert bad.read_bytes() == before
    ok(run("history", "--store", store))


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1.5", '"7a"'])
def test_strict_etrecord_refuses_handles_that_are_not_integers(tmp_path, value):
    def edit(members):
        dhm = members["debug_handle_map"].decode()
        members["debug_handle_map"] = re.sub(r"(?<=[\[ ,])\d+(?=[\],])", value, dhm).encode()
    rec = h3.etrecord_edited(tmp_path / "bad.etrecord", edit)
    etd = tmp_path / "m.etdp"
    etd.write_bytes(h3.fixture_etdump())
    for cmd in (("analyze", etd, "--etrecord", rec, "--strict-etrecord", "--output-dir", tmp_path / "s",
                 "--no-progress"),
                ("breakdown", etd, "--etrecord", rec, "--strict-etrecord", "--no-write")):
        one_line_error(run(*cmd), str(rec), "is not a debug handle")
    # optional: a warning, and the analysis goes on without it (nothing attached, as the warning says)
    res = run("breakdown", etd, "--etrecord", rec, "--no-write", "--json")
    ok(res)
    assert json.loads(res.stdout)["breakdowns"][0]["etrecord_status"] == "unreadable"


def test_graph_node_handles_that_are_not_integers_are_refused_when_strict(tmp_path):
    def edit(members):
        g = next(n for n in members if n.startswith("edge_dialect_exported_program"))
        members[g] = re.sub(rb'"debug_handle": ?"\d+"', b'"debug_handle": NaN', members[g])
    rec = h3.etrecord_edited(tmp_path / "nan_nodes.etrecord", edit)
    etd = tmp_path / "m.etdp"
    etd.write_bytes(h3.fixture_etdump())
    one_line_error(run("breakdown", etd, "--etrecord", rec, "--strict-etrecord", "--no-write"), str(rec),
                   "NaN is not a debug handle")


@pytest.mark.parametrize("how", ["run_table", "events_vector", "event_table", "payload"])
def test_etdump_offsets_that_alias_are_refused(tmp_path, how):
    p = tmp_path / f"{how}.etdp"
    p.write_bytes(h3.aliased(h3.fixture_etdump(), how, times=1000, only_execute=how in ("run_table", "events_vector")))
    for cmd in (("latency", p, "--no-write"), ("analyze", p, "--output-dir", tmp_path / "a", "--no-progress")):
        one_line_error(run(*cmd), str(p), "more than once", "alias", "byte offset")


def test_a_4_mb_etdump_sharing_one_run_table_a_million_times(tmp_path):
    p = tmp_path / "million.etdp"
    p.write_bytes(h3.aliased(h3.fixture_etdump(), "run_table", times=1_000_000, only_execute=True))
    assert p.stat().st_size < 4_100_000
    one_line_error(run("latency", p, "--no-write", "--json"), str(p), "ETDump.run_data lists the table",
                   "more than once")


def test_event_tables_shared_between_blocks_are_refused_as_when_read_whole(tmp_path, monkeypatch):
    from edgeprof.io import etdump_read

    p = tmp_path / "shared.etdp"
    p.write_bytes(h3.aliased(h3.fixture_etdump(), "events_of_runs", times=4))
    one_line_error(run("latency", p, "--no-write"), "RunData.events lists the table", "more than once")
    monkeypatch.setattr(etdump_read, "BLOCK_EVENTS", 9)  # one run per block: the sharing lies between blocks
    one_line_error(run("analyze", p, "--output-dir", tmp_path / "a", "--no-progress"), "RunData.events lists the table",
                   "more than once")
    # a well-formed file read in the same small blocks is unaffected
    good = tmp_path / "good.etdp"
    good.write_bytes(h3.with_blocks(h3.fixture_etdump(), 12))
    ok(run("analyze", good, "--output-dir", tmp_path / "g", "--no-progress"))


def test_history_since_garbage_is_refused(store):
    for bad in ("garbage", "2026-13-45", "c1 ; DROP TABLE launches", "x" * 500):
        line = one_line_error(run("history", "--store", store, "--since", bad), "--since",
                              "neither a commit of the launches shown nor an ISO 8601 time")
        assert len(line) < 300
    # a commit of the store, an ISO time, and a commit id the store has no launch of (a base commit never profiled:
    # every change counts, as without --since) are read
    for good in ("c1", "2025-06-01", "2026-01-01T00:00:00Z", "deadbeef12"):
        ok(run("history", "--store", store, "--since", good))
