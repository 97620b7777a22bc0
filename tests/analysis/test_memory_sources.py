"""The memory sources beside edgeprof's own measurement: what LiteRT's benchmark_model reports of its process, and
what a Core ML model's weights take.

benchmark_model is not on PyPI (no binary here): its memory lines are tested in the form it prints them, quoted from
published runs (a Linux console and an Android logcat), appended to this project's LiteRT log; its "MB" are the
resident set's KiB / 1024, so 286.73 MB is 286.73 × 2**20 bytes (hand arithmetic below). The Core ML weights are
checked against a hand parse of each package's weight.bin (the MIL blob file: a 64-byte header holding the blob
count, then per blob a 64-byte record — sentinel 0xDEADBEEF, data type, size, offset — and its data, 64-aligned)."""

from __future__ import annotations

import json
import struct
import subprocess
import sys

import pytest
from testdata import DATA

LOG = DATA / "litert" / "cnn_xnnpack_benchmark.log"
COREML = DATA / "coreml"
LINES = {  # as benchmark_model prints them
    "console": ("INFO: Memory footprint delta from the start of the tool (MB): init=6.14844 overall=109.848\n"
                "INFO: Overall peak memory footprint (MB) via periodic monitoring: 112.5\n"),
    "logcat": ("07-08 15:34:26.202 I/tflite  ( 5395): Memory footprint delta from the start of the tool (MB): "
               "init=286.73 overall=337\n"),
}
WANT = {"console": {"init_delta_bytes": round(6.14844 * 2**20), "overall_delta_bytes": round(109.848 * 2**20),
                    "peak_bytes": round(112.5 * 2**20)},
        "logcat": {"init_delta_bytes": round(286.73 * 2**20), "overall_delta_bytes": 337 * 2**20}}


def memory(*paths, ok=True):
    r = subprocess.run([sys.executable, "-m", "edgeprof", "memory", *map(str, paths), "--json"], capture_output=True,
                       text=True)
    if ok:
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)
    return r


@pytest.mark.parametrize("form", sorted(LINES))
def test_benchmark_models_reported_memory_is_read(tmp_path, form):
    log = tmp_path / "m.log"
    log.write_text(LOG.read_text() + LINES[form])
    doc = memory(log)
    (rep,) = doc["litert_reports"]
    assert rep == {"profile": str(log), "source": "benchmark_model", **WANT[form], "statement": rep["statement"]}
    assert doc["statements"] == [rep["statement"]] and doc["configurations"] == []
    mib = {k: f"{v / 2**20:,.1f} MiB" for k, v in WANT[form].items()}
    assert f"grew {mib['init_delta_bytes']} by the end of init and {mib['overall_delta_bytes']} by the end" \
        in rep["statement"]
    assert ("sampled peak footprint was " + mib.get("peak_bytes", "") in rep["statement"]) == ("peak_bytes" in mib)


def test_a_log_without_memory_lines_says_so_and_a_bad_peak_is_one_line(tmp_path):
    r = memory(LOG, ok=False)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and str(LOG) in r.stderr
    log = tmp_path / "bad.log"
    text = LOG.read_text() + "INFO: Overall peak memory footprint (MB) via periodic monitoring: -3\n"
    log.write_text(text)
    r = memory(log, ok=False)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert str(log) in r.stderr and f"(line {text.count(chr(10))})" in r.stderr and "out of range" in r.stderr


def _blob_bytes(package) -> int:
    data = (package / "Data" / "com.apple.CoreML" / "weights" / "weight.bin").read_bytes()
    count, _ = struct.unpack_from("<II", data, 0)
    at, total = 64, 0
    for _ in range(count):
        sentinel, _, size, offset = struct.unpack_from("<IIQQ", data, at)
        assert sentinel == 0xDEADBEEF
        total += size
        at = (offset + size + 63) // 64 * 64
    return total


def test_core_ml_weights_stored_and_dense():
    """A 4-bit palettized build of the same network stores about a quarter of the float16 weights (its lookup tables
    beside them) and computes with the same dense weights."""
    dense, pal = COREML / "conv_relu_linear_ios18.mlpackage", COREML / "conv_palettized4_ios18.mlpackage"
    doc = memory(dense, pal)
    a, b = doc["coreml_models"]
    assert (a["model"], b["model"]) == (str(dense), str(pal))
    assert a["weight_bytes"] == _blob_bytes(dense) and b["weight_bytes"] == _blob_bytes(pal)
    assert a["dense_weight_bytes"] == a["weight_bytes"]  # nothing compressed: stored as computed
    assert b["dense_weight_bytes"] == a["dense_weight_bytes"] and b["weight_bytes"] < 0.3 * a["weight_bytes"]
    assert a["weight_files"] == {"@model_path/weights/weight.bin":
                                 (dense / "Data" / "com.apple.CoreML" / "weights" / "weight.bin").stat().st_size}
