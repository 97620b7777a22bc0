"""One line per result: what a person reads last in the terminal, for agents (the MCP tools' ``summary``) —
from the command's JSON document, so it says what the document says."""

from __future__ import annotations

from ..conventions import fmt_ms


def _ms(v) -> str:
    return f"{fmt_ms(v)} ms" if isinstance(v, (int, float)) else "? ms"


def headline(doc: dict) -> str:
    kind = doc.get("kind", "")
    fn = _BY_KIND.get(kind)
    try:
        line = fn(doc) if fn else ""
    except (KeyError, TypeError, IndexError, ValueError):
        line = ""
    return line or kind


def _latency(d):
    if "reports" in d:  # several inputs
        return " | ".join(_latency(x) for x in d["reports"])
    st = d.get("steady") or d
    ci = st.get("ci_median") or {}
    w = (d.get("warmup") or {}).get("count", 0)
    return (f"{d.get('name') or 'latency'}: median {_ms(st['median_ms'])} [{fmt_ms(ci.get('low_ms'))}–"
            f"{fmt_ms(ci.get('high_ms'))}] over {st['count']} steady runs"
            + (f" ({w} warm-up run(s) left out)" if w else ""))


def _comparison(d):
    return d.get("summary_line") or (f"verdict {d['verdict']}: speedup {d['speedup']['estimate']:.4g}× "
                                     f"[{d['speedup']['ci_low']:.4g}–{d['speedup']['ci_high']:.4g}]")


def _breakdown(d):
    cats = sorted(d.get("categories") or [], key=lambda c: -(c.get("avg_ms") or 0))
    top = ", ".join(f"{c['line']} {c['pct_of_e2e']:.0f} %" for c in cats[:3] if c.get("pct_of_e2e") is not None)
    return f"{d.get('name')}: {_ms((d.get('e2e_ms') or {}).get('mean'))} a run over {d.get('runs')} runs; {top}"


def _analysis(d):
    return (f"{d.get('analysed_count')} of {d.get('etdump_count')} profile(s) analysed, "
            f"{len(d.get('csv_files') or [])} file(s) written, {len(d.get('errors') or [])} error(s)")


def _kernels(d):
    s = d.get("summary") or {}
    return (f"{len(d.get('kernels') or [])} kernel(s) in the log; SME2 GEMM kernels: "
            f"{len(s.get('sme2_gemm_kernels') or [])}")


def _validation(d):
    c = d.get("counts") or {}
    return f"validation {'passed' if d.get('ok') else 'FAILED'}: " + ", ".join(f"{v} {k}" for k, v in c.items())


def _phases(d):
    return "; ".join(f"phase {p['name']}: median {_ms(p.get('median_ms'))} over {p.get('count')} runs"
                     for p in d.get("phases") or []) or "no phases"


def _program(d):
    return (f"{d.get('file_size', 0):,} bytes, {len(d.get('instructions') or [])} instructions, "
            f"{len(d.get('delegates') or [])} delegate call(s)")


def _coreml(d):
    return "; ".join(f"{m['model']}: {len(m['hazards'])} hazard(s)" for m in d.get("models", []))


def _history(d):
    if d.get("regressions"):
        return "regression: " + "; ".join(d["regressions"])
    ch = [c for s in d.get("series") or [] for c in s.get("changes") or []]
    conf = [c for c in ch if c["status"] == "confirmed"]
    other = len(ch) - len(conf)
    return (f"{len(d.get('series') or [])} series; {len(conf)} confirmed change(s), {other} not yet confirmed"
            + (f"; newest: {conf[-1]['statement']}" if conf else ""))


def _report(d):
    cmp = d.get("comparison")
    head = _comparison(cmp) if cmp else d.get("title", "report")
    return head + f"; {len(d.get('findings') or [])} finding(s), {len(d.get('missing') or [])} thing(s) missing"


def _ane(d):
    return d.get("headline", "")


def _ane_folder(d):
    return f"{len(d.get('reports') or [])} submodel report(s)" + (f"; {d['note']}" if d.get("note") else "")


def _phase_comparison(d):
    return "; ".join(d.get("statements") or [])


def _placement(d):
    return f"{d['input']}: {d['statement']}"


def _placement_diff(d):
    return f"placement {d['verdict']}: " + " ".join(d["statements"][:2])


def _memory(d):
    return " | ".join(d["statements"]) or f"{len(d['programs'])} program(s), {len(d['ort_profiles'])} profile(s)"


_BY_KIND = {"latency": _latency, "comparison": _comparison, "breakdown": _breakdown, "analysis_summary": _analysis,
            "kernels": _kernels, "validation": _validation, "phases": _phases, "program": _program,
            "coreml_static": _coreml, "history": _history, "report": _report, "ane_analysis": _ane, "ane_plan": _ane,
            "ane_folder": _ane_folder, "phase_comparison": _phase_comparison,
            "placement": _placement, "placement_diff": _placement_diff, "memory": _memory}
