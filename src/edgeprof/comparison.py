"""The typed comparison: one frozen record per line a baseline-vs-candidate comparison states — each end-to-end
metric, each category and overhead line, each operator — holding its estimate, interval, test and status, all from
one estimator on one set of runs (:mod:`edgeprof.analysis.compare`, :mod:`edgeprof.analysis.compare_ops` make
them; :mod:`edgeprof.render` reads them). Written to JSON as plain rows (:class:`edgeprof.documents_base.Record`),
whose keys are the field names here.

Convention (:data:`edgeprof.conventions.SPEEDUP`): speedup = baseline / candidate; an interval is
``[ci_low, ci_high]`` at the comparison's level; ``*_typical_ms`` are the estimator's per-arm values, whose ratio the
speedup is; ``*_ms`` of a line are the mean time per run over the arm's runs (what shares are of).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .conventions import LineStatus, Verdict, ms
from .documents_base import Record


@dataclass(frozen=True)
class Speedup(Record):
    """A speedup with its interval from one estimator (``estimator``), the per-arm values of that estimator, and
    the ratio of the mean times per run shown beside it (``mean_ratio``). Untested: the ratio of means, no
    interval."""

    speedup: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    mean_ratio: float | None = None
    estimator: str | None = None
    baseline_typical_ms: float | None = None
    candidate_typical_ms: float | None = None

    @classmethod
    def of(cls, ct: dict | None, b_mean: float, c_mean: float) -> Speedup:
        """From a launch-level contrast (:func:`edgeprof.analysis.launches.contrast` with the estimator's name)
        and the arms' mean ns per run; None: untested."""
        ratio = b_mean / c_mean if b_mean > 0 and c_mean > 0 else None
        if ct is None:
            return cls(speedup=ratio, mean_ratio=ratio)
        mb, mc = ct["centres"]
        return cls(speedup=math.exp(ct["estimate"]), ci_low=math.exp(ct["low"]), ci_high=math.exp(ct["high"]),
                   mean_ratio=ratio, estimator=ct["estimator"],
                   baseline_typical_ms=ms(math.exp(mb)), candidate_typical_ms=ms(math.exp(mc)))


@dataclass(frozen=True)
class Test(Record):
    """A line's test: launch-level p-value, its Benjamini–Hochberg q-value across the lines, and the status
    (:func:`edgeprof.conventions.line_status`)."""

    p_value: float | None
    q_value: float | None
    significant: bool
    status: LineStatus | None


@dataclass(frozen=True)
class _Line(Record):
    """What every line of a comparison's tables holds: the arms' mean ms per run, the speedup of one estimator with
    its interval (:class:`Speedup`'s fields) and the line's test (:class:`Test`'s)."""

    baseline_ms: float
    candidate_ms: float
    speedup: float | None
    ci_low: float | None
    ci_high: float | None
    mean_ratio: float | None
    estimator: str | None
    baseline_typical_ms: float | None
    candidate_typical_ms: float | None
    p_value: float | None
    q_value: float | None
    significant: bool
    status: LineStatus | None  # None: an operator past the top N shown, not tested


@dataclass(frozen=True)
class CategoryLine(_Line):
    """One category or overhead line of a comparison."""

    line: str
    kind: str  # category | overhead
    change_percent: float | None
    regime: str | None
    baseline_share: float
    candidate_share: float
    baseline_share_ci: tuple[float, float]
    candidate_share_ci: tuple[float, float]
    share_change_ci: tuple[float, float]


@dataclass(frozen=True)
class OperatorLine(_Line):
    """One operator of a comparison, matched by type (``match``: same | renamed)."""

    baseline_operator: str
    candidate_operator: str
    match: str


@dataclass(frozen=True)
class MetricContrast(Record):
    """An end-to-end metric (median, mean, p90, p99) compared: its speedup, interval, p-value and verdict, and each
    arm's value of the metric on the estimator's scale (launches combined; the speedup is their ratio)."""

    speedup: float
    ci_low: float
    ci_high: float
    p_value: float
    verdict: Verdict
    baseline_typical_ms: float
    candidate_typical_ms: float


@dataclass(frozen=True)
class SlowRuns(Record):
    """The tail check: each arm's share of runs ≥ 2× their launch's median, and whether the candidate has more."""

    baseline_share: float
    candidate_share: float
    p_value: float
    verdict: str  # "slower" | "no significant change"


def line_fields(speedup: Speedup, test: Test) -> dict:
    """The fields a line takes from its speedup and its test (a record's keyword arguments)."""
    return {**{k: getattr(speedup, k) for k in ("speedup", "ci_low", "ci_high", "mean_ratio", "estimator",
                                                 "baseline_typical_ms", "candidate_typical_ms")},
            **{k: getattr(test, k) for k in ("p_value", "q_value", "significant", "status")}}
