"""`rubric-gate judge`: ask a live judge every (check, item) pair the verdict file lacks."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from rubric_gate.cli.common import print_json, repo_root
from rubric_gate.cli.errors import handle_errors
from rubric_gate.errors import EXIT_PASS, JudgeError
from rubric_gate.pipeline import load_calibration_for
from rubric_gate.rubric import load_rubric
from rubric_gate.verdicts import VerdictStore


@click.command("judge")
@click.option("--rubric", "rubric_specs", multiple=True, required=True,
              help="Rubric file or REF:PATH; repeat for several versions (e.g. base and head).")
@click.option("--calibration", help="Labeled calibration set (JSONL). Default: the last rubric's `calibration`.")
@click.option("--verdicts", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Verdict file (JSONL) to read and append to.")
@click.option("--judge", "judge", help="PROVIDER:MODEL, e.g. anthropic:claude-sonnet-4-6. Default: the rubric's `judge`.")
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True)
@click.option("--max-calls", type=click.IntRange(min=0), help="Refuse to start if more calls are needed.")
@click.option("--dry-run", is_flag=True, help="Print how many calls would be made and their estimated cost.")
@click.option("--mode", type=click.Choice(["per-check", "checklist"]), default="per-check", show_default=True,
              help="One call per (check, item), or one call per item for all its pending checks.")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a terminal; log lines in CI).")
@click.option("--json", "as_json", is_flag=True, help="Print the run statistics as JSON.")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), help="Repository root for rubric paths.")
@handle_errors
def judge_command(rubric_specs: tuple[str, ...], calibration: str | None, verdicts: Path, judge: str | None,
                  concurrency: int, max_calls: int | None, dry_run: bool, mode: str, progress: bool | None,
                  as_json: bool, root: Path | None) -> int:
    """Judge every pair missing from VERDICTS for the given rubrics. Exit 0 done, 2 on error."""
    root = root or repo_root()
    docs = [load_rubric(spec) for spec in rubric_specs]
    judge = judge or next((d.rubric.judge for d in reversed(docs) if d.rubric.judge), None)
    if judge is None:
        raise JudgeError("no judge: pass --judge PROVIDER:MODEL or set `judge` in the rubric")
    items = load_calibration_for(docs[-1], calibration, root)
    store = VerdictStore.load(verdicts, missing_ok=True)
    from rubric_gate.judges.api import judge_missing  # loads asyncio and the SDKs only when judging

    stats = judge_missing([d.rubric for d in docs], items, store, judge, concurrency=concurrency,
                          max_calls=max_calls, dry_run=dry_run, mode=mode,  # type: ignore[arg-type]
                          progress=progress)
    if as_json:
        print_json(stats.to_dict())
    else:
        print(stats.summary, file=sys.stdout)
    return EXIT_PASS
