"""XNNPACK logs as they really appear: the real x86 logs, re-wrapped as logcat, interleaved, CRLF, cut off."""

from __future__ import annotations

import gzip
import re
from collections import Counter

import pytest
from testdata import DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edgeprof import api
from edgeprof.analysis.kernels import COLUMNS, KIT_COLUMNS, kernel_table
from edgeprof.errors import InputError
from edgeprof.io.xnnlog import parse_xnnlog, read_kernel_csv, read_xnnlog

X = DATA / "xnnpack"
STDERR = (X / "x86_avx2_stderr.log").read_text()
STDOUT = (X / "x86_avx2_stdout.log").read_text()


def _oracle(text: str) -> list[tuple[str, str]]:
    """(kind, name) of every kernel line, by plain string splitting (independent of the parser)."""
    out = []
    for line in text.splitlines():
        if line.startswith("Note (XNNPACK): Using ") and " microkernel '" in line:
            kind = line[len("Note (XNNPACK): Using "):].split(" ", 1)[0]
            out.append((kind, line.split("'")[1]))
    return out


def _regs(log) -> list[tuple[str, str]]:
    return [(r.kind, r.name) for r in log.registrations]


def test_real_x86_stderr_log_gives_its_exact_kernel_list():
    log = read_xnnlog(X / "x86_avx2_stderr.log")
    expected = _oracle(STDERR)
    assert _regs(log) == expected and len(expected) == 66
    rows = kernel_table(log, "probe")
    assert sum(r["count"] for r in rows) == 66
    assert len({r["kernel_name"] for r in rows}) == len({n for _, n in expected}) == 54
    assert Counter(r["category"] for r in rows for _ in range(r["count"])) == Counter(
        "transpose" if k in ("transposec", "transposev") else k for k, _ in expected)
    fams = Counter(r["isa_family"] for r in rows)
    assert set(fams) == {"AVX2-FMA", "AVX", "SSE", "scalar"}
    gemm = [r for r in rows if r["category"] in ("gemm", "igemm", "dqgemm", "dqigemm")]
    assert gemm and {r["isa_family"] for r in gemm} == {"AVX2-FMA"} and {r["isa"] for r in gemm} == {"fma3", "avx2"}
    assert not any(r["has_sme"] or r["has_sme2"] or r["kleidiai"] for r in rows)
    # the functions and sources are kept; first_line points at the line
    lines = STDERR.splitlines()
    for r in rows:
        assert r["kernel_name"] in lines[r["first_line"] - 1] and r["config"].startswith("init_")
    # hardware lines
    assert log.hardware["l1_data_cache_bytes"] == 32768 and log.hardware["l2_data_cache_bytes"] == 524288
    assert not log.truncated_last_line and log.formats == {"stdio": log.xnnpack_lines}


def test_real_x86_stdout_log_gives_operators_and_packing_decisions():
    log = read_xnnlog(X / "x86_avx2_stdout.log")
    assert log.registrations == []
    assert log.assumed_datatypes == [{"node": 15, "datatype": "QDINT8", "op": "Fully Connected", "line": 3}]
    assert sum(log.operators_run.values()) == STDOUT.count("Debug (XNNPACK): running operator")
    assert sum(log.operators_skipped.values()) == STDOUT.count("skip running operator")
    # every name ExecuTorch's profiler records (the "[ n] … #1" block) ran, with the same operator string
    profiled = [m.group(1) for m in re.finditer(r"^\s+\[\s*\d+\] (.+) #\d+$", STDOUT, re.MULTILINE)]
    assert profiled
    ran = set(log.operators_run) | set(log.operators_skipped)
    for name in profiled:
        assert any(op == name or op.startswith(name + " ") for op in ran), name
    assert log.tiles and all(t["mr"] >= 1 and t["tiles"] >= 1 for t in log.tiles)


def test_merged_streams_are_read_like_the_two_files():
    merged = "".join(a + b for a, b in zip(STDERR.splitlines(True), STDOUT.splitlines(True)))
    merged += ("".join(STDERR.splitlines(True)[len(STDOUT.splitlines()):])
               + "".join(STDOUT.splitlines(True)[len(STDERR.splitlines()):]))
    log = parse_xnnlog(merged)
    assert _regs(log) == _oracle(STDERR)
    assert log.operators_run == read_xnnlog(X / "x86_avx2_stdout.log").operators_run


def _bodies(text: str) -> list[str]:
    return [line[len("Note (XNNPACK): "):] for line in text.splitlines() if line.startswith("Note (XNNPACK): ")]


@pytest.mark.parametrize("fmt", ["threadtime", "brief", "tag", "time", "long", "bare"])
def test_logcat_formats_give_the_same_kernels(fmt):
    bodies = _bodies(STDERR)
    lines = ["--------- beginning of main"]
    for i, b in enumerate(bodies):
        if fmt == "threadtime":
            lines.append(f"08-22 10:15:42.{i:03d}  4321  4321 I XNNPACK : {b}")
        elif fmt == "brief":
            lines.append(f"I/XNNPACK( 4321): {b}")
        elif fmt == "tag":
            lines.append(f"I/XNNPACK: {b}")
        elif fmt == "time":
            lines.append(f"08-22 10:15:42.{i:03d} I/XNNPACK( 4321): {b}")
        elif fmt == "long":
            lines += [f"[ 08-22 10:15:42.{i:03d}  4321: 4321 I/XNNPACK ]", b, ""]
        else:
            lines.append(b)
    log = parse_xnnlog("\n".join(lines) + "\n")
    assert _regs(log) == _oracle(STDERR)
    assert log.hardware.get("l1_data_cache_bytes") == 32768
    if fmt != "bare":
        assert log.formats.get("logcat", 0) == len(bodies)


def test_crlf_lone_cr_and_interleaved_program_output():
    crlf = STDERR.replace("\n", "\r\n")
    assert _regs(parse_xnnlog(crlf.encode())) == _oracle(STDERR)
    # the program's own output glued to the front of XNNPACK lines (no newline between the two streams)
    glued = "".join(("I 00:00:00.000412 executorch:executor_runner.cpp:340] Resetting threadpool with num threads = 4"
                     if i % 7 == 0 else "progress 42%\r") + line for i, line in enumerate(STDERR.splitlines(True)))
    log = parse_xnnlog(glued)
    assert _regs(log) == _oracle(STDERR)
    assert log.hardware["threads"] == 4
    # two XNNPACK messages run together on one line are both read
    two = ("Note (XNNPACK): Using gemm microkernel 'xnn_a__neon'. (f, x.c:1)"
           "Note (XNNPACK): Using igemm microkernel 'xnn_b__neonsme2'. (g, x.c:2)\n")
    assert _regs(parse_xnnlog(two)) == [("gemm", "xnn_a__neon"), ("igemm", "xnn_b__neonsme2")]


def test_cut_off_last_line():
    lines = STDERR.splitlines(True)
    last_kernel = max(i for i, line in enumerate(lines) if "microkernel '" in line)
    head = "".join(lines[:last_kernel])
    line = lines[last_kernel]
    cut_in_name = head + line[: line.index("'") + 8]
    log = parse_xnnlog(cut_in_name)
    assert log.truncated_last_line and _regs(log) == _oracle(head)
    cut_after_name = head + line[: line.index("'.") + 2]  # the name is whole: used; its source location is lost
    log = parse_xnnlog(cut_after_name)
    assert not log.truncated_last_line and _regs(log) == _oracle(head + line)
    assert log.registrations[-1].function == "" and log.registrations[-1].source == ""
    cut_run = "Debug (XNNPACK): running operator 0:0 (Convolution (NHWC, F3"
    assert parse_xnnlog(cut_run).truncated_last_line


def test_gzip_and_bad_files(tmp_path):
    gz = tmp_path / "run_xnntrace.log.gz"
    gz.write_bytes(gzip.compress(STDERR.encode()))
    assert _regs(read_xnnlog(gz)) == _oracle(STDERR)
    binary = tmp_path / "model.etdp"
    binary.write_bytes(b"abc\x00\x01\x02")
    with pytest.raises(InputError, match=r"model.etdp: not a text log \(binary data\) \(at byte offset 3\)"):
        read_xnnlog(binary)
    with pytest.raises(InputError, match="no such file"):
        read_xnnlog(tmp_path / "missing.log")
    bad_gz = tmp_path / "bad.log.gz"
    bad_gz.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(InputError, match=r"bad\.log\.gz: cannot read the log"):
        read_xnnlog(bad_gz)
    # undecodable bytes are replaced, not fatal
    mixed = tmp_path / "latin1.log"
    mixed.write_bytes(STDERR.encode() + b"caf\xe9 \xff\n")
    assert len(read_xnnlog(mixed).registrations) == 66


def test_kernels_csv_round_trip_and_kit_csv(tmp_path):
    from click.testing import CliRunner

    from edgeprof.cli import main

    log = tmp_path / "mac_sme2_on_t1_xnntrace.log"
    log.write_text((X / "mac_sme2_on_xnntrace.log").read_text())
    res = CliRunner().invoke(main, ["kernels", str(log)])
    assert res.exit_code == 0, res.output
    out = tmp_path / "mac_sme2_on_t1_kernels.csv"
    header = out.read_text().splitlines()[0].split(",")
    assert tuple(header) == COLUMNS and tuple(header[:11]) == KIT_COLUMNS
    recs = read_kernel_csv(out)
    assert {r["model_id"] for r in recs} == {"mac_sme2_on_t1"}
    direct = api.kernels(log)["kernels"]
    again = api.kernels(out)["kernels"]
    assert [(r["kernel_name"], r["category"], r["count"], r["isa_family"]) for r in again] == \
        [(r["kernel_name"], r["category"], r["count"], r["isa_family"]) for r in direct]
    sme2 = [r for r in recs if r["has_sme2"] == "1"]
    assert sme2 and all(r["has_sme"] == "0" and r["isa_family"] == "SME2" and r["kleidiai"] == "1" for r in sme2)
    qp8 = next(r for r in recs if r["kernel_name"] == "xnn_qp8_f32_qc4w_gemm_minmax_ukernel_16x64c4__neonsme2")
    assert (qp8["dtype"], qp8["xnn_op"], qp8["variant"], qp8["ukernel_shape"]) == ("qp8_f32_qc4w", "gemm", "minmax", "16x64c4")
    # the kit's 11-column CSV is accepted (our columns re-derived from the name)
    kit = tmp_path / "kit_kernels.csv"
    kit.write_text(",".join(KIT_COLUMNS) + "\nm,xnn_pf32_gemm_minmax_ukernel_32x32__neonsme2,gemm,1,pf32,gemm,minmax,"
                   "32x32,neonsme2,1,1\n")
    r = api.kernels(kit)["kernels"][0]
    assert r["has_sme"] == 0 and r["has_sme2"] == 1 and r["isa_family"] == "SME2"  # the kit's double count fixed
    # a CSV that is not a kernels CSV: one line naming file and line
    bad = tmp_path / "bad_kernels.csv"
    bad.write_text("kernel_name,count\nxnn_a__neon,many\n")
    with pytest.raises(InputError, match=r"bad_kernels.csv: bad row: count 'many' is not a whole number below 10\^18 \(line 2\)"):
        read_kernel_csv(bad)
    other = tmp_path / "timeline.csv"
    other.write_text("name,duration_ms\nx,1\n")
    with pytest.raises(InputError, match=r"timeline.csv: not a kernels CSV: no kernel_name column \(line 1\)"):
        read_kernel_csv(other)


def test_kernels_cli_warns_about_logs_without_kernel_lines(tmp_path):
    from click.testing import CliRunner

    from edgeprof.cli import main

    quiet = tmp_path / "timing_latency.log"
    quiet.write_text("I 00:00:00.000412 executorch:executor_runner.cpp:340] Resetting threadpool with num threads = 4\n")
    res = CliRunner().invoke(main, ["kernels", str(quiet), "--no-write"])
    assert res.exit_code == 0
    assert "XNN_LOG_LEVEL ≥ 4" in res.output
    res = CliRunner().invoke(main, ["kernels", str(tmp_path / "nope.log")])
    assert res.exit_code == 2 and "nope.log: no such file" in res.output


LOG_LINE = st.sampled_from(STDERR.splitlines() + STDOUT.splitlines()[:60]
                          + (X / "android_sme2_on_xnntrace.log").read_text().splitlines())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(LOG_LINE, st.text(max_size=80)), max_size=40), st.integers(0, 4000),
       st.binary(max_size=16), st.sampled_from(["\n", "\r\n", "\r", ""]))
def test_fuzzed_logs_never_crash_the_parser(lines, cut, noise, sep):
    text = sep.join(lines)
    data = text.encode("utf-8", errors="replace")
    data = data[:cut] + noise + data[cut:]
    log = parse_xnnlog(data.replace(b"\x00", b""))
    for r in log.registrations:
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", r.name) and r.line >= 1
    rows = kernel_table(log, "fuzz")
    assert sum(r["count"] for r in rows) == len(log.registrations)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300), st.integers(0, 300))
def test_fuzzed_kernel_csvs_give_rows_or_one_line_errors(tmp_path, junk, cut):
    good = (X / "mac_sme2_on_xnntrace.log").read_text()  # any text; a CSV header is prepended half the time
    data = (b"kernel_name,category,count\nxnn_a__neon,gemm,1\n" if cut % 2 else b"") + junk + good.encode()[:cut]
    p = tmp_path / "k.csv"
    p.write_bytes(data)
    try:
        rows = read_kernel_csv(p)
    except InputError as e:
        assert str(e).startswith(str(p)) and "\n" not in str(e)
    else:
        assert all(r["kernel_name"] for r in rows)
