"""What a drift run found, as plain data: per rubric the sampled pairs re-asked, the flips against
what was stored, kappa, the paired test, and whether it drifted past the thresholds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rubric_gate.reliability import Estimate

MAX_FLIP_RATE = 0.05  # default: drifted when more than 5% of stored pairs answer otherwise now
DRIFT_ALPHA = 0.05  # default: drifted when the flips lean one way with an exact McNemar p below this
LISTED_PAIRS = 50  # changed pairs listed per rubric in JSON (the counts are always exact)


@dataclass(frozen=True)
class Thresholds:
    max_flip_rate: float = MAX_FLIP_RATE
    alpha: float = DRIFT_ALPHA

    def to_dict(self) -> dict[str, float]:
        return {"max_flip_rate": self.max_flip_rate, "alpha": self.alpha}


@dataclass(frozen=True)
class ChangedPair:
    check: str
    item: str
    label: str  # correct | flawed
    stored: str  # yes | no | n/a
    now: str

    def to_dict(self) -> dict[str, str]:
        return {"check": self.check, "item": self.item, "label": self.label, "stored": self.stored, "now": self.now}


@dataclass(frozen=True)
class CheckDrift:
    id: str
    asked: int
    to_no: int  # stored yes (or n/a), answered no now: the judge fails what it passed
    to_yes: int  # stored no, answered yes (or n/a) now
    not_applicable_changed: int  # yes <-> n/a: the gate reads both as a pass

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "asked": self.asked, "yes_to_no": self.to_no, "no_to_yes": self.to_yes,
                "n/a_changed": self.not_applicable_changed}


@dataclass
class RubricDrift:
    rubric: str  # its file, as reports name it
    rubric_id: str
    judge: str
    prompt: str  # the prompt template version the stored answers were given under
    population: int  # stored pairs under the full key
    asked: int
    seed: int
    to_no: int
    to_yes: int
    not_applicable_changed: int
    flip_rate: float | None  # population-weighted share of pairs whose yes/no reading flipped
    kappa: Estimate  # stored vs now, over the sample (what the gate reads: no fails, yes and n/a do not)
    p_value: float | None  # exact McNemar: do the flips lean one way?
    checks: list[CheckDrift]
    changed: list[ChangedPair]
    thresholds: Thresholds
    judging: dict[str, Any] | None = None
    reasons: list[str] = field(default_factory=list)  # why it drifted; empty: it did not

    @property
    def drifted(self) -> bool:
        return bool(self.reasons)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rubric": self.rubric, "id": self.rubric_id, "judge": self.judge, "prompt": self.prompt,
            "population": self.population, "asked": self.asked, "seed": self.seed,
            "flips": {"yes_to_no": self.to_no, "no_to_yes": self.to_yes},
            "n/a_changed": self.not_applicable_changed,
            "flip_rate": self.flip_rate, "kappa": self.kappa.to_dict(), "p_value": self.p_value,
            "drifted": self.drifted, "reasons": self.reasons, "thresholds": self.thresholds.to_dict(),
            "checks": [c.to_dict() for c in self.checks],
            "changed": [p.to_dict() for p in self.changed[:LISTED_PAIRS]],
            "judging": self.judging,
        }


@dataclass
class DriftReport:
    rubrics: list[RubricDrift] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (rubric file, why it was not re-asked)

    @property
    def drifted(self) -> bool:
        return any(r.drifted for r in self.rubrics)

    def to_dict(self) -> dict[str, Any]:
        return {"decision": "drift" if self.drifted else "steady", "drifted": self.drifted,
                "rubrics": [r.to_dict() for r in self.rubrics],
                "skipped": [{"rubric": path, "reason": why} for path, why in self.skipped]}
