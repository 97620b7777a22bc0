"""LiteRT op profiles (benchmark_model --enable_op_profiling): the log tables, the CSV file and the
BenchmarkProfilingData protobuf, read into one average run. The samples in tests/data/litert are illustrative (laid
out as TensorFlow Lite's StatsCalculator writes them, for the real models beside them: make_samples.py); the oracle
is the table itself, read here with a regular expression, and the protobuf is written with LiteRT's own generated
protobuf classes when ai-edge-litert is installed."""

from __future__ import annotations

import gzip
import re
import shutil

import numpy as np
import pytest
from testdata import DATA

from edgeprof.analysis.breakdown import breakdown
from edgeprof.errors import InputError
from edgeprof.io.litert_profile import read_litert_profile
from edgeprof.io.readers import profile_format, read_profile
from edgeprof.taxonomy import classify

LITERT = DATA / "litert"
LOG = LITERT / "cnn_xnnpack_benchmark.log"
CSV = LITERT / "cnn_cpu_ops.csv"
OLD = LITERT / "tfm_xnnpack_old_release.log"


def _rows(text: str, after: str) -> list[tuple[str, float, int, str]]:
    """(type, avg ms, times, name) of the first Run Order table after ``after``, read with a regex."""
    part = text.split(after, 1)[1].split("Run Order", 1)[1]
    out = []
    for line in part.splitlines()[2:]:
        if not line.strip():
            break
        f = [x.strip() for x in (line.strip().split("\t") if "\t" in line else line.split(", ", 8))]
        out.append((f[0], float(f[-6]), int(f[-2]), f[-1]))  # …, avg ms, %, cdf%, mem KB, times called, name
    return out


def _per_run(prof, kinds=("kernel", "delegate_op")) -> dict[str, float]:
    ev = prof.events.filter(prof.events["kind"].is_in(list(kinds)) & (prof.events["run_index"] == 0))
    out: dict[str, float] = {}
    for name, dur in ev.select("name", "duration_ns").iter_rows():
        out[name] = out.get(name, 0) + dur
    return out


def test_the_log_gives_one_average_run_of_the_nodes_and_the_delegates_operators():
    text = LOG.read_text()
    prof = read_litert_profile(LOG)
    assert prof.format == "litert_ops" and prof.n_runs == 1 and prof.aggregate_runs == 50
    # the run's time is benchmark_model's own Inference (avg)
    inference = float(re.search(r"Inference \(avg\): ([0-9.]+)", text).group(1))
    assert prof.latency_ns().tolist() == [inference * 1000]
    nodes = _rows(text, "Regular Benchmark Runs")
    internal = _rows(text, "Delegate internal")
    want: dict[str, float] = {}
    for typ, avg, times, _ in nodes:
        if typ == "TILE":
            want[typ] = want.get(typ, 0) + round(avg * times * 1e6)
    for _typ, avg, times, name in internal:
        op = re.sub(r":\d+$", "", name.removeprefix("Delegate/"))
        want[op] = want.get(op, 0) + round(avg * times * 1e6)
    assert _per_run(prof) == want
    # three delegate calls, the two TILEs between them on the CPU kernels: named fallbacks
    bd = breakdown(prof)
    assert [o["operator"] for o in bd["portable_hotspots"]] == ["TILE"]
    segs = bd["graph_breaks"]["segments"]
    assert [s["kind"] for s in segs] == ["delegated", "portable", "delegated", "portable", "delegated"]
    # each delegate operator inside the call its start falls in: the second call ran only a copy
    assert segs[2]["op_names"] == ["Copy (NC, X32)"] and segs[1]["op_names"] == ["TILE"]
    conv = sum(avg * times for _, avg, times, n in internal if n.startswith("Delegate/Convolution"))
    cats = {c["line"]: c["avg_ms"] for c in bd["categories"]}
    assert cats["CONV"] == pytest.approx(conv, abs=1e-9)
    # the initialization: its own block, outside the run
    init = prof.events.filter(prof.events["run_index"] < 0)["name"].cast(str).to_list()
    assert init == ["ModifyGraphWithDelegate", "AllocateTensors"]


def test_the_csv_file_is_read_by_its_content_through_the_timeline_reader():
    assert profile_format(CSV) == "timeline_csv"  # the name decides; the reader then sees what it holds
    prof = read_profile(CSV)
    assert prof.format == "litert_ops" and prof.aggregate_runs == 100
    rows = _rows(CSV.read_text(), "Regular Benchmark Runs")
    assert len(rows) == 18
    want: dict[str, int] = {}
    for typ, avg, times, _ in rows:
        want[typ] = want.get(typ, 0) + round(avg * times * 1e6)
    assert _per_run(prof) == want
    # no Inference line, no Invoke row: the run is the profiler's Timings average
    assert prof.latency_ns().tolist() == [float(re.search(r"avg=([0-9.]+)", CSV.read_text()).group(1)) * 1000]
    assert all(classify(t).source == "litert" for t, *_ in rows)


def test_an_older_release_without_start_times_and_with_delegate_rows_in_the_table():
    text = OLD.read_text()
    prof = read_litert_profile(OLD)
    rows = _rows(text, "Regular Benchmark Runs")
    ops = [r for r in rows if r[0] == "DelegateOpInvoke"]
    assert len(ops) == 63 and rows[0][0] == "TfLiteXNNPackDelegate"
    bd = breakdown(prof)
    seg = bd["graph_breaks"]["segments"]
    assert len(seg) == 1 and seg[0]["kind"] == "delegated" and not bd["portable_hotspots"]
    gemm = sum(avg for _, avg, _, n in ops if "Fully Connected" in n or "Batch Matrix" in n)
    assert {c["line"]: c["avg_ms"] for c in bd["categories"]}["GEMM"] == pytest.approx(gemm, abs=1e-9)
    assert bd["accounting_check_max_abs_ns"] == 0


def test_commands_that_need_runs_refuse_it_in_one_line(tmp_path):
    import subprocess
    import sys

    for args in (["compare", LOG, CSV], ["latency", LOG], ["ingest", LOG, "--store", tmp_path / "h.duckdb"]):
        r = subprocess.run([sys.executable, "-m", "edgeprof", *map(str, args)], capture_output=True, text=True)
        assert r.returncode == 2, (args, r.stderr)
        assert "per-op averages over" in r.stderr and "need per-run times" in r.stderr
    r = subprocess.run([sys.executable, "-m", "edgeprof", "analyze", str(LOG), "--output-dir", str(tmp_path / "a"),
                        "--quiet"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_bad_tables_are_one_line_errors_with_their_line(tmp_path):
    text = CSV.read_text().splitlines()
    header = next(i for i, x in enumerate(text) if x.startswith("node type"))
    bad = tmp_path / "bad.log"
    bad.write_text("\n".join([*text[:header], "node type, first, times called", *text[header + 1:]]) + "\n")
    with pytest.raises(InputError, match=rf"lacks node type, avg ms.*\(line {header + 1}\)"):
        read_litert_profile(bad)
    rows = list(text)
    rows[header + 2] = rows[header + 2].replace(", 1, ", ", many, ")
    bad.write_text("\n".join(rows) + "\n")
    with pytest.raises(InputError, match=rf"times called 'many' is not a number \(line {header + 3}\)"):
        read_litert_profile(bad)
    empty = tmp_path / "empty.log"
    empty.write_text("Operator-wise Profiling Info for Regular Benchmark Runs:\n")
    with pytest.raises(InputError, match="no Run Order table"):
        read_litert_profile(empty)


def _proto_bytes(pb2) -> tuple[bytes, list]:
    """BenchmarkProfilingData of the CSV's nodes, written with LiteRT's own protobuf classes."""
    rows = _rows(CSV.read_text(), "Regular Benchmark Runs")
    data = pb2.BenchmarkProfilingData(model_name="cnn.tflite")
    sg = data.runtime_profile.subgraph_profiles.add(subgraph_name="main", subgraph_index=0)
    for k, (typ, avg, times, name) in enumerate(rows):
        op = sg.per_op_profiles.add(node_type=typ, name=name, times_called=times, run_order=k)
        us = round(avg * 1000)
        op.inference_microseconds.sum = us * times * 100
        op.inference_microseconds.count = times * 100
        op.inference_microseconds.avg = us
    sg2 = data.runtime_profile.subgraph_profiles.add(subgraph_name="body", subgraph_index=1)
    sg2.per_op_profiles.add(node_type="ADD", name="[x]:0", times_called=1, run_order=0)
    init = data.init_profile.subgraph_profiles.add(subgraph_index=0)
    init.per_op_profiles.add(node_type="AllocateTensors", name="AllocateTensors/0", times_called=1,
                             inference_microseconds={"sum": 96, "count": 1})
    return data.SerializeToString(), rows


def test_the_protobuf_form_written_by_litert_itself(tmp_path):
    pb2 = (pytest.importorskip("ai_edge_litert.profiling_info_pb2", reason="the litert extra is not installed")
           if not _require() else _pb2())
    raw, rows = _proto_bytes(pb2)
    p = tmp_path / "profile.pb"
    p.write_bytes(raw)
    assert profile_format(p) == "litert_ops"
    prof = read_profile(p)
    assert prof.aggregate_runs == 100 and prof.n_runs == 1
    want: dict[str, int] = {}
    for typ, avg, times, _ in rows:
        want[typ] = want.get(typ, 0) + round(avg * 1000) * times * 1000
    assert _per_run(prof) == want
    assert any("1 subgraph(s) besides the primary graph left out" in w for w in prof.warnings)
    assert prof.events.filter(prof.events["run_index"] < 0)["name"].cast(str).to_list() == ["AllocateTensors"]
    # damaged: a length that runs past the end names its offset
    cut = tmp_path / "cut.pb"
    cut.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(InputError, match=r"damaged BenchmarkProfilingData protobuf.*\(at byte offset \d+\)"):
        read_litert_profile(cut)


def _require() -> bool:
    import os

    return bool(os.environ.get("EDGEPROF_REQUIRE_LITERT"))


def _pb2():
    from ai_edge_litert import profiling_info_pb2

    return profiling_info_pb2


def test_fuzzed_logs_and_protobufs_give_a_profile_or_one_input_error(tmp_path):
    rng = np.random.default_rng(11)
    p = tmp_path / "f.log"
    for src in (LOG.read_bytes(), OLD.read_bytes()[:3000]):
        for _ in range(150):
            b = bytearray(src)
            for i in rng.integers(0, len(b), rng.integers(1, 8)):
                b[i] = int(rng.choice([9, 10, 32, 37, 44, 46, 48, 58, 91, 93, int(rng.integers(0, 256))]))
            p.write_bytes(bytes(b))
            try:
                read_litert_profile(p)
            except InputError as e:
                assert "\n" not in str(e) and str(e).startswith(str(p))
    q = tmp_path / "f.pb"
    for _ in range(300):
        b = bytes(rng.integers(0, 256, int(rng.integers(1, 200)), dtype=np.uint8))
        q.write_bytes(b"\x1a" + b)
        try:
            read_litert_profile(q)
        except InputError as e:
            assert "\n" not in str(e)


def test_gzip_and_names_do_not_matter(tmp_path):
    z = tmp_path / "whatever"
    z.write_bytes(gzip.compress(LOG.read_bytes()))
    assert profile_format(z) == "litert_ops"
    plain = tmp_path / "run.txt"
    shutil.copyfile(LOG, plain)
    assert read_profile(plain).latency_ns().tolist() == read_profile(z).latency_ns().tolist()
