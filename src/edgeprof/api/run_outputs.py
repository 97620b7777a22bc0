"""What a collection wrote into its run folder — and only that — so ``edgeprof run --force`` can replace a
collection without touching anything else the folder holds (the user's notes, a model kept there).

The files are read from the folder's own ``manifest.json`` (the launches' ETDumps and debug buffers, logs, kernel logs and the
outputs set aside after a failure, the ETRecords copied to ``artifacts/``), plus what edgeprof derives from
them under fixed names (``manifest.json``, ``metrics.json``, ``noise.json``, the analysis CSVs and summaries, ``report.md``
and ``report.html``). Paths that lead outside the folder are ignored.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..io.runfolder import MANIFEST, METRICS, NOISE, SUMMARY, analysis_files

FIXED = (MANIFEST, METRICS, NOISE, SUMMARY, "report.md", "report.html")


def _inside(p: Path, run_dir: Path) -> bool:
    real, top = os.path.realpath(p.parent), os.path.realpath(run_dir)
    return real == top or real.startswith(top + os.sep)


def written_files(run_dir: Path, manifest: dict) -> list[Path]:
    """The files of the collection described by ``manifest`` that exist in ``run_dir``, sorted."""
    named: set[Path] = {run_dir / f for f in FIXED}
    etdumps: list[Path] = []
    for key in ("results", "overhead_launches"):
        entries = manifest.get(key) if isinstance(manifest.get(key), list) else []
        for r in entries:
            if not isinstance(r, dict):
                continue
            m = r.get("metrics") if isinstance(r.get("metrics"), dict) else {}
            for k in ("etdump", "log", "xnntrace_log"):
                if isinstance(m.get(k), str) and m[k]:
                    p = Path(m[k]) if os.path.isabs(m[k]) else run_dir / m[k]
                    named.add(p)
                    if k == "etdump":
                        etdumps.append(p)
            folder = run_dir / str(r.get("experiment", ""))
            for name in r.get("set_aside") or [] if isinstance(r.get("set_aside"), list) else []:
                if isinstance(name, str) and "/" not in name and name not in ("", ".", ".."):
                    named.add(folder / name)
    recs = manifest.get("etrecords") if isinstance(manifest.get("etrecords"), dict) else {}
    named.update(run_dir / "artifacts" / f"{stem}.etrecord" for stem in recs if isinstance(stem, str) and "/" not in stem)
    for e in etdumps:
        named.add(e.with_suffix(".bin"))  # its debug buffer (run --debug-buffer)
        for ext in (".csv", ".parquet"):
            named.update(e.parent / n for n in analysis_files(e, ext).values())
    return sorted(p for p in named if _inside(p, run_dir) and os.path.lexists(p) and not os.path.isdir(p))


def clear(run_dir: Path, manifest: dict) -> list[Path]:
    """Remove the collection's files (:func:`written_files`), then the folders they leave empty; anything else
    stays. Returns what was removed."""
    removed = []
    for p in written_files(run_dir, manifest):
        try:
            p.unlink()
            removed.append(p)
        except FileNotFoundError:
            pass
    folders = sorted({p.parent for p in removed}, key=lambda d: len(d.parts), reverse=True)
    for d in folders:
        while d != run_dir and _inside(d, run_dir):
            try:
                d.rmdir()  # only when empty
            except OSError:
                break
            d = d.parent
    return removed
