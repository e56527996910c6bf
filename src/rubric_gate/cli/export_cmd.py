"""`rubric-gate export`: a gated rubric written for promptfoo, OpenAI's graders or inspect_ai."""

from __future__ import annotations

import sys

import click

from rubric_gate.cli.common import report_output
from rubric_gate.cli.errors import handle_errors
from rubric_gate.errors import EXIT_PASS
from rubric_gate.integrations.export import FORMATS, export
from rubric_gate.rubric import load_rubric


@click.command("export")
@click.argument("rubric_spec", metavar="RUBRIC")
@click.option("--to", "fmt", type=click.Choice(FORMATS), required=True,
              help="promptfoo: a defaultTest assertion block; openai-graders: a multi grader (JSON), one label "
                   "grader per check; inspect: an inspect_ai task file using rubric_scorer.")
@click.option("--model", help="openai-graders: the grader model. Default: the rubric's openai judge, else "
                              "gpt-4o-mini-2024-07-18.")
@handle_errors
def export_command(rubric_spec: str, fmt: str, model: str | None) -> int:
    """Write RUBRIC's checks for another eval tool, on stdout."""
    doc = load_rubric(rubric_spec)
    with report_output():
        sys.stdout.write(export(doc.rubric, fmt, rubric_spec, model))
    return EXIT_PASS
