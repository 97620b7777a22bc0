"""The `edgeprof …` command lines the documentation (the README and the site's pages, in reading order:
tools/docs_pages.py) and the shipped skills show: the shell code blocks fence by fence, and the prose's inline
code spans that are whole commands (not synopses with [ ] | …). One extraction serves the test that parses every
line and the test that runs them."""

from __future__ import annotations

import re
import sys

from testdata import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import docs_pages

SHELL = ("bash", "sh", "console", "")
DOC_PAGES = docs_pages.pages()
SKILL_DOCS = sorted((ROOT / "src" / "edgeprof" / "skills").glob("*/SKILL.md"))
INLINE = re.compile(r"(?<!`)`(edgeprof [^`]+)`(?!`)")


def blocks(text: str, langs=SHELL):
    """(info string, text) of each fenced code block whose info string is one of ``langs``."""
    block, lang = None, None
    for line in text.splitlines():
        if line.startswith("```"):
            if block is None:
                block, lang = [], line[3:].strip()
            else:
                if lang in langs:
                    yield lang, "\n".join(block)
                block = None
        elif block is not None:
            block.append(line)


def block_commands(block: str) -> list[str]:
    """The `edgeprof …` commands of one block, in order (continuations joined, comments and the shell's
    `&&`, `||`, `;`, `|` separating them)."""
    out = []
    text = re.sub(r"\\\n\s*", " ", block)
    for line in text.splitlines():
        line = line.split(" #", 1)[0].strip()
        for part in re.split(r"&&|\|\||;|\|", line):
            part = part.strip()
            if part.startswith("edgeprof "):
                out.append(part)
    return out


def doc_blocks(langs=SHELL):
    """(page, info string, text) of every fenced block of the documentation, in reading order."""
    for page in DOC_PAGES:
        for lang, block in blocks(page.read_text(), langs):
            yield page, lang, block


def command_lines():
    """(document label, block language, command) for every command of every shell block."""
    for doc in [*DOC_PAGES, *SKILL_DOCS]:
        label = doc.parent.name if doc.name == "SKILL.md" else str(doc.relative_to(ROOT))
        for lang, block in blocks(doc.read_text()):
            for part in block_commands(block):
                yield label, lang, part


def inline_commands() -> list[str]:
    """`edgeprof …` code spans in the documentation's prose (a span broken over two lines is joined)."""
    seen: list[str] = []
    for span in INLINE.findall(docs_pages.text()):
        for part in re.split(r"&&|;", " ".join(span.split())):
            part = part.strip()
            if not part.startswith("edgeprof ") or any(m in part for m in ("[", "|", "…", "...", "<", "{")) \
                    or part in seen:
                continue
            seen.append(part)
    return seen


WRITES = ("--out", "--html", "--as-anemll", "--to", "--output-dir")


def stated_outputs(args: list[str]) -> list[tuple[str, bool]]:
    """The files a command is told to write — (path, is a JSON document): a `--json` redirection's target, and
    the value of each option that names an output."""
    out = []
    for i, a in enumerate(args[:-1]):
        if a in WRITES:
            out.append((args[i + 1], False))
        elif a == ">" and "--json" in args[:i]:
            out.append((args[i + 1], True))
    return out
