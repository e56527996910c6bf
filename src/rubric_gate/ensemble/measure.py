"""Ask what a panel needs before the gate runs: every judge's samples of every pair, and the
paraphrases of changed checks (generated once, then judged like any check)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rubric_gate.calibration import CalibrationSet
from rubric_gate.gate.diff import diff_rubrics
from rubric_gate.judges import JudgeRunStats, judge_missing
from rubric_gate.paraphrase import ParaphraseStore, ensure_paraphrases, paraphrase_path
from rubric_gate.rubric import Check, Rubric, normalize_text
from rubric_gate.verdicts import VerdictStore


@dataclass
class Measured:
    runs: list[JudgeRunStats] = field(default_factory=list)
    paraphrases: dict[str, list[str]] = field(default_factory=dict)  # normalised text -> rewordings
    paraphrase_info: dict[str, Any] | None = None


def changed_texts(base: Rubric, head: Rubric) -> list[str]:
    """Head texts of added and reworded checks: the ones whose stability the gate may test."""
    return [c.head.text for c in diff_rubrics(base, head)
            if c.head is not None and (c.kind == "added" or c.reworded)]


def paraphrase_rubric(head: Rubric, paraphrases: dict[str, list[str]]) -> Rubric:
    checks = [Check(id=f"paraphrase-{n}", text=text)
              for n, text in enumerate(t for texts in paraphrases.values() for t in texts)]
    return head.model_copy(update={"checks": checks})


def judge_panel(
    base: Rubric,
    head: Rubric,
    items: CalibrationSet,
    store: VerdictStore,
    judges: Sequence[str],
    *,
    samples: int = 1,
    paraphrases: int = 0,
    paraphraser: str | None = None,
    concurrency: int = 8,
    max_calls: int | None = None,
) -> Measured:
    measured = Measured()
    spent = 0  # `max_calls` bounds the whole panel, not each judge

    def left() -> int | None:
        return None if max_calls is None else max(0, max_calls - spent)

    for judge in judges:
        stats = judge_missing([base, head], items, store, judge, concurrency=concurrency,
                              max_calls=left(), samples=samples)
        spent += stats.calls
        print(stats.summary, file=sys.stderr)
        measured.runs.append(stats)
    if paraphrases <= 0:
        return measured
    model = paraphraser or judges[0]
    pstore = ParaphraseStore.load(paraphrase_path(store.path)) if store.path is not None else ParaphraseStore()
    texts = changed_texts(base, head)
    found, calls = ensure_paraphrases(texts, model, paraphrases, pstore)
    measured.paraphrases = {normalize_text(text): rewordings for text, rewordings in found.items()}
    judged = []
    if texts:
        extra = paraphrase_rubric(head, found)
        for judge in judges:
            stats = judge_missing([extra], items, store, judge, concurrency=concurrency,
                                  max_calls=left(), samples=samples)
            spent += stats.calls
            judged.append(stats.to_dict())
    measured.paraphrase_info = {
        "model": model, "per_check": paraphrases, "checks": len(texts), "generated": calls,
        "reused": paraphrases * len(texts) - calls, "judging": judged,
    }
    print(f"paraphrases by {model}: {calls} generated, {paraphrases * len(texts) - calls} reused; "
          f"judging them: {sum(s['calls'] for s in judged)} calls, {sum(s['reused'] for s in judged)} verdicts reused",
          file=sys.stderr)
    return measured
