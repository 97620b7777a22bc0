"""The ETRecord reader's small decisions at their boundaries: op names from node targets, module paths from
nn_module_stack, member size and expansion limits, instruction-id keys and debug handles of every JSON kind."""

from __future__ import annotations

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
    if handle is None and h not in (None, ""):  # a value that is no handle: the ETRecord cannot be used (issue 47)
        with pytest.raises(er._NotAHandle):
            er._handle_of(h)
    else:
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


def _etrecord(tmp_path, members: dict, name="r.etrecord"):
    p = tmp_path / name
    with zipfile.ZipFile(p, "w") as z:
        for k, v in members.items():
            z.writestr(k, v if isinstance(v, (bytes, str)) else json.dumps(v))
    return p


def _graph(*nodes):
    return {"graph_module": {"graph": {"nodes": list(nodes)}}}


def test_methods_maps_and_graph_members(tmp_path):
    dhm = {"prefill": {"0": [1]}, "decode": {"0": [2], "1": [3, 4]}}
    members = {
        "ETRECORD_V0": b"",
        "debug_handle_map": dhm,
        "delegate_map": {"decode": {"1": {"name": "XnnpackBackend", "delegate_map": {"5": [3]}},
                                    "2": {"name": None}, "3": "junk"}, "prefill": "junk"},
        "instruction_id_to_num_outs_map": {"decode": {"0": 1, "1": "x"}, "prefill": [1]},
        "edge_dialect_exported_program/decode": _graph(
            {"target": "torch.ops.aten.add.Tensor", "name": "add", "metadata": {"debug_handle": 2}},
            {"target": "_operator.getitem", "name": "gi", "metadata": {"debug_handle": 2}},
            {"target": 5, "name": "bad"}, "junk",
            {"target": "torch.ops.aten.mul.Tensor", "name": "mul", "metadata": {"debug_handle": "3"}}),
    }
    p = _etrecord(tmp_path, members)
    r = er.read_etrecord(p)                         # no "forward": the first method in sorted order
    assert r.method == "decode" and r.methods == ["decode", "prefill"]
    assert r.debug_handle_map == {0: [2], 1: [3, 4]}
    assert r.delegate_map == {1: {"name": "XnnpackBackend", "delegate_map": {"5": [3]}},
                              2: {"name": "", "delegate_map": {}}}
    assert r.num_outs == {0: 1} and r.backend_of(1) == "XnnpackBackend" and r.backend_of(7) is None
    assert [(n.name, n.op_type, n.debug_handle) for n in r.nodes] == [("add", "aten.add.Tensor", 2),
                                                                       ("mul", "aten.mul.Tensor", 3)]
    assert sorted(r.nodes_by_handle) == [2, 3]
    q = er.read_etrecord(p, method="prefill")       # a method without a graph member of its own, maps of junk
    assert q.method == "prefill" and q.delegate_map == {} and q.num_outs == {} and q.nodes == []
    with pytest.raises(ETRecordError, match="has no method 'forward' \\(has: decode, prefill\\)"):
        er.read_etrecord(p, method="forward")
    members["debug_handle_map"] = {"forward": {"0": [9]}, "aaa": {"0": [1]}}
    members["edge_dialect_exported_program"] = _graph({"target": "x.y", "name": "n", "metadata": {"debug_handle": 9}})
    r = er.read_etrecord(_etrecord(tmp_path, members, "f.etrecord"))
    assert r.method == "forward" and [n.debug_handle for n in r.nodes] == [9]   # the unsuffixed graph member


@pytest.mark.parametrize("dhm,msg", [({}, "debug_handle_map is empty or not an object"),
                                     ([1], "debug_handle_map is empty or not an object")])
def test_unusable_debug_handle_maps(tmp_path, dhm, msg):
    with pytest.raises(ETRecordError, match=msg):
        er.read_etrecord(_etrecord(tmp_path, {"debug_handle_map": dhm}))


def test_ten_thousand_members_are_allowed(tmp_path):
    p = tmp_path / "ok.etrecord"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("debug_handle_map", json.dumps({"forward": {"0": [1]}}))
        for i in range(er.MAX_MEMBERS - 1):
            z.writestr(f"m{i}", b"")
    assert er.read_etrecord(p).method == "forward"


def test_module_path_of_a_two_field_stack_entry():
    assert er._innermost_module("k,layer.a") == "layer.a"


@pytest.mark.parametrize("paths,common", [
    (["a.b.c", "a.b.d"], "a.b"), (["a.b", "a.b.c"], "a.b"), (["a.b.c", "a.b"], "a.b"), (["x", "y"], None),
    (["", "a.b"], "a.b"), ([], None), (["a"], "a"), (["a.b.c", "a.b.c", "a.x"], "a"),
])
def test_innermost_common_module(paths, common):
    assert er._common_module(paths) == common


def _profile(tmp_path, instrs, kernels=(), dcalls=()):
    from etdump_builder import PE, Run, build
    from edgeprof.io.etdump_read import read_etdump
    ev, t = [], 10
    for i in instrs:
        ev.append(PE("OPERATOR_CALL", t, t + 5, i))
        t += 6
    for i, name in kernels:
        ev += [PE(name, t + 1, t + 3, i), PE("OPERATOR_CALL", t, t + 5, i)]
        t += 6
    for i in dcalls:
        ev.append(PE("DELEGATE_CALL", t, t + 5, i))
        t += 6
    ev.append(PE("Method::execute", 0, t + 1, -1))
    p = tmp_path / "p.etdp"
    p.write_bytes(build([Run("Execute", ev)]))
    return read_etdump(p)


def _rec(n_instr, delegate=(), nodes=()):
    nd = [er.GraphNode(f"n{h}", op, h) for h, op in nodes]
    by = {}
    for x in nd:
        by.setdefault(x.debug_handle, []).append(x)
    return er.ETRecord("r", "forward", ["forward"], {i: [i] for i in range(n_instr)},
                       {i: {"name": "XnnpackBackend", "delegate_map": {}} for i in delegate}, {}, nd, by)


def test_an_etrecord_may_map_twice_the_instructions_that_ran_not_more(tmp_path):
    prof = _profile(tmp_path, [0, 1])
    assert er.check_match(prof, _rec(4)) is None                    # 2 of 4 unseen: half
    assert "executed only 2 of the ETRecord's 5 instructions" in er.check_match(prof, _rec(5))


def test_missing_instructions_are_named_five_at_most(tmp_path):
    prof = _profile(tmp_path, list(range(9)))
    assert er.check_match(prof, _rec(3)).startswith("ETDump instruction ids [3, 4, 5, 6, 7]… are not in")
    prof = _profile(tmp_path, list(range(8)))
    assert er.check_match(prof, _rec(3)).startswith("ETDump instruction ids [3, 4, 5, 6, 7] are not in")


def test_delegate_calls_and_kernels_against_the_delegate_map(tmp_path):
    prof = _profile(tmp_path, [0], dcalls=[1])
    assert er.check_match(prof, _rec(2, delegate=[1])) is None
    assert er.check_match(prof, _rec(2)) == "DELEGATE_CALL instructions [1] are not delegate instructions in the ETRecord"
    prof = _profile(tmp_path, [], kernels=[(0, "native_call_add.out")])
    assert "runs instruction 0, which the ETRecord says is a delegate call" in er.check_match(prof, _rec(1, delegate=[0]))


@pytest.mark.parametrize("n_bad,mismatch", [(1, False), (2, True)])
def test_kernels_whose_op_types_disagree_at_most_a_fifth(tmp_path, n_bad, mismatch):
    # five kernels at instructions 0..4; graph nodes say "aten.add.Tensor" for the good ones
    kernels = [(i, "native_call_add.out") for i in range(5)]
    nodes = [(i, "aten.mul.Tensor" if i < n_bad else "aten._add.Tensor") for i in range(5)]
    why = er.check_match(_profile(tmp_path, [], kernels=kernels), _rec(5, nodes=nodes))
    assert (why is not None) is mismatch
    if mismatch:
        assert why == "2 of 5 portable kernels do not match the ETRecord's op types at their instruction"


def test_delegate_ids_resolve_exactly_or_by_containment():
    rec = _rec(2, delegate=[1])
    rec.delegate_map[1]["delegate_map"] = {"7": [5], "Conv": [6]}
    assert er._event_handles(rec, 1, 7) == ([5], "XnnpackBackend")
    assert er._event_handles(rec, 1, "Conv (NHWC) #1") == ([6], "XnnpackBackend")
    assert er._event_handles(rec, 1, 99) == (None, "XnnpackBackend")
    assert er._event_handles(rec, 0, None) == ([0], None) and er._event_handles(rec, 0, 7) == ([0], None)
    assert er._event_handles(rec, 9, None) == (None, None)
    assert er.sources_of(rec, 0) == ([], None)

