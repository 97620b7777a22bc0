"""`edgeprof mcp` started as a subprocess and driven by the MCP SDK's own client over stdio: the tools listed,
each called on fixtures and checked against the CLI's JSON, bad input and paths outside the roots refused."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_client import run_calls

DATA = Path(__file__).resolve().parent.parent / "data"
BIN = Path(sys.executable).parent

try:
    import mcp  # noqa: F401
except ImportError:
    if os.environ.get("EDGEPROF_REQUIRE_MCP"):
        raise
    pytest.skip("the mcp extra is not installed", allow_module_level=True)


def _run(root: Path, calls: list[tuple[str, dict]], *extra: str):
    names, desc, _, out = run_calls(root, calls, *extra)
    return names, desc, out


def _cli(*args) -> dict:
    r = subprocess.run([str(BIN / "edgeprof"), *map(str, args)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("mcp")
    for n in ("tel_xnn", "tel_xnnq8"):
        (root / f"{n}.etdp").write_bytes(gzip.decompress((DATA / "etdump" / f"{n}.N20.etdp.gz").read_bytes()))
    shutil.copy(DATA / "pte" / "tel_xnnq8.pte", root)
    shutil.copy(DATA / "anemll" / "anemll_profile_0.4.1.illustrative.json", root / "profile.json")
    shutil.copytree(DATA / "coreml" / "int32_kvcache_state_ios18.mlpackage", root / "kv.mlpackage")
    shutil.copy(DATA / "xnnpack" / "x86_avx2_stderr.log", root / "xnn.log")
    (root / "ane_reports").mkdir()
    shutil.copy(DATA / "anemll" / "anemll_profile_0.4.1.illustrative.json", root / "ane_reports" / "a.json")
    shutil.copy(DATA / "anemll" / "anemll_profile_0.4.1.illustrative.json", root / "ane_reports" / "b.json")
    return root


def test_tools_match_the_cli(root):
    names, desc, out = _run(root, [
        ("compare", {"baseline": "tel_xnn.etdp", "candidate": "tel_xnnq8.etdp"}),
        ("breakdown", {"path": "tel_xnnq8.etdp", "program": "tel_xnnq8.pte"}),
        ("program", {"path": "tel_xnnq8.pte"}),
        ("ane", {"path": "profile.json"}),
        ("coreml", {"path": "kv.mlpackage"}),
        ("kernels", {"path": "xnn.log"}),
        ("latency", {"path": "tel_xnn.etdp"}),
        ("phases", {"path": "tel_xnn.etdp", "phases": "0:1=prefill,1:=decode"}),
        ("ane", {"path": "ane_reports"}),
    ])
    assert {"compare", "breakdown", "program", "ane", "coreml", "kernels", "latency", "validate", "history"} <= set(names)
    assert out[8][1]["result"]["kind"] == "ane_folder" and out[8][1]["summary"].startswith("2 submodel report(s)")
    assert "analyze" not in names and "report" not in names  # read-only unless --allow-write
    assert all("Read-only" in d for d in desc.values())
    for is_error, doc, _ in out:
        assert not is_error and doc["result"]["schema_version"] == 1 and doc["summary"]
        assert doc["summary"] != doc["result"]["kind"]  # what a person reads last, not just the kind
    # the summaries say what the documents say: the comparison's own line, the phases' medians, the program's size
    assert out[0][1]["summary"] == out[0][1]["result"]["summary_line"]
    assert "phase prefill: median" in out[7][1]["summary"] and "phase decode" in out[7][1]["summary"]
    assert f"{out[2][1]['result']['file_size']:,} bytes" in out[2][1]["summary"]
    # each tool publishes the declared document types as its output schema (edgeprof schema), and every
    # answer validates against it (checked here with jsonschema, whatever the SDK's client does)
    import jsonschema

    from edgeprof.render.json_schema import tool_output_schema
    from edgeprof.server.tools import OUTPUT_KINDS

    published = run_calls.output_schemas
    assert {n: published[n] for n in names} == {n: tool_output_schema(OUTPUT_KINDS[n]) for n in names}
    calls = ["compare", "breakdown", "program", "ane", "coreml", "kernels", "latency", "phases", "ane"]
    for name, (_, doc, _) in zip(calls, out):
        jsonschema.Draft202012Validator(published[name]).validate(doc)
    lat = out[6][1]["result"]["reports"][0]
    assert f"over {lat['steady']['count']} steady runs" in out[6][1]["summary"]
    cmp_cli = _cli("compare", root / "tel_xnn.etdp", root / "tel_xnnq8.etdp", "--json")
    assert out[0][1]["result"]["verdict"] == cmp_cli["verdict"]
    assert out[0][1]["result"]["speedup"] == cmp_cli["speedup"]
    assert out[2][1]["result"]["sizes"] == _cli("program", root / "tel_xnnq8.pte", "--json")["sizes"]
    assert out[3][1]["result"]["headline"] == _cli("ane", root / "profile.json", "--json")["headline"]
    assert out[4][1]["result"]["models"][0]["totals"] == _cli("coreml", root / "kv.mlpackage", "--json")["models"][0]["totals"]
    assert out[1][1]["result"]["program"]["matched"] == 26
    ph = _cli("phases", root / "tel_xnn.etdp", "--phases", "0:1=prefill,1:=decode", "--json")
    assert out[7][1]["result"]["phases"] == ph["phases"]


def test_bad_input_and_escapes_fail_cleanly(root, tmp_path):
    outside = tmp_path / "secret.etdp"
    outside.write_bytes((root / "tel_xnn.etdp").read_bytes())
    (root / "link.etdp").symlink_to(outside)
    (root / "junk.etdp").write_bytes(b"not an etdump")
    _, _, out = _run(root, [
        ("program", {"path": "../" + outside.parent.name + "/secret.etdp"}),
        ("latency", {"path": str(outside)}),
        ("latency", {"path": "link.etdp"}),
        ("latency", {"path": "junk.etdp"}),
        ("program", {"path": "tel_xnn.etdp"}),
    ])
    for is_error, _, text in out[:3]:
        assert is_error and "outside the allowed roots" in text
    assert out[3][0] and "junk.etdp" in out[3][2] and "\n" not in out[3][2].strip()
    assert out[4][0] and "not an ExecuTorch program" in out[4][2]


def test_write_tools_only_when_allowed(root):
    run_dir = root / "example"
    subprocess.run([str(BIN / "edgeprof"), "example", str(run_dir), "--force"], check=True, capture_output=True)
    names, desc, out = _run(root, [("analyze", {"path": "example/runs/linux"})], "--allow-write")
    assert "analyze" in names and "WRITES" in desc["analyze"] and "WRITES" in desc["report"]
    assert not out[0][0]
    assert list((run_dir / "runs" / "linux").rglob("*_exec_all_runs_timeline.csv"))


def test_every_argument_is_described_and_the_options_people_use_are_there(root):
    """Each tool argument carries its description in the input schema; compare takes several launches per arm and
    a threshold, history a metric, threshold and since — and they act as in the CLI."""
    from mcp_client import run_calls

    launches = []
    for k in range(2):  # two inputs per arm: the same recordings under two names each
        for n in ("tel_xnn", "tel_xnnq8"):
            f = root / f"{n}_l{k}.etdp"
            f.write_bytes((root / f"{n}.etdp").read_bytes())
            launches.append(f.name)
    _, _, _, out = run_calls(root, [
        ("compare", {"baseline": [launches[0], launches[2]], "candidate": [launches[1], launches[3]],
                     "threshold": "5%"}),
    ])
    schemas = run_calls.schemas
    for name, sch in schemas.items():
        for arg, spec in sch["properties"].items():
            assert spec.get("description") and spec["description"] != arg, (name, arg)
    assert {"threshold", "metric"} <= set(schemas["compare"]["properties"])
    assert {"metric", "threshold", "since", "device"} <= set(schemas["history"]["properties"])
    is_error, doc, _ = out[0]
    assert not is_error and doc["result"]["threshold"] == 0.05
    # copies of one recording are one launch, as in the CLI: counted once and said so
    assert len(doc["result"]["baseline"]["launches"]) == 1
    assert any("repeat a recording already in the arm and count once" in w for w in doc["result"]["warnings"])


def test_tools_read_onnx_runtime_and_litert_profiles(root):
    for name in ("cnn_cpu_t1_l1.ort.json", "cnn_cpu_t2_l1.ort.json.gz", "tfm_mixed_ov_t1_l1.ort.json.gz"):
        shutil.copy(DATA / "ort" / name, root / name)
    shutil.copy(DATA / "litert" / "cnn_xnnpack_benchmark.log", root / "op_profile.log")
    _, _, out = _run(root, [
        ("compare", {"baseline": "cnn_cpu_t1_l1.ort.json", "candidate": "cnn_cpu_t2_l1.ort.json.gz"}),
        ("breakdown", {"path": "tfm_mixed_ov_t1_l1.ort.json.gz"}),
        ("latency", {"path": "cnn_cpu_t1_l1.ort.json"}),
        ("breakdown", {"path": "op_profile.log"}),
        ("latency", {"path": "op_profile.log"}),
    ])
    assert not any(is_error for is_error, _, _ in out[:4])
    assert out[3][1]["result"]["portable_hotspots"][0]["operator"] == "TILE"
    assert out[4][0] and "per-op averages over 50 run(s)" in out[4][2] and "\n" not in out[4][2].strip()
    cli = _cli("compare", root / "cnn_cpu_t1_l1.ort.json", root / "cnn_cpu_t2_l1.ort.json.gz", "--json")
    assert out[0][1]["result"]["speedup"] == cli["speedup"] and out[0][1]["result"]["verdict"] == cli["verdict"]
    bd = out[1][1]["result"]
    assert [o["operator"] for o in bd["portable_hotspots"]] == ["Hardmax"]
    assert "OpenVINOExecutionProvider" in bd["backends"]["leaf_time"]
    assert out[2][1]["result"]["reports"][0]["steady"]["count"] == 9
