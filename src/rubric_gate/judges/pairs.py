"""The (check, item) pairs a judge must answer: distinct by check text and item content."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from rubric_gate.calibration import CalibrationItem, CalibrationSet
from rubric_gate.judges.prompt import Mode, prompt_version
from rubric_gate.rubric import Rubric, normalize_text
from rubric_gate.verdicts import VerdictStore


@dataclass(frozen=True)
class Pair:
    check_id: str
    check_text: str
    item: CalibrationItem
    task: str
    sample: int = 0  # which of the pair's `--samples` answers this is

    @property
    def key(self) -> tuple[str, str]:
        return normalize_text(self.check_text), self.item.content_hash


def all_pairs(rubrics: Sequence[Rubric], calibration: CalibrationSet) -> list[Pair]:
    """Every distinct pair; when rubrics share a check text, the last rubric's task is used
    (callers pass base then head, and the head's wording is the one under review)."""
    pairs: dict[tuple[str, str], Pair] = {}
    for rubric in reversed(rubrics):
        for check in rubric.checks:
            for item in calibration.items:
                pair = Pair(check.id, check.text, item, rubric.task)
                pairs.setdefault(pair.key, pair)
    return list(reversed(pairs.values()))


def missing_pairs(
    rubrics: Sequence[Rubric],
    calibration: CalibrationSet,
    store: VerdictStore,
    judge: str,
    *,
    mode: Mode = "per-check",
    samples: int = 1,
) -> list[Pair]:
    """Pairs (one per missing sample index) with no verdict from this judge under the current
    prompt version: raising `samples` asks only the new indices."""
    prompt = prompt_version(mode)
    return [
        replace(pair, sample=sample)
        for pair in all_pairs(rubrics, calibration)
        for sample in range(samples)
        if store.find(pair.check_text, pair.item, judge=judge, prompt=prompt, sample=sample) is None
    ]
