"""`rubric-gate judge`: ask a live judge (or, with --batch, the provider's batch API) every
(check, item) pair the verdict file lacks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from rubric_gate.batch import DEFAULT_POLL_INTERVAL_S
from rubric_gate.cli.common import print_json, repo_root
from rubric_gate.cli.errors import handle_errors
from rubric_gate.cli.panel_options import samples_option, unique_judges
from rubric_gate.errors import EXIT_PASS, JudgeError
from rubric_gate.rubric import load_rubric
from rubric_gate.scoring import load_calibration_for
from rubric_gate.verdicts import VerdictStore

if TYPE_CHECKING:
    from rubric_gate.judges.prompt import Mode  # the judging stack loads only to judge

@click.command("judge")
@click.option("--rubric", "rubric_specs", multiple=True, required=True,
              help="Rubric file or REF:PATH; repeat for several versions (e.g. base and head).")
@click.option("--calibration", help="Labeled calibration set (JSONL). Default: the last rubric's `calibration`.")
@click.option("--verdicts", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Verdict file (JSONL) to read and append to.")
@click.option("--judge", "judge_specs", multiple=True,
              help="PROVIDER:MODEL, e.g. anthropic:claude-sonnet-4-6; repeat (or comma-separate) for several "
                   "judges, each kept apart. Default: the rubric's `judge`.")
@samples_option
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True)
@click.option("--max-calls", type=click.IntRange(min=0), help="Refuse to start if more calls are needed.")
@click.option("--dry-run", is_flag=True, help="Print how many calls would be made and their estimated cost.")
@click.option("--mode", type=click.Choice(["per-check", "checklist"]), default="per-check", show_default=True,
              help="One call per (check, item), or one call per item for all its pending checks.")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a terminal; log lines in CI).")
@click.option("--batch", is_flag=True, help="Judge through the provider's batch API (half price, results within 24 h).")
@click.option("--no-wait", is_flag=True, help="With --batch: submit, print what is pending and exit 0; re-run to collect.")
@click.option("--poll-interval", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_POLL_INTERVAL_S,
              show_default=True, help="With --batch: seconds between batch status checks.")
@click.option("--json", "fmt", flag_value="json", default="text",
              help="Print the run statistics as one JSON object (with the error and the totals when it fails).")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), help="Repository root for rubric paths.")
@handle_errors
def judge_command(rubric_specs: tuple[str, ...], calibration: str | None, verdicts: Path,
                  judge_specs: tuple[str, ...], samples: int,
                  concurrency: int, max_calls: int | None, dry_run: bool, mode: Mode, progress: bool | None,
                  batch: bool, no_wait: bool, poll_interval: float, fmt: str, root: Path | None) -> int:
    """Judge every pair missing from VERDICTS for the given rubrics. Exit 0 done, 2 on error."""
    root = root or repo_root()
    docs = [load_rubric(spec) for spec in rubric_specs]
    judges = unique_judges(judge_specs)
    default = next((d.rubric.judge for d in reversed(docs) if d.rubric.judge), None)
    if not judges and default:
        judges = [default]
    if not judges:
        raise JudgeError("no judge: pass --judge PROVIDER:MODEL or set `judge` in the rubric")
    items = load_calibration_for(docs[-1], calibration, root)
    store = VerdictStore.load(verdicts, missing_ok=True)
    if no_wait and not batch:
        raise click.UsageError("--no-wait only applies with --batch")
    if batch:
        if samples > 1:
            raise click.UsageError("--batch asks each pair once: drop --samples, or judge samples live")
        from rubric_gate.batch import judge_in_batches

        outcomes = []
        for judge in judges:
            outcome = judge_in_batches([d.rubric for d in docs], items, store, judge, mode=mode,
                                       max_calls=max_calls, dry_run=dry_run, wait_seconds=0 if no_wait else None,
                                       poll_interval=poll_interval, progress=progress)
            outcomes.append(outcome)
        if fmt == "json":  # one object: a judge's statistics, or several judges' under "judges"
            print_json(outcomes[0].to_dict() if len(outcomes) == 1 else {"judges": [o.to_dict() for o in outcomes]})
        else:
            for outcome in outcomes:
                print(outcome.summary, file=sys.stdout)
        return EXIT_PASS
    from rubric_gate.ensemble.measure import raise_panel
    from rubric_gate.judges.api import judge_missing  # loads asyncio and the SDKs only when judging
    from rubric_gate.service.stats import combined_stats

    runs, failed = [], []
    for judge in judges:  # every judge is asked, even after one fails; the failures end the run together
        try:
            runs.append(judge_missing([d.rubric for d in docs], items, store, judge, concurrency=concurrency,
                                      max_calls=max_calls, dry_run=dry_run, mode=mode,
                                      progress=progress, samples=samples))
        except JudgeError as exc:
            failed.append(exc)
    if failed:
        raise_panel(failed, runs)
    if fmt == "json":
        # One object: one judge's statistics, as before; several judges' totals and each under "judges".
        print_json(runs[0].to_dict() if len(runs) == 1 else combined_stats(runs))
    else:
        for run in runs:
            print(run.summary, file=sys.stdout)
    return EXIT_PASS
