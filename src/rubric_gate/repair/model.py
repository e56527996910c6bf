"""Repair findings as plain data: accepted rewrites, what rejected deletions protect, and why
a rejected check got no suggestion."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rubric_gate.llm.asks import CallStats
from rubric_gate.results import CheckRow


@dataclass(frozen=True)
class ItemExcerpt:
    id: str
    excerpt: str

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "excerpt": self.excerpt}


@dataclass
class RepairSuggestion:
    """A rewrite of a rejected check that the gate accepts when it replaces the PR's version."""

    check: str  # id of the rejected check
    change: str  # added | modified
    operator: str
    why: str
    rows: list[CheckRow]  # the replacement check(s), scored in the gated rubric with the rewrite in place
    yaml: str  # replacement for the check's lines in the head YAML
    path: str | None  # head rubric's path in the repository
    start_line: int | None
    end_line: int | None
    no_longer_fails: list[str] = field(default_factory=list)  # correct items the PR's text failed and this passes
    robustness: Any = None  # vfr objective: this rewrite's Robustness on the dev split
    robustness_before: Any = None  # ... and the PR's text's

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "change": self.change,
            "operator": self.operator,
            "why": self.why,
            "checks": [r.to_dict() for r in self.rows],
            "no_longer_fails": list(self.no_longer_fails),
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "yaml": self.yaml,
            **({"dev": {"before": self.robustness_before.to_dict(), "after": self.robustness.to_dict()}}
               if self.robustness is not None else {}),
        }


@dataclass(frozen=True)
class ProtectedCheck:
    """A rejected deletion: the flawed items only this check catches."""

    check: str
    unique_catches: tuple[ItemExcerpt, ...]
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "line": self.line, "unique_catches": [i.to_dict() for i in self.unique_catches]}


@dataclass(frozen=True)
class Unrepaired:
    check: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"check": self.check, "reason": self.reason}


@dataclass
class RepairReport:
    suggestions: list[RepairSuggestion] = field(default_factory=list)
    protected: list[ProtectedCheck] = field(default_factory=list)
    unrepaired: list[Unrepaired] = field(default_factory=list)
    usage: list[CallStats] = field(default_factory=list)
    judging: list[dict[str, Any]] = field(default_factory=list)  # verdict runs for the candidates

    def to_dict(self) -> dict[str, Any]:
        return {
            "suggestions": [s.to_dict() for s in self.suggestions],
            "protected": [p.to_dict() for p in self.protected],
            "unrepaired": [u.to_dict() for u in self.unrepaired],
            "usage": [u.to_dict() for u in self.usage],
            "judging": list(self.judging),
        }
