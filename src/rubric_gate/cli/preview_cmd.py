"""`rubric-gate preview`: what the action would post for a PR from this branch, offline."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from rubric_gate.cli.common import stderr_width, wrap_message
from rubric_gate.cli.errors import handle_errors
from rubric_gate.cli.panel_options import unique_judges


@click.command("preview")
@click.option("--base", "base_ref", default="main", show_default=True, metavar="REF",
              help="The branch the PR will target (its merge base with HEAD is what is gated).")
@click.option("--head", "head_ref", default="HEAD", show_default=True, metavar="REF", help="The PR's branch or commit.")
@click.option("--workflow", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Read the action's inputs from this workflow (default: the one under .github/workflows/ "
                   "that uses rubric-gate).")
@click.option("--judge", "judges", multiple=True, metavar="PROVIDER:MODEL",
              help="Judge what is missing, as the action's `judge` input does (calls the provider's API). "
                   "Default: replay recorded verdicts, offline.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Where to write comment.md, report.json and report.html [default: .rubric-gate/preview].")
@handle_errors
def preview_command(base_ref: str, head_ref: str, workflow: Path | None, judges: tuple[str, ...],
                    out: Path | None) -> int:
    """Run the action's gate on this repository, as for a PR from HEAD into BASE, without GitHub.

    Prints the comment the action would post (Markdown) on stdout and writes it with the JSON and
    HTML reports. Exit codes are the action's: 0 pass, 1 gate failed, 2 bad input.
    """
    from rubric_gate.preview import run_preview
    from rubric_gate.preview.local import REJECTED
    from rubric_gate.report.terminal import strip_controls

    width = stderr_width()

    def echo(kind: str, message: str) -> None:
        # `REJECTED path: why` as check prints a rejected change; `error:` only for bad input (exit 2).
        label = f"{kind} " if kind == REJECTED else f"{kind}: " if kind else ""
        # File names, ids and reasons are the branch's text: printed inert (no terminal escape).
        print(wrap_message(strip_controls(f"rubric-gate preview: {label}{message}"), width), file=sys.stderr)

    result = run_preview(Path.cwd(), base_ref, head_ref, workflow=workflow, judges=tuple(unique_judges(judges)),
                         out=out, echo=echo)
    sys.stdout.write(result.comment)
    sys.stdout.flush()
    shown = ", ".join(str(p.relative_to(Path.cwd())) if p.is_relative_to(Path.cwd()) else str(p)
                      for p in result.written)
    echo(result.summary.decision, f"the action would exit {result.exit_code} "
         f"({result.meaning}); wrote {shown}")
    return result.exit_code
