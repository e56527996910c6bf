"""What `teach` found and proposed, as plain data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rubric_gate.llm.asks import CallStats


@dataclass
class Proposal:
    """A check a model wrote for one group of missed items, judged and gated."""

    id: str
    text: str
    why: str
    flaw: str  # the group it was taught by
    taught_by: list[str]  # ids of the missed items the model was shown
    accepted: bool = False
    reason: str = ""  # the gate's reason when rejected
    catches: list[str] = field(default_factory=list)  # missed items it fails (newly caught)
    fails_correct: list[str] = field(default_factory=list)
    credit: float | None = None  # in the rubric with the accepted proposals (None when rejected)
    blame: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "text": self.text, "why": self.why, "flaw": self.flaw, "taught_by": list(self.taught_by),
            "accepted": self.accepted, "reason": self.reason, "catches": list(self.catches),
            "fails_correct": list(self.fails_correct),
            "credit": None if self.credit is None else round(self.credit, 4),
            "blame": None if self.blame is None else round(self.blame, 4),
        }


@dataclass
class TeachReport:
    rubric_id: str
    display: str
    items: int
    missed: dict[str, list[str]]  # flaw -> missed item ids, every group
    asked: list[str]  # flaws a check was asked for (at most --max)
    proposals: list[Proposal] = field(default_factory=list)
    yaml: str = ""
    usage: list[CallStats] = field(default_factory=list)
    judging: list[dict[str, Any]] = field(default_factory=list)
    dry_run: bool = False
    plan: list[str] = field(default_factory=list)  # dry run: what would be asked
    # False on a dry run whose rubric verdicts are not all judged yet: the missed items are
    # not known, so nothing is said about them (no finding before any verdict exists).
    missed_known: bool = True

    @property
    def accepted(self) -> list[Proposal]:
        return [p for p in self.proposals if p.accepted]

    def to_dict(self) -> dict[str, Any]:
        return {
            "rubric": self.rubric_id, "file": self.display, "items": self.items, "dry_run": self.dry_run,
            "missed": {flaw: list(ids) for flaw, ids in self.missed.items()} if self.missed_known else None,
            "asked": list(self.asked),
            "proposals": [p.to_dict() for p in self.proposals],
            "accepted": [p.id for p in self.accepted], "yaml": self.yaml,
            "plan": list(self.plan), "usage": [u.to_dict() for u in self.usage], "judging": list(self.judging),
        }
