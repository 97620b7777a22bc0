"""`edgeprof run --debug-buffer` then `edgeprof numerics`, for real: the transformer layer's three programs (portable,
XNNPACK fp32, XNNPACK int8) and the toy CNN's portable and int8 programs recorded here, each output comparison
checked against a direct comparison of the programs' forward() outputs through the ExecuTorch runtime on the same
input (SQNR computed here), and the portable transformer's tensors against Inspector's debug_data.

Needs the ``run`` extra (torch + executorch); CI sets ``EDGEPROF_REQUIRE_RUN=1``, where a missing runtime fails."""

from __future__ import annotations

import importlib.util
import itertools
import json
import math
import os
import shutil

import numpy as np
import pytest
from click.testing import CliRunner
from testdata import DATA

from edgeprof.cli import main

if importlib.util.find_spec("executorch") is None:
    if os.environ.get("EDGEPROF_REQUIRE_RUN"):
        raise RuntimeError("EDGEPROF_REQUIRE_RUN is set but executorch is not installed (pip install '.[run]')")
    pytest.skip("the run extra (torch + executorch) is not installed", allow_module_level=True)

PROGRAMS = ("tel_portable", "tel_xnn", "tel_xnnq8", "toycnn_portable", "toycnn_xnnq8")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    work = tmp_path_factory.mktemp("numerics_run")
    for p in PROGRAMS:
        shutil.copy2(DATA / "pte" / f"{p}.pte", work / f"{p}.pte")
        shutil.copy2(DATA / "etrecord" / f"{p}.etrecord", work / f"{p}.etrecord")
    out = work / "run"
    r = CliRunner().invoke(main, ["run", *[str(work / f"{p}.pte") for p in PROGRAMS], "--runs", "1", "--warmup", "1",
                                  "--launches", "1", "--debug-buffer", "2MB", "--out", str(out), "--no-progress",
                                  "--json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return work, out


def _forward(pte, inputs):
    import torch
    from executorch.extension.pybindings import _C as rt

    method = rt._load_program(str(pte), enable_etdump=False, debug_buffer_size=0).load_method("forward")
    return method.call([torch.from_numpy(a.copy()) for a in inputs])[0].numpy()


def _inputs(out, model):
    for f in sorted((out / "inputs").glob("*.npz")):
        z = np.load(f)
        arrays = [z[k] for k in z.files]
        if (len(arrays[0].shape) == 4) == (model == "toycnn"):
            return arrays
    raise AssertionError("no inputs for " + model)


def _sqnr(x, y):
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return 10 * math.log10(np.sum(x * x) / np.sum((x - y) ** 2))


PAIRS = [(a, b) for m in ("tel", "toycnn") for a, b in itertools.combinations([p for p in PROGRAMS if p.startswith(m)], 2)]


@pytest.mark.parametrize("a,b", PAIRS)
def test_the_output_comparison_is_the_direct_comparison_of_forward_outputs(recorded, a, b):
    work, out = recorded
    etd = {p: out / p / f"{p}_t1_l1.etdump" for p in (a, b)}
    assert all((out / p / f"{p}_t1_l1.bin").is_file() for p in (a, b))
    r = CliRunner().invoke(main, ["numerics", str(etd[a]), str(etd[b]), "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    inputs = _inputs(out, a.split("_")[0])
    x, y = _forward(work / f"{a}.pte", inputs), _forward(work / f"{b}.pte", inputs)
    got = d["outputs"][0]["metrics"]["sqnr_db"]
    assert abs(got - _sqnr(x, y)) < 0.01
    if "q8" not in a + b:
        assert got > 100  # fp32 against fp32: float noise
    else:
        assert got < 60
    if a.startswith("tel"):  # partly delegated: intermediate points matched and named by module path
        assert len(d["points"]) >= 20
        assert {"layer.norm1 native_layer_norm", "layer.norm2 native_layer_norm"} <= {p["name"] for p in d["points"]}
        assert d["baseline"]["etrecord"] and d["candidate"]["etrecord"]
    if os.environ.get("EDGEPROF_PRINT_FIGURES"):
        print(f"{a} vs {b}: edgeprof {got:.4f} dB, direct {_sqnr(x, y):.4f} dB, {len(d['points'])} points")


def test_the_portable_transformers_tensors_equal_inspectors(recorded):
    from executorch.devtools import Inspector

    from edgeprof import load_etdump

    _, out = recorded
    etd, buf = out / "tel_portable" / "tel_portable_t1_l1.etdump", out / "tel_portable" / "tel_portable_t1_l1.bin"
    prof = load_etdump(etd, warn=False)
    insp = Inspector(etdump_path=str(etd), debug_buffer_path=str(buf))
    block = next(b for b in insp.event_blocks if b.name == "Execute")
    de = prof.debug_events
    ours: dict[int, list] = {}
    for k in range(de.height):
        if not de["is_output"][k]:
            ours.setdefault(int(de["instruction_id"][k]), []).extend(prof.debug_data[k])
    seen = set()
    for ev in block.events:
        if ev.debug_data:
            mine = ours[ev._instruction_id]
            assert len(mine) == len(ev.debug_data)
            assert all(np.array_equal(a, t.numpy()) for a, t in zip(mine, ev.debug_data))
            seen.add(ev._instruction_id)
    assert seen == set(ours) and len(seen) > 40


def test_a_recollection_with_force_and_no_debug_buffer_leaves_no_stale_buffer(tmp_path):
    shutil.copy2(DATA / "pte" / "toycnn_xnnq8.pte", tmp_path / "m.pte")
    out = tmp_path / "run"
    args = ["run", str(tmp_path / "m.pte"), "--runs", "1", "--warmup", "0", "--launches", "1", "--out", str(out),
            "--no-progress"]
    r = CliRunner().invoke(main, [*args, "--debug-buffer", "64KB", "--dry-run"])
    assert r.exit_code == 0 and "--debug-buffer-size 65536" in r.output
    r = CliRunner().invoke(main, [*args, "--debug-buffer", "64KB"])
    assert r.exit_code == 0, r.output
    buf = out / "m" / "m_t1_l1.bin"
    # the runtime writes the whole 64 KB buffer; the collection keeps what the recording used: up to the end of its
    # last tensor (3 float32 tensors; their offsets follow the buffer's alignment, so they vary from run to run)
    from edgeprof.io.etdump_read import read_etdump

    metas = [m for ms in read_etdump(out / "m" / "m_t1_l1.etdump").debug_events["tensors"].to_list() for m in ms]
    assert len(metas) == 3 and all(m["scalar_type"] == "float32" for m in metas)
    assert buf.is_file() and buf.stat().st_size == max(m["offset"] + 4 * int(np.prod(m["sizes"])) for m in metas)
    r = CliRunner().invoke(main, [*args, "--force"])
    assert r.exit_code == 0, r.output
    assert (out / "m" / "m_t1_l1.etdump").is_file() and not buf.exists()
