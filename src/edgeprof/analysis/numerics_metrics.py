"""How far one tensor is from another (numpy only): max and mean |diff|, cosine similarity and SQNR, and where the
error first grows along a program.

SQNR (signal-to-quantization-noise ratio) of a candidate ``y`` against a baseline ``x``: ``10·log10(Σx² / Σ(x−y)²)``
in dB — 20 dB is an error a tenth of the signal's amplitude, 40 dB a hundredth; every 6.02 dB halves the error.
Identical tensors have no SQNR (``identical: true``, ``sqnr_db: null``); a baseline of zeros against a different
candidate has none either (no signal to measure against).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..conventions import NUMERICS_NOISE_FLOOR_DB as NOISE_FLOOR_DB
from ..conventions import NUMERICS_THRESHOLD_DB as DEFAULT_THRESHOLD_DB


def compare_tensors(x: np.ndarray, y: np.ndarray) -> dict:
    """The metrics of candidate ``y`` against baseline ``x`` (same shape), computed in float64."""
    a = np.asarray(x, dtype=np.float64).ravel()
    b = np.asarray(y, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {np.shape(x)} and {np.shape(y)}")
    finite = bool(np.all(np.isfinite(a)) and np.all(np.isfinite(b)))
    identical = bool(np.array_equal(a, b, equal_nan=True))
    out: dict[str, Any] = {"identical": identical, "elements": int(a.size), "finite": finite}
    if a.size == 0:
        return {**out, "max_abs_diff": 0.0, "mean_abs_diff": 0.0, "cosine": None, "sqnr_db": None}
    d = np.abs(a - b)
    out["max_abs_diff"] = float(np.max(d)) if finite else math.inf
    out["mean_abs_diff"] = float(np.mean(d)) if finite else math.inf
    na, nb = float(np.dot(a, a)), float(np.dot(b, b))
    out["cosine"] = float(np.dot(a, b) / math.sqrt(na * nb)) if finite and na > 0 and nb > 0 else (
        1.0 if identical and finite and na > 0 else None)
    noise = float(np.dot(a - b, a - b)) if finite else math.inf
    out["sqnr_db"] = None if identical or na == 0 or not finite or noise == 0 else 10.0 * math.log10(na / noise)
    return out


def effective_sqnr(m: dict, floor: float = NOISE_FLOOR_DB) -> float | None:
    """SQNR for following the error: identical and float-noise points count as the noise floor; None when the
    point has no SQNR to follow (a zero baseline, non-finite values)."""
    if m["identical"]:
        return floor
    s = m["sqnr_db"]
    return None if s is None else min(s, floor)


def first_loss(points: list[dict], threshold_db: float = DEFAULT_THRESHOLD_DB, floor: float = NOISE_FLOOR_DB):
    """The first step along ``points`` (in program order; each with ``name`` and ``metrics``) where the effective
    SQNR falls by more than ``threshold_db`` from the previous point that has one — (index before, index after,
    drop in dB) — or None. A fall of exactly the threshold is not a loss."""
    prev, prev_s = None, None  # the previous point with an SQNR, and its SQNR
    for i, p in enumerate(points):
        s = effective_sqnr(p["metrics"], floor)
        if s is None:
            continue
        if prev_s is not None and prev_s - s > threshold_db:
            return prev, i, prev_s - s
        prev, prev_s = i, s
    return None


def fmt_sqnr(m: dict) -> str:
    if m["identical"]:
        return "identical"
    s = m["sqnr_db"]
    return "—" if s is None else f"{s:.1f} dB"
