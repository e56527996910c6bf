"""Recorded verdicts are evidence: which base verdicts a change of the verdict file overrules."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rubric_gate.calibration.model import CalibrationItem
from rubric_gate.verdicts import Verdict, VerdictStore


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


def changed_answers(base: VerdictStore, head_verdicts: Iterable[Verdict],
                    items: Iterable[CalibrationItem]) -> list[ChangedAnswer]:
    """Head verdicts that answer a (check text, item) pair differently from the base's verdict.

    Only the answer the gate would replay counts: the base's own later-wins lookup for the same
    pair, matched by item id or content hash as replay matches it.
    """
    by_id = {i.id: i for i in items}
    by_hash = {i.content_hash: i for i in by_id.values()}
    latest: dict[tuple[str, str], Verdict] = {}
    for verdict in head_verdicts:
        item = by_id.get(verdict.item) or (by_hash.get(verdict.item_hash) if verdict.item_hash else None)
        if item is not None:
            latest[(verdict.check_text, item.id)] = verdict
    out = []
    for (text, item_id), verdict in latest.items():
        recorded = base.find(text, by_id[item_id])
        if recorded is not None and recorded.answer != verdict.answer:
            out.append(ChangedAnswer(verdict.check or text[:60], item_id, recorded.answer, verdict.answer, text,
                                     by_id[item_id].content_hash))
    return out


@dataclass(frozen=True)
class RemovedAnswer:
    check: str
    item: str
    answer: str
    text: str

    def __str__(self) -> str:
        return f"{self.check} on {self.item} ({self.answer})"


def removed_answers(base: VerdictStore, head: VerdictStore, items: Iterable[CalibrationItem]) -> list[RemovedAnswer]:
    """Base verdicts for a labeled item whose (check text, item) pair the head no longer answers.

    A recorded answer that disappears is evidence lost: the next PR could fill the gap with
    another answer, so it is a change like any other, never a silent one.
    """
    by_id = {i.id: i for i in items}
    by_hash = {i.content_hash: i for i in by_id.values()}
    out: dict[tuple[str, str], RemovedAnswer] = {}
    for verdict in base.added_since(head):  # lines of the base that the head does not hold
        item = by_id.get(verdict.item) or (by_hash.get(verdict.item_hash) if verdict.item_hash else None)
        if item is None or (verdict.check_text, item.id) in out:
            continue
        if head.find(verdict.check_text, item) is None:
            out[(verdict.check_text, item.id)] = RemovedAnswer(verdict.check or verdict.check_text[:60], item.id,
                                                               verdict.answer, verdict.check_text)
    return list(out.values())


def filled_answers(base: VerdictStore, head: VerdictStore, items: Iterable[CalibrationItem]) -> list[ChangedAnswer]:
    """Head verdicts for a labeled item whose (check text, item) pair the base has no answer for.

    Once merged they are the base's record, which the next PR is gated on: a fill is new
    evidence for the checks it answers, written by the PR.
    """
    by_id = {i.id: i for i in items}
    by_hash = {i.content_hash: i for i in by_id.values()}
    out: dict[tuple[str, str], ChangedAnswer] = {}
    for verdict in head.added_since(base):
        item = by_id.get(verdict.item) or (by_hash.get(verdict.item_hash) if verdict.item_hash else None)
        if item is None or (verdict.check_text, item.id) in out:
            continue
        if base.find(verdict.check_text, item) is None:
            out[(verdict.check_text, item.id)] = ChangedAnswer(verdict.check or verdict.check_text[:60], item.id,
                                                               "none", verdict.answer, verdict.check_text,
                                                               item.content_hash)
    return list(out.values())
