"""Labels are the standard: which labeled items a change of the calibration file relabels or removes.

Each field of an item has its rule in `trust.differences.RULES` (`item.<field>`): a field the
item format gains later has none and is unclassified, which needs the override too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from rubric_gate.calibration.model import CalibrationItem
from rubric_gate.trust.differences import RULES, Kind, Rule, item_field, rule_of
from rubric_gate.trust.wording import label_phrase


@dataclass(frozen=True)
class LabelDiff:
    """What a change of a calibration file does to its labeled items, by kind, in the order
    reviewers read them (each field names its kind)."""

    # (id, old label, new label)
    relabeled: list[tuple[str, str, str]] = field(default_factory=list, metadata={"kind": Kind.LABELS_RELABELED})
    removed: list[tuple[str, str]] = field(default_factory=list, metadata={"kind": Kind.LABELS_REMOVED})  # (id, label)
    # Same id and label, other input or output: the label now grades content nobody labeled
    # (swapping two items' outputs relabels both without touching a label). (id, label)
    rewritten: list[tuple[str, str]] = field(default_factory=list, metadata={"kind": Kind.LABELS_REWRITTEN})
    # Moved from the calibration split to the held-out one: gone from what the gate decides on. (id, label)
    held_out: list[tuple[str, str]] = field(default_factory=list, metadata={"kind": Kind.LABELS_HELD_OUT})
    # (id, the fields with no rule it changes)
    unclassified: list[tuple[str, tuple[str, ...]]] = field(default_factory=list,
                                                            metadata={"kind": Kind.LABELS_UNCLASSIFIED})
    added: list[tuple[str, str]] = field(default_factory=list, metadata={"kind": Kind.LABELS_ADDED})  # (id, label)
    # Same id, label and content: other notes (flaw, meta) or a move into the calibration split. (id)
    edited: list[str] = field(default_factory=list, metadata={"kind": Kind.LABELS_EDITED})

    def by_kind(self) -> Iterator[tuple[Kind, Sequence[Any]]]:
        """Each kind found, with what was found of it."""
        for f in fields(self):
            found = getattr(self, f.name)
            if found:
                yield f.metadata["kind"], found

    @property
    def blocking(self) -> bool:
        """Relabeling or removing a labeled item moves the standard every rubric is gated on."""
        return any(rule_of(kind).needs_override for kind, _ in self.by_kind())

    def describe(self, limit: int = 20) -> list[str]:
        return [label_phrase(kind, found, limit) for kind, found in self.by_kind()]


def _in_calibration(item: CalibrationItem) -> bool:
    return (item.split or "calibration") == "calibration"


def diff_labels(base: Iterable[CalibrationItem], head: Iterable[CalibrationItem],
                rules: Mapping[str, Rule] = RULES) -> LabelDiff:
    before = {i.id: i for i in base}
    after = {i.id: i for i in head}
    diff = LabelDiff()
    for item_id, old in before.items():
        new = after.get(item_id)
        if new is not None:
            unknown = tuple(f for f in CalibrationItem.model_fields
                            if rule_of(item_field(f), rules) is Rule.UNCLASSIFIED and getattr(old, f) != getattr(new, f))
            if unknown:
                diff.unclassified.append((item_id, unknown))
        if new is None:
            diff.removed.append((item_id, old.label))
        elif new.label != old.label:
            diff.relabeled.append((item_id, old.label, new.label))
        elif new.content_hash != old.content_hash:
            diff.rewritten.append((item_id, old.label))
        elif _in_calibration(old) and not _in_calibration(new):
            diff.held_out.append((item_id, old.label))
        elif new != old:
            diff.edited.append(item_id)
    diff.added.extend((i, item.label) for i, item in after.items() if i not in before)
    return diff
