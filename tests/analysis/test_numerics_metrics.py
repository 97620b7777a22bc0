"""The numerics metrics on hand-worked cases: identical tensors, a 20 dB error, cosine of orthogonal vectors, and the
"accuracy lost" rule exactly at its threshold."""

from __future__ import annotations

import math

import numpy as np
import pytest

from edgeprof.analysis.numerics import align, program_points
from edgeprof.analysis.numerics_metrics import (
    DEFAULT_THRESHOLD_DB,
    NOISE_FLOOR_DB,
    compare_tensors,
    effective_sqnr,
    first_loss,
)


def test_identical_tensors_are_identical_and_have_no_sqnr():
    x = np.array([[1.0, -2.0], [3.0, 0.5]], dtype=np.float32)
    m = compare_tensors(x, x.copy())
    assert m["identical"] is True and m["sqnr_db"] is None
    assert m["max_abs_diff"] == 0.0 and m["mean_abs_diff"] == 0.0 and m["cosine"] == pytest.approx(1.0)
    assert effective_sqnr(m) == NOISE_FLOOR_DB


def test_a_worked_20_db_case():
    # x = [3, 4]: Σx² = 25; y = [3, 4.5]: Σ(x−y)² = 0.25 → 10·log10(100) = 20 dB
    m = compare_tensors(np.array([3.0, 4.0]), np.array([3.0, 4.5]))
    assert m["identical"] is False
    assert m["sqnr_db"] == pytest.approx(20.0, abs=1e-12)
    assert m["max_abs_diff"] == 0.5 and m["mean_abs_diff"] == 0.25
    assert m["cosine"] == pytest.approx((9 + 18) / (5 * math.sqrt(9 + 20.25)))


def test_orthogonal_vectors_and_a_zero_baseline():
    m = compare_tensors(np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    # Σx² = 1, Σ(x−y)² = 2: the error is larger than the signal, 10·log10(1/2) = −3.01 dB
    assert m["cosine"] == 0.0 and m["sqnr_db"] == pytest.approx(-10 * math.log10(2), abs=1e-12)
    z = compare_tensors(np.zeros(3), np.array([0.0, 1.0, 0.0]))
    assert z["sqnr_db"] is None and z["cosine"] is None and not z["identical"]
    assert effective_sqnr(z) is None
    with pytest.raises(ValueError):
        compare_tensors(np.zeros(3), np.zeros(4))


def _pt(name, sqnr):
    m = {"identical": sqnr is None, "sqnr_db": sqnr}
    return {"name": name, "metrics": m}


def test_accuracy_is_lost_only_past_the_threshold():
    t = DEFAULT_THRESHOLD_DB
    assert first_loss([_pt("a", 40.0), _pt("b", 40.0 - t)], t) is None  # exactly the threshold: not a loss
    got = first_loss([_pt("a", 40.0), _pt("b", 40.0 - t - 0.001)], t)
    assert got is not None and got[:2] == (0, 1) and got[2] == pytest.approx(t + 0.001)
    # the first step past the threshold is reported, not the largest
    got = first_loss([_pt("a", 50.0), _pt("b", 45.0), _pt("c", 30.0), _pt("d", 5.0)], t)
    assert got[:2] == (1, 2)
    # identical points count as the noise floor; float noise above the floor is no loss
    assert first_loss([_pt("a", None), _pt("b", 130.0), _pt("c", 120.0)], t) is None
    assert first_loss([_pt("a", None), _pt("b", NOISE_FLOOR_DB - t - 1)], t)[:2] == (0, 1)


def _ev(instr, tensors, *, delegate=False, out=False, num_outs=None, op=None, module=None, handles=()):
    return {"instruction": instr, "is_output": out, "tensors": tensors, "delegate": delegate, "backend": "Xnn" if
            delegate else None, "num_outs": num_outs, "op": op, "module": module, "op_types": [], "handles": list(handles)}


def test_points_drop_delegate_inputs_seen_before_and_split_inputs_from_outputs():
    a, b, c = (np.full(4, v, np.float32) for v in (1.0, 2.0, 3.0))
    pts = program_points([
        _ev(0, [a, b], delegate=True, num_outs=1, module="m"),   # input a (new), output b
        _ev(1, [c], op="relu", module="m.r"),
        _ev(2, [c], delegate=True, num_outs=1, module="m"),      # only its output: its input is c again
        _ev(0, [c], out=True),
    ])
    assert [p["role"] for p in pts] == ["delegate_input", "delegate_output", "operator", "delegate_output", "output"]


def test_alignment_is_monotone_and_prefers_the_same_operator():
    x = [np.arange(4, dtype=np.float32) + k for k in range(3)]
    base = program_points([_ev(0, [x[0]], op="add", module="m", handles=[1]),
                           _ev(1, [x[1]], op="mul", module="m", handles=[2]),
                           _ev(2, [x[2]], op="relu", module="m", handles=[3])])
    cand = program_points([_ev(0, [x[1] + 1e-3], op="mul", module="m", handles=[2]),
                           _ev(1, [x[2]], op="relu", module="m", handles=[3])])
    pairs = align(base, cand, have_records=True)
    assert [(i, j) for i, j, _ in pairs] == [(1, 0), (2, 1)]
    assert [m for _, _, m in pairs] == ["debug_handle", "debug_handle"]
    # without ETRecords: order and shape only, and said so
    pairs = align(base, cand, have_records=False)
    assert all(m == "order_and_shape" for _, _, m in pairs) and len(pairs) == 2
