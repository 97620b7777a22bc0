"""The report as Markdown (for agents and reviews) and as one self-contained HTML file with inline SVG charts.

Both come from one list of blocks built from the report data (:func:`edgeprof.api.report`), so the two
say the same things with the same numbers; the HTML adds the charts.

The block list of every section is built here; :mod:`edgeprof.render.document` writes it in both formats.
"""

from __future__ import annotations

from datetime import datetime, timezone

from ..conventions import evidence_name, fmt_ci, fmt_ms, fmt_pct
from .cells import (
    METRICS_NOTE,
    TYPICAL_HEADER,
    TYPICAL_NOTE,
    speedup_cell,
    typical_cell,
)
from .document import to_html, to_markdown
from .markdown import code

SECTIONS = ("Run", "End-to-end latency", "Where the time goes", "Portable vs delegated", "What ran where", "Top operators",
            "Top OTHER operators", "Kernel evidence", "Validation", "Findings", "What this report could not use")


def _runtime(d: dict) -> str | None:
    """The runtime a report's profiles were recorded with (ExecuTorch's words when they are mixed)."""
    names = {(c.get("breakdown") or {}).get("runtime") or "executorch" for c in d["configs"]}
    return names.pop() if len(names) == 1 else None


def _words(d: dict) -> dict:
    from ..runtimes import vocabulary

    return vocabulary(_runtime(d))


def host_vs_accelerated(runtime: str | None) -> str:
    """The heading of the section on where the runtime's own kernels and its accelerated parts ran."""
    from ..runtimes import vocabulary

    w = vocabulary(runtime)
    return f"{w['host_title']} vs {w['accelerated_title']}"


def blocks(d: dict, *, generated: str | None = None) -> list[tuple]:
    """("title"|"h2"|"h3"|"p"|"table"|"list"|"chart", …) in reading order."""
    out: list[tuple] = []
    gen = generated or datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out.append(("title", f"edgeprof report: {d['title']}"))
    out.append(("p", f"_edgeprof {d['version']} · taxonomy {d['taxonomy_version']} · generated {gen}_"))
    cmp = d.get("comparison")
    if cmp:
        out.append(("verdict", cmp["verdict"], f"**Verdict:** {cmp['summary_line']}"))
    _run(out, d)
    _latency(out, d)
    _categories(out, d)
    _portable(out, d)
    _placement(out, d)
    _operators(out, d)
    _phases(out, d)
    _numerics(out, d)
    _work(out, d)
    _kernels(out, d)
    _validation(out, d)
    out.append(("h2", "Findings"))
    if d["findings"]:
        out.append(("olist", [(f"**[{f['evidence_name']}]** {f['text']}", f["items"]) for f in d["findings"]]))
    else:
        out.append(("p", "No rule fired."))
    out.append(("h2", "What this report could not use"))
    out.append(("list", [(m, []) for m in d["missing"]] or [("Nothing: every input was present.", [])]))
    return out


def _run(out, d):
    m = d["metadata"]
    out.append(("h2", "Run"))
    models = m.get("models") or {}
    rows = [["Models", "; ".join(f"{k}: {code(v)}" for k, v in models.items())] if len(models) > 1 else
            ["Model", m.get("model") or "not recorded"],
            ["Device", f"{m['device']} (as recorded in {m['device_source']})" if m.get("device")
             else "not recorded in the run (the analysis host is not the device)"]]
    if m.get("run_dir"):
        rows.append(["Run folder", f"{code(m['run_dir'])}"])
    if m.get("manifest"):
        rows.append(["Manifest", f"{code(m['manifest'])}"])
    for r in m.get("runtimes") or []:
        rows.append(["Runtime", r])
    if m.get("executorch") and _runtime(d) in ("executorch", None):
        e = m["executorch"]
        rows.append(["ExecuTorch", f"{e.get('sha') or e.get('version') or '?'}{' (dirty)' if e.get('dirty') else ''}"])
    for k, v in (m.get("runners") or {}).items():
        rows.append([f"Runner ({k})", f"{code(v)}"])
    rows += [[k, v] for k, v in m.get("environment") or []]
    out.append(("table", ["", ""], rows))
    named = _runtime(d) in ("executorch", None)  # an ETRecord names an ExecuTorch program's instructions only
    out.append(("table", ["configuration", "role", "experiment", "threads", "runs", "launches"]
                + (["ETRecord"] if named else []) + ["input"],
                [[c["name"], c["role"] or "—", c.get("experiment") or "—", c.get("threads") if c.get("threads") is not None
                  else "—", c["latency"]["count"], c["launches"]] + ([c["etrecord"]] if named else [])
                 + [f"{code(c['files'][0])}" + (f" (+{len(c['files']) - 1})" if len(c["files"]) > 1 else "")]
                 for c in d["configs"]]))
    out.append(("p", "**Runs used in every table and chart below:** the steady runs after the detected warm-up — "
                + "; ".join(_runs_used(c) for c in d["configs"]) + "."))


def _runs_used(c: dict) -> str:
    u = c.get("runs_used") or {"first": 0, "count": c["latency"]["count"], "total": c["latency"]["count"]}
    per = u.get("launches") or []
    if len(per) > 1:
        left = ", ".join(str(x["first"]) for x in per)
        return (f"{c['name']}: {u['count']} of {u['total']} runs in {len(per)} launches (warm-up left out per launch: "
                f"{left} run(s))")
    if not u["first"]:
        return f"{c['name']}: all {u['total']} runs (no warm-up detected)"
    left = "run 0" if u["first"] == 1 else f"runs 0–{u['first'] - 1}"
    return f"{c['name']}: runs {u['first']}–{u['total'] - 1} ({u['count']} of {u['total']}; {left} left out as warm-up)"


def _latency(out, d):
    out.append(("h2", "End-to-end latency"))
    rows = []
    for c in d["configs"]:
        lat = c["latency"]
        st = lat.get("steady") or lat
        ci = st.get("ci_median") or (lat.get("ci") or {}).get("median") or {}
        u = c.get("runs_used") or {}
        w = u["total"] - u["count"] if u else (lat.get("warmup") or {}).get("count", 0)
        dr = lat.get("drift") or {}
        drift = (f"{dr.get('slope_percent_per_100_runs', 0):+.1f} %/100 runs" if dr.get("significant") else
                 "too few runs to tell" if dr.get("testable") is False else "none")
        rows.append([c["name"], st["count"], f"{fmt_ms(st['median_ms'])}{fmt_ci(ci.get('low_ms'), ci.get('high_ms'))}",
                     fmt_ms(st["mean_ms"]), fmt_pct(st["cv_percent"]), fmt_ms((st.get("percentiles") or {}).get("p90")), w,
                     st.get("outliers", 0) if isinstance(st.get("outliers"), int) else
                     (lat.get("outliers") or {}).get("count", 0), drift])
    out.append(("table", ["configuration", "runs", "median ms [95% CI]", "mean ms", "CV %", "p90 ms",
                          "warm-up runs left out", "outliers", "drift"], rows))
    out.append(("chart", "latency_trend", [{"name": c["name"], "values_ms": c["latency"]["latencies_ms"],
                                             "warmup": (c["latency"].get("warmup") or {}).get("count", 0),
                                             "outliers": (c["latency"].get("outliers") or {}).get("indices", [])}
                                            for c in d["configs"]]))
    out.append(("chart", "distribution", [{"name": c["name"], "values_ms": c["latency"]["latencies_ms"][
        (c["latency"].get("warmup") or {}).get("count", 0):]} for c in d["configs"]]))
    cmp = d.get("comparison")
    if cmp:
        sp = cmp["speedup"]
        if sp.get("estimate") is None:  # too few runs for an estimate (a debug recording of one run per arm)
            out.append(("p", f"Speedup: not estimated ({cmp.get('summary_line') or 'not enough runs'})."))
        else:
            out.append(("p", f"Speedup = baseline / candidate (> 1: the candidate is faster): **{sp['estimate']:.4g}×** "
                             f"[{sp['ci_low']:.4g}–{sp['ci_high']:.4g}] ({int(100 * cmp['level'])} % CI, "
                             f"{cmp['ci']['method']}); verdict **{cmp['verdict']}** at a {100 * cmp['threshold']:g} % "
                             f"threshold. {cmp['ci']['scope'][:1].upper() + cmp['ci']['scope'][1:]}."))
        if cmp.get("regime"):
            al = cmp.get("launch_allowance") or {}
            ln = cmp.get("launch_noise") or {}
            out.append(("p", f"Regime: **{cmp['regime']}**"
                        + (f" (allowance {100 * al['launch_cv']:.3g} % launch-to-launch SD per arm: "
                           f"{ln.get('detail') or al['source']})" if al.get("applied") else "")
                        + (f"; launch-to-launch SD estimated at {100 * cmp['launch_sd_estimate']:.1f} %"
                           if cmp.get("launch_sd_estimate") is not None else "") + "."))
        comp = cmp.get("comparability") or {}
        diff_rows = [r for r in comp.get("rows", []) if r["differs"]]
        if comp and comp.get("recorded"):
            out.append(("p", f"**Comparability:** {comp['statement']}."))
            if diff_rows:
                out.append(("table", ["recorded", "baseline", "candidate", ""],
                            [[r["aspect"].replace("_", " "), ", ".join(r["baseline"]), ", ".join(r["candidate"]),
                              "invalidates the comparison" if r["critical"] else
                              "variable under test" if r["aspect"] in comp["variable_under_test"] else "differs"]
                             for r in diff_rows]))
        mt = cmp.get("metrics") or {}
        if mt:
            b, c = cmp["baseline"]["name"], cmp["candidate"]["name"]
            out.append(("table", ["metric", f"{b} ms", f"{c} ms", "speedup", f"{int(100 * cmp['level'])} % CI",
                                  "verdict"],
                        [[m + (" (the verdict's)" if m == cmp.get("metric", "median") else ""),
                          fmt_ms(x.get("baseline_typical_ms")), fmt_ms(x.get("candidate_typical_ms")),
                          f"{x['speedup']:.4g}", f"{x['ci_low']:.4g}–{x['ci_high']:.4g}", x["verdict"]]
                         for m, x in mt.items()]))
            out.append(("p", METRICS_NOTE))
        if (cmp.get("plan") or {}).get("statement"):
            out.append(("p", f"**Plan:** {cmp['plan']['statement']}."))
        mem = cmp.get("memory")
        if mem:  # the launches' memory, as `edgeprof run` recorded it (edgeprof memory)
            out.append(("h3", "Peak memory"))
            out.append(("p", f"**Memory:** {mem['statement']} ({mem['convention']})."))
            out.append(("table", ["phase", "baseline MiB", "candidate MiB", "ratio", f"{int(100 * mem['level'])} % CI",
                                  "verdict"],
                        [[r["phase"], f"{r['baseline_bytes'] / 2**20:.1f}", f"{r['candidate_bytes'] / 2**20:.1f}",
                          f"{r['estimate']:.3f}", "—" if r["ci_low"] is None else f"{r['ci_low']:.3f}–{r['ci_high']:.3f}",
                          r["verdict"]] for r in mem["phases"]]))
        scope = ((cmp.get("ci") or {}).get("scope") or "").rstrip(".")
        warns = [w for w in cmp.get("warnings", []) if w.rstrip(".") != scope]
        if warns:
            out.append(("list", [(w, []) for w in warns]))


def _categories(out, d):
    out.append(("h2", "Where the time goes"))
    cmp = d.get("comparison")
    bc = (cmp or {}).get("by_category") or {}
    if bc.get("categories"):
        b, c = cmp["baseline"]["name"], cmp["candidate"]["name"]
        rows = [[x["line"], fmt_ms(x["baseline_ms"]), fmt_ms(x["candidate_ms"]), typical_cell(x), speedup_cell(x),
                 f"{fmt_pct(x['baseline_share'])} → {fmt_pct(x['candidate_share'])}", x["status"]]
                for x in bc["categories"]]
        out.append(("table", ["category", f"{b} mean ms/run", f"{c} mean ms/run", TYPICAL_HEADER,
                              "speedup [95% CI]", "share % of the mean run", "status"], rows))
        out.append(("p", TYPICAL_NOTE))
        out.append(("p", f"**Bottleneck:** {bc['bottleneck']['statement']}"))
    else:
        for cfg in d["configs"]:
            out.append(("h3", cfg["name"]))
            out.append(("table", ["category / overhead", "ms per run", "% of e2e", "operators"],
                        [[x["line"], fmt_ms(x["avg_ms"]), fmt_pct(x["pct_of_e2e"]), x["operator_count"] or ""]
                         for x in cfg["breakdown"]["categories"]]))
    out.append(("chart", "stacked", [{"label": cfg["name"], "parts": [(x["line"], x["avg_ms"]) for x in
                                                                        cfg["breakdown"]["categories"] if x["avg_ms"] > 0]}
                                     for cfg in d["configs"]]))


def _placement(out, d):
    """What ran where in each arm, when operators moved between them (``edgeprof placement --diff``)."""
    pd = (d.get("comparison") or {}).get("placement")
    if not pd:
        return
    out.append(("h2", "What ran where"))
    out.append(("list", [(s, []) for s in pd["statements"]]))
    if pd["moved"]:
        out.append(("table", ["operator", "from", "to", "kind", "baseline ms", "candidate ms", "time cost ms"],
                    [[m["name"], m["from"], m["to"], m["kind"], fmt_ms(m["baseline_ms"]), fmt_ms(m["candidate_ms"]),
                      "—" if m["cost_ms"] is None else f"{m['cost_ms']:+.4f}"] for m in pd["moved"][:50]]))
    out.append(("p", f"A fallback here is {pd['fallback_means']}."))


def _numerics(out, d):
    """The numerics of the pair, when both were recorded with a debug buffer (``edgeprof numerics``)."""
    nd = d.get("numerics")
    if not nd:
        return
    out.append(("h2", "Numerics (debug recordings)"))
    out.append(("list", [(s, []) for s in nd["statements"]]))
    rows = [[p["name"], "identical" if p["metrics"]["identical"] else
             "—" if p["metrics"]["sqnr_db"] is None else f"{p['metrics']['sqnr_db']:.1f}",
             f"{p['metrics']['max_abs_diff']:.3g}", p["method"], p["candidate_span"]]
            for p in nd["points"] + nd["outputs"]]
    out.append(("table", ["point", "SQNR dB", "max abs diff", "matched by", "candidate covers"], rows))


def _phases(out, d):
    """Per phase (prefill, decode, …) when a configuration's recording has more than one: never pooled."""
    cfgs = [c for c in d["configs"] if c.get("phases")]
    if not cfgs:
        return
    out.append(("h2", "Phases (prefill, decode)"))
    pc = d.get("phase_comparison")
    if pc:
        out.append(("p", "Per phase, " + pc["convention"] + ": " + "; ".join(pc["statements"]) + "."))
    for cfg in cfgs:
        ph = cfg["phases"]
        out.append(("h3", f"{cfg['name']} (phases from {ph['labels_source']})"))
        rows = []
        for p in ph["phases"]:
            dec = p.get("decode") or {}
            rows.append([p["name"], p["count"], fmt_ms(p["median_ms"]),
                         f"{dec['tokens_per_s']:.4g} [{dec['low']:.4g}–{dec['high']:.4g}]" if dec else "—"])
        out.append(("table", ["phase", "runs", "median ms", "tokens/s [95% CI]"], rows))
        t = ph.get("time_to_first_token")
        if t:
            out.append(("p", f"Time to first token {fmt_ms(t['first_ms'])} ms (load and init included); steady "
                             f"prefill {fmt_ms(t['steady_prefill_ms'])} ms."))
        for p in ph["phases"]:
            sl = (p.get("decode") or {}).get("position_slope")
            if sl:
                out.append(("p", "Decode latency per position: " + (
                    f"{sl['ms_per_position'] * 1000:+.3g} µs [{sl['low'] * 1000:+.3g}, {sl['high'] * 1000:+.3g}] per step, "
                    f"separated from drift" if sl["identifiable"] else sl["why"]) + "."))


def _work(out, d):
    """Work vs time, when the report found the .pte each configuration ran (run folder or manifest.json)."""
    cfgs = [c for c in d["configs"] if c.get("program")]
    if not cfgs:
        return
    out.append(("h2", "Work vs time (the program that ran)"))
    for cfg in cfgs:
        j = cfg["program"]
        out.append(("h3", cfg["name"]))
        out.append(("p", f"{code(j['program'])}: {j['matched']} of {j['program_instructions']} instructions timed; "
                          "FLOPs and bytes from the shapes the program records (evidence etdump+program)."))
        out.append(("table", ["category", "ms per run", "GFLOP/s", "instructions", "weight share %"],
                    [[c["category"], fmt_ms(c["ms_per_run"]), "—" if c["gflops"] is None else f"{c['gflops']:.3g}",
                      c["instructions"], fmt_pct(c["weight_share_pct"])] for c in j["categories"]]))
        pts = [{"label": r["name"], "x": r["intensity"], "y": r["gflops"], "category": r["category"]}
               for r in j["instructions"] if r["intensity"] and r["gflops"]]
        if pts:
            out.append(("chart", "roofline", {"points": pts, "title": f"{cfg['name']}: achieved GFLOP/s vs FLOP/byte"}))


def _portable(out, d):
    from ..runtimes import HOST_BACKEND, host_name

    rt = _runtime(d)
    w = _words(d)
    host, acc = w["host"], w["accelerated"]
    out.append(("h2", host_vs_accelerated(rt)))
    for cfg in d["configs"]:
        bd = cfg["breakdown"]
        b, g = bd["backends"], bd["graph_breaks"]
        out.append(("h3", cfg["name"]))
        rows = [[host_name(k, rt), fmt_ms(v["avg_ms"]), fmt_pct(v["pct_of_e2e"])] for k, v in b["leaf_time"].items()]
        rows += [["framework overhead", fmt_ms(b["framework_overhead_ms"]), ""],
                 [f"{acc} overhead", fmt_ms(b["delegate_overhead_ms"]), ""]]
        out.append(("table", ["backend", "ms per run", "% of e2e"], rows))
        out.append(("p", f"{b['delegate_calls_per_run']:.3g} {acc} call(s) per run; {g['portable_islands']} {host} "
                         f"island(s), {g['transitions']} {acc}↔{host} switch(es)."))
        if bd["portable_hotspots"] and any(k != HOST_BACKEND for k in b["leaf_time"]):
            out.append(("p", f"{host} hotspots (candidates to hand to a {acc}): " + ", ".join(
                f"{code(o['operator'])} {fmt_ms(o['avg_ms'], 3)} ms" for o in bd["portable_hotspots"][:6])))
        lanes = cfg["lanes"]
        out.append(("chart", "timeline", {"segments": lanes["segments"], "lane_names": {HOST_BACKEND: host},
                                          "title": f"{cfg['name']}: run {lanes['run_index']}"
                                                   + (f" of launch {lanes['launch']}" if lanes.get("launch") else "")
                                                   + " (the median steady run)"}))


def _operators(out, d):
    from ..runtimes import host_name

    out.append(("h2", "Top operators"))
    for cfg in d["configs"]:
        ops = cfg["breakdown"]["operators"]
        out.append(("h3", cfg["name"]))
        out.append(("table", ["operator", "backend", "category", "ms per run", "% of e2e", "per run"],
                    [[f"{code(o['operator'])}", host_name(o["backend"], _runtime(d)), f"{o['category']}/{o['subtype']}",
                      fmt_ms(o["avg_ms"]),
                      fmt_pct(o["pct_of_e2e"]), f"{o['executions_per_run']:.3g}"] for o in ops[:10]]))
        out.append(("chart", "hbars", {"items": [(o["operator"], o["avg_ms"], o["category"]) for o in ops[:10]],
                                       "title": f"{cfg['name']}: top operators (ms per run)"}))
    out.append(("h2", "Top OTHER operators"))
    any_other = False
    for cfg in d["configs"]:
        other = cfg["breakdown"]["other_top"]
        if other:
            any_other = True
            out.append(("p", f"{cfg['name']}: " + ", ".join(f"{code(o['operator'])} {fmt_ms(o['avg_ms'], 3)} ms "
                                                             f"({o['pct_of_e2e']:.1f} %)" for o in other[:5])))
    if not any_other:
        out.append(("p", "None: every operator has a category."))


def _kernels(out, d):
    out.append(("h2", "Kernel evidence"))
    rows = []
    for cfg in d["configs"]:
        e = cfg.get("kernel_evidence") or {}
        rows.append([cfg["name"], "executed", evidence_name(cfg["evidence"]),
                     e.get("statement", "—")])
    k = d.get("kernels")
    for log in (k or {}).get("logs", []):
        s = log["summary"]
        fams = ", ".join(f"{f} {n}" for f, n in s["by_family"].items()) or "no kernel lines"
        role = {"on": "SME2-on", "off": "SME2-off"}.get(log["role"], "role unknown")
        rows.append([f"{code(log['path'])} ({role})", "registered", evidence_name("xnntrace"),
                     f"{s['kernels']} kernels ({fams}); SME2 GEMM/IGEMM: {len(s['sme2_gemm_kernels'])}"])
    out.append(("table", ["source", "tier", "evidence", "what it shows"], rows))
    if k and k.get("view"):
        out.append(("p", f"**Kernel view:** {k['view']['verdict']}"))
    for m in (k or {}).get("registered_vs_executed", []):
        out.append(("p", f"**Registered vs executed (SME2-{m['role']}):** {m['statement']}"))
    out.append(("p", "_Registered_ = XNNPACK set the kernel up (log); _executed_ = an operator on that datatype path ran "
                     f"({_words(d)['profile']} op names PF32/PF16/PQS8 = SME/SME2, QP8 = KleidiAI)."))


def _validation(out, d):
    out.append(("h2", "Validation"))
    v = d.get("validation")
    if not v:
        out.append(("p", "Not run: the report was made from files, not a run folder."))
        return
    n = v["counts"]
    from ..conventions import PENDING

    pending = sum(1 for c in v["checks"] if c["status"] == "info" and c["message"].endswith(PENDING))
    out.append(("p", f"{'**OK**' if v['ok'] else '**FAILED**'}: {n['pass']} passed, {n['fail']} failed, "
                     f"{n['warn']} warning(s)"
                     + (f"; {pending} analysis output(s) not written yet (`edgeprof analyze` writes them)"
                        if pending else "") + " (`edgeprof validate` for the full list)."))
    fails = [(f"{c['subject']}: {c['message']}", c["items"][:5]) for c in v["checks"] if c["status"] == "fail"]
    if fails:
        out.append(("list", fails[:12]))


def markdown(d: dict, generated: str | None = None) -> str:
    return to_markdown(blocks(d, generated=generated))


def html(d: dict, generated: str | None = None) -> str:
    return to_html(blocks(d, generated=generated), f"edgeprof report: {d['title']}")
