"""The ETRecord reader's small decisions at their boundaries: op names from node targets, module paths from
nn_module_stack, member size and expansion limits, instruction-id keys and debug handles of every JSON kind."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from edgeprof.errors import ETRecordError
from edgeprof.io import etrecord as er

MB = 1024**2


@pytest.mark.parametrize("target,op", [
    ("executorch.exir.dialects.edge.ops.aten.convolution.default", "aten.convolution.default"),
    ("torch.ops.higher_order.executorch_call_delegate", "executorch_call_delegate"),
    ("torch.ops.aten.linear.default", "aten.linear.default"),
    ("_operator.getitem", "getitem"),
    ("plain", "plain"),
])
def test_op_type_of_each_target_form(target, op):
    assert er.op_type_of(target) == op


@pytest.mark.parametrize("stack,path", [
    ("L__self__,layer1,torch.nn.Sequential;L__self___0,layer1.0,Conv2d", "layer1.0"),
    ("a,only.one,cls;", "only.one"),
    ("justone", None), (";", None), ("", None),
    ({"k1": ["outer", "Seq"], "k2": ["outer.inner", "Lin"]}, "outer.inner"),
    ({"k": []}, None), ({}, None), (42, None),
])
def test_innermost_module_of_each_stack_form(stack, path):
    assert er._innermost_module(stack) == path


class _Zip:
    """Stands in for a ZipFile: a member opens as these bytes."""

    def __init__(self, data: bytes):
        self.data = data

    def open(self, info):
        return io.BytesIO(self.data)


def _info(size: int, compressed: int, flags: int = 0) -> zipfile.ZipInfo:
    i = zipfile.ZipInfo("debug_handle_map")
    i.file_size, i.compress_size, i.flag_bits = size, compressed, flags
    return i


def test_member_size_limit_of_the_maps_and_the_graph():
    assert er.MAX_MAP_BYTES == 64 * MB and er.MAX_GRAPH_BYTES == 512 * MB and er.MAX_MEMBERS == 10_000
    with pytest.raises(ETRecordError, match=f"declares {64 * MB + 1} bytes \\(limit {64 * MB}\\)"):
        er._read_member(_Zip(b""), _info(64 * MB + 1, 64 * MB), er.MAX_MAP_BYTES, "r")
    assert er._read_member(_Zip(b"{}"), _info(2, 2), 2, "r") == b"{}"      # exactly the limit
    with pytest.raises(ETRecordError, match="declares 3 bytes"):
        er._read_member(_Zip(b"{} "), _info(3, 3), 2, "r")
    with pytest.raises(ETRecordError, match="expands beyond 2 bytes"):    # a header that understates the size
        er._read_member(_Zip(b"{}  "), _info(2, 2), 2, "r")
    with pytest.raises(ETRecordError, match="encrypted"):
        er._read_member(_Zip(b"{}"), _info(2, 2, flags=1), 2, "r")


def test_expansion_ratio_boundary():
    body = b"x" * (200 * 5243)                         # 1,048,600 bytes: just over 1 MiB
    assert er._read_member(_Zip(body), _info(len(body), 5243), 2 * MB, "r") == body   # exactly 200×
    with pytest.raises(ETRecordError, match="expands 200x: refused as a possible zip bomb"):
        er._read_member(_Zip(body), _info(len(body), 5242), 2 * MB, "r")              # just over 200×
    small = b"x" * MB                                  # 1 MiB exactly: not checked for expansion
    assert er._read_member(_Zip(small), _info(MB, 1), 2 * MB, "r") == small


def test_instruction_id_keys():
    assert er._int_keyed({"1" * 20: 1, "-3": 2}, "m", "r") == {int("1" * 20): 1, -3: 2}
    with pytest.raises(ETRecordError, match="non-integer instruction id"):
        er._int_keyed({"1" * 21: 1}, "m", "r")
    with pytest.raises(ETRecordError, match="not a JSON object"):
        er._int_keyed([1], "m", "r")


@pytest.mark.parametrize("h,handle", [
    (True, None), (None, None), (5, 5), (-5, -5), (2**63 - 1, 2**63 - 1), (2**63, None), (-(2**63) + 1, -(2**63) + 1),
    (" 12 ", 12), ("-7", -7), ("", None), ("1" * 18, int("1" * 18)), ("1" * 19, None), ("1.5", None), ("x", None),
    (3.0, 3), (3.5, None), (2.0**53 - 1, 2**53 - 1), (2.0**53, None), (-(2.0**53) + 1, -(2**53) + 1), ([1], None),
])
def test_debug_handles_of_every_json_kind(h, handle):
    assert er._handle_of(h) == handle


def test_handle_lists():
    assert er._is_handle(2**63 - 1) and not er._is_handle(2**63) and not er._is_handle(True)
    assert not er._is_handle(-(2**63)) and er._is_handle(-(2**63) + 1) and not er._is_handle(1.0)


def test_too_many_members_is_refused(tmp_path):
    p = tmp_path / "many.etrecord"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("debug_handle_map", json.dumps({"forward": {"0": [1]}}))
        for i in range(er.MAX_MEMBERS):
            z.writestr(f"m{i}", b"")
    with pytest.raises(ETRecordError, match="10001 zip members: refused"):
        er.read_etrecord(p)
