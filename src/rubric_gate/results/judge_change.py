"""A judge change on one rubric, as plain data: per check the two judges' agreement and flips and
the attribution under each, per rubric both rates under each with the paired comparison, the
gate's decisions on the other edits under each judge, and rule J's findings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rubric_gate.attribution import Rates
from rubric_gate.comparison import PairedComparison
from rubric_gate.gate import Violation
from rubric_gate.reliability import Estimate

LISTED_ITEMS = 50  # item ids listed per flip cell in JSON (the counts are always exact)
RECORDED = "recorded verdicts"  # how a side without a judge (replayed verdicts) is named


def judges_label(judges: tuple[str, ...]) -> str:
    """`anthropic:a`, `a + b` for a panel, or "recorded verdicts" for replay."""
    return " + ".join(judges) if judges else RECORDED


@dataclass(frozen=True)
class UnderJudge:
    """One check's figures with one judge's verdicts."""

    credit: float
    blame: float
    unique_catches: int
    fails_correct: int
    fails_flawed: int
    not_applicable: int

    def to_dict(self) -> dict[str, Any]:
        return {"credit": round(self.credit, 4), "blame": round(self.blame, 4),
                "unique_catches": self.unique_catches, "fails_correct": self.fails_correct,
                "fails_flawed": self.fails_flawed, "not_applicable": self.not_applicable}


@dataclass(frozen=True)
class Flips:
    """Items on which the two judges' answers differ, as the gate reads them (a "no" fails the
    item; "yes" and "n/a" do not), by direction and by label."""

    to_no_correct: tuple[str, ...]  # the old judge did not fail it, the new one does
    to_no_flawed: tuple[str, ...]
    to_yes_correct: tuple[str, ...]  # the old judge failed it, the new one does not
    to_yes_flawed: tuple[str, ...]

    @property
    def total(self) -> int:
        return len(self.to_no_correct) + len(self.to_no_flawed) + len(self.to_yes_correct) + len(self.to_yes_flawed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "yes_to_no": {"correct": len(self.to_no_correct), "flawed": len(self.to_no_flawed)},
            "no_to_yes": {"correct": len(self.to_yes_correct), "flawed": len(self.to_yes_flawed)},
            "items": {
                "yes_to_no": {"correct": list(self.to_no_correct[:LISTED_ITEMS]),
                              "flawed": list(self.to_no_flawed[:LISTED_ITEMS])},
                "no_to_yes": {"correct": list(self.to_yes_correct[:LISTED_ITEMS]),
                              "flawed": list(self.to_yes_flawed[:LISTED_ITEMS])},
            },
        }


@dataclass(frozen=True)
class CheckAgreement:
    """One check of the rubric under the old and the new judge."""

    id: str
    text: str
    agreement: float | None  # share of items on which the two judges' answers are the same
    kappa: Estimate  # Cohen's kappa between them, with its bootstrap 95% interval
    flips: Flips
    old: UnderJudge
    new: UnderJudge
    lost_catches: tuple[str, ...] = ()  # flawed items only this check caught (old) the rubric misses (new)
    blame_added: bool = False  # no blame under the old judge, some under the new

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "agreement": None if self.agreement is None else round(self.agreement, 4),
            "kappa": self.kappa.to_dict(),
            "flips": self.flips.to_dict(),
            "old": self.old.to_dict(),
            "new": self.new.to_dict(),
            "lost_unique_catches": list(self.lost_catches),
            "blame_added": self.blame_added,
            "text": self.text,
        }


@dataclass(frozen=True)
class DecisionPair:
    """A change of the PR's rubric edit, decided with each judge's verdicts."""

    check: str
    change: str
    old: bool  # accepted with the old judge's verdicts
    new: bool

    def to_dict(self) -> dict[str, Any]:
        word = {True: "accepted", False: "rejected"}
        return {"check": self.check, "change": self.change, "old": word[self.old], "new": word[self.new],
                "same": self.old == self.new}


@dataclass
class JudgeChange:
    """The judge change on one rubric (the base rubric: the edit held fixed) and rule J's verdict."""

    old_judges: tuple[str, ...]  # () = the recorded verdicts
    new_judges: tuple[str, ...]
    rubric: str  # the rubric compared (its file, as reports name it)
    version: str
    items: int
    max_failures: int
    checks: list[CheckAgreement]
    old_rates: Rates
    new_rates: Rates
    comparisons: list[PairedComparison]  # old -> new, per rate, paired on the items
    decisions: list[DecisionPair]  # the PR's other edits, under each judge
    alpha: float  # rule J's level for a paired drop in a rate
    violations: list[Violation] = field(default_factory=list)
    judging: dict[str, Any] | None = None  # the side judged for the comparison alone (not the gate's), when live
    lost_shared: tuple[str, ...] = ()  # flawed items several checks caught (old) that none catches (new)

    @property
    def old_label(self) -> str:
        return judges_label(self.old_judges)

    @property
    def new_label(self) -> str:
        return judges_label(self.new_judges)

    @property
    def passed(self) -> bool:
        return not self.violations

    @property
    def decisions_same(self) -> bool:
        return all(d.old == d.new for d in self.decisions)

    def to_dict(self) -> dict[str, Any]:
        return {
            "old_judge": list(self.old_judges) or None,
            "new_judge": list(self.new_judges) or None,
            "rubric": self.rubric,
            "version": self.version,
            "items": self.items,
            "rule": "J",
            "decision": "pass" if self.passed else "fail",
            "reasons": [v.reason for v in self.violations],
            "alpha": self.alpha,
            "checks": [c.to_dict() for c in self.checks],
            "rates": {"old": self.old_rates.to_dict(), "new": self.new_rates.to_dict()},
            "comparisons": [c.to_dict() for c in self.comparisons],
            "decisions": [d.to_dict() for d in self.decisions],
            "decisions_same": self.decisions_same,
            "lost_shared_catches": list(self.lost_shared[:LISTED_ITEMS]),
            "judging": self.judging,
        }
