"""One reader registry (io/readers.py): a profile's format is decided once — by a known name, else by content —
and recorded on the Profile; commands read it there instead of testing suffixes. Regressions of the suffix
tests it replaced: a gzip-compressed ETDump lost its ETRecord, a gzip-compressed timeline CSV was reported as
ETDump evidence."""

from __future__ import annotations

import gzip
import shutil

import numpy as np
import pytest

import edgeprof
from edgeprof.errors import InputError
from edgeprof.io.readers import profile_format, read_profile
from edgeprof.io.workspace import Workspace


def test_a_gzip_compressed_etdump_keeps_its_etrecord(tmp_path, etdump, etrecord):
    plain = etdump("tel_xnn.N20")
    packed = tmp_path / "tel_xnn.N20.etdp.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    a = edgeprof.load_profile(plain, etrecord=etrecord("tel_xnn"))
    b = edgeprof.load_profile(packed, etrecord=etrecord("tel_xnn"))
    assert b.format == "etdump" and b.etrecord.status == "attached" == a.etrecord.status
    np.testing.assert_array_equal(a.latency_ms(), b.latency_ms())
    # the ETRecord's op types reach the events the same way
    assert a.events["op_types"].to_list() == b.events["op_types"].to_list()


def test_a_gzip_compressed_timeline_csv_is_timeline_evidence(tmp_path, etdump):
    edgeprof.analyze([str(etdump("toycnn_xnn.N20"))], output_dir=tmp_path)
    csv = next(tmp_path.glob("*_all_runs_timeline.csv"))
    packed = tmp_path / "packed" / (csv.name + ".gz")
    packed.parent.mkdir()
    packed.write_bytes(gzip.compress(csv.read_bytes()))
    assert profile_format(packed) == "timeline_csv" and read_profile(packed).format == "timeline_csv"
    rep = edgeprof.report([str(packed)]).data
    assert [c["evidence"] for c in rep["configs"]] == ["timeline_csv"]
    assert edgeprof.load_profile(etdump("toycnn_xnn.N20")).format == "etdump"


def test_an_unknown_name_is_decided_by_content(tmp_path, etdump):
    edgeprof.analyze([str(etdump("toycnn_xnn.N20"))], output_dir=tmp_path)
    shutil.copy(etdump("toycnn_xnn.N20"), tmp_path / "capture.bin")
    shutil.copy(next(tmp_path.glob("*_all_runs_timeline.csv")), tmp_path / "timeline.txt")
    (tmp_path / "notes.txt").write_text("date,who\n2026-12-01,me\n")
    assert profile_format(tmp_path / "capture.bin") == "etdump"
    assert profile_format(tmp_path / "timeline.txt") == "timeline_csv"
    ws = Workspace()
    assert ws.profile(tmp_path / "capture.bin").n_runs == ws.profile(tmp_path / "timeline.txt").n_runs == 20
    with pytest.raises(InputError, match=r"notes\.txt.*this is a text file, not a profile"):
        profile_format(tmp_path / "notes.txt")


def test_kernel_inputs_are_decided_by_name_then_content(tmp_path, etdump):
    """What `edgeprof kernels` was given: an XNNPACK log, a kernel table or a profile — decided once by the
    registry, by content when the name does not say (a log saved as .txt, a kernel table without .csv, an
    ETDump and a timeline under other names), and each goes to its reader: the table read back from an odd name
    holds the same kernels as the log it was made from."""
    from testdata import DATA

    from edgeprof import api
    from edgeprof.io.readers import kernel_input_format

    log = DATA / "xnnpack" / "mac_sme2_on_xnntrace.log"
    shutil.copy(log, tmp_path / "capture.txt")
    table = tmp_path / "on_kernels.csv"
    api.kernel_evidence([log], write=True, out=table)
    shutil.copy(table, tmp_path / "table.dat")
    shutil.copy(etdump("toycnn_xnn.N20"), tmp_path / "capture.bin")
    edgeprof.analyze([str(etdump("toycnn_xnn.N20"))], output_dir=tmp_path)
    shutil.copy(next(tmp_path.glob("*_all_runs_timeline.csv")), tmp_path / "timeline.txt")
    got = {n: kernel_input_format(tmp_path / n) for n in
           ("capture.txt", "on_kernels.csv", "table.dat", "capture.bin", "timeline.txt")}
    assert got == {"capture.txt": "xnnpack_log", "on_kernels.csv": "kernel_csv", "table.dat": "kernel_csv",
                   "capture.bin": "etdump", "timeline.txt": "timeline_csv"}
    assert kernel_input_format(log) == "xnnpack_log"
    from_log = {r["kernel_name"] for r in api.kernels(tmp_path / "capture.txt")["kernels"]}
    assert from_log and {r["kernel_name"] for r in api.kernels(tmp_path / "table.dat")["kernels"]} == from_log
    tables, executed = api.kernel_evidence([tmp_path / "capture.bin", tmp_path / "table.dat"])
    assert [t["input"] for t in tables] == [str(tmp_path / "table.dat")]
    assert [e.kind for e in executed] == ["executed_kernels"] and executed[0]["input"] == str(tmp_path / "capture.bin")
