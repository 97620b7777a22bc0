"""Kernel evidence: which XNNPACK microkernels were *registered* (kernel log) and which datatype paths were
*executed* (operator names in an ETDump, or ``running operator`` Debug lines), and the kernel view that
sets a baseline's kernels beside a candidate's.

Registered is not executed: XNNPACK logs every kernel a config stores (the 1×N and M×N variants, gemm and
igemm) once per process, when the config is initialised. Execution of the SME/KleidiAI paths shows in the
operator names: ``PF32``/``PF16``/``PQS8`` exist only on the SME/SME2 path, ``QP8`` means KleidiAI (NEON or
SME). Telling SME from SME2 needs the kernel log (``__neonsme`` vs ``__neonsme2``).
"""

from __future__ import annotations

from ..conventions import INSTANCE_SUFFIX, ms, fmt_ms
from ..kernel_names import (
    FAMILIES,
    GEMM_KINDS,
    UNKNOWN,
    kleidiai_kernel,
    normalize_kind,
    parse,
)
from ..model import KernelLog
from ..taxonomy import DEFAULT, Taxonomy

KIT_COLUMNS = ("model_id", "kernel_name", "category", "count", "dtype", "xnn_op", "variant", "ukernel_shape",
               "arch_chain", "has_sme", "has_sme2")
OUR_COLUMNS = ("isa", "isa_family", "uarch", "asm", "arch", "tile_mr", "tile_nr", "tile_kr", "kleidiai",
               "kleidiai_kernel", "evidence", "config", "first_line")
COLUMNS = KIT_COLUMNS + OUR_COLUMNS

# operator-name datatype tokens that prove a path ran
SME_MARKERS = ("PF32", "PF16", "PQS8")
KLEIDIAI_MARKERS = ("QP8",)
_IMPLIES = {"PF32": "SME/SME2 (KleidiAI, packed f32 LHS)", "PF16": "SME/SME2 (KleidiAI, packed f16 LHS)",
            "PQS8": "SME/SME2 (KleidiAI, packed int8 LHS)", "QP8": "KleidiAI (NEON dot/i8mm or SME/SME2)"}
_KIND_ORDER = {k: i for i, k in enumerate(GEMM_KINDS)}
_FAMILY_ORDER = {f: i for i, f in enumerate((*FAMILIES, UNKNOWN))}
REGISTERED_NOTE = ("Registered means XNNPACK set the kernel up when a config was first used; it does not prove "
                   "the kernel ran. PF32/PF16/PQS8 operator names in an ETDump prove the SME path executed.")


def kernel_row(name: str, kind: str | None, count: int, model_id: str, *, config: str = "",
               first_line: int | None = None) -> dict:
    """One kernel as a table row: the Arm kit's columns (fixed) then ours."""
    k = parse(name)
    kai = kleidiai_kernel(k)
    return {
        "model_id": model_id, "kernel_name": name, "category": normalize_kind(kind) if kind else k.kind,
        "count": int(count), "dtype": k.dtype, "xnn_op": k.op, "variant": k.variant, "ukernel_shape": k.tile,
        "arch_chain": k.target, "has_sme": int(k.has_sme), "has_sme2": int(k.has_sme2),
        "isa": k.isa, "isa_family": k.isa_family, "uarch": k.uarch, "asm": int(k.asm), "arch": k.arch,
        "tile_mr": k.tile_mr, "tile_nr": k.tile_nr, "tile_kr": k.tile_kr, "kleidiai": int(kai is not None),
        "kleidiai_kernel": kai or "", "evidence": "registered", "config": config, "first_line": first_line,
    }


def kernel_table(log: KernelLog, model_id: str) -> list[dict]:
    """One row per (kernel, logged kind), most registrations first (ties in log order), as the kit orders."""
    groups: dict[tuple[str, str], list] = {}
    for r in log.registrations:
        g = groups.setdefault((r.name, r.kind), [0, [], r.line])
        g[0] += 1
        if r.function and r.function not in g[1]:
            g[1].append(r.function)
    rows = [kernel_row(name, kind, n, model_id, config=";".join(fns), first_line=line)
            for (name, kind), (n, fns, line) in groups.items()]
    return sorted(rows, key=lambda r: -r["count"])  # stable: log order among equal counts


def table_from_records(records: list[dict], model_id: str) -> list[dict]:
    """Rows from a kernels CSV (ours or the Arm kit's): name, category and count kept, the rest re-derived."""
    rows = []
    for rec in records:
        count = rec.get("count")
        rows.append(kernel_row(rec["kernel_name"], rec.get("category") or None,
                               int(count) if count not in (None, "") else 1, rec.get("model_id") or model_id,
                               config=rec.get("config") or "",
                               first_line=int(rec["first_line"]) if str(rec.get("first_line") or "").isdigit()
                               and len(str(rec["first_line"])) <= 18 else None))
    return rows


def _families(rows: list[dict]) -> dict[str, list[str]]:
    """family → sorted distinct ISA tokens."""
    out: dict[str, set] = {}
    for r in rows:
        out.setdefault(r["isa_family"], set()).add(r["isa"] or "?")
    return {f: sorted(out[f]) for f in sorted(out, key=lambda f: _FAMILY_ORDER.get(f, 99))}


def summarize_kernels(rows: list[dict]) -> dict:
    """Counts by ISA family and by kind, and the GEMM/IGEMM picture (what matters for SME2)."""
    by_family: dict[str, int] = {}
    by_kind: dict[str, dict[str, int]] = {}
    names = {r["kernel_name"]: r["isa_family"] for r in rows}
    for fam in names.values():
        by_family[fam] = by_family.get(fam, 0) + 1
    for r in rows:
        kd = by_kind.setdefault(r["category"], {})
        kd[r["isa_family"]] = kd.get(r["isa_family"], 0) + 1
    gemm = [r for r in rows if r["category"] in GEMM_KINDS]
    return {
        "kernels": len(names),
        "registrations": sum(r["count"] for r in rows),
        "by_family": dict(sorted(by_family.items(), key=lambda kv: _FAMILY_ORDER.get(kv[0], 99))),
        "by_kind": {k: by_kind[k] for k in sorted(by_kind, key=lambda k: (_KIND_ORDER.get(k, 99), k))},
        "gemm_families": _families(gemm),
        "sme2_gemm_kernels": [r["kernel_name"] for r in gemm if r["isa_family"] == "SME2"],
        "sme_gemm_kernels": [r["kernel_name"] for r in gemm if r["isa_family"] == "SME"],
        "other_gemm_kernels": [r["kernel_name"] for r in gemm if r["isa_family"] not in ("SME", "SME2")],
        "sme2_kernels": [r["kernel_name"] for r in rows if r["isa_family"] == "SME2"],
        "kleidiai_kernels": [r["kernel_name"] for r in rows if r["kleidiai"]],
        "unknown_isa": [r["kernel_name"] for r in rows if r["isa_family"] == UNKNOWN],
        "evidence": "registered",
    }


# --------------------------------------------------------------------------------------------------
# executed evidence
# --------------------------------------------------------------------------------------------------

def _marker(dtypes) -> str | None:
    for d in dtypes:
        if d in SME_MARKERS or d in KLEIDIAI_MARKERS:
            return d
    return None


def executed_from_operators(op_counts: dict[str, int], taxonomy: Taxonomy = DEFAULT) -> list[dict]:
    """Operators that ran (``running operator`` lines) whose datatype proves an SME/KleidiAI path."""
    out = []
    for op, n in op_counts.items():
        c = taxonomy.classify(op)
        mk = _marker(c.dtypes)
        if mk:
            out.append({"op": op, "marker": mk, "implies": _IMPLIES[mk], "times_run": n, "evidence": "executed",
                        "source": "xnntrace"})
    return out


def executed_from_profile(profile, taxonomy: Taxonomy = DEFAULT, top: int = 10) -> dict:
    """Which XNNPACK operators of an ETDump ran on an SME/KleidiAI datatype path, and the time they cover.

    Times are per run (mean over execute runs); shares are of the GEMM+CONV delegate-op time and of e2e.
    """
    import numpy as np

    ev = profile.events
    n_runs = max(profile.n_runs, 1)
    e2e = float(np.nanmean(profile.latency_ns())) if profile.n_runs else float("nan")
    ids, _, names = profile.name_groups()  # event names as codes, shared with the other analyses
    mask = (ev["kind"] == "delegate_op").to_numpy() & (ev["run_index"].to_numpy() >= 0)
    dur = ev["duration_ns"].fill_null(0).to_numpy()
    ns_by_id = np.bincount(ids[mask], weights=dur[mask], minlength=len(names))
    n_by_id = np.bincount(ids[mask], minlength=len(names))
    per: dict[str, list] = {}  # "<op>" without its " #n" → [executions, ns]
    for i in np.flatnonzero(n_by_id):
        acc = per.setdefault(INSTANCE_SUFFIX.sub("", names[i]), [0, 0.0])
        acc[0] += int(n_by_id[i])
        acc[1] += float(ns_by_id[i])
    marked, unmarked = [], []
    gemm_conv_ns = sme_ns = qp8_ns = 0.0
    for op, (n, ns) in per.items():
        c = taxonomy.classify(op)
        mk = _marker(c.dtypes)
        is_gc = c.category in ("GEMM", "CONV")
        if is_gc:
            gemm_conv_ns += ns
        row = {"op": op, "category": c.category, "dtypes": list(c.dtypes), "calls_per_run": n / n_runs,
               "ms_per_run": ms(ns / n_runs), "pct_of_e2e": 100.0 * ns / n_runs / e2e if e2e > 0 else None}
        if mk:
            row.update(marker=mk, implies=_IMPLIES[mk], evidence="executed", source="etdump")
            marked.append(row)
            if mk in SME_MARKERS:
                sme_ns += ns
            else:
                qp8_ns += ns
        elif is_gc:
            unmarked.append(row)
    marked.sort(key=lambda r: -r["ms_per_run"])
    unmarked.sort(key=lambda r: -r["ms_per_run"])
    share = (sme_ns + qp8_ns) / gemm_conv_ns if gemm_conv_ns > 0 else None
    delegate_ops = len(per)
    if not delegate_ops:
        statement = "no XNNPACK delegate operators in this profile: nothing ran through XNNPACK"
    elif sme_ns > 0:
        statement = (f"SME/SME2 path executed: {'/'.join(sorted({r['marker'] for r in marked if r['marker'] in SME_MARKERS}))}"
                     f" operators take {fmt_ms(ms(sme_ns / n_runs), 3, fixed=True)} ms per run"
                     + (f" ({100 * sme_ns / gemm_conv_ns:.0f} % of GEMM/CONV time)" if gemm_conv_ns else "")
                     + "; SME vs SME2 needs the kernel log")
    elif qp8_ns > 0:
        statement = (f"KleidiAI path executed: QP8 operators take {fmt_ms(ms(qp8_ns / n_runs), 3, fixed=True)} ms per run; "
                     "whether on NEON or SME needs the kernel log; no PF32/PF16/PQS8 operator ran")
    else:
        statement = ("no PF32/PF16/PQS8/QP8 operator ran: XNNPACK's GEMM/CONV used its own (non-KleidiAI) kernels, "
                     "so no SME/SME2 kernel executed")
    return {
        "evidence": "executed", "source": "etdump", "runs": profile.n_runs,
        "sme_executed": sme_ns > 0, "kleidiai_executed": (sme_ns + qp8_ns) > 0,
        "sme_ms_per_run": ms(sme_ns / n_runs), "qp8_ms_per_run": ms(qp8_ns / n_runs),
        "gemm_conv_ms_per_run": ms(gemm_conv_ns / n_runs), "kleidiai_share_of_gemm_conv": share,
        "operators": marked, "other_gemm_conv_operators": unmarked[:top], "statement": statement,
    }


# --------------------------------------------------------------------------------------------------
# kernel view: baseline vs candidate
# --------------------------------------------------------------------------------------------------

def _isa_list(fams: dict[str, list[str]]) -> str:
    return ", ".join(f"{f} {' '.join(isas)}" for f, isas in fams.items()) or "none"


def gemm_verdict(base_rows: list[dict], cand_rows: list[dict], base_name: str, cand_name: str) -> tuple[str, str]:
    """(status, one plain sentence) about SME2 GEMM/IGEMM kernels in the candidate vs the baseline.

    status: ``sme2_in_candidate`` (the expected SME2-on/off picture), ``sme2_in_both``, ``sme_baseline``,
    ``sme_only_candidate``, ``no_sme2`` or ``no_gemm``.
    """
    b, c = summarize_kernels(base_rows), summarize_kernels(cand_rows)
    if not b["gemm_families"] and not c["gemm_families"]:
        return "no_gemm", ("GEMM/IGEMM: no GEMM kernels registered in either log (kernel lines need an XNNPACK "
                           "build with XNN_LOG_LEVEL ≥ 4)")
    base_other = {f: i for f, i in b["gemm_families"].items() if f not in ("SME", "SME2")}
    cand_other = {f: i for f, i in c["gemm_families"].items() if f not in ("SME", "SME2")}
    if c["sme2_gemm_kernels"] and b["sme2_gemm_kernels"]:
        return "sme2_in_both", (f"GEMM/IGEMM: SME2 kernels registered in both {cand_name} and {base_name}: "
                                f"{base_name} is not an SME2-off build")
    if c["sme2_gemm_kernels"] and b["sme_gemm_kernels"]:
        return "sme_baseline", (f"GEMM/IGEMM: SME2 kernels registered in {cand_name}; {base_name} registers SME "
                                f"(non-SME2) kernels ({len(b['sme_gemm_kernels'])}), so it is not a NEON-only baseline "
                                "(build it with XNNPACK_ENABLE_ARM_SME=OFF as well)")
    if c["sme2_gemm_kernels"]:
        return "sme2_in_candidate", (f"GEMM/IGEMM: SME2 kernels registered in {cand_name}; {base_name} uses "
                                     f"{_isa_list(base_other) if base_other else 'no GEMM kernels'}")
    if c["sme_gemm_kernels"]:
        return "sme_only_candidate", (f"GEMM/IGEMM: {cand_name} registers SME kernels but no SME2 kernel "
                                      "(SME2 compiled out or not reported by the CPU)")
    return "no_sme2", (f"GEMM/IGEMM: no SME2 kernels registered in {cand_name}; it uses {_isa_list(cand_other)} — "
                       "check the runner build (XNNPACK_ENABLE_ARM_SME2=ON, KleidiAI on), the device (FEAT_SME2) and "
                       "the model's datatype path")


def kernel_view(base_rows: list[dict], cand_rows: list[dict], *, base_name: str, cand_name: str,
                filter_op: str | None = None) -> dict:
    """Kernels present in each side (filtered by a case-insensitive substring of the kernel name), a summary
    by ISA family and kind, and the GEMM/IGEMM verdict (computed on all kernels, whatever the filter)."""
    def keep(r):
        return not filter_op or filter_op.lower() in r["kernel_name"].lower()

    info: dict[str, dict] = {}
    for side, rows in (("baseline", base_rows), ("candidate", cand_rows)):
        for r in rows:
            if not keep(r):
                continue
            e = info.setdefault(r["kernel_name"], {**{k: r[k] for k in (
                "kernel_name", "category", "isa", "isa_family", "kleidiai", "kleidiai_kernel", "dtype", "ukernel_shape")},
                "baseline": 0, "candidate": 0})
            e[side] += r["count"]
    table = sorted(info.values(), key=lambda e: (_KIND_ORDER.get(e["category"], 99), e["category"],
                                                 _FAMILY_ORDER.get(e["isa_family"], 99), e["kernel_name"]))
    fb = summarize_kernels([r for r in base_rows if keep(r)])
    fc = summarize_kernels([r for r in cand_rows if keep(r)])
    kinds = list(dict.fromkeys(list(fb["by_kind"]) + list(fc["by_kind"])))
    kinds.sort(key=lambda k: (_KIND_ORDER.get(k, 99), k))
    by_kind = [{"kind": k, "baseline": fb["by_kind"].get(k, {}), "candidate": fc["by_kind"].get(k, {})} for k in kinds]
    fams = [f for f in (*FAMILIES, UNKNOWN) if f in fb["by_family"] or f in fc["by_family"]]
    by_family = [{"family": f, "baseline": fb["by_family"].get(f, 0), "candidate": fc["by_family"].get(f, 0)}
                 for f in fams]
    status, verdict = gemm_verdict(base_rows, cand_rows, base_name, cand_name)
    return {
        "baseline_name": base_name, "candidate_name": cand_name, "filter_op": filter_op,
        "kernels": table, "by_family": by_family, "by_kind": by_kind, "status": status, "verdict": verdict,
        "only_in_baseline": [e["kernel_name"] for e in table if e["baseline"] and not e["candidate"]],
        "only_in_candidate": [e["kernel_name"] for e in table if e["candidate"] and not e["baseline"]],
        "evidence": "registered", "note": REGISTERED_NOTE,
    }


def registered_vs_executed(summaries: list[dict], evidence: list[dict]) -> str | None:
    """What one configuration's kernel logs register (``summarize_kernels`` of each, evidence xnntrace) against
    what its ETDumps show ran (``executed_from_profile`` of each, evidence etdump): a sentence when the two
    disagree, else None."""
    sme2_gemm = sorted({k for s in summaries for k in s["sme2_gemm_kernels"]})
    sme_any = any(s["by_family"].get(f) for s in summaries for f in ("SME2", "SME"))
    ran = [e for e in evidence if e.get("sme_executed")]
    if sme2_gemm and not ran:
        return (f"the trace registers {len(sme2_gemm)} SME2 GEMM/IGEMM kernel(s) [xnntrace log], but no ETDump of the "
                "same configuration shows an SME/SME2 operator (PF32/PF16/PQS8) running [ETDump timeline]: the timed "
                "runner may not be the traced build, or the GEMMs took another datatype path")
    if ran and not sme_any:
        return ("the ETDump shows SME/SME2 operators running [ETDump timeline], but the trace registers no SME or SME2 "
                "kernel [xnntrace log]: the trace was not made with the timed runner or model")
    return None
