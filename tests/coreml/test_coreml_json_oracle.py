"""Every key of `coreml MODEL --json` (the document and each model in it) and of `coreml diff --json` against
coremltools' own reading of the packages (the protobuf specification: functions, opsets, inputs, outputs, the
operations in order) and the weight files' sizes on disk. FLOPs and the roofline have their own hand-worked
oracles (named below). A key the documents gain without a check here fails the test."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest
from testdata import DATA

from .conftest import require_coremltools

BEFORE = DATA / "coreml" / "conv_relu_linear_ios18.mlpackage"
AFTER = DATA / "coreml" / "conv_palettized4_ios18.mlpackage"
ELSEWHERE = "checked on known truth elsewhere"


def spec_of(path):
    require_coremltools()
    import coremltools as ct

    spec = ct.models.MLModel(str(path), skip_model_load=True).get_spec()
    funcs = {}
    for name, f in spec.mlProgram.functions.items():
        block = f.block_specializations[f.opset]
        funcs[name] = {"opset": f.opset, "inputs": [i.name for i in f.inputs], "outputs": list(block.outputs),
                       "types": [op.type for op in block.operations]}
    return {"version": str(spec.specificationVersion), "functions": funcs}


def weight_files(path) -> dict:
    return {f"@model_path/weights/{p.name}": p.stat().st_size for p in (path / "Data" / "com.apple.CoreML" /
                                                                        "weights").iterdir()}


def edgeprof(*args) -> dict:
    r = subprocess.run([sys.executable, "-m", "edgeprof", "coreml", *map(str, args), "--json"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _functions(m, s):
    assert [(f["name"], f["opset"], [i["name"] for i in f["inputs"]], f["outputs"], f["ops"]) for f in m["functions"]] \
        == [(n, f["opset"], f["inputs"], f["outputs"], len(f["types"])) for n, f in s["functions"].items()]


def _ops(m, s):
    types = s["functions"]["main"]["types"]
    assert [o["type"] for o in m["ops"]] == types and [o["index"] for o in m["ops"]] == list(range(len(types)))
    assert all(o["predicted_device"] == "const" for o in m["ops"] if o["type"] == "const")


def _op_types(m, s):
    want = Counter(t for t in s["functions"]["main"]["types"] if t != "const")
    assert {t["type"]: t["count"] for t in m["op_types"]} == dict(want)
    assert sum(t["flops"] for t in m["op_types"]) == m["totals"]["flops"] == sum(o["flops"] for o in m["ops"])
    assert sum(t["share_flops_pct"] for t in m["op_types"]) == pytest.approx(100)


def _totals(m, s):
    t, types = m["totals"], s["functions"]["main"]["types"]
    assert (t["ops"], t["const_ops"]) == (len(types), types.count("const"))
    assert t["weight_files"] == weight_files(BEFORE) and t["ops_flops_not_known"] == []
    assert t["macs"] == sum(o["macs"] for o in m["ops"]) and t["written"] == sum(o["written"] for o in m["ops"])


def _estimate(m, s):
    e = m["estimate"]
    assert sum(e["device_counts"].values()) == sum(t != "const" for t in s["functions"]["main"]["types"])
    assert e["boundary_ms"] == 0.2 and e["evidence"] == "mil_static" and e["chip"]["name"] == "M2"
    # estimated_ms: tests/coreml/test_static.py::test_roofline_against_hand_arithmetic


MODEL_KEYS = {
    "estimate": _estimate,
    "form": lambda m, s: m["form"] == "mlpackage",
    "functions": _functions,
    "hazards": lambda m, s: m["hazards"] == [],  # fp16-clean, no LUT, no int32 work, no state
    "model": lambda m, s: m["model"] == BEFORE.name,
    "op_types": _op_types,  # FLOPs per op: tests/coreml/test_cost.py::test_flops_equal_hand_counts
    "ops": _ops,
    "path": lambda m, s: m["path"] == str(BEFORE),
    "role": lambda m, s: m["role"] == "",
    "rules": lambda m, s: m["rules"] and all(isinstance(v, str) and len(v) > 20 for v in m["rules"].values()),
    "totals": _totals,
    "version": lambda m, s: m["version"] == s["version"],
}
DOC_KEYS = {"errors": [], "kind": "coreml_static", "models": "MODEL_KEYS, per model", "path": str(BEFORE),
            "schema_version": 1}


def test_every_key_of_a_static_analysis_has_a_check():
    d, s = edgeprof(BEFORE), spec_of(BEFORE)
    assert sorted(d) == sorted(DOC_KEYS)
    assert (d["errors"], d["kind"], d["path"], d["schema_version"]) == ([], "coreml_static", str(BEFORE), 1)
    (m,) = d["models"]
    assert sorted(m) == sorted(MODEL_KEYS), "a key of a model needs its check here"
    for key, check in MODEL_KEYS.items():
        assert check(m, s) is not False, key


def _diff_op_types(d, b, a):
    cb, ca = (Counter(t for t in x["functions"]["main"]["types"] if t != "const") for x in (b, a))
    rows = {r["short_type"]: (r["count_before"], r["count_after"]) for r in d["op_types"]}
    assert all(rows[k] == (cb[k], ca[k]) for k in rows)  # the types that changed, counted right
    assert {k for k in cb | ca if cb[k] != ca[k]} <= set(rows) == {"constexpr_lut_to_dense", "conv", "linear"}


def _diff_totals(d, b, a):
    t = d["totals"]
    assert t["ops"] == {"before": len(b["functions"]["main"]["types"]), "after": len(a["functions"]["main"]["types"])}
    assert t["weight_file_bytes"] == {"before": sum(weight_files(BEFORE).values()),
                                      "after": sum(weight_files(AFTER).values())}
    assert t["flops"]["before"] == t["flops"]["after"]  # palettizing changes storage, not arithmetic


DIFF_KEYS = {
    "after": lambda d, b, a: d["after"] == AFTER.name,
    "before": lambda d, b, a: d["before"] == BEFORE.name,
    "evidence": lambda d, b, a: d["evidence"] == "mil_static",
    "hazards": lambda d, b, a: d["hazards"] == {"added": ["lut_expansion"], "changed": [], "removed": []}
    and "constexpr_lut_to_dense" in a["functions"]["main"]["types"],
    "islands": lambda d, b, a: set(d["islands"]) == {"estimated_ms", "estimated_total_tax_ms", "graph_interruptions",
                                                     "interrupted_ops", "total_non_focus_ops"},
    "kind": lambda d, b, a: d["kind"] == "coreml_diff",
    "label": lambda d, b, a: d["label"] == "estimate",
    "op_types": _diff_op_types,
    "schema_version": lambda d, b, a: d["schema_version"] == 1,
    "statements": lambda d, b, a: d["statements"][0].startswith(
        f"weights on disk (bytes): {d['totals']['weight_stored_unique']['before']:,} → "
        f"{d['totals']['weight_stored_unique']['after']:,}"),
    "totals": _diff_totals,
}


def test_every_key_of_a_model_diff_has_a_check():
    d = edgeprof("diff", BEFORE, AFTER)
    assert sorted(d) == sorted(DIFF_KEYS), "a key of the diff needs its check here"
    b, a = spec_of(BEFORE), spec_of(AFTER)
    for key, check in DIFF_KEYS.items():
        assert check(d, b, a) is not False, key
