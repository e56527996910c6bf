"""Labels are the standard: which labeled items a change of the calibration file relabels or removes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from rubric_gate.calibration.model import CalibrationItem

# Every field of a calibration item, with what a change of it is. `label`, `input`, `output` and a
# move out of the calibration `split` move the standard (the override); `flaw` and `meta` are
# notes the gate does not decide on. A field the item format gains later has no rule here and is
# `unclassified`, which needs the override too: never silently fine.
ITEM_FIELD_RULES: dict[str, str] = {
    "id": "key",
    "label": "relabeled",
    "input": "rewritten",
    "output": "rewritten",
    "split": "split",
    "flaw": "edited",
    "meta": "edited",
}


@dataclass(frozen=True)
class LabelDiff:
    relabeled: list[tuple[str, str, str]] = field(default_factory=list)  # (id, old label, new label)
    removed: list[tuple[str, str]] = field(default_factory=list)  # (id, label)
    added: list[tuple[str, str]] = field(default_factory=list)  # (id, label)
    # Same id and label, other input or output: the label now grades content nobody labeled
    # (swapping two items' outputs relabels both without touching a label).
    rewritten: list[tuple[str, str]] = field(default_factory=list)  # (id, label)
    # Moved from the calibration split to the held-out one: gone from what the gate decides on.
    held_out: list[tuple[str, str]] = field(default_factory=list)  # (id, label)
    edited: list[str] = field(default_factory=list)  # same id, label and content: other flaw or split
    unclassified: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (id, fields no rule names)

    @property
    def blocking(self) -> bool:
        """Relabeling or removing a labeled item moves the standard every rubric is gated on."""
        return bool(self.relabeled or self.removed or self.rewritten or self.held_out or self.unclassified)

    def describe(self, limit: int = 20) -> list[str]:
        def shown(parts: list[str]) -> str:
            more = f" and {len(parts) - limit} more" if len(parts) > limit else ""
            return ", ".join(parts[:limit]) + more

        out = []
        if self.relabeled:
            out.append(f"relabeled {len(self.relabeled)}: " + shown([f"{i} ({a} -> {b})" for i, a, b in self.relabeled]))
        if self.removed:
            out.append(f"removed {len(self.removed)}: " + shown([f"{i} ({lab})" for i, lab in self.removed]))
        if self.rewritten:
            out.append(f"changed the input or output of {len(self.rewritten)} (the label was given to the old "
                       "content): " + shown([f"{i} ({lab})" for i, lab in self.rewritten]))
        if self.held_out:
            out.append(f"moved out of the calibration split {len(self.held_out)}: "
                       + shown([f"{i} ({lab})" for i, lab in self.held_out]))
        if self.unclassified:
            out.append(f"changed fields no rule of the gate classifies in {len(self.unclassified)}, so they need the "
                       "override: " + shown([f"{i} ({', '.join(fields)})" for i, fields in self.unclassified]))
        if self.added:
            out.append(f"added {len(self.added)}: " + shown([f"{i} ({lab})" for i, lab in self.added]))
        if self.edited:
            out.append(f"edited {len(self.edited)} (same label): " + shown(self.edited))
        return out


def _in_calibration(item: CalibrationItem) -> bool:
    return (item.split or "calibration") == "calibration"


def diff_labels(base: Iterable[CalibrationItem], head: Iterable[CalibrationItem],
                rules: dict[str, str] = ITEM_FIELD_RULES) -> LabelDiff:
    before = {i.id: i for i in base}
    after = {i.id: i for i in head}
    diff = LabelDiff()
    for item_id, old in before.items():
        new = after.get(item_id)
        if new is not None:
            unknown = tuple(f for f in CalibrationItem.model_fields
                            if f not in rules and getattr(old, f) != getattr(new, f))
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
