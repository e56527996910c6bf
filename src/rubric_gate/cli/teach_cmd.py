"""`rubric-gate teach`: propose label-taught checks for the flawed items a rubric misses."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from rubric_gate.cli.audit_cmd import audit_store_path
from rubric_gate.cli.common import print_json, repo_root, report_output, stdout_console
from rubric_gate.cli.errors import handle_errors
from rubric_gate.errors import EXIT_PASS, JudgeError
from rubric_gate.rubric import load_rubric
from rubric_gate.scoring import load_calibration_for, load_verdicts_for, resolve_path


@click.command("teach")
@click.argument("rubric_spec", metavar="RUBRIC")
@click.option("--judge", help="PROVIDER:MODEL judging the checks and proposals. Default: the rubric's `judge`.")
@click.option("--teacher", help="PROVIDER:MODEL writing the proposals. Default: the judge.")
@click.option("--max", "max_groups", type=click.IntRange(min=1), default=5, show_default=True,
              help="Ask for at most N checks (one per group of missed items, largest groups first).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "yaml"]), default="text", show_default=True,
              help="yaml: only the snippet of kept checks, to paste under `checks:`.")
@click.option("--dry-run", is_flag=True, help="Say which calls would be made and their estimated cost; make none.")
@click.option("--calibration", help="Labeled set (JSONL). Default: the rubric's `calibration`.")
@click.option("--verdicts", help="Verdict store to read and append to. Default: the rubric's `verdicts`.")
@click.option("--audits", type=click.Path(dir_okay=False, path_type=Path),
              help="Store of model answers (JSONL). Default: beside the rubric's verdicts, NAME.audits.jsonl.")
@click.option("--max-calls", type=click.IntRange(min=0), help="Refuse to start a stage that needs more calls.")
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True)
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), help="Repository root for rubric paths.")
@handle_errors
def teach_command(rubric_spec: str, judge: str | None, teacher: str | None, max_groups: int, fmt: str,
                  dry_run: bool, calibration: str | None, verdicts: str | None, audits: Path | None,
                  max_calls: int | None, concurrency: int, root: Path | None) -> int:
    """Write a check for each group of flawed items RUBRIC misses and keep those the gate would
    accept as additions (origin: label, so frozen). Exit 0 done, 2 on bad input or a judge failure."""
    from rubric_gate.audit import AuditStore
    from rubric_gate.judges.prompt import PROMPT_VERSION
    from rubric_gate.scoring import VerdictLookup
    from rubric_gate.teach import teach_checks
    from rubric_gate.teach.render import render_teach_text, snippet
    from rubric_gate.verdicts import VerdictStore

    root = root or repo_root()
    doc = load_rubric(rubric_spec)
    rubric = doc.rubric
    judge = judge or rubric.judge
    if judge is None:
        raise JudgeError("teach judges its proposals: pass --judge PROVIDER:MODEL or set `judge` in the rubric")
    items = load_calibration_for(doc, calibration, root)
    if verdicts is not None:
        store = VerdictStore.load(verdicts, missing_ok=True)
    else:
        store = load_verdicts_for([doc], None, root)
        store.path = resolve_path(root, rubric.verdicts)
    answers = AuditStore.load(audit_store_path(audits, rubric.verdicts, root))
    lookup = VerdictLookup(items, store, rubric, judge=judge, prompt=PROMPT_VERSION)
    report = teach_checks(rubric, doc.display, lookup, answers, judge=judge, teacher=teacher,
                          max_groups=max_groups, dry_run=dry_run, max_calls=max_calls, concurrency=concurrency)
    for stats in report.usage:
        print(stats.summary, file=sys.stderr)
    with report_output():
        if fmt == "json":
            print_json(report.to_dict())
        elif fmt == "yaml":
            sys.stdout.write(snippet(report))
        else:
            render_teach_text(report, stdout_console())
    return EXIT_PASS
