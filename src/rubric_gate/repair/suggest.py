"""Suggest repairs for a PR's rejected checks, keeping only rewrites the gate accepts.

For each rejected addition or rewording (never a frozen check), a model proposes up to K
rewrites from the fixed operator library. Each candidate is judged on the calibration set
(same verdict store, so nothing is judged twice) and the PR is gated again with the candidate
in place of the PR's text; only candidates whose own changes the gate accepts are kept.
A rejected deletion gets no rewrite: the report lists the flawed items only it catches.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from rubric_gate.attribution import failure_counts
from rubric_gate.audit import AuditReport, AuditStore, audit_checks, audit_rule
from rubric_gate.audit.model import Fool
from rubric_gate.audit.render import excerpt
from rubric_gate.audit.store import context_hash
from rubric_gate.audit.templates import prompt_example, render, template_source, template_version
from rubric_gate.calibration import CalibrationItem
from rubric_gate.gate import Decision, GateOptions, run_gate
from rubric_gate.judges import judge_missing
from rubric_gate.judges.prompt import as_text
from rubric_gate.llm.asks import Ask, CallStats, raise_failures, run_asks
from rubric_gate.llm.cache import CallKey, stored_ask, unstored
from rubric_gate.llm.protocols import JudgeRequest
from rubric_gate.repair.model import (
    ItemExcerpt,
    ProtectedCheck,
    RepairReport,
    RepairSuggestion,
    Unrepaired,
)
from rubric_gate.repair.objective import pareto_frontier, vfr_accepts
from rubric_gate.repair.operators import MAX_WORDS, OPERATORS
from rubric_gate.repair.parse import Candidate, parse_repairs, repair_schema
from rubric_gate.repair.vfr import VfrObjective, combined
from rubric_gate.repair.yaml_spans import document_spans, replacement_yaml
from rubric_gate.rubric import Check, Rubric, RubricDocument
from rubric_gate.scoring import VerdictLookup

PACKAGE = "rubric_gate.repair"
EXAMPLES_PER_SIDE = 5
EXAMPLE_CHARS = 1500
REPAIR_MAX_TOKENS = 1500
DEFAULT_CANDIDATES = 3


def repair_prompt_version() -> str:
    return template_version(PACKAGE, "repair.j2")


def _example(item: CalibrationItem) -> dict[str, str]:
    return prompt_example(item, EXAMPLE_CHARS)


@dataclasses.dataclass(frozen=True)
class _Target:
    decision: Decision
    check: Check  # the PR's version
    old_text: str | None
    failed_correct: tuple[CalibrationItem, ...]
    caught_flawed: tuple[CalibrationItem, ...]
    findings: tuple[str, ...]
    false_accepts: tuple[CalibrationItem, ...] = ()  # flawed items the check answers yes on
    fools: tuple[Fool, ...] = ()  # vfr objective: attack outputs the judge passed, the verifier did not
    unstable: tuple[CalibrationItem, ...] = ()  # vfr objective: dev items the judges disagree on


def _protected(decision: Decision, gated: Rubric, lookup: VerdictLookup, lines: dict[str, int]) -> ProtectedCheck:
    """The flawed items that only this check fails, in the rubric the gate kept."""
    matrix = lookup.failed_matrix(gated)
    column = gated.check_ids.index(decision.change.check_id)
    flawed = lookup.calibration.flawed
    pivotal = flawed & matrix[:, column] & (failure_counts(matrix) == gated.max_failures + 1)
    items = [lookup.items[i] for i in np.flatnonzero(pivotal)]
    return ProtectedCheck(decision.change.check_id,
                          tuple(ItemExcerpt(i.id, excerpt(as_text(i.output))) for i in items),
                          lines.get(decision.change.check_id))


def _candidate_checks(original: Check, candidate: Candidate, taken: set[str]) -> list[Check]:
    """The first rewrite keeps the check's id (so the gate sees a rewording or the same addition);
    split parts get fresh ids next to it. Origin, source and frozen carry over."""
    checks, n = [], 1
    for index, text in enumerate(candidate.texts):
        check_id = original.id
        if index:
            n += 1
            while f"{original.id}-{n}" in taken:
                n += 1
            check_id = f"{original.id}-{n}"
        checks.append(original.model_copy(update={"id": check_id, "text": text}))
    return checks


def _replace(head: Rubric, check_id: str, replacement: list[Check]) -> Rubric:
    checks: list[Check] = []
    for check in head.checks:
        checks.extend(replacement if check.id == check_id else [check])
    return head.model_copy(update={"checks": checks})


def _key(model: str, task: str, target: _Target, k: int) -> CallKey:
    context = context_hash("repair", task, target.old_text, target.decision.reason, list(target.findings), k,
                           [i.content_hash for i in target.failed_correct], [i.content_hash for i in target.caught_flawed],
                           [i.content_hash for i in target.false_accepts], [f.output for f in target.fools],
                           [i.content_hash for i in target.unstable], sorted(OPERATORS))
    return CallKey("repair", model, repair_prompt_version(), target.check.text, context)


def _ask(store: AuditStore, key: CallKey, task: str, target: _Target, k: int) -> Ask:
    """Rendered only when the repairs are not stored yet."""
    prompt = render(PACKAGE, "repair.j2", k=k, operators=list(OPERATORS.items()), task=task, check=target.check.text,
                    old_text=target.old_text, reason=target.decision.reason, findings=list(target.findings),
                    failed_correct=[_example(i) for i in target.failed_correct[:EXAMPLES_PER_SIDE]],
                    caught_flawed=[_example(i) for i in target.caught_flawed[:EXAMPLES_PER_SIDE]],
                    false_accepts=[_example(i) for i in target.false_accepts[:EXAMPLES_PER_SIDE]],
                    fools=[{"id": f.item, "output": f.output[:EXAMPLE_CHARS], "reason": f.verifier_reason}
                           for f in target.fools[:EXAMPLES_PER_SIDE]],
                    unstable=[_example(i) for i in target.unstable[:EXAMPLES_PER_SIDE]],
                    max_words=MAX_WORDS)

    def parse(text: str) -> list[Candidate]:
        return parse_repairs(text, target.check.text, k, template_source(PACKAGE, "repair.j2"))

    def to_result(candidates: list[Candidate]) -> dict[str, Any]:
        return {"candidates": [c.to_result() for c in candidates]}

    request = JudgeRequest(prompt, repair_schema(k), "check_repairs", REPAIR_MAX_TOKENS)
    return stored_ask(store, key, f"repairs of {target.check.id}", request, parse, to_result)


def suggest_repairs(
    base: RubricDocument,
    head: RubricDocument,
    lookup: VerdictLookup,
    store: AuditStore,
    *,
    judge: str | None,
    repair_model: str | None = None,
    k: int = DEFAULT_CANDIDATES,
    options: GateOptions | None = None,
    audit: AuditReport | None = None,
    audit_rule_on: bool = False,
    audit_judges: Sequence[str] = (),
    concurrency: int = 8,
    max_calls: int | None = None,
    log: Any = None,
    objective: VfrObjective | None = None,
) -> RepairReport:
    """Repairs for every change the gate rejects under `options` (which carry the audit rule when on).

    `judge` judges the candidates (None: no live judge, so no rewrite can be checked and none
    is offered). With `audit_rule_on`, candidates are audited by `audit_judges` and must pass.
    Judge failures raise JudgeError; nothing is guessed.

    With `objective` (`--repair-objective vfr`), a rewrite the gate accepts is kept only if it
    lowers the fool rate on the development split while alpha drops by at most delta; of those,
    the Pareto frontier on (alpha, fool rate). The repair model sees the original's fools and
    the dev items its judges disagree on.
    """
    options = options or GateOptions()
    report = RepairReport()
    calibration = lookup.calibration
    result = run_gate(base.rubric, head.rubric, lookup.item_ids, calibration.flawed, lookup.failed_column, options)
    task = head.rubric.task
    base_checks = {c.id: c for c in base.rubric.checks}
    targets: list[_Target] = []
    for decision in result.rejected:
        change = decision.change
        if change.kind == "deleted":
            report.protected.append(_protected(decision, result.gated, lookup, base.check_lines))
            continue
        if change.head is None or not (change.kind == "added" or change.reworded):
            continue
        old = base_checks.get(change.check_id)
        if change.head.is_frozen or (old is not None and old.is_frozen):
            report.unrepaired.append(Unrepaired(change.check_id, "frozen check: repairs never touch it"))
            continue
        failed = lookup.failed_column(change.head.text)
        flawed = calibration.flawed
        audited = audit.audit(change.check_id) if audit is not None else None
        targets.append(_Target(
            decision, change.head, old.text if old is not None and change.kind == "modified" else None,
            tuple(lookup.items[i] for i in np.flatnonzero(failed & ~flawed)),
            tuple(lookup.items[i] for i in np.flatnonzero(failed & flawed)),
            tuple(audited.findings()) if audited is not None and audited.text == change.head.text else (),
            tuple(lookup.items[i] for i in np.flatnonzero(~failed & flawed)),
        ))
    if not targets:
        return report
    model = repair_model or judge
    if judge is None or model is None:
        report.unrepaired.extend(Unrepaired(t.check.id, "no live judge to check a rewrite (pass --judge)") for t in targets)
        return report

    # 0. With the vfr objective, measure the PR's texts first: their fools and unstable items
    #    go into the failure packet, their figures are what a rewrite must beat.
    measured = None
    if objective is not None:
        from rubric_gate.repair.vfr import measure

        measured = measure([t.check.text for t in targets], head.rubric, objective, judge=judge, store=store,
                           verdicts=lookup.store, concurrency=concurrency, max_calls=max_calls)
        report.usage.extend(measured.usage)
        report.judging.extend(measured.judging)
        dev = {i.id: i for i in objective.dev.items}
        targets = [dataclasses.replace(t, fools=tuple(measured.fools[t.check.text]),
                                       unstable=tuple(dev[i] for i in measured.unstable[t.check.text]))
                   for t in targets]

    # 1. Candidates, one stored call per rejected check.
    stats = CallStats(model, "repair")
    keys = {target.check.id: _key(model, task, target, k) for target in targets}
    asks = unstored(((keys[t.check.id], partial(_ask, store, keys[t.check.id], task, t, k)) for t in targets),
                    store, stats)
    run_asks(asks, model, stats, concurrency=concurrency)
    report.usage.append(stats)
    raise_failures([stats])
    proposals: list[tuple[_Target, Candidate, Rubric, list[Check]]] = []
    for target in targets:
        record = keys[target.check.id].find(store)
        assert record is not None
        for candidate in (Candidate.from_result(c) for c in record.result["candidates"]):
            checks = _candidate_checks(target.check, candidate, set(head.rubric.check_ids))
            proposals.append((target, candidate, _replace(head.rubric, target.check.id, checks), checks))
    if not proposals:
        report.unrepaired.extend(Unrepaired(t.check.id, "the model proposed no rewrite") for t in targets)
        return report

    # 2. Judge the candidates on the calibration set (only their new texts cost calls).
    stats_j = judge_missing([p[2] for p in proposals], calibration, lookup.store, judge,
                            concurrency=concurrency, max_calls=max_calls, progress=False)
    print(f"repair candidates: {stats_j.summary}", file=log or sys.stderr)
    report.judging.append(stats_j.to_dict())

    # 3. With the audit rule on, a candidate must pass the audit too.
    candidate_options = options
    if audit_rule_on and audit_judges:
        texts = {c.text: c for _, _, _, checks in proposals for c in checks}
        found, usage = audit_checks(task, list(texts.values()), audit_judges, store, concurrency=concurrency)
        report.usage.extend(usage)
        candidate_options = dataclasses.replace(
            options, extra_rules=(*options.extra_rules, audit_rule(AuditReport(head.rubric.id, head.display, found))))

    # 4. Gate the PR again with each candidate in place; keep those whose own changes pass.
    spans = document_spans(head)  # a promptfoo config's assertions, or the rubric's checks
    shown: set[str] = set()
    for target, candidate, rubric, checks in proposals:
        ids = {c.id for c in checks}
        gated = run_gate(base.rubric, rubric, lookup.item_ids, calibration.flawed, lookup.failed_column,
                         candidate_options)
        own = [d for d in gated.decisions if d.change.check_id in ids]
        if not own or not all(d.accepted for d in own):
            continue
        summary = lookup.summarize(gated.gated, "candidate")
        rows = [row for row in (summary.row(c.id) for c in checks) if row is not None]
        before = lookup.failed_column(target.check.text) & ~calibration.flawed
        after = np.zeros_like(before)
        for c in checks:
            after |= lookup.failed_column(c.text)
        span = spans.get(target.check.id)
        report.suggestions.append(RepairSuggestion(
            check=target.check.id, change=target.decision.change.kind, operator=candidate.operator, why=candidate.why,
            rows=rows, yaml=replacement_yaml(head, target.check.id, checks, span.indent if span else 2),
            path=head.repo_path,
            start_line=span.start_line if span else None, end_line=span.end_line if span else None,
            no_longer_fails=[lookup.items[i].id for i in np.flatnonzero(before & ~after)],
        ))
        shown.add(target.check.id)
    if objective is not None and measured is not None and report.suggestions:
        shown = _apply_vfr_objective(report, targets, measured, objective, head.rubric, judge, store,
                                     lookup, concurrency, max_calls)
    for target in targets:
        if target.check.id in report_reasons(report):
            continue
        if target.check.id not in shown:
            tried = sum(1 for p in proposals if p[0] is target)
            report.unrepaired.append(Unrepaired(
                target.check.id, f"none of the {tried} proposed rewrite{'s' if tried != 1 else ''} passes the gate"
                if tried else "the model proposed no rewrite"))
    return report


def report_reasons(report: RepairReport) -> set[str]:
    return {u.check for u in report.unrepaired}


def _apply_vfr_objective(report: RepairReport, targets: list[_Target], measured: Any,
                         objective: VfrObjective, rubric: Rubric, judge: str, store: AuditStore,
                         lookup: VerdictLookup, concurrency: int, max_calls: int | None) -> set[str]:
    """Keep, per check, the gate-accepted rewrites that pass the acceptance rule, then their
    Pareto frontier; a check left with none gets the rule's reason."""
    from rubric_gate.repair.vfr import measure

    texts = [row.text for s in report.suggestions for row in s.rows]
    more = measure(texts, rubric, objective, judge=judge, store=store, verdicts=lookup.store,
                   concurrency=concurrency, max_calls=max_calls)
    report.usage.extend(more.usage)
    report.judging.extend(more.judging)
    kept: list[RepairSuggestion] = []
    shown: set[str] = set()
    for target in targets:
        before = measured.robustness[target.check.text]
        passing, reasons = [], []
        for s in (s for s in report.suggestions if s.check == target.check.id):
            after = combined([more.robustness[row.text] for row in s.rows])
            ok, why = vfr_accepts(before, after, objective.delta)
            s.robustness_before, s.robustness = before, after
            if ok:
                passing.append((s, after))
            else:
                reasons.append(why)
        frontier = pareto_frontier(passing)
        kept.extend(frontier)
        if frontier:
            shown.add(target.check.id)
        elif reasons:
            report.unrepaired.append(Unrepaired(
                target.check.id, f"no rewrite the gate accepts passes the vfr objective ({reasons[0]})"))
    report.suggestions = kept
    return shown
