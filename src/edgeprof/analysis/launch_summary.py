"""One launch reduced to what a history keeps (pure).

A launch (one process that ran the model N times: one ETDump or timeline CSV) becomes a
:class:`LaunchSummary`: the end-to-end time of each valid run, each run's time on every accounting line of
the breakdown (categories and overheads — they add up to the run's ``Method::execute`` exactly) and on every
operator type, and the executed-kernel evidence of its delegate ops. :func:`launch_metrics` then gives, for
every quantity a history can plot, one value per launch with the sampling variance of its log within the
launch — what :mod:`.history` needs for a launch-aware interval per commit:

* ``median_ms`` / ``p90_ms``: the run quantile, variance from the distribution-free order-statistic
  interval (honest for skewed and bimodal run noise);
* ``mean_ms`` and each line's and operator's mean ms per run: the delta-method variance of the log mean.
  Means, because they add up: a commit's end-to-end change is the sum of its categories' changes, which is
  what attribution ranks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..conventions import ms
from ..model import Profile
from ..taxonomy import DEFAULT, Taxonomy
from .breakdown import LINES, EventLines, per_run_lines, per_run_operators

Z95 = 1.959963984540054


@dataclass
class LaunchSummary:
    """A launch as a history keeps it: per-run arrays in ms (valid runs only, in recorded order)."""

    e2e_ms: np.ndarray
    run_indices: list[int]
    lines_ms: dict[str, np.ndarray]  # accounting line (category or overhead) → ms per run
    ops_ms: dict[str, np.ndarray]  # operator type → ms per run
    op_category: dict[str, str] = field(default_factory=dict)
    op_calls: dict[str, float] = field(default_factory=dict)  # executions per run
    op_backend: dict[str, str] = field(default_factory=dict)
    kernels: list[dict] = field(default_factory=list)  # executed kernel evidence (ETDump op names)
    kernel_facts: dict = field(default_factory=dict)
    latency_source: str = "method_execute"
    placement: list[dict] = field(default_factory=list)  # where each operator ran (the placements table's rows)

    @property
    def n_runs(self) -> int:
        return int(self.e2e_ms.size)


def summarise(profile: Profile, taxonomy: Taxonomy = DEFAULT) -> LaunchSummary:
    """The summary of one launch's valid runs (``profile.valid_runs()`` is taken here)."""
    from .kernels import executed_from_profile

    prof = profile.valid_runs()
    lines = EventLines(prof, taxonomy)
    mat, e2e, runs = per_run_lines(prof, lines)
    lines_ms = {ln: ms(mat[:, j].astype(np.float64)) for j, ln in enumerate(LINES) if mat[:, j].any()}
    ops = {t: ms(v) for t, v in per_run_operators(prof, lines).items()}
    n = max(len(runs), 1)
    run = prof.events["run_index"].to_numpy()
    leaf = lines.leaf & (run >= 0)
    calls = np.bincount(lines.name_ids[leaf], minlength=len(lines.names)) if leaf.any() else np.zeros(len(lines.names))
    backend = prof.events["delegate_backend"].cast(str).fill_null("").to_numpy() if prof.events.height else np.array([])
    op_category: dict[str, str] = {}
    op_calls: dict[str, float] = {}
    op_backend: dict[str, str] = {}
    first: dict[int, int] = {}
    for row in np.flatnonzero(leaf):
        first.setdefault(int(lines.name_ids[row]), int(row))
    for i, (t, c) in enumerate(zip(lines.types, lines.classes)):
        if t in ops:
            op_category.setdefault(t, c.category)
            op_calls[t] = op_calls.get(t, 0.0) + float(calls[i]) / n
            if i in first:
                op_backend.setdefault(t, str(backend[first[i]]) or "portable")
    ev = executed_from_profile(prof, taxonomy)
    kernels = [{k: r.get(k) for k in ("op", "category", "marker", "implies", "calls_per_run", "ms_per_run",
                                        "evidence", "source")} for r in ev["operators"]]
    facts = {k: ev[k] for k in ("sme_executed", "kleidiai_executed", "sme_ms_per_run", "qp8_ms_per_run",
                                "gemm_conv_ms_per_run", "kleidiai_share_of_gemm_conv")}
    return LaunchSummary(ms(e2e.astype(np.float64)), list(runs), lines_ms, ops, op_category, op_calls, op_backend,
                         kernels, facts, prof.latency_source, placement_rows(prof))


def placement_rows(profile: Profile) -> list[dict]:
    """Where each operator of the launch ran, as the history store keeps it (with the placement's fingerprint)."""
    from .placement import from_profile
    from .placement_parts import fingerprint

    placed = from_profile(profile)
    fp = fingerprint(placed)
    return [{"op_index": op.index, "op_key": op.key, "op_name": op.name, "placement": op.placement,
             "accelerated": op.accelerated, "ms_per_run": op.time_ms, "fingerprint": fp} for op in placed.ops]


# --------------------------------------------------------------------------------------------------
# per-launch values with their within-launch variance (log scale)
# --------------------------------------------------------------------------------------------------

def quantile_log_stats(x: np.ndarray, q: float) -> tuple[float, float | None, float | None]:
    """(value, log value, variance of the log value) of the ``q`` quantile of ``x``; the variance from the
    distribution-free order-statistic interval (ranks n·q ∓ z·√(n·q·(1−q))). None where undefined."""
    x = np.sort(np.asarray(x, dtype=float))
    n = x.size
    if n == 0:
        return float("nan"), None, None
    v = float(np.quantile(x, q))
    if v <= 0:
        return v, None, None
    if n < 3:
        var = float(np.var(np.log(x), ddof=1)) if n == 2 and x.min() > 0 else 0.0
        return v, math.log(v), var
    half = Z95 * math.sqrt(n * q * (1 - q))
    lo = x[int(max(0, math.floor(n * q - half) - 1))]
    hi = x[int(min(n - 1, math.ceil(n * q + half)))]
    se = (math.log(hi) - math.log(lo)) / (2 * Z95) if lo > 0 else 0.0
    return v, math.log(v), se * se


def mean_log_stats(x: np.ndarray) -> tuple[float, float | None, float | None]:
    """(mean, log mean, delta-method variance of the log mean) of a per-run quantity."""
    x = np.asarray(x, dtype=float)
    if x.size == 0:
        return float("nan"), None, None
    m = float(x.mean())
    if m <= 0:
        return m, None, None
    var = float(x.var(ddof=1)) / x.size / (m * m) if x.size > 1 else 0.0
    return m, math.log(m), var


def launch_metrics(s: LaunchSummary) -> dict[str, tuple[float, float | None, float | None]]:
    """End-to-end metrics of a launch: name → (ms, log ms, variance of log ms)."""
    return {"median_ms": quantile_log_stats(s.e2e_ms, 0.5), "p90_ms": quantile_log_stats(s.e2e_ms, 0.9),
            "mean_ms": mean_log_stats(s.e2e_ms)}


def launch_record(s: LaunchSummary) -> dict:
    """The summary as the history store's rows (without the launch's identity and labels, which the caller
    adds): ``launch`` (metrics), ``runs``, ``categories``, ``operators``, ``kernels``, ``placements``."""
    launch: dict = {"n_runs": s.n_runs, "latency_source": s.latency_source}
    for name, (v, lg, var) in launch_metrics(s).items():
        stem = name.removesuffix("_ms")
        launch.update({name: v, f"{stem}_log": lg, f"{stem}_log_var": var})
    launch.update(sme_executed=bool(s.kernel_facts.get("sme_executed")),
                  kleidiai_executed=bool(s.kernel_facts.get("kleidiai_executed")),
                  kleidiai_share=s.kernel_facts.get("kleidiai_share_of_gemm_conv"))
    e2e_mean = float(s.e2e_ms.mean()) if s.n_runs else 0.0
    cats = []
    for line, x in s.lines_ms.items():
        m, lg, var = mean_log_stats(x)
        cats.append({"category": line, "mean_ms": m, "mean_log": lg, "mean_log_var": var,
                     "share_pct": 100.0 * m / e2e_mean if e2e_mean > 0 else None})
    ops = []
    for op, x in s.ops_ms.items():
        m, lg, var = mean_log_stats(x)
        ops.append({"operator": op, "category": s.op_category.get(op), "backend": s.op_backend.get(op),
                    "calls_per_run": s.op_calls.get(op), "mean_ms": m, "mean_log": lg, "mean_log_var": var})
    runs = [{"run_index": int(i), "latency_ms": float(v)} for i, v in zip(s.run_indices, s.e2e_ms)]
    return {"launch": launch, "runs": runs, "categories": cats, "operators": ops, "kernels": list(s.kernels),
            "placements": list(s.placement)}
