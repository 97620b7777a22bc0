"""The runtime registry (edgeprof/runtimes.py): each runtime named in its own words, and the versions a run
recorded said for the runtime that ran — never another runtime installed beside it."""

from __future__ import annotations

from pathlib import Path

import pytest
from testdata import DATA

from edgeprof import runtimes
from edgeprof.io.manifest import launch_facts, recorded_environment, recorded_runtimes

MANIFEST = {
    "tool": "edgeprof",
    "machines": {"host": {"versions": {"edgeprof": "0.1.0", "executorch": "1.5.1", "torch": "2.13.0",
                                       "onnxruntime": "1.23.2", "python": "3.11.7"}}},
    "config": {"experiments": [{"name": "cnn", "model": "cnn.onnx", "runtime": "onnxruntime"}]},
    "results": [{"experiment": "cnn", "threads": 1, "status": "ok",
                 "metrics": {"etdump": "cnn/cnn_t1_l1.ort.json"}}],
}


def test_each_runtime_has_its_own_words():
    ort, et = runtimes.vocabulary("onnxruntime"), runtimes.vocabulary("executorch")
    assert (ort["run_event"], ort["host"]) == ("model_run", "CPUExecutionProvider")
    assert (et["run_event"], et["host"]) == ("Method::execute", "portable")
    assert runtimes.host_name("portable", "onnxruntime") == "CPUExecutionProvider"
    assert runtimes.host_name("OpenVINOExecutionProvider", "onnxruntime") == "OpenVINOExecutionProvider"
    assert runtimes.event_name("Method::execute", "onnxruntime") == "model_run"
    assert runtimes.event_name("Conv", "onnxruntime") == "Conv"
    assert runtimes.for_model("m.onnx").name == "onnxruntime" and runtimes.for_model("m.tflite").name == "litert"
    assert runtimes.for_model("m.pte").name == "executorch" and runtimes.for_model("m.bin").name == "executorch"
    assert runtimes.python_runner("onnxruntime") == "python -m edgeprof.collect.worker_ort (ONNX Runtime)"


def test_the_versions_said_are_the_runtime_that_ran():
    assert recorded_runtimes(MANIFEST, ["onnxruntime"]) == ["ONNX Runtime (onnxruntime 1.23.2)"]
    assert recorded_runtimes(MANIFEST, ["executorch"]) == ["ExecuTorch (executorch 1.5.1, torch 2.13.0)"]
    assert recorded_runtimes({}, ["litert"]) == ["LiteRT (version not recorded)"]
    software = dict(recorded_environment(MANIFEST, ["onnxruntime"]))["Software"]
    assert software == "edgeprof 0.1.0, onnxruntime 1.23.2, python 3.11.7"  # no executorch, no torch
    everything = dict(recorded_environment(MANIFEST))["Software"]
    assert "executorch 1.5.1" in everything and "onnxruntime 1.23.2" in everything
    facts = launch_facts(MANIFEST, Path("cnn/cnn_t1_l1.ort.json"))
    assert facts["runtime"] == "onnxruntime 1.23.2"


@pytest.mark.parametrize("option, value, model, owner", [
    ("delegate", "none", "ort/cnn.onnx", "LiteRT (.tflite models)"),
    ("graph_optimization", "disable", "pte/toycnn_xnn.pte", "ONNX Runtime (.onnx models)"),
    ("providers", "OpenVINOExecutionProvider", "pte/toycnn_xnn.pte", "ONNX Runtime (.onnx models)"),
    ("debug_buffer", 4096, "ort/cnn.onnx", "ExecuTorch (.pte models)"),
])
def test_an_option_of_another_runtime_is_refused_naming_its_runtime(option, value, model, owner, tmp_path):
    """Which runtime takes which experiment option is the runtime record's (``Runtime.options``): one rule."""
    from edgeprof import api
    from edgeprof.errors import UsageError

    with pytest.raises(UsageError) as e:
        api.run([DATA / model], out=tmp_path / "o", dry_run=True, **{option: value})
    assert f"{option} is an option of {owner}" in str(e.value)
