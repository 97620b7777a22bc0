"""Event durations at every boundary of the validity rules (Inspector's 32-bit wrap, 2^53 ns, 2^62 timestamps),
with the expected values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from edgeprof.io.etdump import DURATION_PROBLEMS, duration_problems, durations

U32 = 2**32 - 1


def one(start: int, end: int) -> tuple[int, str]:
    d, p = duration_problems(np.array([start], dtype=np.uint64), np.array([end], dtype=np.uint64))
    return int(d[0]), DURATION_PROBLEMS[int(p[0])]


@pytest.mark.parametrize("start,end,dur,problem", [
    (5, 5, 0, ""),                                   # zero duration is a valid duration
    (5, 9, 4, ""),
    (U32, 0, 0, ""),                                 # Inspector's wrap rule: (2^32 − 1 − start) + end
    (U32 - 10, 5, 15, ""),
    (U32 + 1, 0, None, "end before start (not a 32-bit timer wrap)"),   # start beyond 32 bits: no wrap
    (10, U32 + 5, U32 - 5, ""),
    (0, 2**53 - 1, 2**53 - 1, ""),
    (0, 2**53, None, "a duration over 2^53 ns (104 days)"),
    (1, 2**53 + 1, None, "a duration over 2^53 ns (104 days)"),
    (2**62 - 1, 2**62 - 1, 0, ""),
    (2**62, 2**62, None, "an out-of-range timestamp (≥ 2^62)"),
    (0, 2**62, None, "an out-of-range timestamp (≥ 2^62)"),
    (2**63, 5, None, "an out-of-range timestamp (≥ 2^62)"),       # the out-of-range rule wins over the others
    (2**64 - 1, 2**64 - 1, None, "an out-of-range timestamp (≥ 2^62)"),
    (2**40, 2**40 + 2**53, None, "a duration over 2^53 ns (104 days)"),
    (2**40 + 2**53, 2**40, None, "end before start (not a 32-bit timer wrap)"),  # backwards wins over the size
])
def test_duration_rules_at_their_boundaries(start, end, dur, problem):
    d, p = one(start, end)
    assert p == problem
    if dur is not None:
        assert d == dur
    _, valid = durations(np.array([start], dtype=np.uint64), np.array([end], dtype=np.uint64))
    assert bool(valid[0]) is (problem == "")


def test_vectors_mix_every_case():
    start = np.array([5, U32, U32 + 1, 0, 2**62], dtype=np.uint64)
    end = np.array([9, 0, 0, 2**53, 0], dtype=np.uint64)
    d, p = duration_problems(start, end)
    assert p.tolist() == [0, 0, 1, 3, 2] and d[:2].tolist() == [4, 0]
