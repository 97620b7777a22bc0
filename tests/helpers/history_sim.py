"""A generated commit history built from real profiles, with steps of known size at known commits.

Each device's launches are made from one real fixture ETDump: its runs resampled (their real run-to-run
noise, categories and operators moving together as recorded), times multiplied by a launch effect drawn with
the launch-to-launch SD measured in the real multi-launch recordings (``tests/data/multilaunch``), and by the
steps in force at that commit — on every line (a whole-model change) or on one category only (its lines and
its operators). End-to-end = the sum of the lines, as in a real profile. Used by the history tests and
``bench/bench_history.py``.
"""

from __future__ import annotations

import dataclasses
import gzip
import io
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import itertools

DATA = Path(__file__).resolve().parents[1] / "data"
DEVICES = {"board-a": "mobilenet_v3_small_xnnq8.N200.etdp.gz", "board-b": "mobilenet_v3_small_xnn.N20.etdp.gz"}
LAUNCH_SD_PROGRAMS = {"board-a": "tel_xnnq8", "board-b": "toycnn_xnn"}


def real_launch_sd(program: str) -> float:
    """SD of log launch medians of a program over its 12 real launches."""
    import polars as pl

    df = pl.read_csv(io.BytesIO(gzip.decompress((DATA / "multilaunch" / "fixture_programs_12x60.csv.gz").read_bytes())))
    med = df.filter(pl.col("program") == program).group_by("launch").agg(pl.col("latency_ms").median())
    return float(np.std(np.log(med["latency_ms"].to_numpy()), ddof=1))


def base_summary(name: str):
    from edgeprof.analysis.launch_summary import summarise
    from edgeprof.io.etdump_read import read_etdump

    raw = gzip.decompress((DATA / "etdump" / name).read_bytes())
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / name.removesuffix(".gz")
        p.write_bytes(raw)
        return summarise(read_etdump(p))


@dataclasses.dataclass
class Step:
    device: str
    index: int  # first commit with the new level
    effect: float  # relative change of end-to-end mean (+0.08 = 8 % slower)
    category: str | None  # None: every line; else only this category (and its operators)
    factor: float = 1.0  # multiplier applied to the lines it touches


def plan_steps(rng, n_commits: int, devices, bases: dict, per_device: int = 8, min_gap: int = 25) -> list[Step]:
    steps = []
    effects = [0.04, -0.05, 0.06, 0.08, -0.10, 0.12, 0.05, -0.06, 0.15, 0.07]
    for dev in devices:
        base = bases[dev]
        e2e = float(base.e2e_ms.mean())
        shares = {k: float(v.mean()) / e2e for k, v in base.lines_ms.items()}
        big = [k for k, s in sorted(shares.items(), key=lambda kv: -kv[1]) if s >= 0.15 and k.isupper()][:2]
        slot = (n_commits - 32) / per_device  # one step per slot, jittered: gaps of at least slot − 8 commits
        pos = [int(20 + slot * (j + 0.5) + rng.integers(-4, 5)) for j in range(per_device)]
        assert min(b - a for a, b in itertools.pairwise(pos)) >= min(min_gap, slot - 8)
        for j, c in enumerate(pos):
            eff = effects[int(rng.integers(len(effects)))]
            cat = big[j % len(big)] if (j % 3 == 1 and big) else None
            factor = 1 + eff / shares[cat] if cat else 1 + eff
            steps.append(Step(dev, c, eff, cat, factor))
    return steps


def generate(n_commits: int = 300, *, launches: int = 1, runs: int = 60, seed: int = 0, per_device: int = 8):
    """([(identity, LaunchSummary)], [Step], launch SD per device): ``n_commits`` commits × 2 devices."""
    from edgeprof.analysis.launch_summary import LaunchSummary

    rng = np.random.default_rng(seed)
    bases = {d: base_summary(f) for d, f in DEVICES.items()}
    sds = {d: real_launch_sd(p) for d, p in LAUNCH_SD_PROGRAMS.items()}
    steps = plan_steps(rng, n_commits, list(DEVICES), bases, per_device=per_device)
    t0 = datetime(2026, 1, 1)
    out = []
    for dev, base in bases.items():
        lines = list(base.lines_ms)
        mat = np.stack([base.lines_ms[k] for k in lines], axis=1)  # runs × lines
        ops = list(base.ops_ms)
        opm = np.stack([base.ops_ms[k] for k in ops], axis=1)
        for c in range(n_commits):
            line_f = np.ones(len(lines))
            op_f = np.ones(len(ops))
            for s in steps:
                if s.device != dev or c < s.index:
                    continue
                if s.category is None:
                    line_f *= s.factor
                    op_f *= s.factor
                else:
                    line_f[[i for i, k in enumerate(lines) if k == s.category]] *= s.factor
                    op_f[[i for i, k in enumerate(ops) if base.op_category.get(k) == s.category]] *= s.factor
            for k in range(launches):
                idx = rng.integers(0, mat.shape[0], size=runs)
                u = float(np.exp(rng.normal(0.0, sds[dev])))
                lm = mat[idx] * line_f * u
                om = opm[idx] * op_f * u
                summ = LaunchSummary(lm.sum(axis=1), list(range(runs)), {ln: lm[:, i] for i, ln in enumerate(lines)},
                                     {o: om[:, i] for i, o in enumerate(ops)}, dict(base.op_category),
                                     dict(base.op_calls), dict(base.op_backend), list(base.kernels), dict(base.kernel_facts))
                t = t0 + timedelta(hours=c, minutes=k)
                ident = {"launch_id": f"{dev}-{c:05d}-{k}-{seed}", "model": "mobilenet_v3_small", "device": dev,
                         "date": t.date().isoformat(), "time": t, "experiment": "xnnpack", "platform": "sim",
                         "fingerprint": None, "threads": 1, "commit": f"c{c:05d}", "branch": "main", "labels": "{}",
                         "source": f"sim:{dev}:{c}:{k}", "source_kind": "generated", "edgeprof_version": "sim",
                         "ingested_at": t}
                out.append((ident, summ))
    return out, steps, sds


def store_rows(items, taxonomy_version: str = "sim"):
    from edgeprof.analysis.launch_summary import launch_record

    recs = []
    for ident, summ in items:
        rec = launch_record(summ)
        rec["launch"]["taxonomy_version"] = taxonomy_version
        recs.append((ident, rec))
    return recs


def score(series: list[dict], steps: list[Step], tolerance: int = 2) -> dict:
    """Detection precision/recall — a confirmed change matches a true step of the same device and direction
    within ``tolerance`` commits (each step matched once) — recall per step size, and attribution accuracy:
    of the matched steps confined to one category, how many have that category ranked first."""
    detected = matched = 0
    hit: set[int] = set()
    attr_ok = attr_n = 0
    by_size: dict[float, list[int]] = {}
    for s in series:
        truth = [(i, st) for i, st in enumerate(steps) if st.device == s["device"]]
        for ch in s["changes"]:
            if ch["status"] != "confirmed":
                continue
            detected += 1
            near = [(i, st) for i, st in truth if i not in hit and abs(ch["index"] - st.index) <= tolerance
                    and (ch["direction"] == "regression") == (st.effect > 0)]
            if not near:
                continue
            matched += 1
            i, st = min(near, key=lambda x: abs(ch["index"] - x[1].index))
            hit.add(i)
            if st.category is not None:
                attr_n += 1
                cats = ch["attribution"]["categories"]
                attr_ok += bool(cats and cats[0]["name"] == st.category)
    for i, st in enumerate(steps):
        b = by_size.setdefault(abs(st.effect), [0, 0])
        b[0] += 1
        b[1] += i in hit
    return {"detected": detected, "true_positive": matched, "steps": len(steps), "found": len(hit),
            "precision": matched / detected if detected else 1.0, "recall": len(hit) / len(steps) if steps else 1.0,
            "attribution_accuracy": attr_ok / attr_n if attr_n else None, "attribution_cases": attr_n,
            "attribution_ok": attr_ok, "by_size": by_size}


def tally(series: list[dict], steps: list[Step], total: dict | None = None) -> dict:
    """Counts to add up over seeds (into ``total`` when given): changes detected, true positives within ±2 and
    ±5 commits, steps found (±5), attribution cases and hits, and per step size [steps, found]."""
    s2, s5 = score(series, steps, 2), score(series, steps, 5)
    t = total if total is not None else {}
    for key, v in (("detected", s5["detected"]), ("tp2", s2["true_positive"]), ("tp5", s5["true_positive"]),
                   ("found", s5["found"]), ("steps", s5["steps"]), ("attr_n", s5["attribution_cases"]),
                   ("attr_ok", s5["attribution_ok"])):
        t[key] = t.get(key, 0) + v
    by = t.setdefault("by_size", {})
    for size, (n, k) in s5["by_size"].items():
        b = by.setdefault(size, [0, 0])
        b[0] += n
        b[1] += k
    return t
