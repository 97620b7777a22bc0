"""Is a comparison of like with like? What both arms recorded, side by side (pure).

Each launch brings the facts its run recorded (:func:`edgeprof.io.runfolder.launch_facts`). An aspect differs
when the two arms recorded different values (unknown values never count as a difference). The *variable under
test* is what the comparison is about: the experiment, the program or the runner when those differ; a thread
count or a device is the variable only when it is the one thing that differs. A different device or thread
count *besides* the variable under test invalidates the comparison (verdict ``not_comparable``, unless
allowed); other differences (governor, runtime version, core mask) are listed as warnings.
"""

from __future__ import annotations

from typing import Any

ASPECTS = ("experiment", "program", "runner", "device", "cpu_model", "cpu_flags", "threads", "threads_in_effect",
           "core_mask", "governor", "runtime")
CONFIGURATION = ("experiment", "program", "runner")  # what a comparison is normally about
CRITICAL = ("device", "cpu_model", "threads")        # what must not change besides it


def _values(facts: list[dict], aspect: str) -> list:
    return sorted({str(f.get(aspect)) for f in facts if f.get(aspect) is not None})


def comparability(b_facts: list[dict], c_facts: list[dict]) -> dict:
    rows: list[dict[str, Any]] = []
    for a in ASPECTS:
        vb, vc = _values(b_facts, a), _values(c_facts, a)
        known = bool(vb) and bool(vc)
        rows.append({"aspect": a, "baseline": vb, "candidate": vc, "differs": known and vb != vc,
                     "mixed": len(vb) > 1 or len(vc) > 1, "critical": False})
    differs = {r["aspect"] for r in rows if r["differs"]}
    config = differs & set(CONFIGURATION)
    hardware = {"device" if a == "cpu_model" else a for a in differs & set(CRITICAL)}
    if config:
        variable = sorted(config)
        bad = hardware
    elif len(hardware) == 1:
        variable, bad = sorted(hardware), set()
    else:
        variable, bad = sorted(hardware), hardware
    for r in rows:
        r["critical"] = r["differs"] and ("device" if r["aspect"] == "cpu_model" else r["aspect"]) in bad
    critical = [r["aspect"] for r in rows if r["critical"]]
    others = [r["aspect"] for r in rows if r["differs"] and not r["critical"] and r["aspect"] not in variable]
    recorded = any(r["baseline"] or r["candidate"] for r in rows if r["aspect"] not in ("experiment", "threads"))
    out = {"comparable": not critical, "variable_under_test": variable, "critical_differences": critical,
           "other_differences": others, "recorded": recorded, "rows": rows}
    out["statement"] = sentence(out)
    return out


ADVICE = "compare like with like, or pass --allow-different"


def sentence(comp: dict, advice: bool = True) -> str:
    """What a comparability says, from its fields; ``advice``: how to proceed when the arms are not comparable
    (left out where the comparison was made anyway)."""
    variable, critical, others = comp["variable_under_test"], comp["critical_differences"], comp["other_differences"]
    if critical:
        return ("not comparable: the arms also differ in " + ", ".join(critical)
                + (f" besides the variable under test ({', '.join(variable)})" if variable else "")
                + (f" — {ADVICE}" if advice else ""))
    said = f"comparable ({', '.join(variable) or 'no recorded difference'} under test)"
    return f"{said}; also differ: {', '.join(others)}" if others else said
