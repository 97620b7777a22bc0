"""``edgeprof skills``: agent skills for edgeprof's workflows."""

from __future__ import annotations

import click

from ..conventions import SCHEMA_VERSION
from ._base import CONTEXT, echo_json, main, run_guarded, say


@main.group(context_settings=CONTEXT)
def skills():
    """Agent skills (one SKILL.md per workflow: analyze-results, generate-report, collect, compare-and-gate,
    ane-profile, coreml-static, history-regressions), each command block runnable as written.

    \b
    edgeprof skills list
    edgeprof skills install .claude/skills        (Claude Code, this project; ~/.claude/skills for all)
    edgeprof skills install ~/.codex/skills        (Codex)
    """


@skills.command("list", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True)
@run_guarded
def list_(as_json):
    """The shipped skills with their descriptions."""
    from ..api.skills import skills as all_skills

    items = all_skills()
    if as_json:
        echo_json({"schema_version": SCHEMA_VERSION, "kind": "skills", "skills": items})
        return
    for s in items:
        say(f"{s['name']}: {s['description']}")


@skills.command("install", context_settings=CONTEXT)
@click.argument("dest", type=click.Path(path_type=str))
@click.option("--force", is_flag=True, help="Replace installed skills that differ from the shipped ones.")
@click.option("--only", "only", multiple=True, help="Install only this skill (repeatable).")
@run_guarded
def install(dest, force, only):
    """Copy the skills to DEST/<name>/SKILL.md (the folder your agent reads skills from)."""
    from ..api.skills import install_skills

    for p in install_skills(dest, force=force, names=list(only) or None):
        say(f"installed {p}", err=True)


@main.command("mcp", context_settings=CONTEXT)
@click.option("--root", "roots", multiple=True, type=click.Path(path_type=str),
              help="A folder the tools may read (repeatable; default: the current folder). Nothing outside is read "
                   "or written: not the arguments, not what a folder, manifest or store points to.")
@click.option("--allow-write", is_flag=True, help="Also offer the tools that write files (analyze, report).")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds one tool call may run; then it is stopped and answers with one line.")
@click.option("--memory-limit", "memory", default="4GB", show_default=True,
              help="Address space one tool call may use (e.g. 4GB, 1500MB).")
@run_guarded
def mcp(roots, allow_write, timeout, memory):
    """Serve edgeprof's commands as MCP tools over stdio (needs the mcp extra: pip install 'edgeprof[mcp]').

    Each call runs in its own worker process confined to the roots (Landlock where the kernel has it), with
    a time and memory budget.

    \b
    edgeprof mcp --root ./runs                      (read-only)
    edgeprof mcp --root . --allow-write             (analyze and report may write their files)
    """
    from ..conventions import parse_bytes
    from .mcp_server import serve

    serve(list(roots), allow_write, timeout=timeout, memory=parse_bytes(memory, "--memory-limit"))
