"""What a report says: the per-run lanes of one inference, and the findings — the profiling workflow's
interpretation rules, each stated only when its condition holds and each naming its evidence (the labels
of :mod:`edgeprof.conventions`; ``a+b`` when a finding sets two sources against each other).
"""

from __future__ import annotations

from typing import cast

import numpy as np
import polars as pl

from ..conventions import evidence_name, ms, fmt_ms
from ..runtimes import HOST_BACKEND, vocabulary
from ..model import Profile
from ..taxonomy import OTHER

OTHER_DOMINATES_PCT = 25.0
PORTABLE_SHARE_PCT = 10.0


def representative_run(values_ms: list[float], skip: int = 0) -> int:
    """The run whose latency is the median of the steady runs (warm-up left out): the one to draw."""
    v = np.asarray(values_ms[skip:], dtype=float)
    if v.size == 0:
        return 0
    return int(skip + np.argsort(v)[(v.size - 1) // 2])


def run_lanes(profile: Profile, run_index: int) -> list[dict]:
    """One inference as lanes: ``portable`` (OPERATOR_CALLs, named by their kernel), ``delegated``
    (DELEGATE_CALLs, named by backend) and ``delegate ops`` (the backend's per-op events), times in ms from
    the run's start."""
    from ..taxonomy import DEFAULT

    ev = profile.run(run_index)
    if ev.height == 0:
        return []
    ev = ev.with_row_index("_r")
    t0 = int(cast(int, ev["start_ns"].min()))  # an integer column with rows
    kinds = ev["kind"].cast(pl.String).to_list()
    names = ev["name"].cast(pl.String).to_list()
    parent = ev["parent"].to_list()
    row_of = {int(r): i for i, r in enumerate(profile.events.with_row_index("_g").filter(
        pl.col("run_index") == run_index)["_g"].to_list())}
    child_kernel: dict[int, str] = {}
    for i, k in enumerate(kinds):
        p = parent[i]
        if k == "kernel" and p is not None and p in row_of:
            child_kernel.setdefault(row_of[p], names[i])
    out = []
    starts, durs = ev["start_ns"].to_list(), ev["duration_ns"].to_list()
    backends = ev["delegate_backend"].cast(pl.String).to_list()
    for i, k in enumerate(kinds):
        if durs[i] is None:
            continue
        if k == "operator_call":
            name = child_kernel.get(i, names[i])
            lane = HOST_BACKEND
        elif k == "delegate_call":
            name, lane = backends[i] or "delegate", "delegated"
        elif k == "delegate_op":
            name, lane = names[i], "delegate ops"
        else:
            continue
        out.append({"lane": lane, "start_ms": ms(int(starts[i]) - t0), "dur_ms": ms(int(durs[i])), "name": name,
                    "category": DEFAULT.classify(name).category})
    return out


def _arm(report: dict, role: str) -> dict | None:
    return next((c for c in report["configs"] if c.get("role") == role), None)


def findings(report: dict) -> list[dict]:
    """The interpretation rules, in the order a reader needs them."""
    out: list[dict] = []

    def add(rule, severity, text, evidence, items=None):
        out.append({"rule": rule, "severity": severity, "text": text, "evidence": evidence,
                    "evidence_name": evidence_name(evidence), "items": list(items or [])})

    cmp = report.get("comparison")
    lat_ev = report.get("latency_evidence", "etdump")
    if cmp:
        b, c = cmp["baseline"]["name"], cmp["candidate"]["name"]
        verdict = cmp["verdict"]
        add("e2e_verdict", {"faster": "good", "slower": "high", "equivalent": "info"}.get(verdict, "medium"),
            cmp["summary_line"], lat_ev)
        if verdict == "slower":
            add("candidate_slower", "high", f"{c} is slower than {b}: check before concluding", lat_ev,
                _slower_checklist(report, cmp))
        elif verdict == "inconclusive":
            mde = cmp.get("minimum_detectable_effect")
            plan = (cmp.get("plan") or {}).get("statement")
            add("inconclusive", "medium", f"not enough evidence to call {c} faster or slower than {b}"
                + (f": with this noise only a change of about {100 * mde:.0f} % would be detected" if mde else "")
                + (f"; {plan}" if plan else "; record more runs, or several launches per configuration"), lat_ev)
        elif verdict == "not_comparable":
            comp = cmp.get("comparability") or {}
            add("not_comparable", "high", f"{c} vs {b}: {comp.get('statement', 'not comparable')}", "manifest",
                [f"{r['aspect']}: {', '.join(r['baseline'])} vs {', '.join(r['candidate'])}"
                 for r in comp.get("rows", []) if r["critical"]])
        bc = cmp.get("by_category") or {}
        shift = bc.get("bottleneck") or {}
        if shift.get("shift"):
            add("bottleneck_shift", "info", shift["statement"], lat_ev)
    for cfg in report["configs"]:
        bd = cfg.get("breakdown")
        if not bd:
            continue
        cats = {x["line"]: x for x in bd["categories"] if x["kind"] == "category"}
        other = cats.get(OTHER)
        largest = max(cats.values(), key=lambda x: x["avg_ms"], default=None)
        if other and (other["pct_of_e2e"] >= OTHER_DOMINATES_PCT or (largest and largest["line"] == OTHER)):
            tops = [f"{o['operator']} ({fmt_ms(o['avg_ms'], 3)} ms, {o['pct_of_e2e']:.1f} %)" for o in bd["other_top"][:5]]
            add("other_dominates", "medium", f"{cfg['name']}: OTHER takes {other['pct_of_e2e']:.0f} % of the run — look "
                "at these ops (or extend the taxonomy) before recommending backend work", cfg["evidence"], tops)
        leaf = bd["backends"]["leaf_time"]
        portable = leaf.get(HOST_BACKEND, {}).get("pct_of_e2e", 0.0)
        delegated = any(k != HOST_BACKEND for k in leaf)
        if delegated and portable >= PORTABLE_SHARE_PCT:
            w = vocabulary(bd.get("runtime"))
            add("portable_hotspots", "medium", f"{cfg['name']}: {portable:.0f} % of the time is still on {w['host']} "
                f"kernels across {bd['graph_breaks']['portable_islands']} {w['host']} island(s) — candidates to hand "
                f"to a {w['accelerated']}",
                cfg["evidence"], [f"{o['operator']} {fmt_ms(o['avg_ms'], 3)} ms" for o in bd["portable_hotspots"][:5]])
        lat = cfg.get("latency") or {}
        if (lat.get("warmup") or {}).get("count"):
            w = lat["warmup"]
            first = "the first run is" if w["count"] == 1 else f"the first {w['count']} runs are"
            add("warmup", "info", f"{cfg['name']}: {first} warm-up ({fmt_ms(w.get('warmup_median_ms', 0), 3)} ms vs "
                f"{fmt_ms(w.get('steady_median_ms', 0), 3)} ms steady); comparisons leave warm-up runs out", cfg["evidence"])
        d = (lat.get("drift") or {})
        if d.get("significant"):
            add("drift", "medium", f"{cfg['name']}: latency drifts {d.get('slope_percent_per_100_runs', 0):+.1f} % per 100 "
                "runs (thermal throttling or background load?)", cfg["evidence"])
    k = report.get("kernels") or {}
    for log in k.get("logs", []):
        if log["role"] == "on" and not log["summary"]["sme2_gemm_kernels"]:
            add("no_sme2_kernels", "high", f"{log['path']}: the SME2-on trace registers no SME2 GEMM/IGEMM kernel — verify "
                "device support (FEAT_SME2), the runner variant (the SME2-on build), that the ops are delegated to "
                "XNNPACK, and the XNNPACK/KleidiAI build flags (XNNPACK_ENABLE_ARM_SME2, KleidiAI on)", "xnntrace",
                log["summary"]["other_gemm_kernels"][:8])
        elif log["role"] == "off" and log["summary"]["sme2_kernels"]:
            add("sme2_in_baseline", "high", f"{log['path']}: the SME2-off trace registers SME2 kernels: the baseline "
                "runner is not an SME2-off build", "xnntrace", log["summary"]["sme2_kernels"][:8])
    if k.get("view"):
        add("kernel_view", "info", k["view"]["verdict"], "xnntrace")
    for m in k.get("registered_vs_executed", []):
        add("registered_vs_executed", "high", f"{', '.join(m['configs'])} (SME2-{m['role']}): {m['statement']}",
            "xnntrace+etdump", m["logs"])
    for cfg in report["configs"]:
        e = cfg.get("kernel_evidence")
        if e and e.get("sme_executed"):
            add("sme_executed", "good", f"{cfg['name']}: {e['statement']}", cfg["evidence"])
    v = report.get("validation")
    if v and not v["ok"]:
        fails = [c for c in v["checks"] if c["status"] == "fail"]
        add("validation", "high", f"run-folder validation: {len(fails)} check(s) failed", "validate",
            [f"{c['subject']}: {c['message']}" for c in fails][:8])
    return out


def _slower_checklist(report: dict, cmp: dict) -> list[str]:
    items = []
    meta = report.get("metadata") or {}
    runners = meta.get("runners") or {}
    b, c = cmp["baseline"]["name"], cmp["candidate"]["name"]
    if runners:
        items.append("runner paths: " + "; ".join(f"{k}: {v}" for k, v in runners.items()))
    else:
        items.append("runner paths: not recorded in the run — confirm the candidate ran the intended build")
    items.append("platform support: the accelerated path must exist on the device "
                  + ("(SME2 needs FEAT_SME2: Apple M4, SME2 Android phones)" if report.get("sme2_pair") else
                     "(backend and kernels available for this CPU)"))
    ba, ca = _arm(report, "baseline"), _arm(report, "candidate")
    tb, tc = (ba or {}).get("threads"), (ca or {}).get("threads")
    items.append(f"threads: {b} {tb if tb is not None else '?'} vs {c} {tc if tc is not None else '?'}"
                 + (" — differ" if tb is not None and tc is not None and tb != tc else ""))
    wb = [x.get("warmup_dropped", 0) for x in cmp["baseline"].get("launches", [])]
    wc = [x.get("warmup_dropped", 0) for x in cmp["candidate"].get("launches", [])]
    items.append(f"warm-up runs left out: {b} {sum(wb)}, {c} {sum(wc)}")
    drift = [w for w in cmp.get("warnings", []) if "drift" in w]
    untestable = [a["name"] for a in (ba, ca) if a and ((a.get("latency") or {}).get("drift") or {}).get("testable") is False]
    items.append("thermal drift: " + ("; ".join(drift) if drift else
                                      f"too few runs to tell ({', '.join(untestable)})" if untestable else
                                      "none significant"))
    ke = (ca or {}).get("kernel_evidence") or {}
    logs = [x for x in (report.get("kernels") or {}).get("logs", []) if x["role"] == "on"]
    if logs:
        items.append("SME2 kernels in the candidate's trace: " + ", ".join(
            f"{x['path']}: {len(x['summary']['sme2_gemm_kernels'])}" for x in logs))
    if ke and ca:
        items.append(f"delegated ops on an SME/KleidiAI path ({evidence_name(ca['evidence'])}): {ke.get('statement')}")
    return items
