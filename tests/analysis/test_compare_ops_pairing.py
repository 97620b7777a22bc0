"""Which candidate operator a baseline operator is compared with never depends on the order the profiles list
operators in (a set's or a hash's order): same names pair; of one family renamed across dtypes, the names pair in
sorted order; ties in time are listed by name."""

from __future__ import annotations

import numpy as np

from edgeprof.analysis.compare_ops import compare_operators

B = {"Fully Connected (NC, F32) GEMM": 5.0, "Fully Connected (NC, F16) GEMM": 3.0, "Convolution (NHWC, F32) IGEMM": 4.0,
     "Softmax (NC, F32)": 1.0, "Copy (NC, X32)": 1.0, "Transpose (ND, X32)": 0.5}
C = {"Fully Connected (NC, QD8, F32, QC8W) GEMM": 2.0, "Fully Connected (NC, PF32) GEMM": 1.5,
     "Convolution (NHWC, F32) IGEMM": 2.0, "Softmax (NC, F32)": 1.0, "Copy (NC, X32)": 1.0, "Add (ND, F32)": 0.2}


def _tabs(means: dict, order, launches: int = 2, runs: int = 6, seed: int = 0) -> list[dict]:
    """Per launch, each operator's time per run: the same values whatever the order (Softmax and Copy alike)."""
    noise = [1 + 0.01 * np.random.default_rng(seed + j).standard_normal(runs) for j in range(launches)]
    return [{k: means[k] * 1e6 * noise[j] for k in order} for j in range(launches)]


def _pairs(doc: dict) -> list[tuple]:
    return [(r["baseline_operator"], r["candidate_operator"]) for r in doc["matched"]]


def test_pairs_do_not_depend_on_the_order_operators_are_listed_in():
    seen = set()
    rng = np.random.default_rng(3)
    orders = [(list(B), list(C)), (sorted(B, reverse=True), sorted(C))]
    orders += [(list(rng.permutation(list(B))), list(rng.permutation(list(C)))) for _ in range(30)]
    for ob, oc in orders:
        doc = compare_operators(_tabs(B, ob), _tabs(C, oc, seed=1), top=20)
        seen.add((tuple(_pairs(doc)), tuple(map(tuple, (sorted(x.items()) for x in doc["renamed"]))),
                  tuple(r["operator"] for r in doc["removed"]), tuple(r["operator"] for r in doc["added"])))
    assert len(seen) == 1
    pairs, _renamed, removed, added = seen.pop()
    # the F16 and F32 fully-connected operators pair with the candidate's two, in the order of their names
    assert dict(pairs)["Fully Connected (NC, F16) GEMM"] == "Fully Connected (NC, PF32) GEMM"
    assert dict(pairs)["Fully Connected (NC, F32) GEMM"] == "Fully Connected (NC, QD8, F32, QC8W) GEMM"
    assert removed == ("Transpose (ND, X32)",) and added == ("Add (ND, F32)",)
    # equal times (Softmax and Copy, 1 ms in both) are listed by name
    names = [p[0] for p in pairs]
    assert names.index("Copy (NC, X32)") < names.index("Softmax (NC, F32)")
