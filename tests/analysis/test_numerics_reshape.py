"""Points paired through a reshape: where debug handles or module paths pair a baseline operator's ``[32, 384]``
output with a delegate's ``[32, 1, 3, 128]`` one (the same 12,288 values, another layout), they are compared in
row-major order and the first loss is placed there — not at the next operator of matching shape. Order alone never
pairs two shapes."""

from __future__ import annotations

import numpy as np

from edgeprof.analysis.numerics import compare_points, program_points


def _events(x, proj, after, delegated: bool):
    """One run's debug events: the input projection (a portable operator, or an int8 delegate call whose output is
    laid out [32, 1, 3, 128]), then a portable ``unsqueeze_copy`` of it, then the model output."""
    mod = "encoder.in_proj"
    if delegated:
        first = {"instruction": 2, "is_output": False, "tensors": [x, proj.reshape(32, 1, 3, 128)], "delegate": True,
                 "backend": "XnnpackBackend", "num_outs": 1, "op": None, "module": mod, "op_types": ["aten.linear"],
                 "handles": [7]}
    else:
        first = {"instruction": 2, "is_output": False, "tensors": [proj], "delegate": False, "backend": None,
                 "num_outs": 0, "op": "aten::linear.out", "module": mod, "op_types": ["aten.linear"], "handles": [7]}
    nxt = {"instruction": 3, "is_output": False, "tensors": [after], "delegate": False, "backend": None, "num_outs": 0,
           "op": "aten::unsqueeze_copy.out", "module": "encoder", "op_types": ["aten.unsqueeze"], "handles": [8]}
    out = {"instruction": None, "is_output": True, "tensors": [after.sum(axis=-1)], "delegate": False}
    return [first, nxt, out]


def test_a_reshaped_delegate_output_is_paired_and_holds_the_loss():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 128)).astype(np.float32)
    proj = rng.standard_normal((32, 384)).astype(np.float32)
    lossy = (proj + rng.standard_normal(proj.shape).astype(np.float32) * 0.5).astype(np.float32)  # int8-like error
    base = program_points(_events(x, proj, proj[:, None, :], delegated=False))
    cand = program_points(_events(x, lossy, lossy[:, None, :], delegated=True))
    d = compare_points(base, cand, have_records=True)
    first = d["points"][0]
    assert first["shape"] == [32, 384] and first["candidate_shape"] == [32, 1, 3, 128]
    assert first["base_instruction"] == first["candidate_instruction"] == 2
    # its SQNR, recomputed here in float64 over the values in row-major order
    e = lossy.astype(np.float64) - proj.astype(np.float64)
    sqnr = 10 * np.log10(np.sum(proj.astype(np.float64) ** 2) / np.sum(e ** 2))
    assert abs(first["metrics"]["sqnr_db"] - sqnr) < 1e-9
    assert d["accuracy_lost"]["at"] == first["name"]  # the loss is at the projection, not at unsqueeze_copy
    # without names to pair them, order alone never pairs two shapes
    blind = compare_points(base, cand, have_records=False)
    assert all(p["shape"] == p["candidate_shape"] for p in blind["points"])
