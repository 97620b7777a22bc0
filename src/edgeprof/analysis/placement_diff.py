"""Two placements diffed (pure): the operators that moved — a *fallback* when one leaves an accelerator placement,
a *promotion* when one reaches it — partitions split or merged, the moved operators' time, a verdict and the gates
(``placement --diff``, ``compare``); and the commits of a history series where the placement changed."""

from __future__ import annotations

from typing import Any

from ..placement_model import INFERRED, UNKNOWN, Placement
from ..runtimes import runtime
from .placement_parts import fingerprint, partitions

# two builds
# --------------------------------------------------------------------------------------------------


def diff(a: Placement, b: Placement) -> dict:
    """Baseline ``a`` against candidate ``b``: every paired operator whose placement changed (``moved``: a
    ``fallback`` when it leaves an accelerator placement, ``promotion`` when it reaches one from the CPU kernels,
    ``transfer`` between two accelerators — a fallback too: it left its accelerator), operators only in one build,
    partitions that split or merged, the time the moved operators cost (their candidate time minus their baseline
    time, where both are measured) and a verdict: ``same_placement``, ``fallback``, ``new_partition``,
    ``promotion``, ``changed``."""
    ka = {op.key: op for op in a.ops}
    kb = {op.key: op for op in b.ops}
    moved: list[dict[str, Any]] = []
    for op in a.ops:
        o2 = kb.get(op.key)
        if o2 is None or o2.placement == op.placement or UNKNOWN in (op.placement, o2.placement):
            continue
        kind = "fallback" if op.accelerated else ("promotion" if o2.accelerated else "transfer")
        if op.accelerated and o2.accelerated:
            kind = "fallback"  # left its accelerator for another one (ANE → GPU)
        cost = o2.time_ms - op.time_ms if op.time_ms is not None and o2.time_ms is not None else None
        moved.append({"key": op.key, "name": op.name, "candidate_name": o2.name, "op": op.op, "family": op.family,
                      "from": op.placement, "to": o2.placement, "kind": kind, "baseline_ms": op.time_ms,
                      "candidate_ms": o2.time_ms, "cost_ms": cost, "index": op.index, "candidate_index": o2.index})
    only_a: list[dict] = [{"key": op.key, "name": op.name, "op": op.op, "placement": op.placement, "time_ms": op.time_ms}
                          for op in a.ops if op.key not in kb]
    only_b: list[dict] = [{"key": op.key, "name": op.name, "op": op.op, "placement": op.placement, "time_ms": op.time_ms}
                          for op in b.ops if op.key not in ka]
    pa, pb = partitions(a), partitions(b)
    split, merged = _partition_changes(pa, pb)
    fallbacks = [m for m in moved if m["kind"] == "fallback"]
    # candidate CPU operators that pair with nothing while the baseline ran an accelerator partition whose contents
    # it does not list: they may have run inside it (an ONNX Runtime profile without its model)
    opaque = sorted({op.placement for op in a.ops if op.family == "partition"})
    suspected = [r["key"] for r in only_b if opaque and not kb[r["key"]].accelerated
                 and r["placement"] != UNKNOWN and not r["key"].startswith("runtime:")]
    warnings = []
    if _bases(a) != _bases(b):
        warnings.append(f"the two inputs are different kinds of evidence ({a.evidence} and {b.evidence}): "
                        "operators are paired by family and occurrence, and one side may list operators the other "
                        "does not (layout conversions a runtime inserts)")
    costs = [m["cost_ms"] for m in moved if m["cost_ms"] is not None]
    acc_a = sum(1 for p in pa if p["accelerated"])
    acc_b = sum(1 for p in pb if p["accelerated"])
    host_b_new = [p for p in pb if not p["accelerated"] and p["placement"] != UNKNOWN
                  and not any(k in ka and not ka[k].accelerated for k in p["op_keys"])]
    new_partition = len(pb) > len(pa) or bool(split)
    if fallbacks or suspected:
        verdict = "fallback"
    elif new_partition:
        verdict = "new_partition"
    elif moved:
        verdict = "promotion" if all(m["kind"] == "promotion" for m in moved) else "changed"
    elif only_a or only_b:
        verdict = "changed"
    else:
        verdict = "same_placement"
    out = {
        "baseline": a.source, "candidate": b.source, "runtime": b.runtime, "baseline_runtime": a.runtime,
        "baseline_fingerprint": fingerprint(a), "candidate_fingerprint": fingerprint(b),
        "moved": moved, "only_baseline": only_a, "only_candidate": only_b,
        "partitions": {"baseline": len(pa), "candidate": len(pb), "baseline_accelerated": acc_a,
                       "candidate_accelerated": acc_b, "split": split, "merged": merged,
                       "new_host_partitions": [{"index": p["index"], "placement": p["placement"], "ops": p["ops"],
                                                "op_keys": p["op_keys"][:20], "time_ms": p["time_ms"]}
                                               for p in host_b_new]},
        "fallbacks": len(fallbacks), "suspected_fallbacks": suspected, "opaque_baseline_partitions": opaque,
        "baseline_evidence": a.evidence, "candidate_evidence": b.evidence, "warnings": warnings,
        "promotions": sum(m["kind"] == "promotion" for m in moved),
        "moved_cost_ms": sum(costs) if costs else None, "moved_cost_known": len(costs) == len(moved),
        "run_ms": {"baseline": a.run_ms, "candidate": b.run_ms},
        "verdict": verdict,
        "fallback_means": runtime(b.runtime).fallback_means,
    }
    out["statements"] = diff_statements(out)
    return out


def _bases(p: Placement) -> set[str]:
    """How a placement's operators are known (measured, static, planned), inferred ones aside."""
    return {op.basis for op in p.ops if op.basis != INFERRED} or {INFERRED}


def _partition_changes(pa: list[dict], pb: list[dict]) -> tuple[list[dict], list[dict]]:
    """Partitions of the baseline whose operators the candidate spreads over several partitions (split), and
    candidate partitions that hold operators of several baseline partitions (merged); by operator keys."""
    where_b = {k: p["index"] for p in pb for k in p["op_keys"]}
    where_a = {k: p["index"] for p in pa for k in p["op_keys"]}
    split, merged = [], []
    for p in pa:
        into = sorted({where_b[k] for k in p["op_keys"] if k in where_b})
        if len(into) > 1:
            split.append({"baseline_partition": p["index"], "placement": p["placement"], "into": into})
    for p in pb:
        frm = sorted({where_a[k] for k in p["op_keys"] if k in where_a})
        if len(frm) > 1:
            merged.append({"candidate_partition": p["index"], "placement": p["placement"], "from": frm})
    return split, merged


def gate(d: dict, fail_on: str) -> str | None:
    """Why ``--fail-on fallback`` / ``new-partition`` fails on diff ``d``, or None when it passes."""
    if fail_on == "fallback" and d["fallbacks"]:
        first = next(m for m in d["moved"] if m["kind"] == "fallback")
        return (f"{d['fallbacks']} operator(s) fell back; first: {first['name']} ({first['key']}) "
                f"{first['from']} → {first['to']}")
    if fail_on == "fallback" and d["suspected_fallbacks"]:
        return (f"{len(d['suspected_fallbacks'])} CPU operator(s) appear that the baseline may have run inside "
                f"{', '.join(d['opaque_baseline_partitions'])}; first: {d['suspected_fallbacks'][0]}")
    if fail_on == "new-partition":
        p = d["partitions"]
        if p["candidate"] > p["baseline"] or p["split"]:
            return (f"partitions {p['baseline']} → {p['candidate']}"
                    + (f"; baseline partition {p['split'][0]['baseline_partition']} split into "
                       f"{len(p['split'][0]['into'])}" if p["split"] else ""))
    return None


def _fmt(v: float | None) -> str:
    return "not measured" if v is None else f"{v:+.3f} ms"


def diff_statements(d: dict) -> list[str]:
    """The diff in sentences, each from the diff's own fields."""
    out = []
    moved = d["moved"]
    if not moved and not d["only_baseline"] and not d["only_candidate"]:
        out.append(f"Same placement: every operator runs where it ran (fingerprint {d['candidate_fingerprint']}).")
    for m in moved:
        also = "" if m["name"] == m["key"] else f" ({m['key']})"
        out.append(f"{m['kind']}: {m['name']}{also} {m['from']} → {m['to']}; time {_fmt(m['cost_ms'])}.")
    p = d["partitions"]
    if p["baseline"] != p["candidate"] or p["split"] or p["merged"]:
        out.append(f"Partitions {p['baseline']} → {p['candidate']} ({p['baseline_accelerated']} → "
                   f"{p['candidate_accelerated']} accelerated); {len(p['split'])} split, {len(p['merged'])} merged.")
    if d["suspected_fallbacks"]:
        out.append(f"{len(d['suspected_fallbacks'])} CPU operator(s) of the candidate pair with nothing while the "
                   f"baseline ran {', '.join(d['opaque_baseline_partitions'])} as a whole: they may have fallen back "
                   "(give the ONNX model, --model, to place every node).")
    if d["only_baseline"] or d["only_candidate"]:
        out.append(f"{len(d['only_baseline'])} operator(s) only in the baseline, {len(d['only_candidate'])} only in "
                   "the candidate (the builds' graphs differ there).")
    if moved:
        out.append(f"Moved operators' time: {_fmt(d['moved_cost_ms'])}"
                   + ("" if d["moved_cost_known"] else " (only where both builds time them)") + f"; verdict {d['verdict']}.")
    else:
        out.append(f"Verdict {d['verdict']}.")
    return out


# --------------------------------------------------------------------------------------------------
# a series of commits (the history store)
# --------------------------------------------------------------------------------------------------

def placement_changes(order: list[str], times: dict, by_commit: dict[str, list[list[dict]]]) -> list[dict]:
    """Where a series' placement changed: ``order`` — its commits in time order; ``by_commit`` — per commit the
    placements rows of its launches (``op_key``, ``op_name``, ``placement``, ``accelerated``, ``ms_per_run``,
    ``fingerprint``, ``launch_id``), the first launch's standing for the commit. One entry per commit whose
    fingerprint differs from the commit before (that had one): the operators that moved, each a fallback or a
    promotion, with their time per run after the change."""
    out = []
    prev_k, prev = None, None
    for k in order:
        launches = by_commit.get(k)
        if not launches:
            continue
        first = launches[0]
        if prev is not None and first[0]["fingerprint"] != prev[0]["fingerprint"]:
            before = {r["op_key"]: r for r in prev}
            after = {r["op_key"] for r in first}
            moved = []
            for r in first:
                b = before.get(r["op_key"])
                if b is None or b["placement"] == r["placement"]:
                    continue
                kind = "fallback" if b["accelerated"] else ("promotion" if r["accelerated"] else "transfer")
                moved.append({"key": r["op_key"], "name": r["op_name"], "from": b["placement"], "to": r["placement"],
                              "kind": kind, "ms_per_run_before": b["ms_per_run"], "ms_per_run": r["ms_per_run"]})
            falls = [m for m in moved if m["kind"] == "fallback"]
            appeared = [r["op_key"] for r in first if r["op_key"] not in before]
            gone = [key for key in before if key not in after]
            what = "; ".join(f"{m['name']} ({m['key']}) {m['from']} → {m['to']}"
                             + ("" if m["ms_per_run"] is None else f", {m['ms_per_run']:.4g} ms per run")
                             for m in moved[:4]) + (" …" if len(moved) > 4 else "")
            head = ("fallback" if falls else "placement change") + f" at {k} (after {prev_k})"
            statement = f"{head}: {what}" if moved else f"{head}: {len(appeared)} operator(s) appeared, {len(gone)} gone"
            out.append({"commit_before": prev_k, "commit_after": k, "time_after": times.get(k),
                        "fingerprint_before": prev[0]["fingerprint"], "fingerprint_after": first[0]["fingerprint"],
                        "moved": moved, "fallbacks": len(falls), "appeared": appeared, "disappeared": gone,
                        "launches_disagree": len({lr[0]["fingerprint"] for lr in launches if lr}) > 1,
                        "statement": statement})
        prev_k, prev = k, first
    return out
