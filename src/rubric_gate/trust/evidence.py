"""Which verdicts the gate may use, and how: untrusted evidence may reject, never excuse.

A recorded verdict vouches for a check once the trusted rubric has a check with its text: the
PR that added that check was gated with it. Answers for any other text are untrusted, whoever
wrote them: the PR's own, and those the record holds for a text no trusted check has (recorded
before any check had it, so no gate weighed them). The PR that adds such a check is where they
are weighed, exactly like verdicts it brought itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rubric_gate.calibration import CalibrationSet
from rubric_gate.rubric import Rubric, normalize_text
from rubric_gate.verdicts import Verdict, VerdictStore, task_hash
from rubric_gate.verdicts.blobs import memoised
from rubric_gate.verdicts.compare import added_lines
from rubric_gate.verdicts.table_data import ANSWER_NAMES


def usable_pr_verdicts(fills: list[Verdict], trusted: Rubric) -> tuple[list[Verdict], list[Verdict]]:
    """The PR's gap-filling verdicts split into those the gate may use (for check texts the
    trusted rubric does not have) and those it may not (for the trusted rubric's own checks:
    a "yes" filled in where the base lost a line would make deleting the check look harmless)."""
    trusted_texts = {c.normalized_text for c in trusted.checks}
    usable = [v for v in fills if normalize_text(v.check_text) not in trusted_texts]
    return usable, [v for v in fills if normalize_text(v.check_text) in trusted_texts]


def unweighed_record(store: VerdictStore, trusted: Rubric, proposed: Rubric,
                     calibration: CalibrationSet) -> list[Verdict]:
    """The answers `store` (the trusted record) holds for the check texts `proposed` adds, as the
    gate reads them (replay under `proposed`'s task), one per (text, item): recorded while no
    trusted check had the text, they are no more trusted than the PR's own verdicts."""
    trusted_texts = {c.normalized_text for c in trusted.checks}
    added = {c.normalized_text: c for c in proposed.checks if c.normalized_text not in trusted_texts}
    items = calibration.items
    out: list[Verdict] = []
    for check in added.values():
        codes, missing = store.answer_codes(check.text, items, task=task_hash(proposed.task))
        # Built from values already validated (an item id, a check, an answer word): no re-validation.
        out.extend(Verdict.model_construct(item=item.id, check_text=check.text, answer=ANSWER_NAMES[code], check=check.id)
                   for item, code, absent in zip(items, codes.tolist(), missing.tolist(), strict=True) if not absent)
    return out


@dataclass(frozen=True)
class Evidence:
    """A rubric edit's verdicts as the trust boundary splits them."""

    pr_own: tuple[Verdict, ...] = ()  # the PR's verdicts for texts the trusted rubric lacks: used, untrusted
    ignored: tuple[Verdict, ...] = ()  # the PR's verdicts for the trusted rubric's texts: not used
    unweighed: tuple[Verdict, ...] = ()  # the record's answers for texts only the proposed rubric has

    @property
    def untrusted(self) -> tuple[Verdict, ...]:
        """What may reject a change and never excuse one."""
        return self.pr_own + self.unweighed


def split_evidence(fills: Sequence[Verdict], store: VerdictStore, trusted: Rubric, proposed: Rubric,
                   calibration: CalibrationSet) -> Evidence:
    """`fills` (the PR's verdicts for pairs the trusted record does not answer) and the trusted
    record `store`, split by whether a trusted check vouches for them."""
    usable, ignored = usable_pr_verdicts(list(fills), trusted)
    return Evidence(tuple(usable), tuple(ignored), tuple(unweighed_record(store, trusted, proposed, calibration)))


def catches_withheld(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The same verdicts with every "no" turned "yes": untrusted evidence as the gate may read it
    when asking whether a catch is shared (a PR's own "no" is no catch; its blame is kept by the
    other reading, the verdicts as recorded)."""
    return [v.model_copy(update={"answer": "yes"}) if v.answer == "no" else v for v in verdicts]


@dataclass(frozen=True)
class Untrusted:
    """Verdicts nobody vouches for (a PR's own), merged into the lookup's store, and the
    trusted store they were merged into: they may reject a change, never excuse one."""

    verdicts: tuple[Verdict, ...]
    trusted: VerdictStore
    calibration: CalibrationSet


def split_pr_verdicts(base: VerdictStore, head: VerdictStore,
                      calibration: CalibrationSet) -> tuple[list[Verdict], list[str]]:
    """The PR's verdicts for pairs the base has no verdict for, and the pairs where it contradicts the base.

    A PR verdict may fill a gap (a new check text), never overrule the base: otherwise a PR
    could "re-record" another check as catching what a deleted check caught. The same split
    serves every rubric reading the same store and labels (kept in the blob cache, by blob id).
    """
    labels = tuple((i.id, i.content_hash) for i in calibration.items)
    fills, contradicting = memoised((base, head), ("split_pr_verdicts", labels),
                                    lambda: _split_pr_verdicts(added_lines(base, head), base, calibration))
    return list(fills), list(contradicting)


def _split_pr_verdicts(added: list[Verdict], base: VerdictStore,
                       calibration: CalibrationSet) -> tuple[list[Verdict], list[str]]:
    items = {i.id: i for i in calibration.items}
    by_hash = {i.content_hash: i for i in calibration.items}
    located = [(v, items.get(v.item) or (by_hash.get(v.item_hash) if v.item_hash else None)) for v in added]
    found = [(v.check_text, item, None, None, None, 0) for v, item in located if item is not None]
    answers = iter(base.find_answers(found))  # one vectorised lookup per check text
    fills: list[Verdict] = []
    contradicting: list[str] = []
    for verdict, item in located:
        recorded = next(answers) if item is not None else None
        if recorded is None:
            fills.append(verdict)
        elif recorded != verdict.answer:
            name = verdict.check or verdict.check_text[:40]
            contradicting.append(f"{name} on {verdict.item}: base {recorded}, PR {verdict.answer}")
    return fills, contradicting
