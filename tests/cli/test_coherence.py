"""A comparison that agrees with itself, through the command line on real recordings: one figure in the sentence
and the estimate, names said once and counts in the order of the names, identical recordings within an arm counted
once (and across arms still an error), category speedups inside their intervals and shares in [0, 100] on real
ONNX Runtime launches (three per arm) — every document here also passes the invariant walk the suite applies."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest
from testdata import DATA

from edgeprof import invariants

ORT = DATA / "ort"
B = [ORT / "cnn_cpu_t1_l1.ort.json", ORT / "cnn_cpu_t1_l2.ort.json.gz", ORT / "cnn_cpu_t1_l3.ort.json.gz"]
C = [ORT / f"cnn_cpu_t2_l{k}.ort.json.gz" for k in (1, 2, 3)]
TOY = DATA / "etdump"


def _ep(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "edgeprof", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd)


def _compare_json(*args):
    r = _ep("compare", "--json", "--no-write", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def ort_doc():
    args = [a for f in B for a in ("-b", f)] + [a for f in C for a in ("-c", f)]
    return _compare_json(*args)


def test_the_description_quotes_the_estimate(ort_doc):
    sp = ort_doc["speedup"]
    m = re.search(r"is (\d+\.\d+)x (faster|slower) than", sp["description"])
    shown = sp["estimate"] if m.group(2) == "faster" else 1 / sp["estimate"]
    assert float(m.group(1)) == round(shown, 2)
    # the pooled medians' ratio is another figure, and the sentence no longer quotes it
    assert round(sp["median_based"], 2) != round(shown, 2)


def test_arms_of_one_experiment_are_named_by_their_files_once(ort_doc):
    assert ort_doc["baseline"]["name"] == "cnn_cpu_t1" and ort_doc["candidate"]["name"] == "cnn_cpu_t2"
    line = ort_doc["summary_line"]
    assert line.startswith("cnn_cpu_t2 vs cnn_cpu_t1")
    nb, nc = ort_doc["baseline"]["count"], ort_doc["candidate"]["count"]
    assert f"{nc} vs {nb} runs in 3 vs 3 launch(es)" in line  # counts in the order of the names


def test_category_points_lie_in_their_intervals_and_shares_in_range(ort_doc):
    cats = ort_doc["by_category"]["categories"]
    tested = [c for c in cats if c["ci_low"] is not None]
    assert tested
    for c in tested:
        assert c["ci_low"] <= c["speedup"] <= c["ci_high"], c["line"]
    for c in cats:
        for side in ("baseline", "candidate"):
            lo, hi = c[f"{side}_share_ci"]
            assert 0 <= lo <= c[f"{side}_share"] <= hi <= 100, (c["line"], side)
    assert "mean time per run" in ort_doc["by_category"]["statistic"]
    assert invariants.violations(ort_doc) == []


def test_the_terminal_names_each_arm_once(tmp_path):
    a, b = tmp_path / "same.etdp", tmp_path / "x" / "same.etdp"
    b.parent.mkdir()
    import gzip

    a.write_bytes(gzip.decompress((TOY / "toycnn_xnn.N20.etdp.gz").read_bytes()))
    b.write_bytes(gzip.decompress((TOY / "toycnn_xnnq8.N20.etdp.gz").read_bytes()))
    r = _ep("compare", a, b, "--no-write")
    assert r.returncode == 0, r.stderr
    assert "(baseline) (baseline)" not in r.stdout and "(candidate) (candidate)" not in r.stdout
    assert "same (baseline)" in r.stdout and "same (candidate)" in r.stdout


def test_identical_recordings_within_an_arm_count_once(tmp_path):
    a = tmp_path / "a.ort.json"
    shutil.copy(B[0], a)
    copy = tmp_path / "copy_of_a.ort.json"
    shutil.copy(B[0], copy)
    five = _compare_json("-b", a, "-b", a, "-b", copy, "-b", a, "-b", a, "-c", C[0])
    once = _compare_json("-b", a, "-c", C[0])
    assert len(five["baseline"]["launches"]) == 1 and five["baseline"]["count"] == once["baseline"]["count"]
    assert five["ci"]["low"] == once["ci"]["low"] and five["ci"]["high"] == once["ci"]["high"]
    assert five["ci"]["low"] < five["ci"]["high"]          # not a zero-width interval of five copies
    said = [w for w in five["warnings"] if "count once" in w]
    assert len(said) == 1 and said[0].startswith("4 baseline input(s) repeat a recording") and "copy_of_a" in said[0]
    r = _ep("compare", "-b", a, "-c", copy, "--no-write")   # across arms: still an error
    assert r.returncode == 2 and "same measurement" in r.stderr
