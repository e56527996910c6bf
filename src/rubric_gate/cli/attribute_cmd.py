"""`rubric-gate attribute`: one rubric's per-check credit, blame and unique catches."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import click

from rubric_gate.cli.common import FORMATS, print_json, repo_root, report_output, stdout_console
from rubric_gate.cli.errors import handle_errors
from rubric_gate.errors import EXIT_PASS
from rubric_gate.report import render_attribution_markdown, render_attribution_text
from rubric_gate.rubric import load_rubric
from rubric_gate.scoring import (
    VerdictLookup,
    attribute_rubric,
    load_calibration_for,
    load_verdicts_for,
)


@click.command("attribute")
@click.argument("rubric_spec", metavar="RUBRIC")
@click.option("--calibration", help="Labeled calibration set (JSONL). Default: the rubric's `calibration`.")
@click.option("--verdicts", help="Verdict store (JSONL). Default: the rubric's `verdicts`.")
@click.option("--split", type=click.Choice(["calibration", "evaluation", "all"]), default="calibration",
              show_default=True, help="Which items of the labeled set to score.")
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), help="Repository root for rubric paths.")
@handle_errors
def attribute_command(rubric_spec: str, calibration: str | None, verdicts: str | None, split: str, fmt: str,
                      root: Path | None) -> int:
    """Print RUBRIC's per-check attribution and rates on its calibration set."""
    root = root or repo_root()
    doc = load_rubric(rubric_spec)
    items = load_calibration_for(doc, calibration, root, split)
    store = load_verdicts_for([doc], verdicts, root, replay=True)
    summary = replace(attribute_rubric(doc, VerdictLookup(items, store, doc.rubric)), split=split)
    with report_output():
        if fmt == "json":
            print_json(summary.to_dict())
        elif fmt == "markdown":
            sys.stdout.write(render_attribution_markdown(summary))
        else:
            render_attribution_text(summary, stdout_console())
    return EXIT_PASS
