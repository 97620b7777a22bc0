"""Edges of the ETRecord reader and of attaching an ETRecord to a profile: what is a debug handle (numbers and
strings of digits at their size limits), lone surrogates in JSON members, common module paths, instruction -1, and
profiles that an ETRecord adds nothing to. ETRecords are built in memory (:class:`ETRecord`, :class:`GraphNode`),
profiles from hand-written columns, so every expected value follows from what is written here."""

from __future__ import annotations

import dataclasses

import polars as pl
import pytest

from edgeprof.errors import ETRecordError
from edgeprof.io.etdump import build_profile, events_only
from edgeprof.io.etrecord import (
    ETRecord,
    GraphNode,
    _handle_of,
    _handles,
    _loads,
    _NotAHandle,
    check_match,
    enrich,
    sources_of,
)


def _record(dhm, nodes=(), delegate_map=None) -> ETRecord:
    by: dict = {}
    for nd in nodes:
        by.setdefault(nd.debug_handle, []).append(nd)
    return ETRecord(path="r.etrecord", method="forward", methods=["forward"], debug_handle_map=dhm,
                    delegate_map=delegate_map or {}, num_outs={}, nodes=list(nodes), nodes_by_handle=by)


def _profile(events, run_names=("Execute",)):
    """``events``: (run, name, instruction, start, end)."""
    names = list(dict.fromkeys(e[1] for e in events))
    dec = events_only(list(run_names), [e[0] for e in events], [names.index(e[1]) for e in events],
                      [-1] * len(events), names, [e[2] for e in events], [e[3] for e in events],
                      [e[4] for e in events])
    return build_profile(dec, "t.etdp")


# ---- debug handles ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("h,want", [(None, None), ("", None), (5, 5), (0, 0), (-3, -3), ("7", 7), (" 42 ", 42),
                                    ("-12", -12), ("1" * 18, int("1" * 18)), (1000.0, 1000),
                                    (2.0**53 - 1, 2**53 - 1), (-(2.0**53 - 1), -(2**53 - 1))])
def test_debug_handles_written_as_numbers_or_digit_strings(h, want):
    assert _handle_of(h) == want


@pytest.mark.parametrize("h", ["1" * 19, "  ", "abc", "1.5", 2.0**53, -(2.0**53), 2.5, float("nan"),
                               float("inf"), True, [1], {"a": 1}])
def test_values_that_are_not_debug_handles(h):
    with pytest.raises(_NotAHandle) as e:
        _handle_of(h, "node n")
    assert e.value.where == "node n"
    assert e.value.value is h


def test_a_map_entry_is_one_handle_or_a_list_of_handles():
    assert _handles(7) == [7]
    assert _handles([1, 2, 3]) == [1, 2, 3]
    assert _handles([]) == []
    with pytest.raises(_NotAHandle) as e:
        _handles([1, 2.5, "x"], "map")
    assert e.value.value == 2.5 and e.value.where == "map"
    with pytest.raises(_NotAHandle):
        _handles([1, "2"])
    with pytest.raises(_NotAHandle):
        _handles(None)
    with pytest.raises(_NotAHandle) as e:  # a null inside the list is no handle either
        _handles([1, None])
    assert e.value.value is None


# ---- JSON members ----------------------------------------------------------------------------------------------

def test_json_members_parse_and_lone_surrogates_are_refused():
    assert _loads(b'{"forward": {"0": [1, 2]}}', "debug_handle_map", "r") == {"forward": {"0": [1, 2]}}
    assert _loads(b'["\\ud83d\\ude00"]', "m", "r") == ["\U0001F600"]  # a surrogate pair is one character
    with pytest.raises(ETRecordError, match="escapes a lone UTF-16 surrogate"):
        _loads(b'["\\ud83d"]', "m", "r")


# ---- op types and module paths of an instruction ---------------------------------------------------------------

def test_sources_of_an_instruction_give_its_nodes_op_types_and_their_common_module():
    rec = _record({3: [10, 11], 4: [12]},
                  [GraphNode("a", "aten.conv2d.default", 10, module_path="net.block.conv"),
                   GraphNode("b", "aten.relu.default", 11, module_path="net.block.act"),
                   GraphNode("c", "aten.add.Tensor", 12, module_path=None)])
    assert sources_of(rec, 3) == (["aten.conv2d.default", "aten.relu.default"], "net.block")
    assert sources_of(rec, 4) == (["aten.add.Tensor"], None)
    assert sources_of(rec, None, handles=[10]) == (["aten.conv2d.default"], "net.block.conv")


# ---- matching and enriching -------------------------------------------------------------------------------------

def test_events_of_instruction_minus_one_are_not_looked_up_in_the_etrecord():
    prof = _profile([(0, "my_event", -1, 10, 20), (0, "other_event", 0, 30, 40),
                     (0, "Method::execute", -1, 0, 100)])
    assert check_match(prof, _record({0: [1]})) is None


def test_a_mismatched_etrecord_is_a_warning_unless_strict():
    prof = _profile([(0, "my_event", 5, 10, 20), (0, "Method::execute", -1, 0, 100)])
    rec = _record({0: [1]})
    out = enrich(prof, rec)
    assert out.etrecord.status == "mismatch" and "[5]" in out.etrecord.message
    assert out.events.equals(prof.events)
    with pytest.raises(ETRecordError, match="does not match"):
        enrich(prof, rec, strict=True)


def test_an_etrecord_that_maps_no_event_leaves_the_events_as_they_were():
    prof = _profile([(0, "Method::execute", -1, 0, 100)])
    out = enrich(prof, _record({0: [1]}, [GraphNode("a", "aten.add.Tensor", 1)]))
    assert out.etrecord.status == "attached"
    assert out.events["op_types"].to_list() == [None] and out.events["module_path"].to_list() == [None]


def test_an_etrecord_attaches_to_a_profile_without_events():
    prof = _profile([], run_names=("Execute",))
    out = enrich(prof, _record({0: [1]}))
    assert out.etrecord.status == "attached" and out.events.height == 0


def test_an_event_is_looked_up_by_its_instruction_and_gets_its_nodes_op_types():
    prof = _profile([(0, "my_event", 0, 10, 20), (0, "Method::execute", -1, 0, 100)])
    rec = _record({0: [1]}, [GraphNode("a", "aten.add.Tensor", 1, module_path="net.add")])
    out = enrich(prof, rec)
    assert out.events["op_types"].to_list() == [["aten.add.Tensor"], []]  # Method::execute maps to no operator
    assert out.events["module_path"].cast(pl.String).to_list() == ["net.add", None]


def test_an_empty_delegate_debug_id_string_is_no_delegate_id():
    # the event sits at a delegate instruction, but with no delegate debug id it is looked up by its instruction
    prof = _profile([(0, "my_event", 0, 10, 20), (0, "Method::execute", -1, 0, 100)])
    ev = prof.events.with_columns(pl.Series("delegate_debug_id_str", ["", None], dtype=pl.Categorical))
    prof = dataclasses.replace(prof, events=ev)
    rec = _record({0: [1]}, [GraphNode("a", "aten.add.Tensor", 1)],
                  delegate_map={0: {"name": "XnnpackBackend", "delegate_map": {"7": [1]}}})
    out = enrich(prof, rec)
    assert out.events["op_types"].to_list() == [["aten.add.Tensor"], []]
    assert out.events["delegate_backend"].cast(pl.String).to_list() == \
        prof.events["delegate_backend"].cast(pl.String).to_list()
