"""``edgeprof skills``: the agent skills shipped with edgeprof (one ``SKILL.md`` per workflow), listed or
installed into the folder an agent reads skills from."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import OutputError, UsageError

SKILLS_DIR = Path(__file__).resolve().parent.parent / "skills"


def _front_matter(text: str) -> dict:
    if not text.startswith("---\n"):
        return {}
    head = text[4:text.index("\n---", 4)]
    out = {}
    for line in head.splitlines():
        k, _, v = line.partition(":")
        if v:
            out[k.strip()] = v.strip()
    return out


def skills() -> list[dict]:
    """Every shipped skill: name, description and its file."""
    out = []
    for f in sorted(SKILLS_DIR.glob("*/SKILL.md")):
        fm = _front_matter(f.read_text(encoding="utf-8"))
        out.append({"name": fm.get("name", f.parent.name), "description": fm.get("description", ""), "path": str(f)})
    return out


def install_skills(dest, *, force: bool = False, names: list[str] | None = None) -> list[str]:
    """Copy the skills to ``dest/<name>/SKILL.md``; an existing different file is kept unless ``force``. What is
    there is read through the one opener (only a regular file: a FIFO or a device is refused in one line, and only
    as many bytes as the shipped skill has) and written through the one writer; a file identical to the shipped
    skill is left as it is."""
    from .. import files
    from ..writer import write_text

    dest = Path(dest)
    chosen = [s for s in skills() if names is None or s["name"] in names]
    unknown = sorted(set(names or []) - {s["name"] for s in chosen})
    if unknown:
        raise UsageError(f"unknown skill(s) {', '.join(unknown)}: known are {', '.join(s['name'] for s in skills())}")
    if files.exists(dest) and not files.is_dir(dest):
        raise OutputError(dest, "is not a folder")
    plan, same = [], set()
    for s in chosen:
        text = Path(s["path"]).read_text(encoding="utf-8")
        target = dest / s["name"] / "SKILL.md"
        if not force and files.probe(target) is not None:  # (a link to nothing is replaced, as a missing file)
            if _holds_text(target, text.encode("utf-8")):
                same.add(target)
            else:
                raise OutputError(target, "exists and differs from the shipped skill (use --force to replace it)")
        plan.append((target, text))
    written = []
    for target, text in plan:
        if target not in same:
            write_text(target, text)
        written.append(str(target))
    return written


def _holds_text(target: Path, want: bytes) -> bool:
    """Whether the file at ``target`` holds exactly ``want`` (a regular file, else one line naming it)."""
    from ..files import open_regular

    with open_regular(target, OutputError) as f:
        if os.fstat(f.fileno()).st_size != len(want):
            return False
        return f.read(len(want) + 1) == want
