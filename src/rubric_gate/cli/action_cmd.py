"""`rubric-gate action`: the GitHub Action's entry point, configured only by the Actions environment."""

from __future__ import annotations

import click

from rubric_gate.cli.errors import handle_errors


@click.command("action")
@handle_errors
def action_command() -> int:
    """Gate a pull request's rubric edits (run by the GitHub Action; reads GITHUB_* and INPUT_* variables).

    Exit 0 pass, 1 gate failed, 2 bad input, 3 a crash (a bug; the traceback goes to a log file).
    """
    from rubric_gate.action import run_action  # PyGithub loads only for this command

    return run_action()
