"""Regenerate the measured-figures page (docs/explain/figures.md) from the benchmarks that measure it.

Each section of the page that holds a benchmark's figures is headed by the command that prints them and the day
they were measured — ``## Title (`python bench/bench_noise.py --limit 200`, 2026-12-03)`` — and holds the Markdown
tables that command prints, in the order it prints them. This script runs the command and puts its tables and
today's date into the section (the prose around them stays as written: read it again when the figures move)::

    python tools/figures_page.py                       # the sections, their commands and dates
    python tools/figures_page.py --run bench_noise     # run one section's command, update the page
    python tools/figures_page.py --all                 # every section this script regenerates (hours)
    python tools/figures_page.py --run bench_two_vs_two --args "--limit 10"   # other arguments (stated in the heading)
"""

from __future__ import annotations

import argparse
import datetime
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "explain" / "figures.md"
HEADING = re.compile(r"^## (?P<title>.+?) \(`python bench/(?P<bench>\w+)\.py(?P<args>[^`]*)`, (?:re-measured )?"
                     r"(?P<date>\d{4}-\d{2}-\d{2})\)$")


def sections(text: str) -> list[dict]:
    """The page's benchmark sections: title, bench, args, date, and the line span each covers."""
    lines = text.splitlines()
    heads = [i for i, ln in enumerate(lines) if ln.startswith("## ")]
    out = []
    for k, i in enumerate(heads):
        m = HEADING.match(lines[i])
        if m:
            end = heads[k + 1] if k + 1 < len(heads) else len(lines)
            out.append({**m.groupdict(), "args": m["args"].strip(), "start": i, "end": end})
    return out


def tables(text: str) -> list[list[str]]:
    """The Markdown tables of ``text`` (runs of lines starting with ``|``), in order."""
    out, cur = [], []
    for ln in text.splitlines() + [""]:
        if ln.startswith("|"):
            cur.append(ln)
        elif cur:
            out.append(cur)
            cur = []
    return out


# the benchmarks that print their figures as the page's Markdown tables; the page's other sections (bench_stats,
# bench_launches, bench_history) hold tables written from their text output, kept as measured on the stated day
TABLES = ("bench_noise", "bench_coverage", "bench_plan", "bench_two_vs_two")


def put(text: str, index: int, printed: str, args: str, today: str) -> str:
    """``text`` with its ``index``-th benchmark section holding the tables of ``printed`` (the command's output), its
    heading the command as run and ``today``. The section must have as many tables as the command printed."""
    lines = text.splitlines()
    sec = sections(text)[index]
    bench = sec["bench"]
    new = tables(printed)
    body = lines[sec["start"] + 1: sec["end"]]
    spans, i = [], 0
    while i < len(body):
        if body[i].startswith("|"):
            j = i
            while j < len(body) and body[j].startswith("|"):
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    if len(spans) != len(new):
        raise SystemExit(f"{bench}: the page's section holds {len(spans)} table(s), the command printed {len(new)}")
    for (a, b), t in reversed(list(zip(spans, new))):
        body[a:b] = t
    command = f"python bench/{bench}.py" + (f" {args}" if args else "")
    head = f"## {sec['title']} (`{command}`, {today})"
    out = lines[:sec["start"]] + [head] + body + lines[sec["end"]:]
    return "\n".join(out) + "\n"


def run(bench: str, args: str) -> str:
    r = subprocess.run([sys.executable, str(ROOT / "bench" / f"{bench}.py"), *shlex.split(args)], cwd=ROOT,
                       capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"{bench} failed: {r.stderr.strip().splitlines()[-1:] or r.returncode}")
    return r.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", action="append", default=[], help="a section's benchmark (bench_noise, …); repeatable")
    ap.add_argument("--all", action="store_true", help="every section's benchmark")
    ap.add_argument("--args", default=None, help="the benchmark's arguments instead of the heading's")
    ap.add_argument("--page", type=Path, default=PAGE)
    a = ap.parse_args()
    text = a.page.read_text()
    secs = sections(text)
    todo = list(TABLES) if a.all else a.run
    if not todo:
        for s in secs:
            how = "regenerated here" if s["bench"] in TABLES else "kept as measured"
            print(f"{s['bench']:18s} {s['date']}  python bench/{s['bench']}.py {s['args']}  — {s['title']} ({how})")
        return 0
    for bench in todo:
        if bench not in TABLES:
            raise SystemExit(f"{bench} prints no Markdown tables: its section keeps the figures measured on the day it "
                             f"states (regenerated here: {', '.join(TABLES)})")
        found = [k for k, s in enumerate(secs) if s["bench"] == bench]
        if not found:
            raise SystemExit(f"no section of {a.page} is measured by {bench}")
        for k in found:
            args = a.args if a.args is not None else sections(text)[k]["args"]
            text = put(text, k, run(bench, args), args, datetime.date.today().isoformat())
            a.page.write_text(text)
            print(f"{bench}: updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
