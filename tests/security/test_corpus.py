"""The hostile-input corpus, through every command that reads it.

A small corpus of hostile files is generated from the real fixtures when the module starts (:mod:`hostile_round3`;
nothing large is committed): gzip bombs of each compressed input, ETDumps whose runs time nothing or whose
FlatBuffer offsets alias (one run table a thousand times, one events vector for every run, an Event or a payload
listed twice), ONNX Runtime profiles and timeline CSV cells escaping lone surrogates, LiteRT protobufs whose nodes are
never called or whose count is a 70-bit varint, debug recordings with a 65-dimension tensor or a bent stride,
ETRecords whose debug handles are NaN, history stores with a generated column or a CHECK, and a truncated gzip file.
Each goes through every command that reads its kind — in this process, as the command line runs it — and each run
must: exit 0 or 2 (exit 2 with exactly one ``edgeprof: error:`` line), print no traceback and no internal error, leave
no temporary file, and leave every input byte for byte as it was.

It is the CI form of the fuzzers' new classes (fuzz/): the same hostile shapes, a fixed set, every command.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import os
import shutil
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from testdata import DATA

import hostile_round3 as h3
from edgeprof.cli import main


def _pb2():
    try:
        from ai_edge_litert import profiling_info_pb2
    except ImportError:
        if os.environ.get("EDGEPROF_REQUIRE_LITERT"):
            raise
        return None
    return profiling_info_pb2


def _etrecord_with(dst: Path, graph_sub=None, map_sub=None) -> Path:
    import re

    with zipfile.ZipFile(DATA / "etrecord" / "toycnn_xnn.etrecord") as z:
        members = {n: z.read(n) for n in z.namelist()}
    g = next(n for n in members if n.startswith("edge_dialect_exported_program"))
    if graph_sub:
        members[g] = re.sub(graph_sub[0], graph_sub[1], members[g])
    if map_sub:
        members["debug_handle_map"] = re.sub(map_sub[0], map_sub[1], members["debug_handle_map"])
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in members.items():
            z.writestr(n, d)
    return dst


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    src = root / "in"
    src.mkdir()
    seed = h3.fixture_etdump("toycnn_xnn.N20")
    good = src / "good.etdp"
    good.write_bytes(seed)
    profiles = {
        "alloc_only.etdp": h3.untimed_runs(seed, "alloc"),
        "debug_only.etdp": h3.untimed_runs(seed, "debug"),
        "alloc_some.etdp": h3.untimed_runs(seed, "alloc", which=lambda i: i % 2 == 0),
        "alias_run_table.etdp": h3.aliased(seed, "run_table", 1000, only_execute=True),
        "alias_events_vector.etdp": h3.aliased(seed, "events_vector", 1000, only_execute=True),
        "alias_event_table.etdp": h3.aliased(seed, "event_table"),
        "alias_events_of_runs.etdp": h3.aliased(seed, "events_of_runs", 3),
        "alias_payload.etdp": h3.aliased(seed, "payload"),
        "truncated.etdp.gz": gzip.compress(seed)[:-9],
    }
    for name, data in profiles.items():
        (src / name).write_bytes(data)
    bombs = h3.bombs(src / "bombs", 100)
    h3.ort_with_surrogate(src / "surrogate.ort.json")
    h3.ort_with_surrogate(src / "surrogate_node.ort.json", "name")
    # a timeline CSV of the fixture whose op_types cells escape a lone surrogate
    tl = root / "tl"
    res = CliRunner().invoke(main, ["analyze", str(good), "--output-dir", str(tl), "--op-types", "inline",
                                    "--no-progress"])
    assert res.exit_code == 0, res.output
    with (tl / "good_exec_all_runs_timeline.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    j = rows[0].index("op_types")
    for r in rows[1::3]:
        r[j] = '["conv\\ud800"]'
    with (src / "surrogate_exec_all_runs_timeline.csv").open("w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    pb2 = _pb2()
    if pb2 is not None:
        (src / "never_called.pb").write_bytes(h3.litert_proto(pb2, times_called=0))
        (src / "varint70.pb").write_bytes(h3.overlong_varint(h3.litert_proto(pb2, count=-1)))
    # debug recordings
    num = src / "num"
    a = h3.debug_recording(num, "toycnn_xnn")
    b = h3.debug_recording(num, "toycnn_xnnq8")
    for name in ("rank65", "strided"):
        for tail in (".debug.bin", ".etrecord"):
            shutil.copy2(num / f"toycnn_xnn{tail}", num / f"{name}{tail}")
    h3.reshaped_tensor(a, 65, num / "rank65.debug.etdp")
    t = h3.debug_recording(root / "tel", "tel_xnn")
    for tail in (".debug.bin", ".etrecord"):
        shutil.copy2(t.with_name(t.name.replace(".debug.etdp", tail)), num / f"tel_strided{tail}")
    h3.size_one_stride(t, out=num / "tel_strided.debug.etdp")
    h3.debug_recording(num, "tel_xnnq8")
    # ETRecords
    recs = {
        "nan_map": _etrecord_with(src / "nan_map.etrecord", map_sub=(rb"(?<=[\[ ,])\d+(?=[\],])", b"NaN")),
        "inf_nodes": _etrecord_with(src / "inf_nodes.etrecord", graph_sub=(rb'"debug_handle": ?"\d+"',
                                                                            b'"debug_handle": Infinity')),
        "surrogate_graph": _etrecord_with(src / "surrogate_graph.etrecord",
                                          graph_sub=(rb'"target": "', rb'"target": "\\udc00')),
    }
    # history stores
    st = root / "st"
    st.mkdir()
    res = CliRunner().invoke(main, ["ingest", str(good), "--store", str(st / "good.duckdb"), "--commit", "c1"])
    assert res.exit_code == 0, res.output
    stores = {
        "generated": h3.store_with(st / "good.duckdb", src / "generated.duckdb", "runs", "latency_ms",
                                   "DOUBLE GENERATED ALWAYS AS (length(repeat('x', 100000)) * 1.0) VIRTUAL"),
        "check": h3.store_with(st / "good.duckdb", src / "check.duckdb", "launches", "mean_ms",
                               "DOUBLE CHECK (mean_ms > 0)"),
    }
    files = [p for p in src.rglob("*") if p.is_file()]
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in files}
    yield {"root": root, "src": src, "good": good, "bombs": bombs, "num": num, "pair": (a, b), "recs": recs,
           "stores": stores, "store": st / "good.duckdb"}
    changed = [str(p) for p in files if hashlib.sha256(p.read_bytes()).hexdigest() != before[p]]
    assert not changed, f"inputs modified: {changed}"
    assert not [p for p in root.rglob("*") if ".edgeprof-" in p.name and p.name.endswith(".tmp")]


def _check(args) -> int:
    res = CliRunner().invoke(main, [str(a) for a in args])
    out = res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), (args, repr(res.exception), out[-600:])
    assert res.exit_code in (0, 2), (args, res.exit_code, out[-600:])
    assert "Traceback" not in out and "internal error" not in out.lower(), (args, out[-600:])
    if res.exit_code == 2:
        assert len([x for x in out.splitlines() if x.startswith("edgeprof: error:")]) == 1, (args, out[-600:])
    return res.exit_code


def _profile_commands(p: Path, good: Path, out: Path) -> list[tuple]:
    return [
        ("analyze", p, "--output-dir", out / "a", "--no-progress"),
        ("latency", p, "--no-write", "--json"),
        ("compare", good, p, "--no-write", "--json"),
        ("breakdown", p, "--no-write", "--json"),
        ("kernels", p, "--no-write"),
        ("report", p, "--out", out / "r.md", "--html", out / "html"),
        ("trace", p, "--out", out / "t.json"),
        ("ingest", p, "--store", out / "s.duckdb", "--commit", "x"),
        ("plan", p, good, "--effect", "5%", "--json"),
    ]


# every profile of the corpus must be refused (exit 2), except the ones listed: they hold something to analyse
READABLE = {"alloc_some.etdp", "surrogate_exec_all_runs_timeline.csv"}


def test_every_hostile_profile_in_every_command(corpus, tmp_path):
    src, good = corpus["src"], corpus["good"]
    names = sorted(p.name for p in src.iterdir()
                   if p.is_file() and p.suffix not in (".etrecord", ".duckdb") and p != good)
    assert len(names) >= 11
    for name in names:
        codes = {cmd[0]: _check(cmd) for cmd in _profile_commands(src / name, good, tmp_path / name)}
        if name in READABLE:
            assert codes["breakdown"] == 0 and codes["trace"] == 0, (name, codes)
        else:  # (`kernels` reads any text that is not a profile as an XNNPACK log: a JSON file logs no kernels)
            assert {c for k, c in codes.items() if k != "kernels"} == {2}, (name, codes)


def test_every_bomb_in_the_commands_that_read_it(corpus, tmp_path):
    b, good = corpus["bombs"], corpus["good"]
    a, q8 = corpus["pair"]
    for kind in ("etdump", "timeline_csv", "ort_json", "litert"):
        for cmd in _profile_commands(b[kind], good, tmp_path / kind)[:4]:
            assert _check(cmd) == 2
    assert _check(("kernels", b["log"], "--no-write")) == 2
    assert _check(("kernel-view", "-b", b["log"], "-c", DATA / "xnnpack" / "mac_sme2_on_xnntrace.log")) == 2
    assert _check(("numerics", a, q8, "--debug-buffer", b["debug_buffer"], "--json")) == 2


def test_debug_recordings_in_numerics(corpus):
    num = corpus["num"]
    q8 = corpus["pair"][1]
    assert _check(("numerics", num / "rank65.debug.etdp", q8)) == 2
    assert _check(("numerics", q8, num / "rank65.debug.etdp", "--json")) == 2
    assert _check(("numerics", num / "tel_strided.debug.etdp", num / "tel_xnnq8.debug.etdp", "--json")) == 0
    for p in ("rank65.debug.etdp", "tel_strided.debug.etdp"):
        assert _check(("analyze", num / p, "--output-dir", corpus["root"] / "out_num", "--no-progress")) == 0


def test_hostile_etrecords(corpus, tmp_path):
    good = corpus["good"]
    for name, rec in corpus["recs"].items():
        assert _check(("breakdown", good, "--etrecord", rec, "--no-write", "--json")) == 0
        assert _check(("breakdown", good, "--etrecord", rec, "--strict-etrecord", "--no-write")) == 2, name
        assert _check(("analyze", good, "--etrecord", rec, "--strict-etrecord", "--output-dir", tmp_path / name,
                       "--no-progress")) == 2, name
        assert _check(("trace", good, "--etrecord", rec, "--out", tmp_path / f"{name}.json")) == 0


def test_hostile_stores(corpus, tmp_path):
    for name, store in corpus["stores"].items():
        for cmd in (("history", "--store", store), ("history", "--store", store, "--json"),
                    ("export", "--store", store, "--to", tmp_path / f"{name}_ds"),
                    ("ingest", corpus["good"], "--store", store, "--commit", "y"),
                    ("history", "--store", corpus["store"], "--since", "garbage")):
            assert _check(cmd) == 2, (name, cmd)
