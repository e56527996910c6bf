"""`teach`: write checks for the flawed items a rubric misses, keep those the gate would add.

1. The rubric's own verdicts (judged first when missing) give the flawed items no check catches,
   grouped by their `flaw` category.
2. One stored call per group asks a model for one check in the project's style.
3. Each proposal is judged on the whole calibration set (the verdict store, so nothing is
   judged twice) and the rubric is gated with the proposals added, in the gate's own order: its
   own rules decide (no blame), plus one rule of teach's own, that an added check must catch a
   flawed item the rubric let pass. Accepted proposals are `origin: label` (frozen) with a
   `source` naming the items that taught them.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from rubric_gate.attribution import rubric_fails
from rubric_gate.audit.store import AuditStore, context_hash
from rubric_gate.audit.templates import prompt_example, render, template_source, template_version
from rubric_gate.calibration import CalibrationItem
from rubric_gate.errors import JudgeError
from rubric_gate.gate import GateOptions, RuleContext, Violation, run_gate
from rubric_gate.llm.accounting import with_earlier
from rubric_gate.llm.asks import Ask, CallStats, planned_cost, raise_failures, run_asks
from rubric_gate.llm.cache import CallKey, stored_ask, unstored
from rubric_gate.llm.protocols import JudgeRequest
from rubric_gate.repair.yaml_spans import checks_yaml
from rubric_gate.rubric import Check, Rubric, normalize_text
from rubric_gate.rubric.model import Origin
from rubric_gate.scoring import VerdictLookup
from rubric_gate.teach.missed import MissGroup, missed_groups, proposal_id
from rubric_gate.teach.model import Proposal, TeachReport
from rubric_gate.teach.parse import TEACH_SCHEMA, TaughtText, parse_teach

PACKAGE = "rubric_gate.teach"
KIND = "teach"
MISSED_SHOWN = 8
CORRECT_SHOWN = 3
EXAMPLE_CHARS = 1500
TEACH_MAX_TOKENS = 600
DEFAULT_MAX_GROUPS = 5


def teach_prompt_version() -> str:
    return template_version(PACKAGE, "teach.j2")


def new_catch_rule(ctx: RuleContext) -> Violation | None:
    """Teach's own condition on top of the gate's: an added check must catch a flawed item the
    rubric lets pass (credit on a missed item), so a proposal that only repeats a catch is dropped."""
    if ctx.change.kind != "added":
        return None
    newly = ctx.flawed & ~rubric_fails(ctx.before, ctx.max_failures) & rubric_fails(ctx.after, ctx.max_failures)
    if newly.any():
        return None
    return Violation("T", "would catch no flawed item the rubric lets pass, so it teaches nothing new")


def _example(item: CalibrationItem) -> dict[str, str]:
    return prompt_example(item, EXAMPLE_CHARS)


def _source(group: MissGroup, shown: Sequence[CalibrationItem], version: str) -> str:
    ids = ", ".join(i.id for i in shown)
    return f"rubric-gate teach on v{version}: taught by {group.name} items {ids}"


class _Group:
    """One missed group with what its prompt shows and where its answer is stored."""

    def __init__(self, group: MissGroup, task: str, checks: Sequence[str], correct: Sequence[CalibrationItem]) -> None:
        self.group = group
        self.shown = group.items[:MISSED_SHOWN]
        self.correct = tuple(correct)
        self.context = context_hash(KIND, normalize_text(task), [normalize_text(t) for t in checks],
                                    [i.content_hash for i in self.shown], [i.content_hash for i in self.correct])
        self.prompt = render(PACKAGE, "teach.j2", task=task, checks=list(checks), flaw=group.flaw,
                             missed=[_example(i) for i in self.shown], correct=[_example(i) for i in self.correct])

    def key(self, model: str, version: str) -> CallKey:
        return CallKey(KIND, model, version, self.group.name, self.context)

    def ask(self, store: AuditStore, model: str, version: str) -> Ask:
        request = JudgeRequest(self.prompt, TEACH_SCHEMA, "taught_check", TEACH_MAX_TOKENS)
        return stored_ask(store, self.key(model, version), f"check for {self.group.name} misses", request,
                          partial(parse_teach, instructions=template_source(PACKAGE, "teach.j2")),
                          TaughtText.to_result)


def teach_checks(
    rubric: Rubric,
    display: str,
    lookup: VerdictLookup,
    audits: AuditStore,
    *,
    judge: str,
    teacher: str | None = None,
    max_groups: int = DEFAULT_MAX_GROUPS,
    dry_run: bool = False,
    max_calls: int | None = None,
    concurrency: int = 8,
    log: Any = None,
) -> TeachReport:
    """Propose label-taught checks for `rubric`; `lookup` must carry the live `judge`. A judge
    failure raises JudgeError carrying the statistics of every step so far."""
    spent: list[Any] = []
    try:
        return _teach(rubric, display, lookup, audits, spent, judge=judge, teacher=teacher, max_groups=max_groups,
                      dry_run=dry_run, max_calls=max_calls, concurrency=concurrency, log=log)
    except JudgeError as exc:
        raise with_earlier(exc, spent) from None


def _teach(rubric: Rubric, display: str, lookup: VerdictLookup, audits: AuditStore, spent: list[Any], *, judge: str,
           teacher: str | None, max_groups: int, dry_run: bool, max_calls: int | None, concurrency: int,
           log: Any) -> TeachReport:
    from rubric_gate.judges.api import judge_missing  # the judging stack loads only here

    log = log or sys.stderr
    teacher = teacher or judge
    calibration = lookup.calibration
    report = TeachReport(rubric.id, display, len(calibration), {}, [], dry_run=dry_run)

    # 1. The rubric's own verdicts.
    base_run = judge_missing([rubric], calibration, lookup.store, judge, concurrency=concurrency,
                             max_calls=max_calls, dry_run=dry_run, progress=False)
    report.judging.append(base_run.to_dict())
    spent.append(base_run)
    if dry_run and base_run.planned:
        report.missed_known = False
        report.plan.append(f"judge {base_run.summary} for the rubric's checks; the missed items, and so "
                           "the teach calls, are known only after those verdicts")
        return report
    failed = lookup.failed_matrix(rubric)
    flawed = calibration.flawed
    groups = missed_groups(calibration.items, failed, flawed, rubric.max_failures)
    report.missed = {g.name: g.item_ids for g in groups}
    groups = groups[:max_groups]
    report.asked = [g.name for g in groups]
    if not groups:
        return report
    passing = ~rubric_fails(failed, rubric.max_failures) & ~flawed
    correct = [calibration.items[i] for i in np.flatnonzero(passing)[:CORRECT_SHOWN]]
    texts = [c.text for c in rubric.checks]
    prepared = [_Group(g, rubric.task, texts, correct) for g in groups]

    # 2. One stored call per group.
    version = teach_prompt_version()
    stats = CallStats(teacher, "teach")
    asks = unstored(((p.key(teacher, version), partial(p.ask, audits, teacher, version)) for p in prepared),
                    audits, stats)
    report.usage.append(stats)
    spent.append(stats)
    if dry_run:
        cost = planned_cost(asks, teacher)
        price = "cost unknown (no price for this model)" if cost is None else f"estimated ~${cost:.4f}"
        report.plan.append(f"teach {teacher}: would make {len(asks)} calls ({stats.reused} answers reused), {price}")
        if asks:
            report.plan.append(f"then judge each new proposal on {len(calibration)} items "
                               f"(up to {len(asks) * len(calibration)} verdict calls)")
    else:
        run_asks(asks, teacher, stats, concurrency=concurrency, max_calls=max_calls)
        raise_failures([stats])

    # 3. Proposals, judged and gated.
    taken = set(rubric.check_ids)
    checks: list[Check] = []
    for prep in prepared:
        record = prep.key(teacher, version).find(audits)
        if record is None:
            continue  # dry run: not asked yet
        answer = TaughtText.from_result(record.result)
        checks.append(Check(id=proposal_id(prep.group, taken), text=answer.text, origin=Origin.label,
                            source=_source(prep.group, prep.shown, rubric.version)))
        report.proposals.append(Proposal(checks[-1].id, answer.text, answer.why, prep.group.name,
                                         [i.id for i in prep.shown]))
    if not checks:
        return report
    head = rubric.model_copy(update={"checks": [*rubric.checks, *checks]})
    run = judge_missing([head], calibration, lookup.store, judge, concurrency=concurrency,
                        max_calls=max_calls, dry_run=dry_run, progress=False)
    report.judging.append(run.to_dict())
    if dry_run:
        if run.planned:
            report.plan.append(f"judge {run.summary} for the stored proposals")
        return report
    print(f"teach proposals: {run.summary}", file=log)
    result = run_gate(rubric, head, lookup.item_ids, flawed, lookup.failed_column,
                      GateOptions(extra_rules=(new_catch_rule,)))
    decisions = {d.change.check_id: d for d in result.decisions}
    summary = lookup.summarize(result.gated, "taught")
    missed_before = flawed & ~rubric_fails(failed, rubric.max_failures)
    for proposal, check in zip(report.proposals, checks, strict=True):
        column = lookup.failed_column(check.text)
        proposal.catches = [calibration.items[i].id for i in np.flatnonzero(column & missed_before)]
        proposal.fails_correct = [calibration.items[i].id for i in np.flatnonzero(column & ~flawed)]
        decision = decisions[check.id]
        proposal.accepted = decision.accepted
        proposal.reason = decision.reason
        row = summary.row(check.id)
        if row is not None:
            proposal.credit, proposal.blame = row.credit, row.blame
    kept = [c for c in checks if decisions[c.id].accepted]
    report.yaml = checks_yaml(kept, 2) if kept else ""
    return report
