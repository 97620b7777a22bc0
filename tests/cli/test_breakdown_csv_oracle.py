"""Every column of the CSV files `breakdown` writes (`<model>_category_summary.csv`, `_operator_details.csv`,
`_other_top_ops.csv`, `_e2e_latency.csv`, `_graph_breaks.csv`) on real ONNX Runtime profiles, read back with pandas,
against the runtime's own events (the truth of test_breakdown_json_oracle.py: the standard library and numpy on
the profile's JSON, op types mapped to categories by hand). A column a file gains without a check here fails."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from ort_truth import CATEGORY
from test_breakdown_json_oracle import _truth
from testdata import DATA

ORT = DATA / "ort"


@pytest.fixture(scope="module", params=["cnn_cpu_t2_l1.ort.json.gz", "cnn_mixed_ov_t1_l1.ort.json.gz"])
def case(request, tmp_path_factory):
    out = tmp_path_factory.mktemp("csv")
    r = subprocess.run([sys.executable, "-m", "edgeprof", "breakdown", str(ORT / request.param), "--output-dir", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    stem = request.param.split(".")[0]
    files = {k: out / f"{stem}_{k}.csv" for k in
             ("category_summary", "operator_details", "other_top_ops", "e2e_latency", "graph_breaks")}
    return {k: pd.read_csv(f, keep_default_na=False) if f.exists() else None for k, f in files.items()}, \
        _truth(request.param), stem


def _check(df: pd.DataFrame, columns: dict, t) -> None:
    assert list(df.columns) == list(columns), "a column needs its check here"
    for col, check in columns.items():
        for i, row in df.iterrows():
            assert check(row, t) is not False, (col, i)


def _cat_ms(row, t):
    if row["kind"] == "category":
        return row["avg_ms"] == pytest.approx(t["by_cat"][row["category"]], abs=1e-9)
    if row["category"] == "unattributed":
        return row["avg_ms"] == pytest.approx(t["unattributed"], abs=1e-9)
    return row["avg_ms"] == 0  # ONNX Runtime times kernels only: no framework or delegate overhead of its own


CATEGORY_COLUMNS = {
    "category": lambda r, t: r["category"] in set(t["by_cat"]) | {"unattributed", "framework_overhead",
                                                                  "delegate_overhead"},
    "total_ms": lambda r, t: r["total_ms"] == pytest.approx(r["avg_ms"] * t["n"], abs=1e-8),
    "avg_ms": _cat_ms,
    "pct_of_e2e": lambda r, t: r["pct_of_e2e"] == pytest.approx(100 * r["avg_ms"] / t["e2e"].mean(), rel=1e-6),
    "operator_count": lambda r, t: r["operator_count"] == (
        len({o for (o, _) in t["by_op"] if CATEGORY[o] == r["category"]}) if r["kind"] == "category" else 0),
    "kind": lambda r, t: r["kind"] == ("category" if r["category"] in t["by_cat"] else "overhead"),
    "executions_per_run": lambda r, t: r["executions_per_run"] == (pytest.approx(sum(
        c for (o, _), c in t["count"].items() if CATEGORY[o] == r["category"]) / t["n"]) if r["kind"] == "category"
        else 0),
}


def _op(r, t):
    return (r["operator"], r["backend"])


OPERATOR_COLUMNS = {
    "operator": lambda r, t: _op(r, t) in t["by_op"],
    "category": lambda r, t: r["category"] == CATEGORY[r["operator"]],
    "total_ms": lambda r, t: r["total_ms"] == pytest.approx(t["by_op"][_op(r, t)] * t["n"], abs=1e-8),
    "avg_ms": lambda r, t: r["avg_ms"] == pytest.approx(t["by_op"][_op(r, t)], abs=1e-9),
    "pct_of_e2e": lambda r, t: r["pct_of_e2e"] == pytest.approx(100 * t["by_op"][_op(r, t)] / t["e2e"].mean(), rel=1e-6),
    "event_count": lambda r, t: r["event_count"] == t["count"][_op(r, t)],
    "subtype": lambda r, t: isinstance(r["subtype"], str) and r["subtype"] != "",
    "backend": lambda r, t: r["backend"] in {b for (_, b) in t["by_op"]},
    "executions_per_run": lambda r, t: r["executions_per_run"] == pytest.approx(t["count"][_op(r, t)] / t["n"]),
    "op": lambda r, t: r["op"] == r["operator"],
    "dtypes": lambda r, t: r["dtypes"] == "",  # ONNX Runtime's profile names no dtypes
    "op_types": lambda r, t: json.loads(r["op_types"]) == {r["operator"]: t["count"][_op(r, t)] / t["n"]},
}


def test_category_summary_every_column(case):
    files, t, _ = case
    _check(files["category_summary"], CATEGORY_COLUMNS, t)
    assert set(files["category_summary"]["category"]) >= set(t["by_cat"])
    assert files["category_summary"]["pct_of_e2e"].sum() == pytest.approx(100, abs=1e-3)


def test_operator_details_and_other_top_every_column(case):
    files, t, _ = case
    _check(files["operator_details"], OPERATOR_COLUMNS, t)
    assert len(files["operator_details"]) == len(t["by_op"])
    assert list(files["operator_details"]["avg_ms"]) == sorted(files["operator_details"]["avg_ms"], reverse=True)
    other = sorted(o for (o, _) in t["by_op"] if CATEGORY[o] == "OTHER")
    if not other:  # written only when some time is in unclassified operators
        assert files["other_top_ops"] is None
        return
    _check(files["other_top_ops"], OPERATOR_COLUMNS, t)
    assert sorted(files["other_top_ops"]["operator"]) == other


E2E_COLUMNS = {
    "model_name": lambda r, t, stem: r["model_name"] == stem,
    "num_runs": lambda r, t, stem: r["num_runs"] == t["n"],
    "total_ms": lambda r, t, stem: r["total_ms"] == pytest.approx(t["e2e"].sum(), abs=1e-9),
    "avg_ms": lambda r, t, stem: r["avg_ms"] == pytest.approx(t["e2e"].mean(), abs=1e-9),
    "min_ms": lambda r, t, stem: r["min_ms"] == pytest.approx(t["e2e"].min(), abs=1e-9),
    "max_ms": lambda r, t, stem: r["max_ms"] == pytest.approx(t["e2e"].max(), abs=1e-9),
    "median_ms": lambda r, t, stem: r["median_ms"] == pytest.approx(float(np.median(t["e2e"])), abs=1e-9),
    "p90_ms": lambda r, t, stem: r["p90_ms"] == pytest.approx(float(np.percentile(t["e2e"], 90)), abs=1e-9),
}


def test_e2e_latency_every_column(case):
    files, t, stem = case
    df = files["e2e_latency"]
    assert list(df.columns) == list(E2E_COLUMNS) and len(df) == 1
    for col, check in E2E_COLUMNS.items():
        assert check(df.iloc[0], t, stem) is not False, col


def _split(nodes):
    """One run's segments by hand: consecutive CPU kernels form one portable segment, each provider call its own."""
    segs, prev = [], None
    for _, op, backend, dur in sorted(nodes):
        if backend == "portable" and prev == "portable":
            segs[-1]["ops"].append(op)
            segs[-1]["us"] += dur
        else:
            segs.append({"backend": backend, "ops": [op], "us": dur})
        prev = backend
    return segs


def _segments(t):
    """Run 0's segments, each with its mean time over the runs of the same structure."""
    runs = [_split(nodes) for nodes in t["per_run"]]
    shape = [(s["backend"], s["ops"]) for s in runs[0]]
    same = [r for r in runs if [(s["backend"], s["ops"]) for s in r] == shape]
    return [{**s, "run0_us": s["us"], "mean_us": float(np.mean([r[k]["us"] for r in same]))}
            for k, s in enumerate(runs[0])]


GRAPH_COLUMNS = {
    "index": lambda r, s: r["index"] == r.name,
    "kind": lambda r, s: r["kind"] == ("portable" if s["backend"] == "portable" else "delegated"),
    "backend": lambda r, s: r["backend"] == s["backend"],
    "calls": lambda r, s: r["calls"] == len(s["ops"]),  # top-level calls in run 0: each kernel, or the provider call
    "mean_ms": lambda r, s: r["mean_ms"] == pytest.approx(s["mean_us"] / 1000, abs=1e-9),
    "run0_ms": lambda r, s: r["run0_ms"] == pytest.approx(s["run0_us"] / 1000, abs=1e-9),
    "ops": lambda r, s: r["ops"].split(" | ") == s["ops"],
}


def test_graph_breaks_every_column(case):
    files, t, _ = case
    df, segs = files["graph_breaks"], _segments(t)
    assert list(df.columns) == list(GRAPH_COLUMNS) and len(df) == len(segs)
    for (i, row), s in zip(df.iterrows(), segs):
        for col, check in GRAPH_COLUMNS.items():
            assert check(row, s) is not False, (col, i)
