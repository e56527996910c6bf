"""The one function `check` and the action call: judge what is missing, audit, gate, repair.

The front ends gather the facts (files, stores, which verdicts are untrusted) and render the
result; everything between is here once, so the command line and the required check judge
with the same panel and samples, spend one call budget per run, audit and repair alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from rubric_gate.calibration import CalibrationSet
from rubric_gate.errors import JudgeError
from rubric_gate.gate import GateOptions
from rubric_gate.llm.accounting import run_totals
from rubric_gate.results import CheckReport
from rubric_gate.rubric import RubricDocument
from rubric_gate.scoring import VerdictLookup
from rubric_gate.service.gate import gate_edit
from rubric_gate.service.request import CallBudget, GateRequest
from rubric_gate.verdicts import VerdictStore

if TYPE_CHECKING:  # (a PR's own verdicts: the action's; `check` loads no trust code)
    from rubric_gate.trust import Untrusted


@dataclass
class Judged:
    """The judging step: the lookup the gate reads (None while batches are still judging)."""

    lookup: VerdictLookup | None
    judging: dict[str, Any] | None = None  # the run's statistics (None in replay)
    pending_pairs: int = 0
    pending_batches: int = 0
    warnings: list[str] = field(default_factory=list)  # advice that failed (paraphrases), and why


@dataclass
class GateRun:
    report: CheckReport | None  # None while batches are still judging
    judged: Judged
    options: GateOptions
    audit_report: Any = None  # rubric_gate.audit.AuditReport of the added and reworded checks
    repair_report: Any = None  # rubric_gate.repair.RepairReport for the rejected changes
    notices: list[str] = field(default_factory=list)  # what the run could not do, and why
    # The calls of advisory steps that failed (their statistics objects): still counted and shown.
    usage: list[Any] = field(default_factory=list)

    @property
    def lookup(self) -> VerdictLookup:
        assert self.judged.lookup is not None
        return self.judged.lookup


def judge_for_gate(docs: Sequence[RubricDocument], calibration: CalibrationSet, store: VerdictStore,
                   request: GateRequest, budget: CallBudget) -> Judged:
    """Judge the pairs `store` lacks for `docs` (base first, head last) as `request` asks, into
    `store`, and return the lookup keyed to that judging (under the last rubric's task)."""
    assert not request.awaiting_judges, "name the judges first (GateRequest.judged_by)"
    rubric = docs[-1].rubric
    if not request.judges:
        return Judged(VerdictLookup(calibration, store, rubric))
    from rubric_gate.judges.prompt import PROMPT_VERSION

    if request.batch:
        from rubric_gate.batch import DEFAULT_POLL_INTERVAL_S, judge_in_batches

        outcome = judge_in_batches([d.rubric for d in docs], calibration, store, request.judges[0],
                                   max_calls=budget.left(), wait_seconds=request.batch_wait_seconds,
                                   poll_interval=request.poll_interval or DEFAULT_POLL_INTERVAL_S,
                                   progress=request.batch_progress)
        judging = outcome.to_dict()
        budget.spend(judging)
        lookup = VerdictLookup(calibration, store, rubric, judge=request.judges[0], prompt=PROMPT_VERSION)
        return Judged(None if outcome.pending else lookup, judging, outcome.pending_pairs if outcome.pending else 0,
                      len(outcome.pending), list(outcome.warnings))
    from rubric_gate.ensemble import PanelLookup
    from rubric_gate.ensemble.measure import judge_panel
    from rubric_gate.service.stats import combined_stats

    measured = judge_panel(docs[0].rubric, rubric, calibration, store, list(request.judges), samples=request.samples,
                           paraphrases=request.paraphrases, paraphraser=request.paraphraser,
                           concurrency=request.concurrency, max_calls=budget.left(),
                           paraphrases_decide=request.min_stability is not None)
    judging = combined_stats(measured.runs)
    if measured.paraphrase_info is not None:
        judging["paraphrases"] = measured.paraphrase_info
    budget.spend(judging)
    for stats in measured.advice_usage:
        budget.spend(stats)
    if request.measures_reliability:
        return Judged(PanelLookup(calibration, store, rubric, prompt=PROMPT_VERSION, judges=request.judges,
                                  samples=request.samples, paraphrases=measured.paraphrases), judging,
                      warnings=list(measured.notices))
    return Judged(VerdictLookup(calibration, store, rubric, judge=request.judges[0], prompt=PROMPT_VERSION), judging,
                  warnings=list(measured.notices))


def audit_options(base: RubricDocument, head: RubricDocument, request: GateRequest, audit_store: Callable[[], Any],
                  notices: list[str], usage: list[Any] | None = None) -> tuple[GateOptions, Any]:
    """The gate's options, with the audit rule when asked: the added and reworded checks are
    audited first, so the rule can take part in the gate. An audit that is only advice and
    fails is a notice (its calls go to `usage`); with the audit rule its failure stops the run."""
    options = GateOptions(rates_rule=request.rates_rule, reject_correct_drop_at=request.reject_correct_drop_at)
    if request.gates is not None:
        options = replace(options, gates=request.gates)
    if not request.audits:
        return options, None
    if not request.audit_panel():
        notices.append("The audit needs a judge: set one (and its API key) to audit checks.")
        return options, None
    from rubric_gate.audit import audit_rule, audited_changes

    try:
        report = audited_changes(base, head, request.audit_panel(), audit_store(), concurrency=request.concurrency)
    except JudgeError as exc:
        if request.audit_rule:  # the audit decides: with no answer, there is no decision to report
            raise
        notices.append(advice_failed("The audit", exc, usage))
        return options, None
    notices.extend(report.notices)  # a judge whose audits carry no information is named
    return (replace(options, extra_rules=(audit_rule(report),)) if request.audit_rule else options), report


def advice_failed(step: str, exc: JudgeError, usage: list[Any] | None = None) -> str:
    """The notice for an advisory step (an audit that is not a rule, repairs, paraphrases) that
    failed: the run goes on and its decision stands; the step's calls so far still count."""
    from rubric_gate.report.terminal import strip_controls

    if usage is not None:
        usage.extend(run_totals(exc))
    return f"{step} did not finish (advice only, the gate's decision stands): {strip_controls(exc.message)}"


def run_gate_request(base: RubricDocument, head: RubricDocument, calibration: CalibrationSet, store: VerdictStore,
                     request: GateRequest, budget: CallBudget, *, audit_store: Callable[[], Any],
                     untrusted: Untrusted | None = None, options: GateOptions | None = None,
                     audit_report: Any = None, repairs: bool = True, notes: list[str] | None = None) -> GateRun:
    """Judge, audit, gate and repair `base` -> `head`; with `request.judge_change`, gate the judge
    change too (rule J: both judges on the calibration set, compared).

    `options` given: the edit was audited already (the same PR gated again onto the base tip),
    so the audit is not repeated. `notes` collects what the report should say about the evidence.
    """
    notices: list[str] = []
    usage: list[Any] = []
    sides = judge_sides([base, head], calibration, store, request, budget)
    judged = sides[tuple(request.judges)]
    if options is None:
        options, audit_report = audit_options(base, head, request, audit_store, notices, usage)
    if any(side.lookup is None for side in sides.values()):
        return GateRun(None, _pending(judged, [s for k, s in sides.items() if k != tuple(request.judges)]), options,
                       audit_report, notices=notices, usage=usage)
    min_stability = request.min_stability if request.measures_reliability else None
    assert judged.lookup is not None  # every side is judged (above)
    report, options = gate_edit(base, head, judged.lookup, options, min_stability=min_stability, untrusted=untrusted,
                                notes=notes)
    if request.min_stability is not None and request.samples == 1 and not request.paraphrases:
        report.notes.append("The minimum stability had nothing to measure: judge 3 samples or 3 paraphrases.")
    report.judging = judged.judging
    report.notes.extend(_judge_notes(judged.judging))
    if request.judge_change is not None:
        _gate_judge_change(report, base, head, sides, request, options)
    run = GateRun(report, judged, options, audit_report, notices=notices, usage=usage)
    if repairs and request.suggest_repairs and not report.gate_passed:
        try:
            _repair(run, base, head, request, budget, audit_store)
        except JudgeError as exc:  # the decision is made: a failed repair is a notice, never the end
            run.notices.append(advice_failed("Suggesting repairs", exc, run.usage))
            for stats in run_totals(exc):
                budget.spend(stats)
    return run


def judge_sides(docs: Sequence[RubricDocument], calibration: CalibrationSet, store: VerdictStore,
                request: GateRequest, budget: CallBudget) -> dict[tuple[str, ...], Judged]:
    """The judging of every side the run reads (`request.sides`): the gate's judges, and a judge
    change's old and new ones, each asking only the pairs it lacks.

    A side that replays recorded verdicts is read before any side judges: a judge's verdicts,
    appended to the same store, would otherwise be read back as recorded ones. The old judge asks
    first and the gate's judges last, so theirs are the verdicts a later replay reads.
    """
    own = tuple(request.judges)
    if request.judge_change is None:
        return {own: judge_for_gate(docs, calibration, store, request, budget)}
    rubric = docs[-1].rubric
    sides = request.sides
    judged: dict[tuple[str, ...], Judged] = {}
    if () in sides:
        judged[()] = Judged(_read_now(docs, VerdictLookup(calibration, store, rubric)))
    for side in sorted((s for s in sides if s), key=lambda s: s == own):
        asked = request if side == own else replace(request, judges=side, paraphrases=0, paraphraser=None,
                                                    min_stability=None, judge_change=None)
        judged[side] = judge_for_gate(docs, calibration, store, asked, budget)
    return judged


def _read_now(docs: Sequence[RubricDocument], lookup: VerdictLookup) -> VerdictLookup:
    for doc in docs:
        for check in doc.rubric.checks:
            lookup.column(check.text)  # cached in the lookup: later appends to the store do not reach it
    return lookup


def _pending(judged: Judged, others: Sequence[Judged]) -> Judged:
    """One judging step's view of a run still waiting for batches on any side."""
    return Judged(None, judged.judging, judged.pending_pairs + sum(o.pending_pairs for o in others),
                  judged.pending_batches + sum(o.pending_batches for o in others),
                  [*judged.warnings, *(w for o in others for w in o.warnings)])


def _gate_judge_change(report: CheckReport, base: RubricDocument, head: RubricDocument,
                       sides: dict[tuple[str, ...], Judged], request: GateRequest, options: GateOptions) -> None:
    """Rule J on the report: the judge change compared on the calibration set; its rejections
    fail the run like any rule's (`run_failures`), the table goes with the report."""
    from rubric_gate.rejudge import compare_judges

    assert request.judge_change is not None
    old, new = request.judge_change
    before, after = sides[old], sides[new]
    assert before.lookup is not None and after.lookup is not None
    change = compare_judges(base, head, before.lookup, after.lookup, old_judges=old, new_judges=new, options=options,
                            alpha=request.judge_change_alpha)
    judged_apart = [sides[side].judging for side in (old, new) if side and side != tuple(request.judges)]
    change.judging = judged_apart[0] if len(judged_apart) == 1 else _apart(judged_apart)
    report.judge_change = change
    report.run_failures += [f"judge change {change.old_label} → {change.new_label} (rule J): {v.reason}"
                            for v in change.violations]


def _apart(stats: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The judge change's own judging (the sides the gate did not read), as one summary."""
    parts = [s for s in stats if s]
    if not parts:
        return None
    return {"calls": sum(int(p.get("calls") or 0) for p in parts), "sides": parts,
            "summary": "; ".join(str(p.get("summary", "")) for p in parts)}


def _judge_notes(judging: dict[str, Any] | None) -> list[str]:
    """What the report says about the judges' answers: quotes not found in the outputs (kept as
    unverified, never shown as evidence) and judges whose answers carry no information."""
    if not judging:
        return []
    notes = []
    for run in judging.get("judges") or [judging]:
        who = run.get("judge", "the judge")
        if run.get("unverified_quotes"):
            notes.append(f"{who}: {run['unverified_quotes']} of its {run.get('quotes', 0)} supporting quotes in this run "
                         "do not occur in the item's output; they are kept as unverified, not as evidence.")
        if run.get("uninformative"):
            notes.append(f"{who}: its answers carry no information: {run['uninformative']}.")
    return notes


def _repair(run: GateRun, base: RubricDocument, head: RubricDocument, request: GateRequest, budget: CallBudget,
            audit_store: Callable[[], Any]) -> None:
    if request.judge is None:
        run.notices.append("Repairs need a judge to check each rewrite: set one to suggest repairs.")
        return
    from rubric_gate.repair import suggest_repairs

    run.repair_report = suggest_repairs(
        base, head, run.lookup, audit_store(), judge=request.judge, repair_model=request.repair_model,
        k=request.repair_count, options=run.options, audit=run.audit_report, audit_rule_on=request.audit_rule,
        audit_judges=request.audit_panel(), concurrency=request.concurrency, max_calls=budget.left(),
        objective=request.repair_objective)
    budget.spend({"calls": sum(int(j.get("calls") or 0) for j in run.repair_report.judging)})
