"""Every key of `placement --json` (one input, and `--diff`) against independent readings of the same builds:
ExecuTorch's Inspector for the ETDumps (`tests/data/placement/*.inspector.csv.gz`: each event's durations per run
and whether it is a delegated op), executorch's own lowered graph for what was delegated (`*.oracle.json`), and
hand counts of the model (1×16×32×32 sigmoid input). A key the documents gain without a check here fails the
registry test."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import shutil
import subprocess
import sys

import pytest
from testdata import DATA

PLACE = DATA / "placement"
WRAPPERS = {"DELEGATE_CALL", "OPERATOR_CALL", "Method::execute"}


def inspector(name: str) -> list[dict]:
    """Inspector's operator events of one build's execute block, in order: name, delegated, mean ms per run."""
    rows = list(csv.DictReader(io.StringIO(gzip.decompress((PLACE / f"{name}.N10.inspector.csv.gz").read_bytes()).decode())))
    events: dict[int, dict] = {}
    for r in rows:
        if r["block_name"] != "Execute" or r["event_name"] in WRAPPERS:
            continue
        e = events.setdefault(int(r["event_index"]), {"name": r["event_name"], "delegated": r["is_delegated_op"] == "True",
                                                      "ms": []})
        e["ms"].append(float(r["duration_ms"]))
    return [{**e, "mean_ms": sum(e["ms"]) / len(e["ms"])} for _, e in sorted(events.items())]


def method_ms(name: str) -> float:
    rows = csv.DictReader(io.StringIO(gzip.decompress((PLACE / f"{name}.N10.inspector.csv.gz").read_bytes()).decode()))
    ms = [float(r["duration_ms"]) for r in rows if r["event_name"] == "Method::execute"]
    return sum(ms) / len(ms)


def edgeprof(*args) -> dict:
    r = subprocess.run([sys.executable, "-m", "edgeprof", "placement", *map(str, args), "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    d = tmp_path_factory.mktemp("placement")
    for n in ("gate_xnn", "gate_nosigmoid"):
        for tail in (".N10.etdp.gz", ".pte", ".etrecord"):
            shutil.copy(PLACE / f"{n}{tail}", d)
    return d


def test_every_key_of_a_placement(builds):
    d = edgeprof(builds / "gate_nosigmoid.N10.etdp.gz")
    truth = inspector("gate_nosigmoid")
    oracle = json.loads((PLACE / "gate_nosigmoid.oracle.json").read_text())
    assert set(d) == {"schema_version", "kind", "input", "runtime", "runtime_title", "evidence", "host", "focus",
                      "fallback_means", "runs", "run_ms", "fingerprint", "operators", "partitions", "placements",
                      "summary", "statement", "warnings"}
    assert d["kind"] == "placement" and d["input"].endswith("gate_nosigmoid.N10.etdp.gz")
    assert (d["runtime"], d["runtime_title"], d["host"], d["focus"]) == ("executorch", "ExecuTorch", "portable", None)
    assert d["evidence"] == "etdump+pte_static"  # the program found beside the recording gave the FLOPs
    assert "portable" in d["fallback_means"] and "delegate" in d["fallback_means"]
    assert d["runs"] == 10 and d["run_ms"] == pytest.approx(method_ms("gate_nosigmoid"), abs=1e-6)
    ops = d["operators"]
    assert set(ops[0]) == {"index", "key", "name", "op", "family", "placement", "accelerated", "basis", "time_ms",
                           "flops", "plan_weight"}
    # Inspector's operator events, in order, delegated or not, with their mean durations
    assert [o["name"] for o in ops] == [t["name"].rsplit(" #", 1)[0] for t in truth]
    assert [o["accelerated"] for o in ops] == [t["delegated"] for t in truth]
    assert [o["time_ms"] for o in ops] == pytest.approx([t["mean_ms"] for t in truth], abs=1e-9)
    assert [o["index"] for o in ops] == list(range(len(truth)))
    assert {o["basis"] for o in ops} == {"measured"} and all(o["plan_weight"] is None for o in ops)
    host = [o for o in ops if not o["accelerated"]]
    # executorch's own graph: exactly aten.sigmoid left to the portable kernels
    assert oracle["non_delegated_ops"] == ["aten.sigmoid.default"]
    assert [(o["key"], o["op"], o["family"], o["placement"]) for o in host] == [
        ("sigmoid#0", "native_call_sigmoid.out", "sigmoid", "portable")]
    assert {o["placement"] for o in ops if o["accelerated"]} == {"XnnpackBackend"}
    assert host[0]["flops"] == 4 * 16 * 32 * 32  # hand count: 4 FLOPs per sigmoid of a 1×16×32×32 tensor
    # partitions: the two lowered modules with the sigmoid between them
    parts = d["partitions"]
    assert set(parts[0]) == {"index", "placement", "accelerated", "first", "last", "ops", "op_keys", "time_ms", "flops",
                             "plan_weight"}
    assert [p["placement"] for p in parts] == ["XnnpackBackend", "portable", "XnnpackBackend"]
    assert sum(p["accelerated"] for p in parts) == oracle["delegate_calls"] == 2
    assert [(p["first"], p["last"], p["ops"]) for p in parts] == [(0, 3, 4), (4, 4, 1), (5, 10, 6)]
    assert [p["op_keys"] for p in parts][1] == ["sigmoid#0"]
    inspect_time = [sum(t["mean_ms"] for t in truth[p["first"]:p["last"] + 1]) for p in parts]
    assert [p["time_ms"] for p in parts] == pytest.approx(inspect_time, abs=1e-9)
    assert parts[1]["flops"] == 65536 and parts[0]["plan_weight"] is None
    total = sum(t["mean_ms"] for t in truth)
    by = {r["placement"]: r for r in d["placements"]}
    assert set(by["portable"]) == {"placement", "accelerated", "ops", "partitions", "time_ms", "flops", "plan_weight",
                                   "time_share_pct", "flops_share_pct", "plan_weight_share_pct"}
    assert by["portable"]["time_share_pct"] == pytest.approx(100 * truth[4]["mean_ms"] / total, abs=1e-6)
    assert (by["portable"]["ops"], by["portable"]["partitions"], by["XnnpackBackend"]["partitions"]) == (1, 1, 2)
    assert by["XnnpackBackend"]["time_ms"] == pytest.approx(total - truth[4]["mean_ms"], abs=1e-9)
    assert by["portable"]["flops_share_pct"] + by["XnnpackBackend"]["flops_share_pct"] == pytest.approx(100)
    assert by["portable"]["plan_weight_share_pct"] is None and by["portable"]["plan_weight"] is None
    s = d["summary"]
    assert s == {"operators": 11, "accelerated_operators": 10, "host_operators": 1, "unknown_operators": 0,
                 "partitions": 3, "accelerated_partitions": 2, "host_partitions": 1,
                 "host_partitions_between_accelerated": 1,
                 "accelerated_time_share_pct": pytest.approx(100 * (total - truth[4]["mean_ms"]) / total)}
    assert d["statement"].startswith("10 of 11 operators on an accelerator (XnnpackBackend), "
                                     f"{s['accelerated_time_share_pct']:.1f} % of operator time")
    h = hashlib.sha256()
    for o in ops:
        h.update(f"{o['key']}\x1f{o['placement']}\x1e".encode())
    assert d["fingerprint"] == h.hexdigest()[:16] and d["warnings"] == []


def test_every_key_of_a_diff(builds):
    d = edgeprof("--diff", builds / "gate_xnn.N10.etdp.gz", builds / "gate_nosigmoid.N10.etdp.gz")
    a, b = inspector("gate_xnn"), inspector("gate_nosigmoid")
    assert set(d) == {"schema_version", "kind", "baseline", "candidate", "runtime", "baseline_runtime",
                      "baseline_fingerprint", "candidate_fingerprint", "baseline_evidence", "candidate_evidence",
                      "moved", "only_baseline", "only_candidate", "partitions", "fallbacks", "suspected_fallbacks",
                      "opaque_baseline_partitions", "promotions", "moved_cost_ms", "moved_cost_known", "run_ms",
                      "verdict", "fallback_means", "statements", "warnings"}
    assert d["kind"] == "placement_diff" and d["baseline"].endswith("gate_xnn.N10.etdp.gz")
    assert d["candidate"].endswith("gate_nosigmoid.N10.etdp.gz")
    assert d["runtime"] == d["baseline_runtime"] == "executorch"
    assert d["baseline_evidence"] == d["candidate_evidence"] == "etdump+pte_static"
    assert d["baseline_fingerprint"] == edgeprof(builds / "gate_xnn.N10.etdp.gz")["fingerprint"]
    assert d["candidate_fingerprint"] == edgeprof(builds / "gate_nosigmoid.N10.etdp.gz")["fingerprint"]
    sig_a = next(t["mean_ms"] for t in a if t["name"].startswith("Sigmoid"))
    sig_b = next(t["mean_ms"] for t in b if t["name"].startswith("native_call_sigmoid"))
    (m,) = d["moved"]
    assert set(m) == {"key", "name", "candidate_name", "op", "family", "from", "to", "kind", "baseline_ms",
                      "candidate_ms", "cost_ms", "index", "candidate_index"}
    assert (m["key"], m["family"], m["from"], m["to"], m["kind"]) == ("sigmoid#0", "sigmoid", "XnnpackBackend",
                                                                       "portable", "fallback")
    assert (m["name"], m["candidate_name"], m["op"]) == ("Sigmoid (NC)", "native_call_sigmoid.out", "Sigmoid (NC)")
    assert (m["index"], m["candidate_index"]) == (3, 4)
    assert m["baseline_ms"] == pytest.approx(sig_a) and m["candidate_ms"] == pytest.approx(sig_b)
    assert m["cost_ms"] == pytest.approx(sig_b - sig_a) and d["moved_cost_ms"] == pytest.approx(sig_b - sig_a)
    assert d["moved_cost_known"] is True
    # the second lowered module brought its own layout transposes: two in the baseline, four in the candidate
    assert sum(t["name"].startswith("Transpose") for t in a) == 2 and sum(t["name"].startswith("Transpose") for t in b) == 4
    assert d["only_baseline"] == [] and [r["key"] for r in d["only_candidate"]] == ["transpose#2", "transpose#3"]
    assert set(d["only_candidate"][0]) == {"key", "name", "op", "placement", "time_ms"}
    p = d["partitions"]
    assert set(p) == {"baseline", "candidate", "baseline_accelerated", "candidate_accelerated", "split", "merged",
                      "new_host_partitions"}
    assert (p["baseline"], p["candidate"], p["baseline_accelerated"], p["candidate_accelerated"]) == (1, 3, 1, 2)
    assert p["split"] == [{"baseline_partition": 0, "placement": "XnnpackBackend", "into": [0, 1, 2]}]
    assert p["merged"] == []
    assert p["new_host_partitions"] == [{"index": 1, "placement": "portable", "ops": 1, "op_keys": ["sigmoid#0"],
                                         "time_ms": pytest.approx(sig_b)}]
    assert (d["fallbacks"], d["promotions"], d["suspected_fallbacks"], d["opaque_baseline_partitions"]) == (1, 0, [], [])
    assert d["run_ms"] == {"baseline": pytest.approx(method_ms("gate_xnn"), abs=1e-6),
                           "candidate": pytest.approx(method_ms("gate_nosigmoid"), abs=1e-6)}
    assert d["verdict"] == "fallback" and "portable" in d["fallback_means"] and d["warnings"] == []
    assert d["statements"][0] == f"fallback: Sigmoid (NC) (sigmoid#0) XnnpackBackend → portable; time {sig_b - sig_a:+.3f} ms."
