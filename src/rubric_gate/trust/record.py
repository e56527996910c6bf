"""What a branch does to the record the gate stands on, the base's labels and recorded answers,
where that needs the override (pure).

The action classifies every difference of a PR (`trust.differences`); a local run that trusts its
working tree (`rubric-gate check`) reads the changed labels and answers as the truth, so its
answer can differ from the action's for a reason no approval covers. These are the label and
answer kinds whose rule is `override`, said in words: relabeled, removed, rewritten or held-out
items, item fields no rule names, changed answers, answers removed for a check still in use, and
answers filled in for a check the base rubric has.
"""

from __future__ import annotations

from collections.abc import Sequence

from rubric_gate.calibration import CalibrationItem
from rubric_gate.rubric import Rubric, normalize_text
from rubric_gate.trust.answers import answer_readings, changed_in, filled_in, removed_in
from rubric_gate.trust.labels import diff_labels
from rubric_gate.verdicts import VerdictStore


def record_changes(base_items: Sequence[CalibrationItem], head_items: Sequence[CalibrationItem],
                   base_store: VerdictStore, head_store: VerdictStore, trusted: Rubric,
                   proposed: Rubric) -> list[str]:
    """One phrase per kind of change of the record that needs the override ("relabels 1 item
    (R1)"); empty when the branch changes none."""
    out: list[str] = []
    labels = diff_labels(base_items, head_items)
    for verb, ids in (("relabels", [i for i, _, _ in labels.relabeled]), ("removes", [i for i, _ in labels.removed]),
                      ("rewrites", [i for i, _ in labels.rewritten]), ("holds out", [i for i, _ in labels.held_out]),
                      ("changes an unclassified field of", [i for i, _ in labels.unclassified])):
        if ids:
            out.append(f"{verb} {len(ids)} labeled item{'s' if len(ids) != 1 else ''} ({_shown(ids)})")
    tasks = tuple(dict.fromkeys(t for t in (trusted.task, proposed.task) if t))
    check_ids = {c.normalized_text: c.id for rubric in (proposed, trusted) for c in rubric.checks}  # a line may name none

    def pair(check: str, text: str, item: str) -> str:
        return f"{check_ids.get(normalize_text(text), check)} on {item}"

    # One reading of the two records serves the three questions (a working-tree store has no blob
    # id, so `answer_readings`' memo by blob cannot share it between them).
    readings = answer_readings(base_store, head_store, base_items, tasks)
    changed = [pair(a.check, a.text, a.item) for a in changed_in(readings)]
    in_use = {c.normalized_text for c in proposed.checks}
    removed = [pair(a.check, a.text, a.item) for a in removed_in(readings) if normalize_text(a.text) in in_use]
    trusted_texts = {c.normalized_text for c in trusted.checks}
    filled = [pair(a.check, a.text, a.item) for a in filled_in(readings) if normalize_text(a.text) in trusted_texts]
    for verb, pairs in (("changes", changed), ("removes", removed), ("fills in", filled)):
        if pairs:
            out.append(f"{verb} {len(pairs)} recorded answer{'s' if len(pairs) != 1 else ''} of the base's record "
                       f"({_shown(pairs)})")
    return out


def _shown(names: Sequence[str], most: int = 5) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")
