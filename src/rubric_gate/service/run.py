"""The one function `check` and the action call: judge what is missing, audit, gate, repair.

The front ends gather the facts (files, stores, which verdicts are untrusted) and render the
result; everything between is here once, so the command line and the required check judge
with the same panel and samples, spend one call budget per run, audit and repair alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rubric_gate.calibration import CalibrationSet
from rubric_gate.gate import GateOptions
from rubric_gate.results import CheckReport
from rubric_gate.rubric import RubricDocument
from rubric_gate.scoring import VerdictLookup
from rubric_gate.service.gate import gate_edit
from rubric_gate.service.request import CallBudget, GateRequest
from rubric_gate.trust import Untrusted
from rubric_gate.verdicts import VerdictStore


@dataclass
class Judged:
    """The judging step: the lookup the gate reads (None while batches are still judging)."""

    lookup: VerdictLookup | None
    judging: dict[str, Any] | None = None  # the run's statistics (None in replay)
    pending_pairs: int = 0
    pending_batches: int = 0
    warnings: list[str] = field(default_factory=list)


@dataclass
class GateRun:
    report: CheckReport | None  # None while batches are still judging
    judged: Judged
    options: GateOptions
    audit_report: Any = None  # rubric_gate.audit.AuditReport of the added and reworded checks
    repair_report: Any = None  # rubric_gate.repair.RepairReport for the rejected changes
    notices: list[str] = field(default_factory=list)  # what the run could not do, and why

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
                           concurrency=request.concurrency, max_calls=budget.left())
    judging = combined_stats(measured.runs)
    if measured.paraphrase_info is not None:
        judging["paraphrases"] = measured.paraphrase_info
    budget.spend(judging)
    if request.measures_reliability:
        return Judged(PanelLookup(calibration, store, rubric, prompt=PROMPT_VERSION, judges=request.judges,
                                  samples=request.samples, paraphrases=measured.paraphrases), judging)
    return Judged(VerdictLookup(calibration, store, rubric, judge=request.judges[0], prompt=PROMPT_VERSION), judging)


def audit_options(base: RubricDocument, head: RubricDocument, request: GateRequest, audit_store: Callable[[], Any],
                  notices: list[str]) -> tuple[GateOptions, Any]:
    """The gate's options, with the audit rule when asked: the added and reworded checks are
    audited first, so the rule can take part in the gate."""
    options = GateOptions(rates_rule=request.rates_rule, reject_correct_drop_at=request.reject_correct_drop_at)
    if request.gates is not None:
        options = replace(options, gates=request.gates)
    if not request.audits:
        return options, None
    if not request.audit_panel():
        notices.append("The audit needs a judge: set one (and its API key) to audit checks.")
        return options, None
    from rubric_gate.audit import audit_rule, audited_changes

    report = audited_changes(base, head, request.audit_panel(), audit_store(), concurrency=request.concurrency)
    return (replace(options, extra_rules=(audit_rule(report),)) if request.audit_rule else options), report


def run_gate_request(base: RubricDocument, head: RubricDocument, calibration: CalibrationSet, store: VerdictStore,
                     request: GateRequest, budget: CallBudget, *, audit_store: Callable[[], Any],
                     untrusted: Untrusted | None = None, options: GateOptions | None = None,
                     audit_report: Any = None, repairs: bool = True, notes: list[str] | None = None) -> GateRun:
    """Judge, audit, gate and repair `base` -> `head`.

    `options` given: the edit was audited already (the same PR gated again onto the base tip),
    so the audit is not repeated. `notes` collects what the report should say about the evidence.
    """
    notices: list[str] = []
    judged = judge_for_gate([base, head], calibration, store, request, budget)
    if options is None:
        options, audit_report = audit_options(base, head, request, audit_store, notices)
    if judged.lookup is None:
        return GateRun(None, judged, options, audit_report, notices=notices)
    min_stability = request.min_stability if request.measures_reliability else None
    report, options = gate_edit(base, head, judged.lookup, options, min_stability=min_stability, untrusted=untrusted,
                                notes=notes)
    if request.min_stability is not None and request.samples == 1 and not request.paraphrases:
        report.notes.append("The minimum stability had nothing to measure: judge 3 samples or 3 paraphrases.")
    report.judging = judged.judging
    run = GateRun(report, judged, options, audit_report, notices=notices)
    if repairs and request.suggest_repairs and not report.gate_passed:
        _repair(run, base, head, request, budget, audit_store)
    return run


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
