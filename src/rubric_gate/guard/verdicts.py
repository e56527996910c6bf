"""Recorded verdicts are evidence: which base verdicts a change of the verdict file overrules."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rubric_gate.calibration.model import CalibrationItem
from rubric_gate.rubric import normalize_text
from rubric_gate.verdicts import Verdict, VerdictStore

# What a configured judge answered in this run: (task hash, normalised check text, item content
# hash) -> "yes" | "no". The task is part of the key: an answer judged under one rubric's task
# says nothing about the same text and item read under another's.
JudgedKey = tuple[str, str, str]


def confirmed_by_judge(text: str, item_hash: str, answer: str, judged: Mapping[JudgedKey, str],
                       tasks: Iterable[str]) -> bool:
    """Whether the judge gave `answer` for this (check text, item) pair under every task that reads
    it (each rubric using the verdict file): only then does a changed recorded answer stand excused."""
    tasks = tuple(dict.fromkeys(tasks))
    key = normalize_text(text)
    return bool(tasks) and all(judged.get((task, key, item_hash)) == answer for task in tasks)


@dataclass(frozen=True)
class ChangedAnswer:
    check: str
    item: str
    base: str
    head: str
    text: str = ""  # the check text as recorded
    item_hash: str = ""  # the item's content hash: a judge's re-judging excuses (text, item) pairs

    def __str__(self) -> str:
        return f"{self.check} on {self.item}: {self.base} -> {self.head}"


def changed_answers(base: VerdictStore, head: VerdictStore, items: Iterable[CalibrationItem],
                    tasks: Iterable[str] = ()) -> list[ChangedAnswer]:
    """(check text, item) pairs whose answer, as the gate reads it, the head changes: one per pair.

    Compared lookup by lookup, not line by line: replay at each sample index and task the changed
    lines record, and keyed (judge, prompt, task) as a judged run reads the record. A line moved to
    sample 1, or a later line of a re-recorded pair made stale, changes what replay reads without
    changing any answer; a keyed answer inserted before (or flipped behind) a keyless one changes
    what the next judged run reads as the judge's. A keyed answer where the base had none counts
    too: merged, it is the judge's answer nobody judged. Replay fills are `filled_answers`'.
    `tasks`: the task hashes of the rubrics reading the file (replay reads under the rubric's task).
    """
    tasks = tuple(tasks)
    by_id = {i.id: i for i in items}
    by_hash = {i.content_hash: i for i in by_id.values()}
    views: dict[tuple[str, str], set[tuple[str | None, str | None, str | None, int]]] = {}
    for verdict in [*head.added_since(base), *base.added_since(head)]:  # lines on one side only
        item = by_id.get(verdict.item) or (by_hash.get(verdict.item_hash) if verdict.item_hash else None)
        if item is None:
            continue
        sample = verdict.sample or 0
        seen = views.setdefault((verdict.check_text, item.id), {(None, None, None, 0)})
        seen.update({(None, None, None, sample), (None, None, verdict.task_hash, sample)})
        seen.update((None, None, task, sample) for task in tasks)
        if verdict.judge:
            seen.add((verdict.judge, verdict.prompt, verdict.task_hash, sample))
    out = []
    ordered = [(text, by_id[item_id], sorted(keys, key=lambda k: tuple("" if v is None else str(v) for v in k)))
               for (text, item_id), keys in views.items()]
    lookups = [(text, item, *key) for text, item, keys in ordered for key in keys]
    answers = iter(zip(base.find_answers(lookups), head.find_answers(lookups), strict=True))  # vectorised
    for text, item, keys in ordered:
        item_id = item.id
        pair = [next(answers) for _ in keys]
        for (judge, prompt, task, sample), (before_answer, after_answer) in zip(keys, pair, strict=True):
            if after_answer is None or before_answer == after_answer:
                continue
            if before_answer is None and judge is None:
                continue
            before = base.find(text, item, judge=judge, prompt=prompt, task=task, sample=sample)
            after = head.find(text, item, judge=judge, prompt=prompt, task=task, sample=sample)
            assert after is not None
            name = after.check or (before.check if before is not None else None) or text[:60]
            out.append(ChangedAnswer(name, item_id,
                                     before.answer if before is not None else "none", after.answer, text,
                                     item.content_hash))
            break
    return out


@dataclass(frozen=True)
class RemovedAnswer:
    check: str
    item: str
    answer: str
    text: str

    def __str__(self) -> str:
        return f"{self.check} on {self.item} ({self.answer})"


def _unanswered(lines: list[Verdict], other: VerdictStore,
                items: Iterable[CalibrationItem]) -> list[tuple[Verdict, CalibrationItem]]:
    """The first of `lines` for each labeled (check text, item) pair that `other` has no answer for."""
    by_id = {i.id: i for i in items}
    by_hash = {i.content_hash: i for i in by_id.values()}
    located = [(v, by_id.get(v.item) or (by_hash.get(v.item_hash) if v.item_hash else None)) for v in lines]
    found = [(v, item) for v, item in located if item is not None]
    answers = other.find_answers([(v.check_text, item, None, None, None, 0) for v, item in found])  # vectorised
    out: dict[tuple[str, str], tuple[Verdict, CalibrationItem]] = {}
    for (verdict, item), answer in zip(found, answers, strict=True):
        if answer is None:
            out.setdefault((verdict.check_text, item.id), (verdict, item))
    return list(out.values())


def removed_answers(base: VerdictStore, head: VerdictStore, items: Iterable[CalibrationItem]) -> list[RemovedAnswer]:
    """Base verdicts for a labeled item whose (check text, item) pair the head no longer answers.

    A recorded answer that disappears is evidence lost: the next PR could fill the gap with
    another answer, so it is a change like any other, never a silent one.
    """
    return [RemovedAnswer(v.check or v.check_text[:60], item.id, v.answer, v.check_text)
            for v, item in _unanswered(base.added_since(head), head, items)]


def filled_answers(base: VerdictStore, head: VerdictStore, items: Iterable[CalibrationItem]) -> list[ChangedAnswer]:
    """Head verdicts for a labeled item whose (check text, item) pair the base has no answer for.

    Once merged they are the base's record, which the next PR is gated on: a fill is new
    evidence for the checks it answers, written by the PR.
    """
    return [ChangedAnswer(v.check or v.check_text[:60], item.id, "none", v.answer, v.check_text, item.content_hash)
            for v, item in _unanswered(head.added_since(base), base, items)]
