"""`rubric-gate check`: gate a rubric edit (base -> head) on the calibration set."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from rubric_gate.cli.common import FORMATS, print_json, repo_root, report_output, stdout_console
from rubric_gate.cli.errors import handle_errors
from rubric_gate.errors import EXIT_GATE_FAILED, EXIT_PASS
from rubric_gate.gate import GateOptions
from rubric_gate.judges.prompt import PROMPT_VERSION
from rubric_gate.pipeline import (
    Evaluation,
    load_calibration_for,
    load_verdicts_for,
    resolve_path,
    run_check,
)
from rubric_gate.report import render_check_text, render_markdown
from rubric_gate.rubric import load_rubric
from rubric_gate.verdicts import VerdictStore


@click.command("check")
@click.option("--base", "base_spec", required=True, help="Base rubric: a file or REF:PATH (read with git).")
@click.option("--head", "head_spec", required=True, help="Head (proposed) rubric: a file or REF:PATH.")
@click.option("--calibration", help="Labeled calibration set (JSONL). Default: the head rubric's `calibration`.")
@click.option("--verdicts", help="Verdict store (JSONL). Default: the rubrics' `verdicts` files, merged.")
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
@click.option("--rates-rule", is_flag=True, help="Also reject any change that lowers a calibration rate (rule R).")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), help="Repository root for rubric paths.")
@click.option("--judge", "judge", help="PROVIDER:MODEL: judge missing pairs live first. Default: the rubric's `judge`.")
@click.option("--replay", is_flag=True, help="Only replay recorded verdicts, even if the rubric names a judge.")
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True, help="Live judge calls in flight.")
@click.option("--max-calls", type=click.IntRange(min=0), help="Refuse to judge if more calls are needed.")
@handle_errors
def check_command(base_spec: str, head_spec: str, calibration: str | None, verdicts: str | None,
                  fmt: str, rates_rule: bool, root: Path | None, judge: str | None, replay: bool,
                  concurrency: int, max_calls: int | None) -> int:
    """Gate every change from BASE to HEAD. Exit 0 pass, 1 gate failed, 2 bad input."""
    root = root or repo_root()
    base = load_rubric(base_spec)
    head = load_rubric(head_spec)
    items = load_calibration_for(head, calibration, root)
    judge = None if replay else judge or head.rubric.judge or base.rubric.judge
    judging = None
    if judge is None:
        store = load_verdicts_for([base, head], verdicts, root)
    else:
        # New verdicts go to --verdicts, else the head rubric's verdict file.
        if verdicts is not None:
            store = VerdictStore.load(verdicts, missing_ok=True)
        else:
            store = load_verdicts_for([base, head], None, root)
            store.path = resolve_path(root, head.rubric.verdicts)
        from rubric_gate.judges.api import judge_missing  # the judging stack loads only to judge

        stats = judge_missing([base.rubric, head.rubric], items, store, judge,
                              concurrency=concurrency, max_calls=max_calls)
        print(stats.summary, file=sys.stderr)
        judging = stats.to_dict()
    evaluation = Evaluation(items, store, judge=judge, prompt=PROMPT_VERSION if judge else None)
    report = run_check(base, head, evaluation, GateOptions(rates_rule=rates_rule))
    report.judging = judging
    with report_output():
        if fmt == "json":
            print_json(report.to_dict())
        elif fmt == "markdown":
            sys.stdout.write(render_markdown(report))
        else:
            render_check_text(report, stdout_console())
    return EXIT_PASS if report.decision == "pass" else EXIT_GATE_FAILED
