"""Edges of the profile model: launches of a single event each stacked by ``concat_runs``, and an XNNPACK log
record that has read nothing yet."""

from __future__ import annotations

from etdump_builder import PE, Run, build

from edgeprof import load_etdump
from edgeprof.model import KernelLog, concat_runs


def _one_event_launch(path, t0: int):
    # a launch whose one run holds only Method::execute (no operator was profiled): one event, parent null
    path.write_bytes(build([Run("Execute", [PE("Method::execute", t0, t0 + 500, -1, chain_index=-1)])]))
    return load_etdump(path, warn=False)


def test_launches_of_one_event_each_stack_with_no_parents(tmp_path):
    a = _one_event_launch(tmp_path / "a.etdp", 0)
    b = _one_event_launch(tmp_path / "b.etdp", 1_000_000)
    assert a.events.height == b.events.height == 1
    c = concat_runs([a, b])
    assert c.n_runs == 2
    assert c.events["run_index"].to_list() == [0, 1]
    assert c.events["parent"].to_list() == [None, None]
    assert c.events["duration_ns"].to_list() == [500, 500]


def test_a_kernel_log_that_has_read_nothing_counts_no_lines():
    log = KernelLog(source="run.log")
    assert (log.lines, log.xnnpack_lines, log.registrations, log.kernel_names) == (0, 0, [], [])
