"""What `discover` did and chose, as plain data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rubric_gate.llm.asks import CallStats


@dataclass
class DiscoveredCheck:
    id: str
    text: str
    support: int  # extracted candidates behind it
    pairs: int  # pairs those candidates came from
    wins: int | None = None  # pairs where the chosen response meets it and the rejected does not
    losses: int | None = None
    ties: int | None = None

    @property
    def share(self) -> float | None:
        if self.wins is None:
            return None
        total = self.wins + (self.losses or 0) + (self.ties or 0)
        return self.wins / total if total else 0.0

    def to_dict(self) -> dict[str, Any]:
        share = self.share
        return {"id": self.id, "text": self.text, "support": self.support, "pairs": self.pairs,
                "wins": self.wins, "losses": self.losses, "ties": self.ties,
                "chosen_win_share": None if share is None else round(share, 4)}


@dataclass
class DiscoverReport:
    pairs: int
    candidates: int = 0  # extracted, before consolidation
    pool_sizes: list[int] = field(default_factory=list)  # pool after extraction and each level
    embeddings: str = ""
    min_support: int = 0
    backed: int = 0  # criteria with at least min_support candidates
    ranked: int = 0  # MMR pool scored for preference rank
    checks: list[DiscoveredCheck] = field(default_factory=list)
    out: str = ""
    yaml: str = ""
    notes: list[str] = field(default_factory=list)
    usage: list[CallStats] = field(default_factory=list)
    judging: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs, "candidates": self.candidates, "pool_sizes": list(self.pool_sizes),
            "embeddings": self.embeddings, "min_support": self.min_support, "backed": self.backed,
            "ranked": self.ranked, "checks": [c.to_dict() for c in self.checks], "out": self.out,
            "notes": list(self.notes), "usage": [u.to_dict() for u in self.usage], "judging": list(self.judging),
        }
