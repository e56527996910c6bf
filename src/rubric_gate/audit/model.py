"""What an audit found about one check, as plain data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rubric_gate.audit.parse import PROPERTIES
from rubric_gate.llm.asks import CallStats

# How each failing property reads in a finding.
MISSING = {
    "atomic": "not atomic",
    "consistent": "not internally consistent",
    "observable": "not observable from the input and output",
    "operational": "not operational",
    "scoped": "not clearly scoped",
}


@dataclass(frozen=True)
class Fool:
    """An attack output the judge said yes to and the blind verifier found not to meet the check."""

    item: str  # calibration input it was written for
    output: str
    verifier_reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"item": self.item, "output": self.output, "verifier_reason": self.verifier_reason}


@dataclass
class CheckAudit:
    check: str
    text: str
    line: int | None
    structure: dict[str, bool]
    structure_reasons: dict[str, str]
    grounded: bool
    grounding_quote: str
    grounding_reason: str
    judges: tuple[str, ...] = ()
    votes: dict[str, dict[str, bool]] = field(default_factory=dict)  # judge -> property/grounded -> holds
    attempts: int | None = None  # adversarial outputs written (N); None when not run
    fools: list[Fool] = field(default_factory=list)

    @property
    def vfr(self) -> float | None:
        return None if not self.attempts else len(self.fools) / self.attempts

    @property
    def failing(self) -> list[str]:
        return [name for name in PROPERTIES if not self.structure[name]]

    @property
    def passed(self) -> bool:
        """Well built and grounded (the adversarial fool rate is reported, never a verdict)."""
        return self.grounded and not self.failing

    def findings(self) -> list[str]:
        """One line per problem: what is wrong and the judges' reason or quote."""
        lines = [f"{MISSING[name]}: {self.structure_reasons[name]}" for name in self.failing]
        if not self.grounded:
            lines.append(f"asks for more than the task states: \"{self.grounding_quote}\" ({self.grounding_reason})")
        return lines

    def to_dict(self) -> dict[str, Any]:
        vfr = self.vfr
        return {
            "check": self.check,
            "line": self.line,
            "text": self.text,
            "passed": self.passed,
            "structure": dict(self.structure),
            "structure_reasons": dict(self.structure_reasons),
            "grounded": self.grounded,
            "grounding_quote": self.grounding_quote,
            "grounding_reason": self.grounding_reason,
            "vfr": None if vfr is None else round(vfr, 4),
            "adversarial_attempts": self.attempts,
            "fools": [f.to_dict() for f in self.fools],
            "judges": list(self.judges),
            "votes": {judge: dict(v) for judge, v in self.votes.items()},
        }


def uninformative_notices(usage: list[CallStats]) -> list[str]:
    """One notice per judge whose audits carry no information (CallStats.uninformative)."""
    return [f"{s.model}: its structure audits carry no information: {s.uninformative}." for s in usage
            if s.role == "audit" and s.uninformative]


@dataclass
class AuditReport:
    rubric_id: str
    display: str
    audits: list[CheckAudit]
    usage: list[CallStats] = field(default_factory=list)
    unanswered: list[str] = field(default_factory=list)  # checks not audited: a judge gave no valid answer
    notices: list[str] = field(default_factory=list)  # what the run could not do, and why

    @property
    def passed(self) -> bool:
        return all(a.passed for a in self.audits)

    def audit(self, check_id: str) -> CheckAudit | None:
        return next((a for a in self.audits if a.check == check_id), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rubric": self.rubric_id,
            "file": self.display,
            "passed": self.passed,
            "audits": [a.to_dict() for a in self.audits],
            "unanswered": list(self.unanswered),
            "notices": list(self.notices),
            "usage": [u.to_dict() for u in self.usage],
        }
