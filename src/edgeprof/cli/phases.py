"""``edgeprof phases``: an LLM-shaped profile per phase."""

from __future__ import annotations

import click

from ._base import CONTEXT, echo_json, main, run_guarded, say


@main.command("phases", context_settings=CONTEXT)
@click.argument("etdump", type=click.Path(path_type=str))
@click.option("--phases", "spec", default=None,
              help="Run ranges and their phase, e.g. 0:1=prefill,1:65=decode (default: <stem>.runs.json beside the "
                   "ETDump, else the runs' event signatures).")
@click.option("--compare", "against", type=click.Path(path_type=str), default=None,
              help="A candidate ETDump: compare per phase (this one is the baseline).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
@run_guarded
def phases(etdump, spec, against, seed, as_json):
    """Prefill and decode apart: per-phase latency, per-token latency, tokens/s with its interval, time to first
    token, the slope with position (KV length) separated from drift, categories growing with position.

    \b
    edgeprof phases llm.etdp                      (run order from llm.runs.json)
    edgeprof phases llm.etdp --phases 0:1=prefill,1:=decode
    edgeprof phases before.etdp --compare after.etdp     ("decode 1.4× faster [1.3–1.5], prefill unchanged")
    """
    from .. import api
    from ..render import terminal

    if against:
        cmp = api.compare_phases(etdump, against, spec=spec, seed=seed)
        if as_json:
            echo_json(cmp)
        else:
            for line in cmp.statements:
                say(line)
        return
    res = api.phases(etdump, spec=spec, seed=seed)
    if as_json:
        echo_json(res)
        return
    terminal.print_markdown(_markdown)(res.data)


def _markdown(d: dict) -> str:
    from ..conventions import fmt_ms
    from ..render.markdown import cell

    out = [f"### Phases of {cell(d['input'])} ({d['runs']} runs; phases from {cell(d['labels_source'])})", ""]
    out += ["| phase | runs | median ms | p90 ms |", "|---|---|---|---|"]
    for p in d["phases"]:
        out.append(f"| {cell(p['name'])} | {p['count']} | {fmt_ms(p['median_ms'])} | "
                   f"{fmt_ms(p['latency']['percentiles'].get('p90'))} |")
    for p in d["phases"]:
        if p.get("breakdown"):
            out.append(f"- {cell(p['name'])}: " + ", ".join(f"{cell(b['line'])} {b['share_pct']:.0f} %"
                                                          for b in p["breakdown"][:5]))
    for p in d["phases"]:
        dec = p.get("decode")
        if not dec:
            continue
        out += ["", f"- decode: {dec['tokens_per_s']:.4g} tokens/s [{dec['low']:.4g}–{dec['high']:.4g}], per-token p50 "
                    f"{fmt_ms(dec['per_token_ms']['p50'])} ms, p99 {fmt_ms(dec['per_token_ms']['p99'])} ms"]
        sl = dec.get("position_slope")
        if sl and sl["identifiable"]:
            out.append(f"- latency per position: {sl['ms_per_position'] * 1000:+.3g} µs [{sl['low'] * 1000:+.3g}, "
                       f"{sl['high'] * 1000:+.3g}] ({'significant' if sl['significant'] else 'not significant'}); "
                       f"drift {sl['drift_ms_per_run'] * 1000:+.3g} µs per run")
        elif sl:
            out.append(f"- latency per position: {sl['why']}")
        if dec.get("growing_with_position"):
            out.append("- growing with position: " + ", ".join(cell(g["category"]) for g in dec["growing_with_position"]))
    t = d.get("time_to_first_token")
    if t:
        out += ["", f"- time to first token: {fmt_ms(t['first_ms'])} ms (load and init included: "
                    f"{fmt_ms(t['init_ms'])} ms); steady prefill {fmt_ms(t['steady_prefill_ms'])} ms"]
    return "\n".join(out) + "\n"
