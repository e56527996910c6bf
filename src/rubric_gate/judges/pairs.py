"""The (check, item) pairs a judge must answer: distinct by check text and item content, each
keyed by the task the judge reads beside it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from rubric_gate.calibration import CalibrationItem, CalibrationSet
from rubric_gate.judges.prompt import Mode, prompt_version
from rubric_gate.rubric import Rubric, normalize_text
from rubric_gate.verdicts import VerdictStore, task_hash


@dataclass(frozen=True, slots=True)
class Pair:
    check_id: str
    check_text: str
    item: CalibrationItem
    task: str
    sample: int = 0  # which of the pair's `--samples` answers this is
    item_hash: str = ""  # the item's content hash; all_pairs computes it once per item
    task_hash: str = ""  # `task_hash(task)`; all_pairs computes it once per rubric
    # Which text of the check this pair asks, when the run holds two texts under one check id
    # (a reworded check: "base" / "head", or the rubric's id): "" when the id is unambiguous.
    side: str = ""

    def __post_init__(self) -> None:
        if not self.item_hash:
            object.__setattr__(self, "item_hash", self.item.content_hash)
        if not self.task_hash:
            object.__setattr__(self, "task_hash", task_hash(self.task))

    @property
    def key(self) -> tuple[str, str, str]:
        return normalize_text(self.check_text), self.item_hash, self.task_hash

    @property
    def name(self) -> str:
        """How a listing names the pair: two pairs of a run never share a name."""
        check = f"{self.check_id} ({self.side})" if self.side else self.check_id
        return f"{check} @ {self.item.id}"


def _sides(rubrics: Sequence[Rubric]) -> list[str]:
    """What tells the rubrics apart in a pair's name: versions of one rubric (callers pass base
    then head) by "base" / "head" (or "version N"), different rubrics by their ids."""
    if len({r.id for r in rubrics}) == len(rubrics):
        return [r.id for r in rubrics]
    if len(rubrics) == 2:
        return ["base", "head"]
    return [f"version {i + 1}" for i in range(len(rubrics))]


def all_pairs(rubrics: Sequence[Rubric], calibration: CalibrationSet) -> list[Pair]:
    """Every distinct pair, under the last rubric's task (callers pass base then head, and the
    head's wording is the one under review; the gate's lookups use the same task)."""
    items = [(item, item.content_hash) for item in calibration.items]
    pairs: dict[tuple[str, str], Pair] = {}
    task = rubrics[-1].task if rubrics else ""
    task_key = task_hash(task)
    texts: dict[str, set[str]] = {}
    for rubric in rubrics:
        for check in rubric.checks:
            texts.setdefault(check.id, set()).add(normalize_text(check.text))
    sides = _sides(rubrics)
    for index in reversed(range(len(rubrics))):
        for check in rubrics[index].checks:
            text = normalize_text(check.text)
            side = sides[index] if len(texts[check.id]) > 1 else ""
            for item, item_hash in items:
                key = (text, item_hash)
                if key not in pairs:
                    pairs[key] = Pair(check.id, check.text, item, task, item_hash=item_hash, task_hash=task_key,
                                      side=side)
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
    prompt version and task: raising `samples` asks only the new indices."""
    prompt = prompt_version(mode)
    pairs = all_pairs(rubrics, calibration)
    by_text: dict[tuple[str, str], list[int]] = {}
    for index, pair in enumerate(pairs):
        by_text.setdefault((pair.check_text, pair.task_hash), []).append(index)
    lacking = []  # per sample: which pairs lack that sample's answer
    for sample in range(samples):
        missing = [False] * len(pairs)
        for (text, task), indexes in by_text.items():  # one vectorised lookup per check text and sample
            rows = store.rows_for_keys(text, [pairs[i].item.id for i in indexes],
                                       [pairs[i].item_hash for i in indexes],
                                       judge=judge, prompt=prompt, sample=sample, task=task)
            for index, row in zip(indexes, rows.tolist(), strict=True):
                missing[index] = row < 0
        lacking.append(missing)
    # Pair by pair, its samples in order: a pair's answers are asked together.
    return [replace(pair, sample=sample) if sample else pair
            for index, pair in enumerate(pairs) for sample in range(samples) if lacking[sample][index]]
