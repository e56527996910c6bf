"""`rubric-gate drift`: ask each rubric's judge again on a sample of the pairs it answered, and say
whether its answers drifted from the stored ones."""

from __future__ import annotations

import secrets
import sys
from pathlib import Path

import click

from rubric_gate.cli.common import FORMATS, print_json, repo_root, report_output, stdout_console
from rubric_gate.cli.errors import handle_errors
from rubric_gate.cli.panel_options import unique_judges
from rubric_gate.errors import EXIT_GATE_FAILED, EXIT_PASS, InputError
from rubric_gate.rubric import load_rubric
from rubric_gate.scoring import load_calibration_for, load_verdicts_for


@click.command("drift")
@click.argument("rubric_specs", nargs=-1, required=True, metavar="RUBRIC...")
@click.option("--sample", "sample_size", type=click.IntRange(min=1), default=200, show_default=True,
              help="Stored pairs to ask again per rubric (stratified by check and stored answer).")
@click.option("--judge", "judge_spec", metavar="PROVIDER:MODEL",
              help="The judge to ask again. Default: each rubric's `judge` (a rubric without one is skipped).")
@click.option("--max-flip-rate", type=click.FloatRange(0, 1), default=0.05, show_default=True,
              help="Drifted when the estimated share of stored pairs answering otherwise now is above this.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True,
              help="Drifted when the flips lean one way with an exact McNemar p below this.")
@click.option("--seed", type=click.IntRange(min=0), help="Seed of the sample (default: a new one, printed).")
@click.option("--calibration", help="Labeled set (JSONL). Default: each rubric's `calibration`.")
@click.option("--verdicts", help="Verdict store (JSONL). Default: each rubric's `verdicts`.")
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True, help="Calls in flight.")
@click.option("--max-calls", type=click.IntRange(min=0), help="Judge calls for the whole run: refuse to ask past it.")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), help="Repository root for rubric paths.")
@handle_errors
def drift_command(rubric_specs: tuple[str, ...], sample_size: int, judge_spec: str | None, max_flip_rate: float,
                  alpha: float, seed: int | None, calibration: str | None, verdicts: str | None, fmt: str,
                  concurrency: int, max_calls: int | None, root: Path | None) -> int:
    """Ask each RUBRIC's judge again on a sample of its stored verdicts; exit 1 if it drifted."""
    from rubric_gate.drift import DriftReport, Thresholds, drift_rubric

    root = root or repo_root()
    seed = secrets.randbelow(2**31) if seed is None else seed
    thresholds = Thresholds(max_flip_rate, alpha)
    report = DriftReport()
    spent = 0
    for spec in rubric_specs:
        doc = load_rubric(spec)
        judges = unique_judges([judge_spec or doc.rubric.judge or ""])
        if not judges:
            report.skipped.append((doc.display, "no judge configured (its `judge` key, or --judge)"))
            continue
        items = load_calibration_for(doc, calibration, root, "all")  # every stored pair, held-out items too
        store = load_verdicts_for([doc], verdicts, root)  # no file: no stored verdict, said below
        for judge in judges:
            left = None if max_calls is None else max(0, max_calls - spent)
            result = drift_rubric(doc, items, store, judge, sample=sample_size, seed=seed, thresholds=thresholds,
                                  concurrency=concurrency, max_calls=left)
            spent += int((result.judging or {}).get("calls") or 0)
            report.rubrics.append(result)
    if not report.rubrics:
        raise InputError(", ".join(rubric_specs), "no rubric names a judge: pass --judge PROVIDER:MODEL")
    with report_output():
        if fmt == "json":
            print_json(report.to_dict())
        elif fmt == "markdown":
            from rubric_gate.drift.render import render_drift_markdown

            sys.stdout.write(render_drift_markdown(report))
        else:
            from rubric_gate.drift.render import render_drift_text

            render_drift_text(report, stdout_console())
    return EXIT_GATE_FAILED if report.drifted else EXIT_PASS
