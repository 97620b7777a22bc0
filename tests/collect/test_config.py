"""Collection configs: the Arm kit's pipeline JSON as the kit reads it, edgeprof's TOML, and one-line errors
naming the file and the key."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edgeprof.collect.config import (
    DEFAULTS,
    Experiment,
    from_document,
    from_models,
    override,
    parse_threads,
)
from edgeprof.errors import InputError, UsageError
from edgeprof.io.documents import read_document

KIT_MAC = {  # the kit's mac template, filled in as run_quick_test.py does
    "model": "out_toy_cnn/artifacts/toy_cnn_xnnpack_fp16.pte",
    "output_root": "out_toy_cnn/runs/mac",
    "experiments": [
        {"name": "mac_sme2_on", "runner_path": "cmake-out/mac-arm64/executor_runner", "mode": "timing",
         "runs": 10, "warmup": 1, "threads": [1], "extra_args": []},
        {"name": "mac_sme2_off", "runner_path": "cmake-out/mac-arm64-sme2-off/executor_runner", "mode": "timing",
         "runs": 10, "warmup": 1, "threads": [1], "extra_args": []},
    ],
    "analysis": {"compare_pairs": [{"baseline": {"experiment": "mac_sme2_off", "threads": 1},
                                    "candidate": {"experiment": "mac_sme2_on", "threads": 1}, "label": ""}]},
}


def test_the_kit_config_reads_as_the_kit_reads_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "executorch" / "cmake-out" / "mac-arm64").mkdir(parents=True)
    (tmp_path / "executorch" / "cmake-out" / "mac-arm64" / "executor_runner").write_text("")
    f = tmp_path / "mac.json"
    f.write_text(json.dumps(KIT_MAC))
    cfg = from_document(read_document(f), f)
    on, off = cfg.experiments
    assert (on.name, on.mode, on.runs, on.warmup, on.threads) == ("mac_sme2_on", "timing", 10, 1, (1,))
    # a relative runner is looked up under ./executorch first, as the kit's MacRunner does
    assert on.runner == str(tmp_path / "executorch" / "cmake-out" / "mac-arm64" / "executor_runner")
    assert off.runner == str(tmp_path / "cmake-out" / "mac-arm64-sme2-off" / "executor_runner")
    assert on.kind == off.kind == "external" and on.launches == DEFAULTS["launches"]
    assert cfg.compare_pairs == [("mac_sme2_off", "mac_sme2_on")]
    assert str(cfg.output_root) == "out_toy_cnn/runs/mac"
    # the kit's defaults when runs/warmup/threads are left out
    bare = from_document({"model": "m.pte", "experiments": [{"name": "a", "runner_path": "r"}]}, f)
    a = bare.experiments[0]
    assert (a.runs, a.warmup, a.threads) == (100, 10, (1,))


def test_edgeprof_toml_with_defaults_and_overrides(tmp_path):
    f = tmp_path / "collect.toml"
    (tmp_path / "m_portable.pte").write_bytes(b"x")
    f.write_text('runs = 20\nwarmup = 2\nlaunches = 4\nthreads = [1, 2]\nseed = 7\n\n'
                 '[[experiment]]\nname = "portable"\nmodel = "m_portable.pte"\n\n'
                 '[[experiment]]\nname = "xnn"\nmodel = "m_xnn.pte"\nthreads = [4]\nlaunches = 2\n'
                 'device = "adb:R5CX"\nrunner = "bin/executor_runner"\ncpu_affinity = "0xF0"\n')
    cfg = from_document(read_document(f), f)
    p, x = cfg.experiments
    assert p.model == tmp_path / "m_portable.pte"  # relative to the config when not found from here
    assert (p.runs, p.warmup, p.threads, p.launches, p.kind) == (20, 2, (1, 2), 4, "python")
    assert (x.threads, x.launches, x.device, x.kind, x.cpu_affinity) == ((4,), 2, "R5CX", "adb", "0xF0")
    assert cfg.seed == 7
    o = override(cfg, runs=5, threads=(8,), seed=3, device=None)
    assert all(e.runs == 5 and e.threads == (8,) for e in o.experiments) and o.seed == 3
    assert o.experiments[1].device == "R5CX"  # None leaves the configuration's value


@pytest.mark.parametrize("doc, message", [
    ({"model": "m.pte", "experiments": [{"name": "a"}], "runz": 3}, "unknown key(s) 'runz'"),
    ({"model": "m.pte", "experiments": [{"name": "a", "treads": [1]}]}, "experiments[0]: unknown key(s) 'treads'"),
    ({"model": "m.pte", "experiments": []}, "experiments: give a list"),
    ({"experiments": [{"name": "a"}]}, "experiments[0]: no model"),
    ({"model": "m.pte", "experiments": [{"name": "a"}, {"name": "a"}]}, "experiments[1].name: 'a' is used twice"),
    ({"model": "m.pte", "experiments": [{"name": "a b"}]}, "experiments[0].name: 'a b' must be"),
    ({"model": "m.pte", "experiments": [{"name": "a", "runs": 0}]}, "experiments[0].runs: must be a whole number from 1"),
    ({"model": "m.pte", "experiments": [{"name": "a", "runs": True}]}, "experiments[0].runs"),
    ({"model": "m.pte", "experiments": [{"name": "a", "warmup": -1}]}, "experiments[0].warmup"),
    ({"model": "m.pte", "experiments": [{"name": "a", "threads": []}]}, "experiments[0].threads: give at least one"),
    ({"model": "m.pte", "experiments": [{"name": "a", "threads": [1, 1]}]}, "thread counts repeat"),
    ({"model": "m.pte", "experiments": [{"name": "a", "mode": "xtrace"}]}, "experiments[0].mode: must be one of"),
    ({"model": "m.pte", "experiments": [{"name": "a", "cpu_affinity": "; rm -rf /"}]}, "cpu_affinity: a taskset mask"),
    ({"model": "m.pte", "experiments": [{"name": "a", "device": "adb:$(reboot)"}]}, "device: expected adb:SERIAL"),
    ({"model": "m.pte", "experiments": [{"name": "a", "extra_args": "--x"}]}, "extra_args: must be a list"),
    ({"model": "m.pte", "experiments": [{"name": "a", "timeout": 0}]}, "timeout: must be seconds"),
    ({"model": "m.pte", "experiments": [{"name": "a"}], "analysis": {"compare_pairs": [{"baseline": "a",
                                                                                        "candidate": "b"}]}},
     "analysis.compare_pairs[0].candidate: 'b' is not an experiment name"),
])
def test_bad_configs_are_one_line_errors_naming_file_and_key(tmp_path, doc, message):
    f = tmp_path / "c.json"
    with pytest.raises(InputError) as e:
        from_document(doc, f)
    assert str(e.value).startswith(f"{f}: ") and message in str(e.value) and "\n" not in str(e.value)


def test_broken_documents_name_the_line(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('runs = 20\n[[experiment]\nname = "a"\n')
    with pytest.raises(InputError, match=r"c.toml: not valid TOML .* \(line 2\)"):
        read_document(f)
    g = tmp_path / "c.json"
    g.write_text('{"model": "m.pte",\n "experiments": [NaN]}')
    with pytest.raises(InputError, match=r"c.json: not valid JSON"):
        read_document(g)
    h = tmp_path / "list.json"
    h.write_text("[1, 2]")
    with pytest.raises(InputError, match="top level"):
        read_document(h)


def test_models_on_the_command_line_become_experiments_named_after_them(tmp_path):
    cfg = from_models([tmp_path / "a" / "net.pte", tmp_path / "b" / "net.pte", "toy cnn.pte"])
    assert [e.name for e in cfg.experiments] == ["net", "net_2", "toy_cnn"]
    assert all(isinstance(e, Experiment) and e.model.is_absolute() for e in cfg.experiments)
    with pytest.raises(UsageError):
        from_models([])


@pytest.mark.parametrize("text, ok", [("1", (1,)), ("1,2,4", (1, 2, 4)), ("1024", (1024,)), ("0", None),
                                      ("1025", None), ("1,1", None), ("a", None), ("", None)])
def test_thread_lists_at_their_boundaries(text, ok):
    if ok is None:
        with pytest.raises(UsageError):
            parse_threads(text)
    else:
        assert parse_threads(text) == ok


_value = st.recursive(st.none() | st.booleans() | st.integers(-5, 10**8) | st.floats(allow_nan=True) | st.text(max_size=8),
                      lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3), max_leaves=8)
_keys = st.sampled_from(["model", "runs", "warmup", "threads", "launches", "timeout", "seed", "inputs", "device",
                         "experiments", "experiment", "analysis", "name", "mode", "extra_args", "cpu_affinity", "x"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_keys, _value | st.lists(st.dictionaries(_keys, _value, max_size=6), max_size=3), max_size=8))
def test_any_document_is_a_config_or_one_input_error(doc):
    try:
        cfg = from_document(doc, "fuzz.json")
    except InputError as e:
        assert str(e).startswith("fuzz.json: ") and "\n" not in str(e)
        return
    assert cfg.experiments and all(e.runs >= 1 and e.threads for e in cfg.experiments)
