"""The documentation's figures that come from running edgeprof on the bundled example, regenerated: each lives in a
page (the README or docs/: tools/docs_pages.py) between ``<!-- figure:NAME -->`` and ``<!-- /figure -->`` and is
produced here by the command the page shows. ``python tools/readme_figures.py`` prints them; ``--write`` puts them
into the pages; tests/core/test_readme_figures.py fails when the pages and this script disagree."""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docs_pages import ROOT, pages  # noqa: E402
MARK = re.compile(r"<!-- figure:(?P<name>[a-z_]+) -->(?P<body>.*?)<!-- /figure -->", re.S)


def _example(tmp: Path) -> Path:
    import edgeprof

    edgeprof.example(tmp / "edgeprof-example")
    return tmp / "edgeprof-example"


def figures() -> dict[str, str]:
    """name → the text the README shows, from the commands it shows, run now on the bundled example."""
    from edgeprof import api

    with tempfile.TemporaryDirectory() as d:
        ex = _example(Path(d))
        run = ex / "runs" / "linux"
        cmp = api.compare(["portable"], ["xnnpack_fp32"], run_dir=run).data
        rep = api.report([str(run)], baseline=["portable"], candidate=["xnnpack_fp32"]).data
        an = api.analyze([ex], output_dir=Path(d) / "out", progress=False).data
    return {
        "compare_example": f"`{cmp['summary_line']}`",
        "report_example_etrecords": ", ".join(f"{c['name']}: ETRecord {c['etrecord']}" for c in rep["configs"]),
        "analyze_example": (f"{an['analysed_count']} ETDumps analysed, "
                            + ", ".join(f"{x['experiment']} {x['latency_ms']['median_ms']:.3f} ms median"
                                        for x in an["per_etdump"])),
    }


def in_readme(text: str) -> dict[str, str]:
    return {m["name"]: m["body"] for m in MARK.finditer(text)}


def in_docs() -> dict[str, list[str]]:
    """name → the text each page shows for it (a figure shown twice is shown the same everywhere)."""
    out: dict[str, list[str]] = {}
    for page in pages():
        for name, body in in_readme(page.read_text()).items():
            out.setdefault(name, []).append(body)
    return out


def write(text: str, figs: dict[str, str]) -> str:
    return MARK.sub(lambda m: f"<!-- figure:{m['name']} -->{figs.get(m['name'], m['body'])}<!-- /figure -->", text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="put the figures into the pages that show them")
    a = ap.parse_args()
    figs = figures()
    if a.write:
        for page in pages():
            text = page.read_text()
            if MARK.search(text):
                page.write_text(write(text, figs))
    shown = in_docs()
    for k, v in figs.items():
        same = shown.get(k) and all(b == v for b in shown[k])
        print(f"{k}: {v}" + ("" if same else "   (a page differs)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
