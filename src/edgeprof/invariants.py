"""What must hold in every edgeprof document, whatever its kind: the invariant walk.

:func:`violations` walks a cleaned JSON document (dicts, lists, numbers, strings) and names every place where it
contradicts itself. The rules are about what an honest report cannot say, and are keyed on the conventions every
document follows (the field names of :mod:`edgeprof.documents`), not on one document's layout:

- ``interval`` — a point lies inside its interval: ``speedup``/``estimate`` with ``ci_low``/``ci_high`` (or a
  ``ci``/``{low, high}`` beside it), ``X`` with ``X_ci``, ``estimate_U`` with ``ci_low_U``/``ci_high_U`` (a unit U).
- ``share`` — a share of latency (``…share``, ``…share_pct``) and both bounds of its interval lie in [0, 100];
  a change of share (``share_change…``) in [-100, 100].
- ``probability`` — ``p_value``, ``q_value`` and every ``…_p_value`` lie in [0, 1].
- ``status`` — a line's status agrees with its point and its interval: ``faster`` needs both above 1,
  ``slower`` both below 1.
- ``description`` — a sentence that quotes a speedup ("… is 55.10x faster …") quotes the estimate beside it.
- ``ratio`` — a speedup beside the per-arm values it is the ratio of (``baseline_typical_ms``,
  ``candidate_typical_ms``) equals their ratio.
- ``placement`` — a placement's partitions are maximal runs (no two neighbours on one placement) that cover its
  operators, its per-placement shares add up to 100, its statement quotes the accelerated share its summary
  states; a placement diff's verdict is ``fallback`` exactly when an operator fell back (or may have), its
  fallback count is the number of moved operators of that kind and its time cost their sum.
- ``memory`` — a peak resident set is never below the resident set it bounds (``peak_rss_bytes`` ≥ ``rss_bytes`` in
  one phase); the parts a measured footprint is split into add up to it.
- ``sentence`` — a bottleneck statement quotes each category's shares as the category table states them, and says
  no category grew only when none did; a tail statement quotes the mean/p90/p99 it names and says that runs got
  slower only beside a tail figure that is slower.

:func:`check` raises on the first few; :func:`edgeprof.render.jsonfmt.dumps` applies it to every document it writes
when ``EDGEPROF_CHECK`` is set (:data:`edgeprof.conventions.CHECK_ENV`), and the test suite sets it.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TypeGuard

POINTS = ("speedup", "estimate")  # the point an interval of the same object belongs to, first found
_QUOTED = re.compile(r"is (\d+(?:\.\d+)?)x (faster|slower) than")
_SHARES = re.compile(r"([A-Za-z_][\w./-]*) (\d+(?:\.\d+)?) % → (\d+(?:\.\d+)?) %")


@dataclass(frozen=True)
class Violation:
    path: str
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path or '(top)'}: {self.rule}: {self.detail}"


def _num(x) -> TypeGuard[float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _close(a: float, b: float) -> float:
    """Slack for figures computed from rounded inputs (CSV shares keep 6 decimals) and ratios of such figures."""
    return 2e-6 + 1e-9 * max(abs(a), abs(b))


def _quotes(text: str, actual: float) -> bool:
    """Whether the number written as ``text`` is ``actual`` shown at the decimals ``text`` has."""
    digits = len(text.split(".")[1]) if "." in text else 0
    return abs(round(actual, digits) - float(text)) <= 10 ** -digits / 2 + 1e-9


def _inside(point, low, high) -> bool:
    return low - _close(point, low) <= point <= high + _close(point, high)


def violations(doc) -> list[Violation]:
    """Every violation in ``doc``, in walk order."""
    out: list[Violation] = []
    _walk(doc, "", out)
    return out


def check(doc, *, what: str = "document") -> None:
    """Raise ``ValueError`` naming the first violations of ``doc`` (at most 5)."""
    found = violations(doc)
    if found:
        kind = doc.get("kind", what) if isinstance(doc, dict) else what
        more = f" (and {len(found) - 5} more)" if len(found) > 5 else ""
        raise ValueError(f"{kind} document breaks its invariants: " + "; ".join(map(str, found[:5])) + more)


def _walk(x, path: str, out: list) -> None:
    if isinstance(x, dict):
        _object(x, path, out)
        for k, v in x.items():
            _walk(v, f"{path}/{k}", out)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            _walk(v, f"{path}/{i}", out)


def _point(d: dict):
    for k in POINTS:
        if _num(d.get(k)):
            return k, d[k]
    return None, None


def _object(d: dict, path: str, out: list) -> None:
    name, point = _point(d)  # the figure the object states, its interval and its status are checked together
    # intervals of the object's point
    bounds = []
    if _num(d.get("ci_low")) and _num(d.get("ci_high")):
        bounds.append(("ci_low/ci_high", d["ci_low"], d["ci_high"]))
    ci = d.get("ci")
    if isinstance(ci, dict) and _num(ci.get("low")) and _num(ci.get("high")):
        bounds.append(("ci", ci["low"], ci["high"]))
    if _num(d.get("low")) and _num(d.get("high")):
        bounds.append(("low/high", d["low"], d["high"]))
    for k in d:  # a unit-suffixed point and interval (history: estimate_ms in [ci_low_ms, ci_high_ms]; …_bytes)
        unit = k[len("ci_low_"):] if k.startswith("ci_low_") else None
        if unit and _num(d[k]) and _num(d.get(f"ci_high_{unit}")):
            lo, hi, est = d[k], d[f"ci_high_{unit}"], d.get(f"estimate_{unit}")
            if lo > hi + _close(lo, hi):
                out.append(Violation(path, "interval", f"{k} [{lo:g}, {hi:g}] is reversed"))
            elif _num(est) and not _inside(est, lo, hi):
                out.append(Violation(path, "interval", f"estimate_{unit} {est:g} lies outside [{lo:g}, {hi:g}]"))
    for label, lo, hi in bounds:
        if lo > hi + _close(lo, hi):
            out.append(Violation(path, "interval", f"{label} [{lo:g}, {hi:g}] is reversed"))
        elif point is not None and not _inside(point, lo, hi):
            out.append(Violation(path, "interval", f"{name} {point:g} lies outside its {label} [{lo:g}, {hi:g}]"))
    for k, v in d.items():
        if k.endswith("_ci") and isinstance(v, list) and len(v) == 2 and all(_num(b) for b in v):
            base = k[:-3]
            lo, hi = v
            if lo > hi + _close(lo, hi):
                out.append(Violation(path, "interval", f"{k} [{lo:g}, {hi:g}] is reversed"))
            elif _num(d.get(base)) and not _inside(d[base], lo, hi):
                out.append(Violation(path, "interval", f"{base} {d[base]:g} lies outside {k} [{lo:g}, {hi:g}]"))
            _share_range(path, k, base, v, out)
        elif _num(v):
            _share_range(path, k, k, [v], out)
            if (k in ("p_value", "q_value") or k.endswith("_p_value")) and not -1e-12 <= v <= 1 + 1e-12:
                out.append(Violation(path, "probability", f"{k} {v:g} is not in [0, 1]"))
    _status(d, path, name, point, bounds, out)
    if name == "speedup" and _num(d.get("baseline_typical_ms")) and _num(d.get("candidate_typical_ms")) \
            and d["candidate_typical_ms"] > 0:
        ratio = d["baseline_typical_ms"] / d["candidate_typical_ms"]
        if abs(ratio - point) > 1e-9 * max(abs(ratio), abs(point)) + _close(ratio, point):
            out.append(Violation(path, "ratio", f"speedup {point:g} is not the ratio of the typical values beside it "
                                                f"({d['baseline_typical_ms']:g} / {d['candidate_typical_ms']:g} = {ratio:g})"))
    desc = d.get("description")
    if isinstance(desc, str) and point is not None and name == "estimate":
        m = _QUOTED.search(desc)
        if m:
            shown = point if m.group(2) == "faster" else 1 / point if point else math.inf
            if not _quotes(m.group(1), shown):
                out.append(Violation(path, "description", f"{desc!r} quotes {m.group(1)}, the estimate is {shown:g}"))
    if isinstance(d.get("categories"), list) and isinstance(d.get("bottleneck"), dict):
        _bottleneck(d, path, out)
    if isinstance(d.get("tail_regression"), str) and isinstance(d.get("metrics"), dict):
        _tail(d, path, out)
    if isinstance(d.get("partitions"), list) and isinstance(d.get("operators"), list):
        _placement(d, path, out)
    if _num(d.get("peak_rss_bytes")) and _num(d.get("rss_bytes")) and d["peak_rss_bytes"] < d["rss_bytes"]:
        out.append(Violation(path, "memory", f"peak_rss_bytes {d['peak_rss_bytes']:g} is below rss_bytes "
                                             f"{d['rss_bytes']:g}"))
    if _num(d.get("footprint_bytes")) and isinstance(d.get("parts"), list):
        got = sum(p["bytes"] for p in d["parts"] if isinstance(p, dict) and p.get("part") != "runtime"
                  and _num(p.get("bytes")))
        if got != d["footprint_bytes"]:
            out.append(Violation(path, "memory", f"the parts add up to {got:g}, the footprint is "
                                                 f"{d['footprint_bytes']:g}"))
    if isinstance(d.get("moved"), list) and "suspected_fallbacks" in d:
        _placement_diff(d, path, out)


def _placement(d: dict, path: str, out: list) -> None:
    parts, ops = d["partitions"], d["operators"]
    if sum(p.get("ops", 0) for p in parts) != len(ops):
        out.append(Violation(f"{path}/partitions", "placement", "the partitions do not cover the operators"))
    for x, y in itertools.pairwise(parts):
        if x.get("placement") == y.get("placement"):
            out.append(Violation(f"{path}/partitions", "placement",
                                 f"partitions {x.get('index')} and {y.get('index')} are one placement side by side"))
    for f in ("time_share_pct", "flops_share_pct", "plan_weight_share_pct"):
        vals = [r[f] for r in d.get("placements") or [] if _num(r.get(f))]
        if vals and abs(sum(vals) - 100) > 1e-6:
            out.append(Violation(f"{path}/placements", "placement", f"{f} adds up to {sum(vals):g}, not 100"))
    said = re.search(r"(\d+(?:\.\d+)?) % of operator time", str(d.get("statement", "")))
    share = (d.get("summary") or {}).get("accelerated_time_share_pct")
    if said and _num(share) and not _quotes(said.group(1), share):
        out.append(Violation(f"{path}/statement", "sentence",
                             f"quotes {said.group(1)} % of operator time, the summary states {share:g}"))


def _placement_diff(d: dict, path: str, out: list) -> None:
    moved = [m for m in d["moved"] if isinstance(m, dict)]
    n = sum(1 for m in moved if m.get("kind") == "fallback")
    if d.get("fallbacks") != n:
        out.append(Violation(path, "placement", f"fallbacks {d.get('fallbacks')} beside {n} moved as fallbacks"))
    if (d.get("verdict") == "fallback") != bool(n or d.get("suspected_fallbacks")):
        out.append(Violation(path, "placement", f"verdict {d.get('verdict')} beside {n} fallback(s)"))
    costs = [m["cost_ms"] for m in moved if _num(m.get("cost_ms"))]
    if costs and _num(d.get("moved_cost_ms")) and abs(sum(costs) - d["moved_cost_ms"]) > _close(sum(costs), d["moved_cost_ms"]):
        out.append(Violation(path, "placement", f"moved_cost_ms {d['moved_cost_ms']:g} is not the sum {sum(costs):g}"))


def _tail(d: dict, path: str, out: list) -> None:
    """A sentence saying runs got slower needs a tail figure that is slower."""
    text = d["tail_regression"]
    slower = [m for m in ("mean", "p90", "p99") if (d["metrics"].get(m) or {}).get("verdict") == "slower"]
    if "got much slower" in text and not slower:
        out.append(Violation(f"{path}/tail_regression", "sentence",
                             f"{text[:60]!r}… says runs got slower, no mean, p90 or p99 is slower"))
    for m in ("mean", "p90", "p99"):
        t = d["metrics"].get(m) or {}
        if f"{m} " in text and _num(t.get("speedup")):
            said = re.search(rf"\b{m} ([0-9.]+)× (faster|slower)", text)
            if said:
                shown = t["speedup"] if said.group(2) == "faster" else 1 / t["speedup"]
                if not _quotes(said.group(1), shown) or (said.group(2) == "faster") != (t["speedup"] >= 1):
                    out.append(Violation(f"{path}/tail_regression", "sentence",
                                         f"{text[:60]!r}… quotes {m} {said.group(1)}× {said.group(2)}, "
                                         f"the metric is {t['speedup']:g}"))


def _share_range(path: str, key: str, base: str, values: list, out: list) -> None:
    if base.startswith("share_change") or base.endswith("share_change"):
        lo_ok, hi_ok = -100.0, 100.0
    elif base.endswith(("share", "share_pct", "share_percent")):
        lo_ok, hi_ok = 0.0, 100.0
    else:
        return
    for v in values:
        if not lo_ok - 1e-6 <= v <= hi_ok + 1e-6:
            out.append(Violation(path, "share", f"{key} {v:g} is not in [{lo_ok:g}, {hi_ok:g}]"))
            return


def _status(d: dict, path: str, name, point, bounds: list, out: list) -> None:
    status = d.get("status")
    if status not in ("faster", "slower") or name != "speedup" or point is None:
        return
    above = status == "faster"
    if (point <= 1) if above else (point >= 1):
        out.append(Violation(path, "status", f"status {status} beside speedup {point:g}"))
    for label, lo, hi in bounds:
        if (lo <= 1) if above else (hi >= 1):
            out.append(Violation(path, "status", f"status {status} beside its {label} [{lo:g}, {hi:g}]"))


def _bottleneck(d: dict, path: str, out: list) -> None:
    statement = d["bottleneck"].get("statement")
    if not isinstance(statement, str):
        return
    shares = {c.get("line"): (c.get("baseline_share"), c.get("candidate_share"))
              for c in d["categories"] if isinstance(c, dict)}
    for m in _SHARES.finditer(statement):
        cat = m.group(1)
        if cat not in shares:
            continue
        for text, actual in zip((m.group(2), m.group(3)), shares[cat]):
            if _num(actual) and not _quotes(text, actual):
                out.append(Violation(f"{path}/bottleneck", "sentence",
                                     f"{statement!r} quotes {cat} {text} %, the table {actual:g} %"))
    grown = [c for c in d["categories"] if isinstance(c, dict) and _num(c.get("baseline_share"))
             and _num(c.get("candidate_share")) and c.get("kind", "category") == "category"]
    material = d["bottleneck"].get("material_share_pct")
    points = d["bottleneck"].get("threshold_percentage_points")
    if statement.startswith("no bottleneck shift") and _num(material) and _num(points):
        for c in grown:
            if (c["candidate_share"] >= material and c["candidate_share"] - c["baseline_share"] >= points
                    and c.get("line") != d["bottleneck"].get("largest_baseline")
                    and f"{c.get('line')} " not in statement):
                out.append(Violation(f"{path}/bottleneck", "sentence",
                                     f"{statement[:60]!r}… says no category grew to a material share, "
                                     f"{c.get('line')} went {c['baseline_share']:.1f} % → {c['candidate_share']:.1f} %"))
