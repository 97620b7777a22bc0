"""The ``numerics`` document as Markdown: the outputs, where accuracy is first lost, and every matched point."""

from __future__ import annotations

from .markdown import cell, table, text


def _sqnr(m: dict) -> str:
    if m["identical"]:
        return "identical"
    return "—" if m["sqnr_db"] is None else f"{m['sqnr_db']:.1f}"


def _g(v, fmt="{:.3g}") -> str:
    return "—" if v is None else fmt.format(v)


def numerics_markdown(d: dict, level: int = 3) -> str:
    h = "#" * level
    b, c = d["baseline"], d["candidate"]
    out = [f"{h} Numerics: {text(c['etdump'])} against {text(b['etdump'])}", ""]
    out += [f"- {text(s)}" for s in d["statements"]]
    out += ["", f"{d['base_points']} and {d['candidate_points']} points inside the programs, {len(d['points'])} "
                f"matched ({', '.join(d['matched_by']) or 'none'}); accuracy is lost where SQNR falls by more than "
                f"{d['threshold_db']:g} dB from one point to the next (SQNR above {d['noise_floor_db']:g} dB is float "
                "noise). A point inside a delegate is not visible: a delegate's output covers everything it ran.", ""]
    rows = []
    for p in d["points"] + d["outputs"]:
        m = p["metrics"]
        rows.append([cell(p["name"]), cell(p["candidate_name"]), cell("×".join(map(str, p["shape"]))), _sqnr(m),
                     _g(m["max_abs_diff"]), _g(m["mean_abs_diff"]), _g(m["cosine"], "{:.6f}"), cell(p["method"]),
                     cell(p["candidate_span"])])
    out.append(table(["baseline point", "candidate point", "shape", "SQNR dB", "max |diff|", "mean |diff|", "cosine",
                      "matched by", "candidate covers"], rows))
    return "\n".join(out) + "\n"
