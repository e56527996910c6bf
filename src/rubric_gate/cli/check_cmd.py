"""`rubric-gate check`: gate a rubric edit (base -> head) on the calibration set."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from rubric_gate.cli.common import FORMATS, print_json, repo_root, stdout_console
from rubric_gate.cli.errors import handle_errors
from rubric_gate.errors import EXIT_GATE_FAILED, EXIT_PASS
from rubric_gate.gate import GateOptions
from rubric_gate.pipeline import (
    Evaluation,
    load_calibration_for,
    load_rubric_spec,
    load_verdicts_for,
    run_check,
)
from rubric_gate.report import render_check_text, render_markdown


@click.command("check")
@click.option("--base", "base_spec", required=True, help="Base rubric: a file or REF:PATH (read with git).")
@click.option("--head", "head_spec", required=True, help="Head (proposed) rubric: a file or REF:PATH.")
@click.option("--calibration", help="Labeled calibration set (JSONL). Default: the head rubric's `calibration`.")
@click.option("--verdicts", help="Verdict store (JSONL). Default: the rubrics' `verdicts` files, merged.")
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
@click.option("--rates-rule", is_flag=True, help="Also reject any change that lowers a calibration rate (rule R).")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), help="Repository root for rubric paths.")
@handle_errors
def check_command(base_spec: str, head_spec: str, calibration: str | None, verdicts: str | None,
                  fmt: str, rates_rule: bool, root: Path | None) -> int:
    """Gate every change from BASE to HEAD. Exit 0 pass, 1 gate failed, 2 bad input."""
    root = root or repo_root()
    base = load_rubric_spec(base_spec)
    head = load_rubric_spec(head_spec)
    items = load_calibration_for(head, calibration, root)
    store = load_verdicts_for([base, head], verdicts, root)
    report = run_check(base, head, Evaluation(items, store), GateOptions(rates_rule=rates_rule))
    if fmt == "json":
        print_json(report.to_dict())
    elif fmt == "markdown":
        sys.stdout.write(render_markdown(report))
    else:
        render_check_text(report, stdout_console())
    return EXIT_PASS if report.decision == "pass" else EXIT_GATE_FAILED
