"""Reading the tensors of a debug recording (`edgeprof.load_etdump(…, debug_buffer=…)`), on recordings made with
`edgeprof run --debug-buffer` of the fixture programs (tests/data/numerics, tools/make_numerics_data.py).

Oracles: each program's forward() output through the ExecuTorch runtime on the same input (kept beside the recordings
by the script that made them), and — with the run extra — ExecuTorch's Inspector given the debug buffer
(`Inspector(…, debug_buffer_path=…)`, `event.debug_data`, `event_block.run_output`), for every debug event."""

from __future__ import annotations

import gzip
import os
import shutil

import numpy as np
import pytest
from testdata import DATA

import edgeprof
from edgeprof.errors import DebugBufferError
from edgeprof.io.debug_buffer import find_debug_buffer, stem_of, tensor_from

NUM = DATA / "numerics"
PROGRAMS = ("toycnn_portable", "toycnn_xnn", "toycnn_xnnq8", "tel_xnn", "tel_xnnq8")


def unpacked(tmp_path, name: str):
    """(ETDump, debug buffer) of a recording, uncompressed into tmp_path under the names the runtime writes."""
    etd, buf = tmp_path / f"{name}.debug.etdp", tmp_path / f"{name}.debug.bin"
    etd.write_bytes(gzip.decompress((NUM / f"{name}.debug.etdp.gz").read_bytes()))
    buf.write_bytes(gzip.decompress((NUM / f"{name}.debug.bin.gz").read_bytes()))
    return etd, buf


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_output_tensor_is_the_programs_forward_output(tmp_path, name):
    etd, _ = unpacked(tmp_path, name)
    prof = edgeprof.load_etdump(etd, warn=False)
    assert prof.debug_data.path == str(tmp_path / f"{name}.debug.bin")  # found beside the ETDump by its stem
    outs = [t for k, ts in enumerate(prof.debug_data) if prof.debug_events["is_output"][k] for t in ts]
    want = np.load(NUM / f"{name}.forward.npy")
    assert len(outs) == 1 and outs[0].dtype == want.dtype and outs[0].shape == want.shape
    assert np.array_equal(outs[0], want)


def test_every_tensor_has_the_dtype_and_shape_its_event_describes(tmp_path):
    etd, _ = unpacked(tmp_path, "tel_xnn")
    prof = edgeprof.load_etdump(etd, warn=False)
    n = 0
    for metas, arrays in zip(prof.debug_events["tensors"].to_list(), prof.debug_data):
        assert len(metas) == len(arrays)
        for m, a in zip(metas, arrays):
            assert a.dtype == np.dtype(m["scalar_type"]) and list(a.shape) == m["sizes"]
            n += 1
    assert n == prof.debug_events.height == 46
    # the model input is logged as the first delegate call's first argument: the recorded input
    x = np.load(NUM / "tel.inputs.npz")
    assert np.array_equal(prof.debug_data[0][0], x[x.files[0]])


def test_gzip_compressed_recordings_are_read_as_they_are_kept():
    prof = edgeprof.load_etdump(NUM / "toycnn_xnn.debug.etdp.gz", warn=False)
    assert prof.debug_data.path.endswith("toycnn_xnn.debug.bin.gz")
    assert np.array_equal(prof.debug_data[-1][0], np.load(NUM / "toycnn_xnn.forward.npy"))


def test_the_buffer_is_found_by_the_etdumps_stem(tmp_path):
    assert stem_of("a/model.debug.etdp") == "model.debug" and stem_of("m_t1_l1.etdump") == "m_t1_l1"
    etd, buf = unpacked(tmp_path, "toycnn_xnn")
    assert find_debug_buffer(etd) == buf
    buf.unlink()
    assert find_debug_buffer(etd) is None
    assert edgeprof.load_etdump(etd, warn=False).debug_data is None  # no buffer: the profile as before


def test_a_truncated_buffer_is_one_error_naming_the_offset(tmp_path):
    etd, buf = unpacked(tmp_path, "tel_xnn")
    data = buf.read_bytes()
    buf.write_bytes(data[:500_000])
    with pytest.raises(DebugBufferError) as e:
        edgeprof.load_etdump(etd, warn=False)
    # the first tensor that does not fit: float32[1, 4, 32, 32] at byte 491568 ends at 507952
    assert e.value.offset == 491568 and "past the end of the 500000-byte debug buffer" in str(e.value)
    assert str(e.value).startswith(str(buf)) and "\n" not in str(e.value)


def test_a_buffer_named_explicitly_may_have_any_name_and_the_runtime_examples_naming_is_found(tmp_path):
    """A buffer given explicitly is read whatever its name (the tensors equal those of the buffer found beside the
    ETDump); ``m.etdp`` finds ``m.debug.bin`` (the name the Python runtime's examples write); a buffer of another,
    smaller recording fails its bounds check at the first tensor that does not fit."""
    etd, buf = unpacked(tmp_path, "toycnn_xnn")
    beside = edgeprof.load_etdump(etd, warn=False).debug_data
    other = tmp_path / "elsewhere" / "capture.bin"
    other.parent.mkdir()
    shutil.copy(buf, other)
    named = edgeprof.load_etdump(etd, debug_buffer=other, warn=False).debug_data
    assert named.path == str(other) and len(named) == len(beside) > 0
    assert all(np.array_equal(a, b) for ta, tb in zip(named, beside) for a, b in zip(ta, tb, strict=True))
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(etd, plain / "m.etdp")
    shutil.copy(buf, plain / "m.debug.bin")
    assert find_debug_buffer(plain / "m.etdp") == plain / "m.debug.bin"
    assert edgeprof.load_etdump(plain / "m.etdp", warn=False).debug_data.path == str(plain / "m.debug.bin")
    big, _ = unpacked(tmp_path, "toycnn_portable")
    with pytest.raises(DebugBufferError, match="past the end of the") as e:
        edgeprof.load_etdump(big, debug_buffer=buf, warn=False)
    assert str(e.value).startswith(str(buf)) and e.value.offset is not None


def test_unknown_scalar_types_negative_offsets_and_bad_bools_are_refused():
    buf = bytes(64)
    with pytest.raises(DebugBufferError, match="unknown scalar type") as e:
        tensor_from({"scalar_type": "unknown(99)", "sizes": [2], "strides": [1], "offset": 16}, buf, "b.bin")
    assert e.value.offset == 16
    with pytest.raises(DebugBufferError, match="no data"):
        tensor_from({"scalar_type": "float32", "sizes": [2], "strides": [1], "offset": -1}, buf, "b.bin")
    with pytest.raises(DebugBufferError, match="bool tensor"):
        tensor_from({"scalar_type": "bool", "sizes": [2], "strides": [1], "offset": 0}, b"\x00\x07", "b.bin")
    # sizes whose product overflows int64 (a damaged file) are still too large, not a wrapped-around small number
    with pytest.raises(DebugBufferError, match="past the end"):
        tensor_from({"scalar_type": "float32", "sizes": [2**55 + 1, 3, 32, 32], "strides": [], "offset": 0}, buf, "b.bin")
    # a tensor that ends exactly at the buffer's end is read; one byte further is not
    t = tensor_from({"scalar_type": "int16", "sizes": [2], "strides": [1], "offset": 60}, buf, "b.bin")
    assert t.dtype == np.int16 and t.shape == (2,)
    with pytest.raises(DebugBufferError):
        tensor_from({"scalar_type": "int16", "sizes": [2], "strides": [1], "offset": 61}, buf, "b.bin")


def test_strides_of_another_dim_order_give_the_logical_layout():
    logical = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)  # N, C, H, W
    memory = np.ascontiguousarray(logical.transpose(0, 2, 3, 1))   # channels last in memory
    strides = [24, 1, 8, 2]  # of the logical dims, in elements
    got = tensor_from({"scalar_type": "float32", "sizes": [1, 2, 3, 4], "strides": strides, "offset": 0},
                      memory.tobytes(), "b.bin")
    assert np.array_equal(got, logical)
    bf = np.array([1.5, -2.0], dtype=np.float32).view(np.uint32) >> 16
    got = tensor_from({"scalar_type": "bfloat16", "sizes": [2], "strides": [1], "offset": 0},
                      bf.astype(np.uint16).tobytes(), "b.bin")
    assert got.dtype == np.float32 and got.tolist() == [1.5, -2.0]


def test_the_cli_says_one_line_and_exits_2_on_a_truncated_buffer(tmp_path):
    from click.testing import CliRunner

    from edgeprof.cli import main

    a, _ = unpacked(tmp_path, "toycnn_xnn")
    b, bb = unpacked(tmp_path, "toycnn_xnnq8")
    bb.write_bytes(bb.read_bytes()[:100])
    r = CliRunner().invoke(main, ["numerics", str(a), str(b), "--json"])
    assert r.exit_code == 2
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "byte offset" in lines[0] and str(bb) in lines[0]


def _inspector(etdump, buf):
    import importlib.util

    from edgeprof.errors import MissingExtraError

    if importlib.util.find_spec("executorch") is None:
        raise MissingExtraError("run", "ExecuTorch's Inspector")
    import warnings

    from executorch.devtools import Inspector

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Inspector(etdump_path=str(etdump), debug_buffer_path=str(buf))


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_tensors_equal_inspectors_debug_data_for_every_debug_event(tmp_path, name):
    etd, buf = unpacked(tmp_path, name)
    insp = _inspector(etd, buf)
    prof = edgeprof.load_etdump(etd, warn=False)
    de = prof.debug_events
    ours: dict[int, list] = {}
    for k in range(de.height):
        if not de["is_output"][k] and de["run_index"][k] == 0:
            ours.setdefault(int(de["instruction_id"][k]), []).extend(prof.debug_data[k])
    block = next(b for b in insp.event_blocks if b.name == "Execute")
    compared, worst, seen = 0, 0.0, set()
    for ev in block.events:
        if not ev.debug_data:
            continue
        # the debug events of an instruction are given to each of its Inspector events (kernel and OPERATOR_CALL)
        mine = ours[ev._instruction_id]
        if ev._instruction_id in seen:
            assert all(np.array_equal(a, b.numpy()) for a, b in zip(mine, ev.debug_data))
            continue
        seen.add(ev._instruction_id)
        theirs = [t.numpy() for t in ev.debug_data]
        assert len(mine) == len(theirs)
        for a, b in zip(mine, theirs):
            assert a.shape == b.shape and a.dtype == b.dtype
            assert np.array_equal(a, b)
            worst = max(worst, float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)), initial=0)))
            compared += 1
    assert seen == set(ours), f"debug events Inspector has no event for: {sorted(set(ours) - seen)}"
    run_out = [t.numpy() for t in (block.run_output if isinstance(block.run_output, list) else [block.run_output])]
    mine_out = [t for k in range(de.height) if de["is_output"][k] and de["run_index"][k] == 0 for t in prof.debug_data[k]]
    assert len(run_out) == len(mine_out) and all(np.array_equal(a, b) for a, b in zip(mine_out, run_out))
    assert worst == 0.0 and compared == sum(1 for k in range(de.height) if not de["is_output"][k]
                                            for _ in prof.debug_data[k])
    if os.environ.get("EDGEPROF_PRINT_FIGURES"):
        print(f"{name}: {compared} tensors equal Inspector's debug_data (max |diff| {worst})")
