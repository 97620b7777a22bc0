"""Edges of turning decoded ETDump columns into a Profile: readers' own kinds and invalid flags, nesting of the load
block, self time next to invalid events, XNNPACK inference, contiguous delegate ops, and each run's end-to-end time
when some of its events are invalid or it has no ``Method::execute``.

The columns are written by hand (:func:`edgeprof.io.etdump.events_only`), so every expected value follows from the
timestamps chosen here: a duration is ``end - start``, an event nests in the next event of its parent kind."""

from __future__ import annotations

import polars as pl

from edgeprof.io.etdump import build_profile, events_only
from edgeprof.model import KINDS

BAD = (2**40, 2**40 - 1)  # end before start, beyond a 32-bit wrap: "end before start" (problem 1)


def _profile(events, run_names=("Execute",), counts=None, **extra):
    """``events``: (run, name, delegate debug id string, instruction, start, end); name or id may be None."""
    names: list[str] = []
    for _, nm, dd, *_ in events:
        for s in (nm, dd):
            if s is not None and s not in names:
                names.append(s)
    def code(s):
        return names.index(s) if s is not None else -1
    dec = events_only(list(run_names), [e[0] for e in events], [code(e[1]) for e in events],
                      [code(e[2]) for e in events], names, [e[3] for e in events], [e[4] for e in events],
                      [e[5] for e in events], **extra)
    return build_profile(dec, "t.etdp", counts_out=counts)


def _col(prof, name):
    return prof.events[name].cast(pl.String).to_list() if prof.events[name].dtype != pl.Int64 else \
        prof.events[name].to_list()


def test_a_profile_built_without_a_file_size_has_size_zero():
    assert _profile([(0, "Method::execute", None, -1, 0, 10)]).file_size == 0


def test_a_reader_given_kind_zero_is_the_framework_kind():
    import numpy as np

    prof = _profile([(0, "relu", None, 0, 0, 10), (0, "relu", None, 0, 20, 30)],
                    pe_kind=np.array([0, -1], dtype=np.int8))
    assert KINDS[0] == "framework"
    assert _col(prof, "kind") == ["framework", "other"]


def test_a_reader_flag_marks_only_otherwise_valid_durations_end_before_start():
    import numpy as np

    c: dict = {}
    prof = _profile([(0, "a", None, 0, 0, 10),             # valid, flagged by the reader → problem 1
                     (0, "b", None, 0, 0, 2**53),          # over 2^53 ns and flagged: stays problem 3
                     (0, "c", None, 0, 20, 30)],           # valid, not flagged
                    counts=c, pe_invalid=np.array([True, True, False]))
    assert c["invalid"] == [1, 1, 0, 1]
    assert prof.events["duration_ns"].to_list() == [None, None, 10]
    assert "1 event(s) with end before start" in " ".join(prof.warnings)
    assert "1 event(s) with a duration over 2^53 ns" in " ".join(prof.warnings)


def test_an_invalid_child_takes_no_time_from_its_parent():
    prof = _profile([(0, "op_x", None, 0, *BAD), (0, "op_y", None, 1, 200, 500),
                     (0, "Method::execute", None, -1, 0, 1000)])
    assert prof.events["parent"].to_list() == [2, 2, None]
    assert prof.events["duration_ns"].to_list() == [None, 300, 1000]
    assert prof.events["self_ns"].to_list() == [0, 300, 1000 - 300]


def test_a_profile_without_profiling_events_builds():
    prof = _profile([], run_names=("Default", "Execute"))
    assert prof.events.height == 0 and prof.runs.height == 2
    assert prof.runs["run_index"].to_list() == [-1, -1]


def test_method_init_nests_in_load_method_only_when_both_are_present():
    prof = _profile([(0, "Method::init", None, -1, 10, 20), (0, "Program::load_method", None, -1, 0, 50)],
                    run_names=("Default",))
    assert prof.events["parent"].to_list() == [1, None] and prof.events["depth"].to_list() == [1, 0]
    # no Method::init: an ordinary event before Program::load_method is not put inside it
    prof = _profile([(0, "custom_event", None, -1, 10, 20), (0, "Program::load_method", None, -1, 0, 50)],
                    run_names=("Default",))
    assert prof.events["parent"].to_list() == [None, None] and prof.events["depth"].to_list() == [0, 0]
    # no Program::load_method: nothing after Method::init becomes its parent
    prof = _profile([(0, "Method::init", None, -1, 10, 20), (0, "custom_event", None, -1, 0, 50)],
                    run_names=("Default",))
    assert prof.events["parent"].to_list() == [None, None]


def test_method_init_given_another_kind_nests_in_method_execute_without_a_load_method():
    import numpy as np

    prof = _profile([(0, "Method::init", None, -1, 10, 20), (0, "Method::execute", None, -1, 0, 50)],
                    pe_kind=np.array([KINDS.index("other"), -1], dtype=np.int8))
    assert _col(prof, "kind") == ["other", "framework"]
    assert prof.events["parent"].to_list() == [1, None] and prof.events["self_ns"].to_list() == [10, 40]


def _xnn_and_plain_calls():
    # instruction 0: an XNNPACK-named op in a DELEGATE_CALL; instruction 1: a plain-named op in another
    return _profile([(0, None, "Add (ND) #1", 0, 110, 120), (0, "DELEGATE_CALL", None, 0, 100, 130),
                     (0, None, "my_op", 1, 150, 160), (0, "DELEGATE_CALL", None, 1, 140, 170),
                     (0, "Method::execute", None, -1, 0, 200)])


def test_a_delegate_call_of_xnnpack_ops_is_inferred_to_be_xnnpack():
    prof = _xnn_and_plain_calls()
    assert _col(prof, "kind") == ["delegate_op", "delegate_call"] * 2 + ["framework"]
    assert _col(prof, "delegate_backend") == ["XnnpackBackend", "XnnpackBackend", "delegated", "delegated",
                                              "framework"]
    assert _col(prof, "backend_source") == ["inferred", "inferred", "", "", ""]


def test_delegate_ops_laid_end_to_end_from_their_call_start_in_two_calls():
    # ops of two delegate calls, each pair starting at its call's start and each op starting at the previous end
    prof = _profile([(0, None, "op_a", 0, 100, 110), (0, None, "op_b", 0, 110, 125),
                     (0, "DELEGATE_CALL", None, 0, 100, 130),
                     (0, None, "op_c", 1, 200, 205), (0, None, "op_d", 1, 205, 240),
                     (0, "DELEGATE_CALL", None, 1, 200, 250),
                     (0, "Method::execute", None, -1, 0, 300)])
    assert prof.events["parent"].to_list()[:6] == [2, 2, 6, 5, 5, 6]
    assert _col(prof, "timing_source") == ["synthesized_start"] * 2 + ["measured"] \
        + ["synthesized_start"] * 2 + ["measured"] * 2


def test_a_run_without_method_execute_is_timed_by_its_non_framework_top_level_events():
    prof = _profile([(0, "Program::load_method", None, -1, 0, 100), (0, "op", None, 0, 200, 300)])
    assert prof.runs["e2e_ns"].to_list() == [100]
    assert prof.runs["e2e_source"].to_list() == ["top_level_events"]


def test_an_invalid_event_outside_method_execute_does_not_invalidate_the_run():
    # the op comes after Method::execute (nothing encloses it): top level, but the run is timed by Method::execute
    c: dict = {}
    prof = _profile([(0, "Method::execute", None, -1, 0, 1000), (0, "op", None, 0, *BAD)], counts=c)
    assert prof.events["depth"].to_list() == [0, 0]
    assert prof.runs["e2e_ns"].to_list() == [1000] and prof.runs["e2e_problem"].to_list() == [None]
    assert not c["bad_runs"]


def test_an_invalid_top_level_event_invalidates_a_run_without_method_execute():
    c: dict = {}
    prof = _profile([(0, "op_a", None, 0, 0, 100), (0, "op_b", None, 1, *BAD)], counts=c)
    assert prof.runs["e2e_problem"].to_list() == ["its timed events have invalid timestamps"]
    assert prof.runs["e2e_ns"].to_list() == [None]
    assert c["bad_runs"] == {"its timed events have invalid timestamps": 1}


def test_a_run_of_one_event_without_method_execute_is_counted_and_warned_about():
    c: dict = {}
    prof = _profile([(0, "op", None, 0, 0, 100)], counts=c)
    assert c["runs_wo_exec"] == 1
    assert any(w.startswith("1 run(s) have no Method::execute event") for w in prof.warnings)
    assert prof.runs["e2e_ns"].to_list() == [100]
