"""`rubric-gate audit`: audit a rubric's checks (structure, grounding in the task, fool rate)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from rubric_gate.cli.common import FORMATS, print_json, repo_root, report_output, stdout_console
from rubric_gate.cli.errors import handle_errors
from rubric_gate.errors import (
    EXIT_BAD_INPUT,
    EXIT_GATE_FAILED,
    EXIT_PASS,
    InputError,
    JudgeError,
)
from rubric_gate.llm.accounting import listed, run_totals
from rubric_gate.report.terminal import strip_controls
from rubric_gate.rubric import load_rubric
from rubric_gate.scoring import load_calibration_for, resolve_path

if TYPE_CHECKING:
    from rubric_gate.audit import AuditReport


def audit_store_path(audits: Path | None, verdicts: str, root: Path) -> Path:
    from rubric_gate.audit import default_audit_path

    return audits if audits is not None else default_audit_path(resolve_path(root, verdicts))


@click.command("audit")
@click.option("--rubric", "rubric_spec", required=True, help="Rubric file or REF:PATH.")
@click.option("--check", "check_ids", multiple=True, help="Audit only this check id (repeatable). Default: every check.")
@click.option("--judge", "judges", multiple=True,
              help="PROVIDER:MODEL (repeatable: the majority decides). Default: the rubric's `judge`; "
                   "with none, stored audits are replayed.")
@click.option("--audits", type=click.Path(dir_okay=False, path_type=Path),
              help="Audit store (JSONL) to read and append to. Default: beside the rubric's verdicts, "
                   "NAME.audits.jsonl.")
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
@click.option("--audit-rule", is_flag=True, help="Exit 1 when any audited check has a finding.")
@click.option("--adversarial", "adversarial", type=click.IntRange(min=0), default=0, show_default=True,
              help="Adversarial fool rate: N attack outputs per check (needs --attacker and --verifier).")
@click.option("--attacker", help="PROVIDER:MODEL that writes outputs meant to fool the judge.")
@click.option("--verifier", help="PROVIDER:MODEL that checks, blind to the attack, each output the judge passed.")
@click.option("--calibration", help="Labeled set whose inputs the attacks use. Default: the rubric's `calibration`.")
@click.option("--preference-fit", is_flag=True,
              help="Preference fit on --pairs (PReMISE 3.2): judge accuracy with and without the rubric, "
                   "applicability, effective dimensionality, a Bradley-Terry fit.")
@click.option("--pairs", "pairs_path", type=click.Path(dir_okay=False, path_type=Path),
              help='Preference pairs (JSONL: {"id", "prompt", "chosen", "rejected"}) for --preference-fit.')
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True)
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), help="Repository root for rubric paths.")
@handle_errors
def audit_command(rubric_spec: str, check_ids: tuple[str, ...], judges: tuple[str, ...], audits: Path | None,
                  fmt: str, audit_rule: bool, adversarial: int, attacker: str | None, verifier: str | None,
                  calibration: str | None, preference_fit: bool, pairs_path: Path | None, concurrency: int,
                  root: Path | None) -> int:
    """Audit each check of RUBRIC (or the named ones): the five structural properties and grounding
    in the task. Exit 0 done (1 with --audit-rule and a finding), 2 on bad input or a judge failure."""
    from rubric_gate.audit import (
        AuditReport,
        AuditStore,
        audit_checks,
        render_audit_markdown,
        render_audit_text,
        uninformative_notices,
    )

    root = root or repo_root()
    doc = load_rubric(rubric_spec)
    rubric = doc.rubric
    unknown = [c for c in check_ids if c not in rubric.check_ids]
    if unknown:
        raise InputError(doc.display, f"unknown check id '{unknown[0]}' (known: {', '.join(rubric.check_ids)})")
    checks = [c for c in rubric.checks if not check_ids or c.id in check_ids]
    judge_list = list(judges) or ([rubric.judge] if rubric.judge else [])
    if adversarial and not (attacker and verifier and judge_list):
        raise JudgeError("--adversarial needs --attacker PROVIDER:MODEL, --verifier PROVIDER:MODEL and a judge")
    if preference_fit and not (pairs_path and judge_list):
        raise JudgeError("--preference-fit needs --pairs FILE and a judge (--judge PROVIDER:MODEL)")
    pairs = None
    if preference_fit and pairs_path is not None:  # both or neither: checked above
        from rubric_gate.pairs import load_pairs

        pairs = load_pairs(pairs_path)  # bad lines fail before any call
    store = AuditStore.load(audit_store_path(audits, rubric.verdicts, root))
    # Every step runs whatever the others did: a step without a valid answer is a notice, the
    # rest is reported, and the exit code says what is missing (see `_exit_code`).
    found, usage = audit_checks(rubric.task, checks, judge_list, store, check_lines=doc.check_lines,
                                concurrency=concurrency, partial=True)
    audited = {a.check for a in found}
    unanswered = [c.id for c in checks if c.id not in audited]
    notices = []
    if unanswered:
        failures = [f for stats in usage for f in stats.failures]
        notices.append(f"{len(unanswered)} check(s) not audited ({', '.join(unanswered)}): no valid answer, none "
                       f"guessed: {listed(failures)}")
    notices += uninformative_notices(usage)
    advice_failed = False
    if adversarial:
        from rubric_gate.audit.adversarial import fool_rates

        items = load_calibration_for(doc, calibration, root).items
        try:
            rates, attack_usage = fool_rates(rubric.task, checks, items, adversarial, attacker=attacker or "",
                                             judge=judge_list[0], verifier=verifier or "", store=store,
                                             concurrency=concurrency)
        except JudgeError as exc:
            advice_failed = True
            usage += run_totals(exc)
            notices.append(f"The adversarial fool rate did not finish: {strip_controls(exc.message)}")
        else:
            usage += attack_usage
            for audit in found:
                audit.attempts, audit.fools = rates[audit.check]
    fit = None
    if pairs is not None and pairs_path is not None:
        from rubric_gate.cli.preference_fit import run_preference_fit

        try:
            fit = run_preference_fit(rubric, checks, pairs, pairs_path, judge_list[0], store, concurrency)
        except JudgeError as exc:
            advice_failed = True
            usage += run_totals(exc)
            notices.append(f"The preference fit did not finish: {strip_controls(exc.message)}")
        else:
            usage += fit.usage
    report = AuditReport(rubric.id, doc.display, found, usage, unanswered=unanswered, notices=notices)
    for stats in usage:
        print(stats.summary, file=sys.stderr)
    for notice in notices:
        print(f"rubric-gate: notice: {notice}", file=sys.stderr)
    with report_output():
        if fmt == "json":
            data = report.to_dict()
            if fit is not None:
                data["preference_fit"] = fit.to_dict()
            print_json(data)
        elif fmt == "markdown":
            sys.stdout.write(render_audit_markdown(report, heading_level=2, title=f"Check audit: {rubric.id}"))
            if fit is not None:
                from rubric_gate.preference import render_preference_markdown

                sys.stdout.write(render_preference_markdown(fit))
        else:
            render_audit_text(report, stdout_console())
            if fit is not None:
                from rubric_gate.preference import render_preference_text

                render_preference_text(fit, stdout_console())
    return _exit_code(report, audit_rule=audit_rule, advice_failed=advice_failed)


def _exit_code(report: AuditReport, *, audit_rule: bool, advice_failed: bool) -> int:
    """With --audit-rule the audit decides: a finding fails (1) whatever else is missing, no
    finding passes (0) once every check is audited, and unaudited checks leave no decision (2);
    the fool rate and the preference fit are advice. Without it, nothing is decided: 2 when a
    step has no valid answer, else 0."""
    if audit_rule:
        if not report.passed:
            return EXIT_GATE_FAILED
        return EXIT_BAD_INPUT if report.unanswered else EXIT_PASS
    return EXIT_BAD_INPUT if report.unanswered or advice_failed else EXIT_PASS
