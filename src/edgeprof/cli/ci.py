"""The gates where CI shows them (``compare``, ``latency --compare`` and ``history``): ``--junit FILE`` for any CI,
and on GitHub Actions (``--ci github``, or ``auto`` with ``GITHUB_ACTIONS=true``) a step summary appended to
``$GITHUB_STEP_SUMMARY`` and one annotation per check — written before the exit code says it."""

from __future__ import annotations

import os
import sys

import click

from ._base import on_github


def finish(command: str, checks, summary: str, *, ci: str, junit_out: str | None, as_json: bool) -> None:
    """Report ``checks`` (:class:`edgeprof.render.ci.Check`) to the CI, then fail on the first that failed (exit 1).
    ``summary``: the step summary's Markdown. Annotations go to stdout, or to stderr when stdout carries --json."""
    from ..errors import CheckFailed
    from ..render import ci as render
    from ..writer import append_text, write_text

    if junit_out:
        write_text(junit_out, render.junit(command, checks))
    if on_github(ci):
        target = os.environ.get("GITHUB_STEP_SUMMARY")
        if target:
            append_text(target, summary)
        stream = sys.stderr if as_json else sys.stdout
        for line in render.annotation_lines(command, checks):
            click.echo(line, file=stream)
    failed = [c for c in checks if c.failure]
    if failed:
        raise CheckFailed(failed[0].failure)
