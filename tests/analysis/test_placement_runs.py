"""A profile's placement times each operator by its mean over the runs that ran the first run's operators in the
first run's order; runs that differ (another order, another count) are left out and counted in a warning."""

from __future__ import annotations

import pytest
from etdump_builder import build, portable_run

from edgeprof.analysis.placement import from_profile
from edgeprof.io.etdump_read import read_etdump


def test_times_are_means_over_the_runs_like_the_first(tmp_path):
    conv, relu, add = "convolution.out", "relu.out", "add.out"
    runs = [portable_run(0, ((conv, 1000, 5000), (relu, 200, 300))),
            portable_run(50_000, ((conv, 1000, 7000), (relu, 200, 500))),
            portable_run(100_000, ((relu, 200, 900), (conv, 1000, 9000))),                 # another order
            portable_run(150_000, ((conv, 1000, 11_000), (relu, 200, 700), (add, 10, 20))),  # another count
            portable_run(200_000, ((conv, 1000, 3000), (relu, 200, 100)))]
    p = tmp_path / "runs.etdp"
    p.write_bytes(build(runs))
    pl_ = from_profile(read_etdump(p))
    assert [o.op for o in pl_.ops] == ["native_call_convolution.out", "native_call_relu.out"]
    assert [o.time_ms for o in pl_.ops] == pytest.approx([(5000 + 7000 + 3000) / 3 / 1e6, (300 + 500 + 100) / 3 / 1e6])
    assert pl_.runs == 3
    assert pl_.warnings == ["2 of 5 runs ran a different sequence of operators from the first run; "
                            "times are means over the runs like it"]
