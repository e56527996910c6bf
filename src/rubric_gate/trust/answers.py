"""Recorded verdicts are evidence: which base verdicts a change of the verdict file overrules."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from rubric_gate.calibration.model import CalibrationItem
from rubric_gate.rubric import normalize_text
from rubric_gate.verdicts import VerdictStore
from rubric_gate.verdicts.blobs import memoised
from rubric_gate.verdicts.compare import appended_lines, differing_lines

# What a configured judge answered in this run: (task hash, normalised check text, item content
# hash) -> "yes" | "no". The task is part of the key: an answer judged under one rubric's task
# says nothing about the same text and item read under another's.
JudgedKey = tuple[str, str, str]

# Everything a judge read, and who read it: (judge, prompt version, task hash, normalised check
# text, item content hash, sample). A trusted answer confirms a recorded one only at the same key.
FullKey = tuple[str, str, str, str, str, int]


class Confirms(Protocol):
    """Which of `answers` (changed or filled in `head`) a trusted source confirms: given the tasks
    reading the file (task hash -> task text) and its items by id (`confirmation_keys`)."""

    def __call__(self, answers: list[ChangedAnswer], head: VerdictStore, task_texts: Mapping[str, str],
                 items: Mapping[str, CalibrationItem]) -> set[ChangedAnswer]: ...


@dataclass(frozen=True)
class ItemRef:
    """An item as a lookup reads it (`verdicts.ItemKey`): its id and content hash."""

    id: str
    content_hash: str


def confirmation_keys(answer: ChangedAnswer, head: VerdictStore, tasks: Iterable[str],
                      judges: Mapping[str, str]) -> list[tuple[FullKey, str]] | None:
    """The full keys at which a trusted source must have given the answers the head reads for
    `answer`'s pair (with those answers), for the change to stand; None when none can (fail closed).

    At each lookup key where the head reads the pair differently, the line that wins it is the
    evidence: a keyed line (judge, prompt, task and item hash recorded) must be confirmed at its own
    key, so only a configured judge (`judges`: spec -> its prompt version) under the current prompt,
    under the task of a rubric reading the file (`tasks`), for the item as it is, can confirm it; a
    line that differs from those in any field is the judge's answer nobody can re-judge here. A
    keyless line stands for every judge under every task: each configured judge must give it under
    every task reading the file, at its sample."""
    tasks = tuple(dict.fromkeys(tasks))
    item = ItemRef(answer.item, answer.item_hash)
    text = normalize_text(answer.text)
    out: list[tuple[FullKey, str]] = []
    for judge, prompt, task, sample in answer.keys:
        winner = head.find(answer.text, item, judge=judge, prompt=prompt, sample=sample, task=task)
        if winner is None:
            return None
        at = winner.sample or 0
        if winner.judge or winner.prompt or winner.task_hash:
            if not (winner.judge and winner.prompt and winner.task_hash and winner.item_hash == item.content_hash
                    and judges.get(winner.judge) == winner.prompt and winner.task_hash in tasks):
                return None
            out.append(((winner.judge, winner.prompt, winner.task_hash, text, item.content_hash, at), winner.answer))
            continue
        if not judges or not tasks:
            return None
        out.extend(((spec, version, t, text, item.content_hash, at), winner.answer)
                   for spec, version in judges.items() for t in tasks)
    return list(dict.fromkeys(out)) or None


def confirmed_at(needs: Iterable[tuple[FullKey, str]], trusted: VerdictStore) -> bool:
    """Whether `trusted` (what a trusted source judged) gives each answer at its full key."""
    needs = list(needs)
    if not needs:
        return False
    # A keyed lookup matches the item by content hash alone.
    found = trusted.find_answers([(text, ItemRef("", item_hash), judge, prompt, task, sample)
                                  for (judge, prompt, task, text, item_hash, sample), _ in needs])
    return all(got == want for got, (_, want) in zip(found, needs, strict=True))


@dataclass(frozen=True)
class ChangedAnswer:
    check: str
    item: str
    base: str
    head: str
    text: str = ""  # the check text as recorded
    item_hash: str = ""  # the item's content hash: a judge's re-judging excuses (text, item) pairs
    # Every lookup key at which the head reads the pair differently (and reads an answer): what
    # a trusted source must confirm, each at the key of the line that wins it.
    keys: tuple[LookupKey, ...] = ()

    def __str__(self) -> str:
        return f"{self.check} on {self.item}: {self.base} -> {self.head}"


# A lookup's key besides the (check text, item) pair: judge, prompt, task hash, sample. Replay
# reads (None, None, task or None, 0); a judged run reads its own (judge, prompt, task, sample).
LookupKey = tuple[str | None, str | None, str | None, int]


@dataclass(frozen=True)
class PairReading:
    """One (check text, item) pair as the gate reads it at the base and at the head: the answer
    (None: none) at every lookup key the lines that differ between the two sides can move."""

    text: str  # the check text as recorded
    item: CalibrationItem
    name: str  # the check id a differing line records (the head's first), else the text's start
    answers: tuple[tuple[LookupKey, str | None, str | None], ...]  # (key, base answer, head answer)

    def replay(self) -> list[tuple[str | None, str | None]]:
        """(base, head) at each replay key (any task, and each task of the rubrics reading the file)."""
        return [(before, after) for (judge, _, _, sample), before, after in self.answers
                if judge is None and sample == 0]


def answer_readings(base: VerdictStore, head: VerdictStore, items: Iterable[CalibrationItem],
                    tasks: Iterable[str] = ()) -> list[PairReading]:
    """Every labeled (check text, item) pair whose answer some lookup may read differently at the
    head, with its answers at each such key, base and head.

    Compared lookup by lookup, not line by line (`verdicts.compare.differing_lines`): a copy of an
    earlier line, a reordering or a removal moves the winning line without adding a line the base
    lacks. The keys are those the differing lines record: replay at their sample index and task,
    and under each of `tasks` (the task hashes of the rubrics reading the file), and keyed (judge,
    prompt, task) as a judged run reads the record. A line counts for the item of its id and for
    the items of its content hash (replay falls back to the hash).
    """
    items = tuple(items)
    tasks = tuple(dict.fromkeys(tasks))
    # The three guards below ask in turn: computed once per blob pair, items and tasks.
    key = ("answer_readings", tuple((i.id, i.content_hash) for i in items), tasks)
    return list(memoised((base, head), key, lambda: tuple(_readings(base, head, items, tasks))))


def _readings(base: VerdictStore, head: VerdictStore, items: tuple[CalibrationItem, ...],
              tasks: tuple[str, ...]) -> list[PairReading]:
    by_id = {i.id: i for i in items}
    by_hash: dict[str, list[CalibrationItem]] = {}
    for item in by_id.values():
        by_hash.setdefault(item.content_hash, []).append(item)
    before_lines, after_lines = differing_lines(base, head)
    views: dict[tuple[str, str], tuple[str, CalibrationItem, set[LookupKey]]] = {}
    names: dict[tuple[str, str], str] = {}
    for verdict in (*after_lines, *before_lines):
        touched = [by_id[verdict.item]] if verdict.item in by_id else []
        touched += [i for i in by_hash.get(verdict.item_hash or "", []) if i.id != verdict.item]
        sample = verdict.sample or 0
        for item in touched:
            pair = (normalize_text(verdict.check_text), item.id)
            _, _, seen = views.setdefault(pair, (verdict.check_text, item, {(None, None, None, 0)}))
            if verdict.check:
                names.setdefault(pair, verdict.check)
            seen.update({(None, None, None, sample), (None, None, verdict.task_hash, sample)})
            seen.update((None, None, task, s) for task in tasks for s in {0, sample})
            if verdict.judge:
                seen.add((verdict.judge, verdict.prompt, verdict.task_hash, sample))
    ordered = [(pair, text, item, sorted(keys, key=lambda k: tuple("" if v is None else str(v) for v in k)))
               for pair, (text, item, keys) in views.items()]
    lookups = [(text, item, *key) for _, text, item, keys in ordered for key in keys]
    answers = iter(zip(base.find_answers(lookups), head.find_answers(lookups), strict=True))  # vectorised
    return [PairReading(text, item, names.get(pair) or text[:60], tuple((key, *next(answers)) for key in keys))
            for pair, text, item, keys in ordered]


def changed_answers(base: VerdictStore, head: VerdictStore, items: Iterable[CalibrationItem],
                    tasks: Iterable[str] = ()) -> list[ChangedAnswer]:
    """(check text, item) pairs whose answer, as the gate reads it, the head changes: one per pair.

    A line moved to sample 1, or a later line of a re-recorded pair made stale, changes what
    replay reads without changing any answer; a copy of an earlier line appended, or two lines
    swapped, changes the winner; a keyed answer inserted before (or flipped behind) a keyless one
    changes what the next judged run reads as the judge's. A keyed answer where the base had none
    counts too: merged, it is the judge's answer nobody judged. Replay fills are `filled_answers'`
    and lost answers `removed_answers'` (`answer_readings` compares them all).
    """
    return changed_in(answer_readings(base, head, items, tasks))


def changed_in(readings: Iterable[PairReading]) -> list[ChangedAnswer]:
    """`changed_answers` on readings already made (`answer_readings`)."""
    out = []
    for reading in readings:
        moved = [(key, before, after) for key, before, after in reading.answers
                 if not (after is None or before == after or (before is None and key[0] is None))]
        if moved:
            _, before, after = moved[0]
            out.append(ChangedAnswer(reading.name, reading.item.id, before or "none", after or "none",
                                     reading.text, reading.item.content_hash, tuple(key for key, _, _ in moved)))
    return out


def merged_record(merge_base: VerdictStore, head: VerdictStore, tip: VerdictStore) -> VerdictStore | None:
    """The record a PR's merge leaves when its head only appended lines to the merge base's
    file: the base tip's lines, then the PR's (what git's merge writes). None when the head
    changed the file otherwise: with the tip changed too, only a rebase shows the merged record.

    The PR's answers are compared with the merge base's (what it branched from) and, through this,
    with the tip's: a line it appends can outrank one main recorded since, which the merge base
    never had."""
    appended = appended_lines(merge_base, head)
    if appended is None:
        return None
    return tip.merged(VerdictStore(appended)) if appended else tip


@dataclass(frozen=True)
class RemovedAnswer:
    check: str
    item: str
    answer: str
    text: str

    def __str__(self) -> str:
        return f"{self.check} on {self.item} ({self.answer})"


def removed_answers(base: VerdictStore, head: VerdictStore, items: Iterable[CalibrationItem],
                    tasks: Iterable[str] = ()) -> list[RemovedAnswer]:
    """Labeled (check text, item) pairs the base answers in replay and the head no longer does.

    A recorded answer that disappears is evidence lost, however the lines that made it go were
    written (deleted, or outranked by a stale line): the next PR could fill the gap with another
    answer, so it is a change like any other, never a silent one.
    """
    return removed_in(answer_readings(base, head, items, tasks))


def removed_in(readings: Iterable[PairReading]) -> list[RemovedAnswer]:
    """`removed_answers` on readings already made (`answer_readings`)."""
    out = []
    for reading in readings:
        lost = next((before for before, after in reading.replay() if before is not None and after is None), None)
        if lost is not None:
            out.append(RemovedAnswer(reading.name, reading.item.id, lost, reading.text))
    return out


def filled_answers(base: VerdictStore, head: VerdictStore, items: Iterable[CalibrationItem],
                   tasks: Iterable[str] = ()) -> list[ChangedAnswer]:
    """Labeled (check text, item) pairs the head answers in replay where the base had no answer.

    Once merged they are the base's record, which the next PR is gated on: a fill is new
    evidence for the checks it answers, written by the PR.
    """
    return filled_in(answer_readings(base, head, items, tasks))


def filled_in(readings: Iterable[PairReading]) -> list[ChangedAnswer]:
    """`filled_answers` on readings already made (`answer_readings`)."""
    out = []
    for reading in readings:
        fills = [(key, after) for key, before, after in reading.answers
                 if key[0] is None and key[3] == 0 and before is None and after is not None]
        if fills:
            out.append(ChangedAnswer(reading.name, reading.item.id, "none", fills[0][1], reading.text,
                                     reading.item.content_hash, tuple(key for key, _ in fills)))
    return out
