"""Fuzz target for the anemll-profile / ane-costplan JSON readers and the ANE analysis.

    python fuzz/fuzz_anemll.py [SECONDS]

Inputs: byte mutations of the test reports, and JSON-level edits (a value anywhere replaced by another
type, a huge or non-finite number, deep nesting). The property: a report and its findings (and a diff
against the original), or a typed edgeprof InputError — never another exception.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "fuzz"))

from fuzz_etdump import fuzz_loop, mutate

import contextlib  # noqa: E402
import io  # noqa: E402

from edgeprof.analysis.ane import analyze_plan, analyze_profile
from edgeprof.analysis.ane_diff import diff_plans, diff_profiles
from edgeprof.errors import InputError
from edgeprof.io.anemll import read_report
from edgeprof.model import AneProfile
from edgeprof.render import jsonfmt, markdown, terminal

SEEDS = [p.read_bytes() for p in sorted((ROOT / "tests" / "data" / "anemll").glob("*.json"))]
DOCS = [json.loads(s) for s in SEEDS]
ORIGINALS = {}
ODD = [None, True, 0, -1, 2 ** 60, 10 ** 400, 1e308, "x", "", [], {}, [1, [2, [3]]], {"a": {"b": None}}, "1e5", -0.0]


def _edit(rng: random.Random, doc):
    doc = json.loads(json.dumps(doc))
    for _ in range(rng.randint(1, 5)):
        node, parent, key = doc, None, None
        for _ in range(rng.randint(1, 6)):
            if isinstance(node, dict) and node:
                parent, key = node, rng.choice(list(node))
            elif isinstance(node, list) and node:
                parent, key = node, rng.randrange(len(node))
            else:
                break
            node = parent[key]
        if parent is not None:
            parent[key] = json.loads(json.dumps(rng.choice(ODD)))
    text = json.dumps(doc)
    r = rng.random()
    if r < 0.1:
        text = text.replace("4.301", rng.choice(["NaN", "Infinity", "1e999", "9" * 400]), 1)
    elif r < 0.15:
        text = "[" * 50000 + text + "]" * 50000
    return text.encode()


def check(data: bytes, tmp: Path) -> None:
    p = tmp / "fuzz.json"
    p.write_bytes(data)
    try:
        rep = read_report(p)
    except InputError:
        return
    # every renderer too: a wrong type must be refused where the document is read, never reach the printing
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink):
        if isinstance(rep, AneProfile):
            result = analyze_profile(rep)
            orig = ORIGINALS.setdefault("profile", read_report(ROOT / "tests" / "data" / "anemll" / "anemll_profile_0.4.1.illustrative.json"))
            d = diff_profiles(orig, rep)
        else:
            result = analyze_plan(rep) if rep.operations else None
            orig = ORIGINALS.setdefault("plan", read_report(ROOT / "tests" / "data" / "anemll" / "ane_costplan.illustrative.json"))
            d = diff_plans(orig, rep)
        if result is not None:
            markdown.ane_findings(result)
            terminal.print_ane(result)
            jsonfmt.dumps(result)
            folder = {"summary": [{**result["summary"], "file": "f", "headline": result["headline"], "role": ""}],
                      "reports": [result], "skipped": [], "errors": []}
            markdown.ane_summary(folder)
            terminal.print_ane_folder(folder)
        markdown.ane_diff(d)
        terminal.print_ane_diff(d)
        jsonfmt.dumps(d)


def next_case(rng: random.Random, tmp: Path):
    data = mutate(rng, rng.choice(SEEDS)) if rng.random() < 0.4 else _edit(rng, rng.choice(DOCS))
    return "anemll", check, data, (tmp,)


if __name__ == "__main__":
    sys.exit(fuzz_loop(float(sys.argv[1]) if len(sys.argv) > 1 else 60, 777, next_case))
