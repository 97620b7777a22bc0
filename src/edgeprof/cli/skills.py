"""``edgeprof skills``: agent skills for edgeprof's workflows."""

from __future__ import annotations

import click

from ._base import CONTEXT, echo_json, main, run_guarded


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
        echo_json({"schema_version": 1, "kind": "skills", "skills": items})
        return
    for s in items:
        click.echo(f"{s['name']}: {s['description']}")


@skills.command("install", context_settings=CONTEXT)
@click.argument("dest", type=click.Path(path_type=str))
@click.option("--force", is_flag=True, help="Replace installed skills that differ from the shipped ones.")
@click.option("--only", "only", multiple=True, help="Install only this skill (repeatable).")
@run_guarded
def install(dest, force, only):
    """Copy the skills to DEST/<name>/SKILL.md (the folder your agent reads skills from)."""
    from ..api.skills import install_skills

    for p in install_skills(dest, force=force, names=list(only) or None):
        click.echo(f"installed {p}", err=True)


@main.command("mcp", context_settings=CONTEXT)
@click.option("--root", "roots", multiple=True, type=click.Path(path_type=str),
              help="A folder the tools may read (repeatable; default: the current folder). Paths outside are refused.")
@click.option("--allow-write", is_flag=True, help="Also offer the tools that write files (analyze, report).")
@run_guarded
def mcp(roots, allow_write):
    """Serve edgeprof's commands as MCP tools over stdio (needs the mcp extra: pip install 'edgeprof[mcp]').

    \b
    edgeprof mcp --root ./runs                      (read-only)
    edgeprof mcp --root . --allow-write             (analyze and report may write their files)
    """
    from .mcp_server import serve

    serve(list(roots), allow_write)
