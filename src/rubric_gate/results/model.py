"""What a check run found, as plain data: report/ renders it to JSON, Markdown, HTML or a
terminal table; the action, history and repair read it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rubric_gate.attribution import Rates
from rubric_gate.comparison import PairedComparison
from rubric_gate.gate.facts import DecidedFigures, Trade
from rubric_gate.reliability import LabelAgreement

if TYPE_CHECKING:  # built only when a panel measured reliability or the judge changed
    from rubric_gate.results.judge_change import JudgeChange
    from rubric_gate.results.reliability import (
        ChangeReliability,
        CheckReliability,
        ReliabilityReport,
    )


def items_name(split: str) -> str:
    """What the scored items are called in prose: "calibration items", "evaluation items"."""
    return {"all": "labeled items"}.get(split, f"{split} items")


@dataclass(frozen=True)
class CheckRow:
    id: str
    text: str
    origin: str
    frozen: bool
    credit: float
    blame: float
    unique_catches: int
    fails_correct: int  # correct items this check answers no on
    fails_flawed: int  # flawed items this check answers no on
    reliability: CheckReliability | None = None  # when a panel measured it
    not_applicable: int = 0  # items the check answered "n/a" on (it does not apply to them)
    coverage: float | None = None  # share of items it applies to (answered yes or no)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "origin": self.origin,
            "frozen": self.frozen,
            "credit": round(self.credit, 4),
            "blame": round(self.blame, 4),
            "unique_catches": self.unique_catches,
            "fails_correct": self.fails_correct,
            "fails_flawed": self.fails_flawed,
            "not_applicable": self.not_applicable,
            "coverage": None if self.coverage is None else round(self.coverage, 4),
            **(self.reliability.to_dict() if self.reliability else {}),
            "text": self.text,
        }


@dataclass(frozen=True)
class RubricSummary:
    """One rubric version scored on the calibration set."""

    rubric_id: str
    version: str
    display: str
    max_failures: int
    checks: list[CheckRow]
    rates: Rates
    joint_catches: list[tuple[str, str, int]]  # (check a, check b, catches lost if both go)
    agreement: LabelAgreement | None = None  # the rubric's fail/pass against the human labels
    split: str = "calibration"  # which labeled items were scored: calibration, evaluation or all
    item_meta: dict[str, Any] | None = None  # item id -> its free `meta` object, for items carrying one

    @property
    def items_name(self) -> str:
        return items_name(self.split)

    @property
    def agreement_note(self) -> str | None:
        note = self.agreement.note if self.agreement is not None else None
        return note.replace("calibration items", self.items_name) if note else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rubric": self.rubric_id,
            "version": self.version,
            "file": self.display,
            "aggregation": "all-pass" if self.max_failures == 0 else {"max_failures": self.max_failures},
            "checks": [row.to_dict() for row in self.checks],
            "rates": self.rates.to_dict(),
            "joint_catches": [{"checks": [a, b], "catches": n} for a, b, n in self.joint_catches],
            "agreement": None if self.agreement is None else self.agreement.to_dict(),
            **({"item_meta": self.item_meta} if self.item_meta else {}),
        }

    def row(self, check_id: str) -> CheckRow | None:
        return next((r for r in self.checks if r.id == check_id), None)


@dataclass(frozen=True)
class ChangeRow:
    check: str
    change: str  # added | deleted | modified | aggregation
    edited: tuple[str, ...]
    accepted: bool
    reason: str
    rules: tuple[str, ...]  # rules that rejected it
    detail: str = ""  # for an aggregation change or a rename: old -> new
    renamed_from: str | None = None  # for a rename: the base id
    reliability: ChangeReliability | None = None  # when a panel measured it
    decided: DecidedFigures | None = None  # the check's figures in the rubric the gate judged it in
    trade: Trade | None = None  # for a rejected change: what accepting it would flip

    @property
    def unstable(self) -> bool:
        return self.reliability is not None and self.reliability.unstable

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "change": self.change,
            "edited": list(self.edited),
            "detail": self.detail,
            "renamed_from": self.renamed_from,
            "decision": "accepted" if self.accepted else "rejected",
            "reason": self.reason,
            "rules": list(self.rules),
            "when_decided": None if self.decided is None else self.decided.to_dict(),
            "trade": None if self.trade is None else self.trade.to_dict(),
            **(self.reliability.to_dict() if self.reliability else {}),
        }


@dataclass(frozen=True)
class HeldChange:
    """A change the gate rejects only because the evidence for it is the PR's own: accepted on
    the PR's records, rejected once their catches are withheld."""

    check: str
    change: str  # added | deleted | modified | renamed | aggregation
    on_trusted: str  # the gate's reason, on trusted evidence (the PR's own "no" answers no catch)
    on_records: str  # why the PR's own records accept it (the figure its rule reads there)

    def to_dict(self) -> dict[str, str]:
        return {"check": self.check, "change": self.change, "on_trusted_evidence": self.on_trusted,
                "on_records": self.on_records}


@dataclass(frozen=True)
class Withheld:
    """The PR's own recorded verdicts, which may reject a change and never excuse one, and what
    the gate would decide if they counted (a writer's approval of the head makes them count)."""

    verdicts: int  # answers nobody vouches for: the PR's own, and those recorded before any check had their text
    catches: int  # of them, "no" answers on flawed items: the catches withheld
    file: str  # the verdict file they are in
    checks: tuple[str, ...]  # the checks they answer (ids)
    held: tuple[HeldChange, ...]  # changes rejected only because of it
    records_decision: str  # "pass" or "fail": the gate's decision on the PR's records as recorded

    def to_dict(self) -> dict[str, Any]:
        return {"verdicts": self.verdicts, "catches_withheld": self.catches, "file": self.file,
                "checks": list(self.checks), "held": [h.to_dict() for h in self.held],
                "decision_on_records": self.records_decision}


@dataclass
class CheckReport:
    base: RubricSummary
    head: RubricSummary
    gated: RubricSummary
    changes: list[ChangeRow]
    gated_yaml: str
    items: int
    notes: list[str] = field(default_factory=list)
    judging: dict[str, Any] | None = None  # calls, reused, tokens, cost when a live judge ran
    override: str | None = None  # set when a human override turned a fail into a pass
    reliability: ReliabilityReport | None = None  # when several judges, samples or paraphrases were measured
    split: str = "calibration"  # which labeled items were scored: calibration, evaluation or all
    comparisons: list[PairedComparison] = field(default_factory=list)  # base vs head, and vs gated
    run_failures: list[str] = field(default_factory=list)  # reasons to fail besides a rejected change
    # The PR's own verdicts the decision did not rely on, when that changed a decision (every
    # figure above is computed on all records; only the decisions withhold their catches).
    withheld: Withheld | None = None
    judge_change: JudgeChange | None = None  # when the judge changed: both judges compared (rule J)

    def held(self, change: ChangeRow) -> HeldChange | None:
        """The change's entry in `withheld`, when the PR's own evidence is all that rejects it."""
        if self.withheld is None:
            return None
        return next((h for h in self.withheld.held if (h.check, h.change) == (change.check, change.change)), None)

    @property
    def items_name(self) -> str:
        return items_name(self.split)

    @property
    def gate_passed(self) -> bool:
        return all(c.accepted for c in self.changes) and not self.run_failures

    @property
    def decision(self) -> str:
        return "pass" if self.gate_passed or self.override else "fail"

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "gate": "pass" if self.gate_passed else "fail",
            "override": self.override,
            "items": self.items,
            "changes": [c.to_dict() for c in self.changes],
            "base": self.base.to_dict(),
            "head": self.head.to_dict(),
            "gated": self.gated.to_dict(),
            "gated_rubric": self.gated_yaml,
            "notes": self.notes,
            "judging": self.judging,
            "reliability": None if self.reliability is None else self.reliability.to_dict(),
            "comparisons": [c.to_dict() for c in self.comparisons],
            "run_failures": self.run_failures,
            "withheld": None if self.withheld is None else self.withheld.to_dict(),
            **({"judge_change": self.judge_change.to_dict()} if self.judge_change is not None else {}),
        }
