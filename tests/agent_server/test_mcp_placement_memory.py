"""The `placement` and `memory` tools of `edgeprof mcp`, driven by the MCP SDK's client: answered with the CLI's
documents, validated against the published output schema; a path outside the roots refused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_client import run_calls

DATA = Path(__file__).resolve().parent.parent / "data"

try:
    import mcp  # noqa: F401
except ImportError:
    if os.environ.get("EDGEPROF_REQUIRE_MCP"):
        raise
    pytest.skip("the mcp extra is not installed", allow_module_level=True)


def _cli(*args) -> dict:
    r = subprocess.run([sys.executable, "-m", "edgeprof", "placement", *map(str, args), "--json"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_placement_tool(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    for n in ("gate_xnn", "gate_nosigmoid"):
        shutil.copy(DATA / "placement" / f"{n}.N10.etdp.gz", root)
    (tmp_path / "secret.pte").write_bytes((DATA / "placement" / "gate_xnn.pte").read_bytes())
    names, desc, _, out = run_calls(root, [
        ("placement", {"path": "gate_nosigmoid.N10.etdp.gz"}),
        ("placement", {"path": "gate_xnn.N10.etdp.gz", "compare_with": "gate_nosigmoid.N10.etdp.gz"}),
        ("placement", {"path": "../secret.pte"}),
    ])
    assert "placement" in names and "Read-only" in desc["placement"]
    (e1, one, _), (e2, two, _), (e3, _, refused) = out
    assert not e1 and not e2 and e3
    assert one["result"]["operators"] == _cli(root / "gate_nosigmoid.N10.etdp.gz")["operators"]
    assert two["result"]["moved"] == _cli("--diff", root / "gate_xnn.N10.etdp.gz", root / "gate_nosigmoid.N10.etdp.gz")["moved"]
    assert one["summary"].endswith(one["result"]["statement"]) and two["summary"].startswith("placement fallback: ")
    import jsonschema

    schema = run_calls.output_schemas["placement"]
    for doc in (one, two):
        jsonschema.Draft202012Validator(schema).validate(doc)
    assert "outside" in refused


def test_the_memory_tool(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(DATA / "memory" / "alloc" / "toycnn_portable.alloc.N3.etdp.gz", root)
    shutil.copy(DATA / "placement" / "gate_xnn.pte", root)
    names, desc, _, out = run_calls(root, [("memory", {"path": "toycnn_portable.alloc.N3.etdp.gz"}),
                                           ("memory", {"path": "gate_xnn.pte"})])
    assert "memory" in names and "Read-only" in desc["memory"]
    (e1, alloc, _), (e2, prog, _) = out
    assert not e1 and not e2
    r = subprocess.run([sys.executable, "-m", "edgeprof", "memory", root / "toycnn_portable.alloc.N3.etdp.gz", "--json"],
                       capture_output=True, text=True)
    assert alloc["result"]["etdumps"] == json.loads(r.stdout)["etdumps"]
    assert prog["result"]["programs"][0]["planned_activation_bytes"] == 12400
    import jsonschema

    for doc in (alloc, prog):
        jsonschema.Draft202012Validator(run_calls.output_schemas["memory"]).validate(doc)
