"""`rubric-gate check`: gate a rubric edit (base -> head) on the calibration set."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from rubric_gate.batch import DEFAULT_POLL_INTERVAL_S
from rubric_gate.cli.check_audit_repair import AuditRepairSteps, audit_repair_options
from rubric_gate.cli.common import (
    FORMATS,
    print_json,
    repo_root,
    report_output,
    stderr_width,
    stdout_console,
    wrap_message,
)
from rubric_gate.cli.errors import handle_errors
from rubric_gate.cli.panel_options import samples_option, unique_judges
from rubric_gate.errors import EXIT_GATE_FAILED, EXIT_PASS, JudgeError
from rubric_gate.gate import parse_gates
from rubric_gate.rubric import RubricDocument, load_rubric
from rubric_gate.scoring import (
    load_calibration_for,
    load_verdicts_for,
    resolve_path,
)
from rubric_gate.service import CallBudget, GateRequest, RequestError, run_gate_request
from rubric_gate.verdicts import VerdictStore


@click.command("check")
@click.option("--base", "base_spec", required=True, help="Base rubric: a file or REF:PATH (read with git).")
@click.option("--head", "head_spec", required=True, help="Head (proposed) rubric: a file or REF:PATH.")
@click.option("--calibration", help="Labeled calibration set (JSONL). Default: the head rubric's `calibration`.")
@click.option("--verdicts", help="Verdict store (JSONL). Default: the rubrics' `verdicts` files, merged.")
@click.option("--format", "fmt", type=click.Choice([*FORMATS.choices, "html"]), default="text", show_default=True,
              help="html: one self-contained page with charts.")
@click.option("--gates", "gates_spec", default="S+P", show_default=True, metavar="GATES",
              help="Which gates decide, joined by '+': S (attribution), P (provenance), R (rates), e.g. S, P, R+P, "
                   "R+S+P. U and A are on with --min-stability and --audit-rule; naming them here needs those.")
@click.option("--rates-rule", is_flag=True, help="Also reject any change that lowers a calibration rate (rule R): "
                                                 "the same as adding R to --gates.")
@click.option("--reject-correct-drop-at", "correct_drop_alpha", type=click.FloatRange(0, 1, min_open=True), default=None,
              help="Also fail when the head as proposed passes fewer correct items than the base with an exact "
                   "McNemar p-value below ALPHA (e.g. 0.05). Off by default.")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), help="Repository root for rubric paths.")
@click.option("--judge", "judge_specs", multiple=True,
              help="PROVIDER:MODEL: judge missing pairs live first; repeat (or comma-separate) for a panel "
                   "gated on the per-pair majority. Default: the rubric's `judge`.")
@samples_option
@click.option("--paraphrases", type=click.IntRange(min=0), default=0, show_default=True,
              help="Have a model reword each added or reworded check P times and judge the rewordings.")
@click.option("--paraphraser", help="PROVIDER:MODEL writing the paraphrases. Default: the first judge.")
@click.option("--min-stability", type=click.FloatRange(0, 1), default=None,
              help="Reject an added or reworded check whose stability is below T: the lower of the mean "
                   "paraphrase kappa (Cohen's, chance-corrected) and 1 - flip rate.")
@click.option("--replay", is_flag=True, help="Only replay recorded verdicts, even if the rubric names a judge.")
@click.option("--against-judge", "against_specs", multiple=True, metavar="PROVIDER:MODEL",
              help="Gate a judge change (rule J): compare the judge(s) of this run with this old judge (repeat for a "
                   "panel; 'recorded' for the recorded verdicts) on the calibration set. Default: the base rubric's "
                   "`judge` when the head names another one.")
@click.option("--judge-change-alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="Rule J rejects a judge change that lowers a rate with an exact McNemar p "
                                      "below this level.")
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True, help="Live judge calls in flight.")
@click.option("--max-calls", type=click.IntRange(min=0),
              help="Judge calls for the whole run (judging, then repairs): refuse to judge past it.")
@click.option("--batch", is_flag=True, help="Judge missing pairs through the provider's batch API, waiting for it.")
@click.option("--poll-interval", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_POLL_INTERVAL_S,
              show_default=True, help="With --batch: seconds between batch status checks.")
@audit_repair_options
@handle_errors
def check_command(base_spec: str, head_spec: str, calibration: str | None, verdicts: str | None,
                  fmt: str, rates_rule: bool, root: Path | None, judge_specs: tuple[str, ...], samples: int,
                  paraphrases: int, paraphraser: str | None, min_stability: float | None,
                  replay: bool, concurrency: int, max_calls: int | None, batch: bool, poll_interval: float,
                  correct_drop_alpha: float | None = None, gates_spec: str = "S+P",
                  against_specs: tuple[str, ...] = (), judge_change_alpha: float = 0.05, **step_args: Any) -> int:
    """Gate every change from BASE to HEAD. Exit 0 pass, 1 gate failed, 2 bad input."""
    gates = _gates(gates_spec, min_stability, bool(step_args.get("audit_rule")))
    root = root or repo_root()
    base = load_rubric(base_spec)
    head = load_rubric(head_spec)
    items = load_calibration_for(head, calibration, root)
    judges = unique_judges(judge_specs)
    if replay and (samples > 1 or len(judges) > 1 or paraphrases):
        raise JudgeError("--samples, --paraphrases and several --judge ask live judges; drop --replay")
    rubric_judge = head.rubric.judge or base.rubric.judge
    if not judges and rubric_judge:
        judges = unique_judges([rubric_judge])  # a comma-separated key is a panel, as `--judge a,b` is
    if replay:
        if against_specs:
            raise JudgeError("--against-judge compares two judges; drop --replay")
        judges = []
    against = judge_change_sides(against_specs, base, head, tuple(judges), replay)
    steps = AuditRepairSteps(**step_args)  # the options `audit_repair_options` declares
    request = _request(steps, head, root, judges=tuple(judges), samples=samples, paraphrases=paraphrases,
                       paraphraser=paraphraser, min_stability=min_stability, batch=batch, poll_interval=poll_interval,
                       concurrency=concurrency, gates=gates, rates_rule=rates_rule,
                       reject_correct_drop_at=correct_drop_alpha,
                       judge_change=None if against is None else (against, tuple(judges)),
                       judge_change_alpha=judge_change_alpha)
    if request.judge is None and not any(request.sides):
        store = load_verdicts_for([base, head], verdicts, root, replay=True)
    elif verdicts is not None:  # new verdicts go to --verdicts, else the head rubric's verdict file
        store = VerdictStore.load(verdicts, missing_ok=True)
    else:
        store = load_verdicts_for([base, head], None, root)
        store.path = resolve_path(root, head.rubric.verdicts)
    run = run_gate_request(base, head, items, store, request, CallBudget(max_calls),
                           audit_store=lambda: steps.store(head, root))
    steps.took(run)
    notices = [*run.judged.warnings, *run.notices]  # advice that failed: said, never the end of the run
    for stats in run.usage:
        print(stats.summary, file=sys.stderr)
    for notice in notices:
        print(wrap_message(f"rubric-gate: notice: {notice}", stderr_width()), file=sys.stderr)
    report = run.report
    assert report is not None  # `check --batch` waits for its batches
    view = None
    if base.source.ref is not None and request.judge is None:
        # One answer to one question: whether preview and the action, which weigh this branch's
        # recorded verdicts as a PR's own, would decide otherwise, and why.
        from rubric_gate.cli.check_action_view import action_view
        from rubric_gate.report.terminal import strip_controls

        view = action_view(base.source.ref, base, head, items, report, run.options, root)
        # Item ids and paths are the working tree's text: printed inert, wrapped to the terminal.
        print(wrap_message(strip_controls(view.line), stderr_width()), file=sys.stderr)
    if request.batch and report.judging:
        print(report.judging.get("summary", ""), file=sys.stderr)
    with report_output():
        if fmt == "json":
            data = report.to_dict()
            steps.add_json(data)
            data["notices"] = notices
            if run.usage:
                data["advice_usage"] = [stats.to_dict() for stats in run.usage]
            if view is not None:
                data["action_view"] = view.to_dict()
            print_json(data)
        elif fmt == "markdown":
            from rubric_gate.report import render_markdown  # each format loads its renderer only
            from rubric_gate.report.markdown import neutralize

            shown = "".join(f"\n> [!NOTE]\n> {neutralize(n, table=False)}\n" for n in notices)
            sys.stdout.write(render_markdown(report) + steps.markdown() + shown)
        elif fmt == "html":
            from rubric_gate.report import render_html

            sys.stdout.write(render_html(report))
        else:
            from rubric_gate.report import render_check_text

            render_check_text(report, stdout_console())
            steps.print_text(stdout_console())
    return EXIT_PASS if report.decision == "pass" else EXIT_GATE_FAILED


def _request(steps: AuditRepairSteps, head: RubricDocument, root: Path, **judging: Any) -> GateRequest:
    """The options as one validated request; a combination it refuses is a usage error (exit 2)."""
    try:
        return GateRequest(**judging, audit=steps.audit_flag, audit_rule=steps.audit_rule,
                           audit_judges=steps.audit_judges, suggest_repairs=steps.suggest_repairs,
                           repair_count=steps.repair_count, repair_model=steps.repair_model,
                           repair_objective=steps.objective(head, judging["judges"][0] if judging["judges"] else None,
                                                            root))
    except RequestError as exc:
        if exc.setting == "batch":
            raise click.UsageError(f"--batch: {exc.message}") from None
        if exc.setting == "judge":
            raise JudgeError("--samples, --paraphrases and --min-stability need a judge: pass --judge PROVIDER:MODEL") from None
        raise click.BadParameter(exc.message, param_hint=f"'--{exc.setting.replace('_', '-')}'") from None


def judge_change_sides(specs: tuple[str, ...], base: RubricDocument, head: RubricDocument, judges: tuple[str, ...],
                       replay: bool) -> tuple[str, ...] | None:
    """The old side of a judge change, or None: `--against-judge` as given ('recorded': the recorded
    verdicts), else the base rubric's `judge` (its panel, or the recorded verdicts without one) when
    the head names another judge and this run judges with it."""
    if specs:
        named = unique_judges(specs)
        if "recorded" in named:
            if len(named) > 1:
                raise click.BadParameter("'recorded' is the recorded verdicts: it cannot join a panel",
                                         param_hint="'--against-judge'")
            return ()
        return tuple(named)
    if replay or not head.rubric.judge:
        return None
    old = tuple(unique_judges([base.rubric.judge or ""]))
    new = tuple(unique_judges([head.rubric.judge]))
    return old if old != new and judges == new else None


def _gates(spec: str, min_stability: float | None, audit_rule: bool) -> frozenset[str]:
    try:
        gates = parse_gates(spec)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--gates'") from None
    if "U" in gates and min_stability is None:
        raise click.BadParameter("gate U needs --min-stability T", param_hint="'--gates'")
    if "A" in gates and not audit_rule:
        raise click.BadParameter("gate A needs --audit-rule", param_hint="'--gates'")
    return gates - {"U", "A"}  # those two are applied by their own options
