"""The README's figures that come from running edgeprof on the bundled example, regenerated: each lives in the
README between ``<!-- figure:NAME -->`` and ``<!-- /figure -->`` and is produced here by the command the README
shows. ``python tools/readme_figures.py`` prints them; ``--write`` puts them into the README;
tests/core/test_readme_figures.py fails when the README and this script disagree."""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
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


def write(text: str, figs: dict[str, str]) -> str:
    return MARK.sub(lambda m: f"<!-- figure:{m['name']} -->{figs.get(m['name'], m['body'])}<!-- /figure -->", text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="put the figures into README.md")
    a = ap.parse_args()
    figs = figures()
    text = README.read_text()
    if a.write:
        README.write_text(write(text, figs))
    for k, v in figs.items():
        same = in_readme(text).get(k) == v
        print(f"{k}: {v}" + ("" if same else "   (README differs)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
