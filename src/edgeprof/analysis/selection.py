"""The runs a series' analyses use: each launch's steady runs after its warm-up (pure; numpy).

One :class:`RunSelection` is made per series (one arm of a comparison, one configuration of a plan or report) by
:func:`select_runs`, the one resolution of ``--warmup auto|N``, and every analysis of that series takes its runs
from it — the latency comparison, the per-category lines, the plan, the report's tables and lanes. The warm-up of
a launch is one fact with one name here (``LaunchRuns.warmup``); the documents keep the field names they have
always had (``warmup_dropped`` in a comparison's launches, ``runs_used.launches[].first`` in a report).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LaunchRuns:
    """One launch of a series: ``total`` runs recorded, the first ``warmup`` of them left out as warm-up."""

    source: str
    total: int
    warmup: int
    detection: dict | None = None  # the warm-up detector's finding (``auto``), None for a given count

    @property
    def count(self) -> int:
        """The steady runs: recorded minus warm-up."""
        return self.total - self.warmup


@dataclass(frozen=True)
class RunSelection:
    """The runs of every launch of one series that its analyses use (see the module docstring)."""

    rule: str  # "auto" (detected per launch) or the number of leading runs asked to be left out
    launches: tuple[LaunchRuns, ...]

    @property
    def warmup(self) -> tuple[int, ...]:
        """Leading runs left out, per launch."""
        return tuple(x.warmup for x in self.launches)

    @property
    def warmup_total(self) -> int:
        return sum(self.warmup)

    @property
    def count(self) -> int:
        """Steady runs of all launches."""
        return sum(x.count for x in self.launches)

    @property
    def total(self) -> int:
        """Runs recorded in all launches."""
        return sum(x.total for x in self.launches)

    def steady(self, values: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Each launch's values without its warm-up (``values``: one array per launch, in run order)."""
        if len(values) != len(self.launches):
            raise ValueError(f"{len(values)} series for a selection of {len(self.launches)} launches")
        return [np.asarray(v)[x.warmup:] for v, x in zip(values, self.launches)]

    def locate(self, index: int) -> tuple[int, int]:
        """(launch, run index as recorded in that launch) of run ``index`` of the steady runs put together,
        launch after launch; an index past the end names the last recorded run."""
        for k, x in enumerate(self.launches):
            if index < x.count:
                return k, index + x.warmup
            index -= x.count
        return len(self.launches) - 1, self.launches[-1].total - 1

    def to_json(self) -> dict:
        """The report's ``runs_used``: the first steady run (one launch; None for several), the steady and
        recorded counts, and per launch its file, first steady run, recorded and steady counts."""
        return {"first": self.launches[0].warmup if len(self.launches) == 1 else None, "count": self.count,
                "total": self.total,
                "launches": [{"file": x.source, "first": x.warmup, "total": x.total, "count": x.count}
                             for x in self.launches]}


def warmup_count(v: np.ndarray, warmup="auto") -> int:
    """The leading runs of one launch left out as warm-up: detected (``"auto"``, :func:`.latency.detect_warmup`)
    or the number given — never every run (at least one is kept)."""
    return _one(np.asarray(v, dtype=float), warmup)[0]


def _one(v: np.ndarray, warmup) -> tuple[int, dict | None]:
    if warmup == "auto":
        from .latency import detect_warmup

        found = detect_warmup(v)
        return int(found["count"]), found
    if isinstance(warmup, bool) or int(warmup) != warmup or warmup < 0:
        raise ValueError(f"warm-up must be auto or a count ≥ 0, got {warmup!r}")
    return min(int(warmup), max(len(v) - 1, 0)), None


def select_runs(values: Sequence[np.ndarray], warmup="auto", sources: Sequence[str] | None = None) -> RunSelection:
    """The selection of a series of launches (``values``: each launch's latencies in run order): ``warmup``
    ``"auto"`` leaves out each launch's detected warm-up, a number N leaves out its first N runs (at most all
    but one)."""
    launches = []
    for i, v in enumerate(values):
        k, found = _one(np.asarray(v, dtype=float), warmup)
        src = sources[i] if sources is not None and i < len(sources) else f"launch {i}"
        launches.append(LaunchRuns(str(src), len(v), k, found))
    return RunSelection("auto" if warmup == "auto" else str(int(warmup)), tuple(launches))
