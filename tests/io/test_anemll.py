"""anemll-profile / ane-costplan JSON reader: value coercion at its limits, report detection, and every section of
a profile read back field by field from documents written here (the schema: anemll_spec.md §1, §5)."""

from __future__ import annotations

import json

import pytest
from ane_builder import costplan, island, profile

from edgeprof.conventions import ESTIMATE_TOOL
from edgeprof.errors import InputError
from edgeprof.io.anemll import MAX_BYTES, costplan_from_doc, detect, profile_from_doc, read_report, report_from_doc


def _p(doc):
    return profile_from_doc(doc, "r.json")


def _err(doc, match):
    with pytest.raises(InputError, match=match):
        _p(doc)


# --- numbers, integers, strings, booleans ------------------------------------------------------------------------

def test_numbers_from_strings_booleans_and_their_limits():
    read = lambda v: _p({"summary": {"total_cost": v}}).summary["total_cost"]  # noqa: E731
    assert read("0.25") == 0.25 and read(3) == 3.0 and read(True) == 1.0 and read(False) == 0.0
    assert read(1e300) == 1e300 and read(-1e300) == -1e300
    assert read("1e300") == 1e300
    for bad in (1.0000001e300, -1.0000001e300, "2e300", 10 ** 400):
        _err({"summary": {"total_cost": bad}}, r"summary\.total_cost: number out of range")
    _err({"summary": {"total_cost": "fast"}}, r"summary\.total_cost: expected a number, got 'fast'")
    _err({"summary": {"total_cost": [1]}}, r"summary\.total_cost: expected a number, got an array")
    # absent or null: the default (0.0 for a number, 300 ms for the boundary)
    assert _p({"summary": {"total_cost": None}}).summary["total_cost"] == 0.0
    assert _p({"compute": {}}).compute["interrupt_boundary_ms"] == 300.0
    assert _p({}).compute["interrupt_boundary_ms"] == 300.0


def test_integers_up_to_two_to_the_53():
    read = lambda v: _p({"summary": {"total_ops": v}}).summary["total_ops"]  # noqa: E731
    assert read(2 ** 53) == 2 ** 53 and read(-(2 ** 53)) == -(2 ** 53) and read("7") == 7 and read(7.9) == 7
    for bad in (2 ** 53 + 2, -(2 ** 53) - 2):
        _err({"summary": {"total_ops": bad}}, r"summary\.total_ops: integer out of range")
    assert _p({"summary": {"total_ops": None}}).summary["total_ops"] == 0
    # *_ops and *_entries are integers, the rest numbers
    s = _p({"summary": {"costmodel_entries": 3.7, "gpu_ops": 2.2, "grand_gflop": 2.5}}).summary
    assert s == {"costmodel_entries": 3, "gpu_ops": 2, "grand_gflop": 2.5}
    assert type(s["costmodel_entries"]) is int and type(s["grand_gflop"]) is float


def test_strings_and_booleans():
    p = _p({"version": 41, "compute": {"mode": None, "compute_units_all": "YES "}})
    assert p.version == "41" and p.compute["mode"] == "" and p.compute["compute_units_all"] is True
    _err({"version": True}, r"version: expected a string, got a boolean")
    _err({"version": {"a": 1}}, r"version: expected a string, got an object")
    for v, b in ((1, True), (0, False), (1.0, True), ("true", True), ("False", False), ("1", True), ("0", False),
                 ("no", False), ("yes", True), (True, True), (None, False)):
        assert _p({"status": {"log_data_masked": v}}).status["log_data_masked"] is b, v
    assert _p({"status": {}}).status == {"no_costmodel_entries": False, "log_data_masked": False, "static_estimate": False}
    for v in (2, -1, 0.5, "maybe", [1], {}):
        _err({"status": {"log_data_masked": v}}, r"status\.log_data_masked: expected true/false or 0/1")


def test_size_limit_is_checked_before_reading(tmp_path):
    f = tmp_path / "huge.json"
    with open(f, "wb") as fh:
        fh.truncate(MAX_BYTES + 1)                      # sparse: no disk used
    with pytest.raises(InputError, match=rf"{MAX_BYTES + 1} bytes is larger than any report \(512 MB limit\)"):
        read_report(f)


# --- detection ---------------------------------------------------------------------------------------------------

def test_detect():
    assert detect({"tool": "anemll-profile"}) == "profile" and detect({"tool": ESTIMATE_TOOL}) == "profile"
    # no tool: two of the profile's sections make it a profile, one does not
    assert detect({"graph_interruptions": {}, "fallback_ops": []}) == "profile"
    assert detect({"ordered_placements": [], "op_type_breakdown": []}) == "profile"
    assert detect({"measured_prediction": {}, "graph_interruptions": {}}) == "profile"
    for k in ("graph_interruptions", "ordered_placements", "op_type_breakdown", "measured_prediction", "fallback_ops"):
        assert detect({k: {}}) is None, k
    # a named other tool is not a profile, whatever sections it has
    assert detect({"tool": "other", "graph_interruptions": {}, "fallback_ops": []}) is None
    assert detect({"operations": [], "total_cost": 1.0}) == "costplan"
    assert detect({"operations": [], "with_device": 3}) == "costplan"
    assert detect({"operations": []}) is None and detect({"operations": {}, "total_cost": 1}) is None
    assert detect([1, 2]) is None and detect("x") is None


def test_neither_report_names_what_it_got():
    with pytest.raises(InputError, match=r"the document is an array$"):
        report_from_doc([1], "x.json")
    with pytest.raises(InputError, match=r"the document is an object \(its tool is 'xcode'\)$"):
        report_from_doc({"tool": "xcode"}, "x.json")
    with pytest.raises(InputError, match=r"the document is an object$"):
        report_from_doc({"a": 1}, "x.json")
    assert report_from_doc(costplan([(0, "conv", 1.0)]), "c.json").operations


# --- a profile, section by section -------------------------------------------------------------------------------

def test_profile_sections_and_warnings():
    doc = profile()
    p = _p(doc)
    assert p.missing == [] and p.warnings == []
    assert p.measured["status"] == "ok" and p.measured["runs"] == 10 and type(p.measured["runs"]) is int
    del doc["fallback_ops"], doc["conv_detail"]
    assert _p(doc).missing == ["conv_detail", "fallback_ops"]
    assert _p({**profile(), "version": "0.5.0"}).warnings == ["written by anemll-profile 0.5.0; read with the 0.4.x schema"]
    assert _p({**profile(), "version": "0.4.9"}).warnings == []
    assert _p({**profile(), "version": ""}).warnings == []
    est = _p({**profile(), "tool": ESTIMATE_TOOL, "version": "9"}).warnings
    assert len(est) == 1 and "mil_static" in est[0]


def test_model_and_measured():
    p = _p({"model": {"display_name": "m", "size_mb": "2.5", "compiled_from_package": 0, "other": "x"},
            "measured_prediction": {"status": "failed", "error": 12, "runs": "3"}})
    assert p.model == {"display_name": "m", "size_mb": 2.5, "compiled_from_package": False}
    assert p.measured == {"status": "failed", "error": "12", "runs": 3}
    assert _p({}).measured == {"status": "not_run"}                            # no section: not run
    assert _p({"op_type_totals": {"grand_gflop": "1.5"}}).op_type_totals == {"grand_gflop": 1.5}   # only keys given
    assert _p({"measured_prediction": {"steady_ms": 1}}).measured == {"status": "", "steady_ms": 1.0}
    assert "compiled_from_package" not in _p({"model": {"size_mb": 1}}).model


def test_placements_default_device_and_short_type():
    p = _p({"ordered_placements": [{"function": "f", "index": 2, "name": "n", "type": "ios18.conv", "cost": 0.5},
                                   {"type": "ios18.add", "short_type": "ADD", "device": "CPU", "ane_supported": 1}]})
    a, b = p.placements
    assert (a.function, a.index, a.device, a.short_type, a.cost, a.ane_supported) == ("f", 2, "?", "conv", 0.5, False)
    assert (b.device, b.short_type, b.ane_supported) == ("CPU", "ADD", True)
    _err({"ordered_placements": [3]}, r"ordered_placements\[0\]: expected an object, got a number")


def test_graph_interruptions_summary_and_count_warning():
    i1 = island(1, "main", 4, 5, 0.5)
    gi = {"focus_device": "ANE", "graph_interruptions": "1", "non_focus_runs": 2.0, "interrupted_cost": "0.5",
          "estimated_total_tax_ms": 600, "nested": {"x": 1}, "interruptions": [i1], "edge_runs": [],
          "timeline_by_function": {"main": []}}
    p = _p({"graph_interruptions": gi})
    assert p.interruptions_summary == {"focus_device": "ANE", "graph_interruptions": 1, "non_focus_runs": 2,
                                       "interrupted_cost": 0.5, "estimated_total_tax_ms": 600.0}
    assert p.warnings == [] and p.interruptions[0].start_index == 4 and p.interruptions[0].is_interruption
    p = _p({"graph_interruptions": {**gi, "graph_interruptions": 5000}})
    assert p.warnings == ["graph_interruptions says 5000 interruptions but lists 1 (the tool stores at most 4,096)"]
    # no count given: nothing to compare
    del gi["graph_interruptions"]
    assert _p({"graph_interruptions": gi}).warnings == []
    assert _p({"graph_interruptions": {}}).interruptions == []


def test_rows_derive_short_type_only_when_missing():
    p = _p({"op_type_breakdown": [{"type": "ios18.conv", "count": "2"}, {"type": "ios18.add", "short_type": "plus"}],
            "high_cost_ops": [{"index": 3, "cost": 0.1}],
            "top_operations": [{"name": "x", "type": "", "runtime_ms": 1}]})
    assert [(t["short_type"], t["count"]) for t in p.op_types] == [("conv", 2), ("plus", 0)]
    assert p.high_cost_ops == [{"index": 3, "type": "", "short_type": "", "cost": 0.1, "device": ""}]
    assert p.top_operations[0]["short_type"] == ""
    _err({"op_type_breakdown": {"a": 1}}, r"op_type_breakdown: expected an array, got an object")


def test_reason_and_count_maps():
    p = _p({"unsupported_reasons_by_type": {"ios18.gather": ["b", "a"], "ios18.cast": "only one"},
            "ane_op_types": {"conv": "3"}, "cpu_op_types": {"cast": 1.0}})
    assert p.unsupported_reasons == {"ios18.gather": ["a", "b"], "ios18.cast": ["only one"]}
    assert p.ane_op_types == {"conv": 3} and p.cpu_op_types == {"cast": 1}
    _err({"unsupported_reasons_by_type": {"t": [1]}}, r"unsupported_reasons_by_type\.t: expected an array of strings")
    _err({"unsupported_reasons_by_type": {"t": 5}}, r"unsupported_reasons_by_type\.t: expected an array of strings")
    _err({"ane_op_types": ["conv"]}, r"ane_op_types: expected an object, got an array")


# --- ane-costplan ------------------------------------------------------------------------------------------------

def test_costplan_fields_defaults_and_count_warning():
    doc = {"model": "m.mlmodelc", "operations": [
        {"index": 0, "type": "ios18.conv", "cost": 0.75, "function": "main", "preferred_device": "ANE"},
        {"type": "ios18.cast", "cost": "0.25", "device": "CPU"}]}
    c = costplan_from_doc(doc, "c.json")
    assert c.operations == [
        {"index": 0, "type": "ios18.conv", "short_type": "conv", "cost": 0.75, "function": "main", "device": "ANE"},
        {"index": -1, "type": "ios18.cast", "short_type": "cast", "cost": 0.25, "device": "CPU"}]
    assert (c.total_cost, c.total_ops, c.with_device, c.no_device, c.warnings) == (1.0, 2, 0, 0, [])
    c = costplan_from_doc({**doc, "total_cost": 0.5, "total_ops": 3, "with_device": 1, "no_device": 1}, "c.json")
    assert (c.total_cost, c.total_ops, c.with_device, c.no_device) == (0.5, 3, 1, 1)
    assert c.warnings == ["total_ops says 3 but 2 operations are listed"]
    with pytest.raises(InputError, match=r"c\.json: operations\[1\]\.cost: expected a number"):
        costplan_from_doc({"operations": [{"cost": 1}, {"cost": {}}]}, "c.json")


def test_round_trip_through_a_file(tmp_path):
    f = tmp_path / "p.json"
    f.write_text(json.dumps(profile()).replace("/", "\\/"))
    assert read_report(f).model["input_path"].startswith("/Users/dev/")
