"""Every column of the kit-format CSVs `analyze` writes — the timeline and the ops stats — against an independent
computation: the ONNX Runtime profile's own JSON, read here with the standard library and pandas (an event's
time in µs, its run's `model_run`, its node). A column the CSVs gain without a check here fails the test, and a
column written in another unit (µs for ms, a share of the wrong total) fails its check."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from testdata import DATA

ORT = DATA / "ort"
FILES = ["cnn_cpu_t1_l1.ort.json", "cnn_mixed_ov_t1_l1.ort.json.gz"]


def _json(name: str) -> list[dict]:
    import gzip

    raw = (ORT / name).read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def _truth(name: str) -> pd.DataFrame:
    """The rows the timeline must hold, built from the runtime's events: per run, per node in time order, the op
    then its wrapper, then the run itself."""
    ev = _json(name)
    runs = sorted((e["ts"], e["dur"]) for e in ev if e["cat"] == "Session" and e["name"] == "model_run")
    rows = []
    for r, (t0, d0) in enumerate(runs):
        nodes = sorted((e for e in ev if e["cat"] == "Node" and t0 <= e["ts"] and e["ts"] + e["dur"] <= t0 + d0),
                       key=lambda e: e["ts"])
        k = 2 * len(nodes)
        for j, e in enumerate(nodes):
            cpu = e["args"]["provider"] == "CPUExecutionProvider"
            backend = "portable" if cpu else e["args"]["provider"]
            common = {"run_index": r, "start_us": float(e["ts"]), "end_us": float(e["ts"] + e["dur"]),
                      "duration_ms": e["dur"] / 1000, "instruction_id": int(e["args"]["node_index"]),
                      "module_path": e["name"].removesuffix("_kernel_time"), "offset_us": float(e["ts"] - t0),
                      "run_us": d0, "delegate_backend": backend, "backend_source": "" if cpu else "profile",
                      "op": e["args"]["op_name"]}
            rows.append(dict(common, event_index=2 * j, name=e["args"]["op_name"], depth=2,
                             kind="kernel" if cpu else "delegate_op", parent_event_index=2 * j + 1, self_us=e["dur"]))
            rows.append(dict(common, event_index=2 * j + 1, name="OPERATOR_CALL" if cpu else "DELEGATE_CALL", depth=1,
                             kind="operator_call" if cpu else "delegate_call", parent_event_index=k, self_us=0))
        rows.append({"run_index": r, "event_index": k, "name": "Method::execute", "start_us": float(t0),
                     "end_us": float(t0 + d0), "duration_ms": d0 / 1000, "instruction_id": -1, "module_path": "",
                     "offset_us": 0.0, "run_us": d0, "delegate_backend": "framework", "backend_source": "", "op": None,
                     "depth": 0, "kind": "framework", "parent_event_index": None,
                     "self_us": d0 - sum(e["dur"] for e in nodes)})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module", params=FILES)
def analysed(request, tmp_path_factory):
    out = tmp_path_factory.mktemp("kit")
    r = subprocess.run([sys.executable, "-m", "edgeprof", "analyze", str(ORT / request.param), "--output-dir", str(out),
                        "--quiet"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    stem = request.param.split(".")[0]
    return stem, out, _truth(request.param)


def _num(s):
    return pd.to_numeric(s.replace("", np.nan))


def _same_numbering(per_run: list[list[int]]) -> bool:
    first = per_run[0]
    return all(r == first for r in per_run) and sorted(first) == list(range(2, 2 + len(first)))


TIMELINE = {  # column → its check (table, truth): the truth's rows are in the table's order
    "model_id": lambda t, x, stem: (t["model_id"] == stem).all(),
    "name": lambda t, x, _: (t["name"] == x["name"]).all(),
    "type": lambda t, x, _: (t["type"] == x["name"]).all(),
    "delegate_backend": lambda t, x, _: (t["delegate_backend"] == x["delegate_backend"]).all(),
    "start_us": lambda t, x, _: np.array_equal(_num(t["start_us"]), x["start_us"]),
    "end_us": lambda t, x, _: np.array_equal(_num(t["end_us"]), x["end_us"]),
    "duration_ms": lambda t, x, _: np.allclose(_num(t["duration_ms"]), x["duration_ms"], rtol=0, atol=1e-12),
    "pct_total": lambda t, x, _: np.allclose(_num(t["pct_total"]), x["duration_ms"] * 1000 / x["run_us"] * 100,
                                             rtol=0, atol=5e-7),
    # Inspector's numbering (its values are checked against Inspector's CSVs on ETDumps): here, consecutive numbers
    # for a run's events after the load/init block's two, the same in every run of the same events
    "node_id": lambda t, x, _: _same_numbering([list(_num(g).astype(int)) for _, g in t.groupby("run_index")["node_id"]]),
    "run_index": lambda t, x, _: np.array_equal(_num(t["run_index"]), x["run_index"]),
    "block": lambda t, x, _: (t["block"] == "Execute").all(),
    "kind": lambda t, x, _: (t["kind"] == x["kind"]).all(),
    "event_index": lambda t, x, _: np.array_equal(_num(t["event_index"]), x["event_index"]),
    "instruction_id": lambda t, x, _: np.array_equal(_num(t["instruction_id"]), x["instruction_id"]),
    "depth": lambda t, x, _: np.array_equal(_num(t["depth"]), x["depth"]),
    "parent_event_index": lambda t, x, _: np.array_equal(_num(t["parent_event_index"]).fillna(-1),
                                                         x["parent_event_index"].fillna(-1)),
    "self_ms": lambda t, x, _: np.allclose(_num(t["self_ms"]), x["self_us"] / 1000, rtol=0, atol=1e-12),
    "self_pct": lambda t, x, _: np.allclose(_num(t["self_pct"]), x["self_us"] / x["run_us"] * 100, rtol=0, atol=5e-7),
    "offset_us": lambda t, x, _: np.array_equal(_num(t["offset_us"]), x["offset_us"]),
    "op_types_id": None,  # checked through the lists beside the table (below)
    "module_path": lambda t, x, _: (t["module_path"].fillna("") == x["module_path"]).all(),
    "timing_source": lambda t, x, _: (t["timing_source"] == "measured").all(),
    "backend_source": lambda t, x, _: (t["backend_source"].fillna("") == x["backend_source"]).all(),
}


def test_every_timeline_column_against_the_runtime_events(analysed):
    stem, out, truth = analysed
    table = pd.read_csv(out / f"{stem}_exec_all_runs_timeline.csv", dtype=str, keep_default_na=False)
    assert list(table.columns) == list(TIMELINE), "a new column needs its check here"
    table = table.assign(_r=_num(table["run_index"]), _e=_num(table["event_index"])).sort_values(["_r", "_e"])
    table = table.drop(columns=["_r", "_e"]).reset_index(drop=True)
    assert len(table) == len(truth)
    for col, check in TIMELINE.items():
        if check is not None:
            assert check(table, truth, stem), col
    lists = {int(r["op_types_id"]): json.loads(r["op_types"])
             for r in csv.DictReader((out / f"{stem}_exec_all_runs_timeline_op_types.csv").open())}
    ids = _num(table["op_types_id"])
    got = [lists[int(i)] if not np.isnan(i) else None for i in ids]
    assert got == [[o] if isinstance(o, str) else None for o in truth["op"]]


OPS = ["model_id", "name", "type", "delegate_backend", "count", "total_ms", "avg_ms", "pct_total", "kind", "runs",
       "occurrences", "min_ms", "median_ms", "max_ms", "std_ms", "self_total_ms", "self_pct", "timing_source",
       "op_types"]


def test_every_ops_stats_column_against_pandas(analysed):
    stem, out, truth = analysed
    table = pd.read_csv(out / f"{stem}_exec_ops_stats.csv", dtype=str, keep_default_na=False)
    assert list(table.columns) == OPS, "a new column needs its check here"
    n_runs = truth["run_index"].nunique()
    mean_e2e = truth.loc[truth["name"] == "Method::execute", "duration_ms"].mean()
    g = truth.assign(self_ms=truth["self_us"] / 1000).groupby(["name", "delegate_backend", "kind"])
    want = pd.DataFrame({
        "occurrences": g.size(), "total_ms": g["duration_ms"].sum() / n_runs, "avg_ms": g["duration_ms"].mean(),
        "min_ms": g["duration_ms"].min(), "median_ms": g["duration_ms"].median(), "max_ms": g["duration_ms"].max(),
        "std_ms": g["duration_ms"].std(ddof=1), "self_total_ms": g["self_ms"].sum() / n_runs}).reset_index()
    want["count"] = want["occurrences"] / n_runs
    want["pct_total"] = want["total_ms"] / mean_e2e * 100
    want["self_pct"] = want["self_total_ms"] / mean_e2e * 100
    got = table.set_index(["name", "delegate_backend", "kind"]).sort_index()
    want = want.set_index(["name", "delegate_backend", "kind"]).sort_index()
    assert list(got.index) == list(want.index)
    assert (table["model_id"] == stem).all() and (table["type"] == table["name"]).all()
    assert (_num(table["runs"]) == n_runs).all() and (table["timing_source"] == "measured").all()
    assert (table["op_types"] == "").all()  # op-type lists come from an ETRecord, which an ORT profile has not
    for col, tol in (("occurrences", 0), ("count", 1e-12), ("total_ms", 5e-7), ("avg_ms", 5e-7), ("min_ms", 1e-12),
                     ("median_ms", 5e-7), ("max_ms", 1e-12), ("std_ms", 5e-7), ("self_total_ms", 5e-7),
                     ("pct_total", 5e-7), ("self_pct", 5e-7)):
        assert np.allclose(_num(got[col]).fillna(-1), want[col].fillna(-1), rtol=0, atol=tol), col
