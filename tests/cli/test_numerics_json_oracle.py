"""`edgeprof numerics --json` on debug recordings of the fixture programs (tests/data/numerics, made with
`edgeprof run --debug-buffer`), every key checked against an independent computation: the output comparison against
the programs' forward() outputs on the same input (SQNR computed here, 10·log10(Σx²/Σ(x−y)²)), the points against the
recordings' debug events and the ETRecords, "accuracy lost" against the rule applied here to the reported points."""

from __future__ import annotations

import gzip
import json
import math
import shutil

import numpy as np
import pytest
from click.testing import CliRunner
from testdata import DATA

from edgeprof.cli import main

NUM = DATA / "numerics"
PROGRAMS = ("toycnn_portable", "toycnn_xnn", "toycnn_xnnq8", "tel_xnn", "tel_xnnq8")
TOP = {"schema_version", "kind", "baseline", "candidate", "points", "outputs", "accuracy_lost", "threshold_db",
       "noise_floor_db", "matched_by", "base_points", "candidate_points", "statements"}
SIDE = {"etdump", "debug_buffer", "run", "etrecord", "debug_events"}
POINT = {"name", "candidate_name", "role", "candidate_role", "method", "shape", "candidate_shape", "dtype",
         "candidate_dtype", "span",
         "candidate_span", "base_instruction", "candidate_instruction", "metrics"}
METRICS = {"identical", "elements", "finite", "max_abs_diff", "mean_abs_diff", "cosine", "sqnr_db"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("numerics")
    for p in PROGRAMS:
        (d / f"{p}.debug.etdp").write_bytes(gzip.decompress((NUM / f"{p}.debug.etdp.gz").read_bytes()))
        (d / f"{p}.debug.bin").write_bytes(gzip.decompress((NUM / f"{p}.debug.bin.gz").read_bytes()))
        shutil.copy2(DATA / "etrecord" / f"{p}.etrecord", d / f"{p}.etrecord")
    return d


def numerics(folder, a, b, *extra):
    r = CliRunner().invoke(main, ["numerics", str(folder / f"{a}.debug.etdp"), str(folder / f"{b}.debug.etdp"),
                                  "--json", *extra])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def sqnr(x, y):
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return 10 * math.log10(np.sum(x * x) / np.sum((x - y) ** 2))


def test_every_key_of_a_partly_delegated_int8_pair(folder):
    d = numerics(folder, "tel_xnn", "tel_xnnq8", "--threshold-db", "6")
    assert set(d) == TOP and d["kind"] == "numerics"
    for side, name in (("baseline", "tel_xnn"), ("candidate", "tel_xnnq8")):
        s = d[side]
        assert set(s) == SIDE
        assert s["etdump"] == str(folder / f"{name}.debug.etdp") and s["debug_buffer"] == str(folder / f"{name}.debug.bin")
        assert s["etrecord"] == str(folder / f"{name}.etrecord") and s["run"] == 0
        assert s["debug_events"] == 46  # the recording's debug events of run 0 (tests/io/test_debug_buffer.py)
    # the output against forward() on the same input
    x, y = np.load(NUM / "tel_xnn.forward.npy"), np.load(NUM / "tel_xnnq8.forward.npy")
    (o,) = d["outputs"]
    assert set(o) == POINT and set(o["metrics"]) == METRICS and o["role"] == o["candidate_role"] == "output"
    m = o["metrics"]
    assert abs(m["sqnr_db"] - sqnr(x, y)) < 1e-4 and m["identical"] is False and m["finite"] is True
    assert m["max_abs_diff"] == pytest.approx(float(np.max(np.abs(x - y))), abs=1e-6)
    assert m["mean_abs_diff"] == pytest.approx(float(np.mean(np.abs(x.astype(float) - y))), abs=1e-6)
    cos = float(np.dot(x.ravel().astype(float), y.ravel()) / (np.linalg.norm(x) * np.linalg.norm(y)))
    assert m["cosine"] == pytest.approx(cos, abs=2e-6) and m["elements"] == x.size
    assert o["shape"] == list(x.shape) and o["dtype"] == o["candidate_dtype"] == "float32"
    assert o["span"] == o["candidate_span"] == "the whole program" and o["method"] == "output"
    assert o["base_instruction"] is None and o["candidate_instruction"] is None
    # inside: matched, named by module path, each saying what it covers
    pts = d["points"]
    assert len(pts) >= 20 and d["base_points"] >= len(pts) and d["candidate_points"] >= len(pts)
    assert set(d["matched_by"]) == {p["method"] for p in pts} <= {"debug_handle", "module_path+op_type", "module_path"}
    names = {p["name"] for p in pts}
    assert {"layer.norm1 native_layer_norm", "layer.norm2 native_layer_norm"} <= names
    delegated = [p for p in pts if p["candidate_role"] == "delegate_output"]
    assert delegated and all("XnnpackBackend call (instruction" in p["candidate_span"] for p in delegated)
    assert all(p["span"].startswith("one operator") for p in pts if p["role"] == "operator")
    for p in pts:  # the shapes agree and every metric is the comparison of the two tensors (checked on outputs)
        assert set(p) == POINT and p["shape"] and 0 < p["metrics"]["elements"] == int(np.prod(p["shape"]))
        assert int(np.prod(p["candidate_shape"])) == int(np.prod(p["shape"]))  # one element count (a reshape at most)
    # "accuracy lost": the rule applied here to the reported float points
    assert d["threshold_db"] == 6.0 and d["noise_floor_db"] == 100.0
    # from the model input (the same for both programs), along the floating-point points
    along = [{"name": "the model input", "metrics": {"identical": True, "sqnr_db": None}}]
    along += [p for p in pts + d["outputs"] if p["dtype"].startswith("float")]
    eff = [100.0 if p["metrics"]["identical"] else min(p["metrics"]["sqnr_db"], 100.0) for p in along]
    first = next(k for k in range(1, len(eff)) if eff[k - 1] - eff[k] > 6.0)
    lost = d["accuracy_lost"]
    assert lost["after"] == along[first - 1]["name"] and lost["at"] == along[first]["name"]
    assert lost["drop_db"] == pytest.approx(eff[first - 1] - eff[first], abs=1e-5)
    assert lost["sqnr_before_db"] == along[first - 1]["metrics"]["sqnr_db"]
    assert lost["sqnr_after_db"] == along[first]["metrics"]["sqnr_db"]
    assert lost["statement"].startswith(f"accuracy lost between {lost['after']} and {lost['at']}: SQNR ")
    assert lost["statement"] in d["statements"] and d["statements"][0].startswith("model output 0: SQNR 35.0 dB")


def test_an_fp32_pair_differs_by_float_noise_only(folder):
    d = numerics(folder, "toycnn_portable", "toycnn_xnn")
    x, y = np.load(NUM / "toycnn_portable.forward.npy"), np.load(NUM / "toycnn_xnn.forward.npy")
    m = d["outputs"][0]["metrics"]
    assert abs(m["sqnr_db"] - sqnr(x, y)) < 1e-4 and m["sqnr_db"] > 100
    assert d["accuracy_lost"] is None
    # the XNNPACK program is one delegate call: only its output is visible, matched to the portable linear layer
    (p,) = d["points"]
    assert p["candidate_role"] == "delegate_output" and p["shape"] == [1, 10] and p["method"] == "module_path"


def test_a_difference_below_a_millionth_is_written_exactly_not_rounded_to_zero(folder):
    """JSON floats are their shortest round-trip form: the fp32 pair's sub-1e-6 differences read back as numpy's."""
    d = numerics(folder, "toycnn_portable", "toycnn_xnn")
    x, y = np.load(NUM / "toycnn_portable.forward.npy"), np.load(NUM / "toycnn_xnn.forward.npy")
    m = d["outputs"][0]["metrics"]
    truth = float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64))))
    assert m["identical"] is False and 0 < truth < 1e-5
    assert m["max_abs_diff"] > 0 and m["max_abs_diff"] == pytest.approx(truth, rel=1e-6)
    assert m["mean_abs_diff"] > 0 and m["mean_abs_diff"] < m["max_abs_diff"]


def test_the_same_program_twice_is_identical(folder):
    d = numerics(folder, "tel_xnnq8", "tel_xnnq8")
    assert all(p["metrics"]["identical"] and p["metrics"]["sqnr_db"] is None for p in d["points"] + d["outputs"])
    assert d["accuracy_lost"] is None and d["statements"][0] == "model output 0: identical"


def test_without_etrecords_points_are_matched_by_order_and_shape_and_it_says_so(folder, tmp_path):
    for p in ("toycnn_xnn", "toycnn_xnnq8"):
        for ext in (".debug.etdp", ".debug.bin"):
            shutil.copy2(folder / f"{p}{ext}", tmp_path / f"{p}{ext}")
    d = numerics(tmp_path, "toycnn_xnn", "toycnn_xnnq8")
    assert d["matched_by"] == ["order_and_shape"] and d["baseline"]["etrecord"] is None
    assert any("matched by order and shape only" in s for s in d["statements"])
    x, y = np.load(NUM / "toycnn_xnn.forward.npy"), np.load(NUM / "toycnn_xnnq8.forward.npy")
    assert abs(d["outputs"][0]["metrics"]["sqnr_db"] - sqnr(x, y)) < 1e-4


def test_a_debug_buffer_named_elsewhere_goes_to_the_etdump_of_its_stem_else_in_order(folder, tmp_path):
    a, b = tmp_path / "toycnn_xnn.debug.etdp", tmp_path / "toycnn_xnnq8.debug.etdp"
    shutil.copy2(folder / "toycnn_xnn.debug.etdp", a)
    shutil.copy2(folder / "toycnn_xnnq8.debug.etdp", b)
    r = CliRunner().invoke(main, ["numerics", str(a), str(b), "--json",
                                  "--debug-buffer", str(folder / "toycnn_xnnq8.debug.bin"),
                                  "--debug-buffer", str(folder / "toycnn_xnn.debug.bin")])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["candidate"]["debug_buffer"] == str(folder / "toycnn_xnnq8.debug.bin")
    # names that say nothing go in order: the first to the baseline, the second to the candidate
    x, y = tmp_path / "one.bin", tmp_path / "two.bin"
    shutil.copy2(folder / "toycnn_xnn.debug.bin", x)
    shutil.copy2(folder / "toycnn_xnnq8.debug.bin", y)
    r = CliRunner().invoke(main, ["numerics", str(a), str(b), "--json", "--debug-buffer", str(x),
                                  "--debug-buffer", str(y)])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert (doc["baseline"]["debug_buffer"], doc["candidate"]["debug_buffer"]) == (str(x), str(y))
    r = CliRunner().invoke(main, ["numerics", str(a), str(b), *["--debug-buffer", str(x)] * 3])
    assert r.exit_code == 2 and "3 debug buffers for 2 ETDumps" in r.output
    r = CliRunner().invoke(main, ["numerics", str(a), str(b)])  # no buffer at all
    assert r.exit_code == 2 and "--debug-buffer" in r.output
