"""The category split of a portable profile recomputed from ExecuTorch Inspector's own table: each category's
time per run is the sum of its kernels' durations (the leaves) over the runs, divided by the number of runs; the
operator table's time per run and executions per run follow the same counts."""

from __future__ import annotations

import csv
import gzip
from collections import defaultdict

import pytest

from testdata import DATA
from edgeprof import load_etdump
from edgeprof.analysis.breakdown import breakdown
from edgeprof.taxonomy import classify


@pytest.mark.parametrize("name", ["toycnn_portable.N20", "mobilenet_v3_small_portable.N20", "tel_portable.N20"])
def test_portable_categories_and_operators_equal_inspectors_sums(name, etdump):
    with gzip.open(DATA / "ground_truth" / f"{name}.inspector.csv.gz", "rt") as f:
        rows = [r for r in csv.DictReader(f) if r["block_name"] != "Default"]
    n_runs = len({r["run_index"] for r in rows})
    cat_ms, op_ms, op_n = defaultdict(float), defaultdict(float), defaultdict(int)
    for r in rows:
        if r["event_name"].startswith("native_call_"):
            cat_ms[classify(r["event_name"]).category] += float(r["duration_ms"])
            op_ms[r["event_name"]] += float(r["duration_ms"])
            op_n[r["event_name"]] += 1
    b = breakdown(load_etdump(etdump(name)))
    assert b["runs"] == n_runs
    got = {c["line"]: c["avg_ms"] for c in b["categories"] if c["kind"] == "category"}
    assert got == pytest.approx({k: v / n_runs for k, v in cat_ms.items()}, rel=1e-6, abs=1e-9)
    e2e = [float(r["duration_ms"]) for r in rows if r["event_name"] == "Method::execute"]
    for c in b["categories"]:
        if c["kind"] == "category":
            assert c["pct_of_e2e"] == pytest.approx(100 * cat_ms[c["line"]] / sum(e2e), rel=1e-6)
    matched = 0
    for o in b["operators_all"]:
        key = "native_call_" + o["operator"] if not o["operator"].startswith("native_call_") else o["operator"]
        if key in op_ms:
            matched += 1
            assert o["avg_ms"] == pytest.approx(op_ms[key] / n_runs, rel=1e-6)
            assert o["executions_per_run"] == pytest.approx(op_n[key] / n_runs)
    assert matched == len(op_ms)
    assert b["e2e_ms"]["mean"] == pytest.approx(sum(e2e) / n_runs, rel=1e-9)
    assert b["backends"]["delegate_calls_per_run"] == 0


@pytest.mark.parametrize("name", ["toycnn_xnn.N20", "mobilenet_v3_small_xnnq8.N20", "tel_xnn.N20"])
def test_delegated_categories_and_overheads_equal_inspectors_sums(name, etdump):
    with gzip.open(DATA / "ground_truth" / f"{name}.inspector.csv.gz", "rt") as f:
        rows = [r for r in csv.DictReader(f) if r["block_name"] != "Default"]
    n_runs = len({r["run_index"] for r in rows})
    cat_ms = defaultdict(float)
    dcall = dop = 0.0
    for r in rows:
        d = float(r["duration_ms"])
        if r["is_delegated_op"] == "True":
            cat_ms[classify(r["event_name"]).category] += d
            dop += d
        elif r["event_name"].startswith("native_call_"):   # portable kernels outside the delegate
            cat_ms[classify(r["event_name"]).category] += d
        elif r["event_name"] == "DELEGATE_CALL":
            dcall += d
    b = breakdown(load_etdump(etdump(name)))
    got = {c["line"]: c["avg_ms"] for c in b["categories"] if c["kind"] == "category"}
    want = {k: v / n_runs for k, v in cat_ms.items()}
    assert got == pytest.approx(want, rel=1e-6, abs=1e-9)
    assert b["backends"]["delegate_overhead_ms"] == pytest.approx((dcall - dop) / n_runs, rel=1e-6, abs=1e-9)
