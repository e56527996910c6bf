"""Every kind of difference between the trusted and the proposed snapshot, each with its rule.

`gate`: the gate decides it (check edits, a new or deleted rubric, verdicts for checks the PR
adds). `allowed`: recorded, no override (items added, a pure rename, an answer the configured
judge re-judged and confirmed). `override`: a change of what the gate stands on (labels, recorded
answers, the files and keys a rubric reads them through). A kind with no rule here is
`unclassified`, which needs the override like `override`: a difference nobody listed is a
finding, never silently fine.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from rubric_gate.trust.rubric_diff import KEY_RULES

RULES = ("gate", "allowed", "override", "unclassified")


class Kind(StrEnum):
    # A rubric file (its keys are `rubric.<key>`, ruled by `rubric_diff.KEY_RULES`).
    RUBRIC_ADDED = "rubric.added"  # scored on its own labels, not gated
    RUBRIC_REMOVED = "rubric.removed"  # gated on what it loses (moved out of the globs too)
    RUBRIC_MOVED = "rubric.moved"  # a rename inside the globs: its edit, if any, is gated
    RUBRIC_ID_SHARED = "rubric.id_shared"  # two rubric files with one `id`
    # A trusted rubric under the globs whose `calibration` and `verdicts` cannot be read: it
    # vouches for nothing, and which files it reads is unknown, so every file the PR changes
    # (outside the globs) may be its calibration set or verdict file.
    RUBRIC_UNREADABLE = "rubric.unreadable"
    FILE_MAYBE_IN_USE = "rubric.unreadable_reference"
    # A promptfoo config: how promptfoo grades its checks besides their texts (`rubric.promptfoo`).
    PROMPTFOO_GRADING = "promptfoo.grading"
    # `judge` changed from one judge to another and this run called both: rule J decided it.
    RUBRIC_JUDGE_GATED = "rubric.judge_gated"
    # A calibration set a rubric of the trusted snapshot reads.
    CALIBRATION_CREATED = "calibration.created"  # named by a rubric that did not load
    CALIBRATION_UNREADABLE = "calibration.unreadable"  # the trusted version does not load
    CALIBRATION_DELETED = "calibration.deleted"
    CALIBRATION_MOVED = "calibration.moved"
    LABELS_RELABELED = "labels.relabeled"
    LABELS_REMOVED = "labels.removed"
    LABELS_REWRITTEN = "labels.rewritten"  # same id and label, other input or output
    LABELS_HELD_OUT = "labels.held_out"
    LABELS_UNCLASSIFIED = "labels.unclassified"  # an item field no rule names (`trust.labels`)
    LABELS_ADDED = "labels.added"
    LABELS_EDITED = "labels.edited"  # notes: flaw, meta
    # A verdict file a rubric of the trusted snapshot reads.
    VERDICTS_UNREADABLE = "verdicts.unreadable"  # the store, or the labels its answers are for
    VERDICTS_DELETED = "verdicts.deleted"
    VERDICTS_MOVED = "verdicts.moved"
    VERDICTS_UNCLASSIFIED = "verdicts.unclassified"  # a verdict field no rule names
    ANSWER_CHANGED = "answer.changed"  # as a lookup reads it: per (task, text, item, judge key)
    ANSWER_REJUDGED = "answer.rejudged"  # changed, and the configured judge gave that answer here
    ANSWER_FILLED = "answer.filled"  # for a check the trusted rubrics have, where they had none
    ANSWER_FILLED_REJUDGED = "answer.filled_rejudged"
    ANSWER_FOR_NEW_CHECK = "answer.for_new_check"  # a check a gated rubric adds: the gate weighs them
    ANSWER_FOR_NO_CHECK = "answer.for_no_check"  # a text no gated rubric reading the file has at the head
    ANSWER_REMOVED = "answer.removed"  # of a check still in use
    ANSWER_REMOVED_WITH_CHECK = "answer.removed_with_check"  # the check's deletion is gated
    # The merge that will land against the one the gate reviewed (`action.commits.merge_check`).
    MERGE_BASES = "merge.bases"  # more than one merge base: git merges from one the gate never read
    MERGE_MISSING = "merge.missing"  # no merge to compare: GitHub has not made it, git cannot
    MERGE_CONFLICTS = "merge.conflicts"  # it does not merge as it is: a push resolves it, and is gated
    MERGE_DIFFERS = "merge.differs"  # a file the gate reads lands other than reviewed (or does not load)


KIND_RULES: dict[str, str] = {
    Kind.RUBRIC_ADDED: "gate",
    Kind.RUBRIC_REMOVED: "gate",
    Kind.RUBRIC_MOVED: "allowed",
    Kind.RUBRIC_ID_SHARED: "override",
    Kind.RUBRIC_UNREADABLE: "allowed",  # said in every comment until it is fixed (its fix needs the override)
    Kind.FILE_MAYBE_IN_USE: "override",
    # A check narrowed to fewer tests, or graded with other keys (weight, rubricPrompt, a test's
    # threshold): promptfoo grades it otherwise than the gate's verdicts say.
    Kind.PROMPTFOO_GRADING: "override",
    Kind.RUBRIC_JUDGE_GATED: "gate",  # else `rubric.judge` (trust.rubric_diff): the override
    Kind.CALIBRATION_CREATED: "override",
    Kind.CALIBRATION_UNREADABLE: "override",
    Kind.CALIBRATION_DELETED: "override",
    Kind.CALIBRATION_MOVED: "override",
    Kind.LABELS_RELABELED: "override",
    Kind.LABELS_REMOVED: "override",
    Kind.LABELS_REWRITTEN: "override",
    Kind.LABELS_HELD_OUT: "override",
    Kind.LABELS_UNCLASSIFIED: "unclassified",
    Kind.LABELS_ADDED: "allowed",
    Kind.LABELS_EDITED: "allowed",
    Kind.VERDICTS_UNREADABLE: "override",
    Kind.VERDICTS_DELETED: "override",
    Kind.VERDICTS_MOVED: "override",
    Kind.VERDICTS_UNCLASSIFIED: "unclassified",
    Kind.ANSWER_CHANGED: "override",
    Kind.ANSWER_REJUDGED: "allowed",
    Kind.ANSWER_FILLED: "override",
    Kind.ANSWER_FILLED_REJUDGED: "allowed",
    Kind.ANSWER_FOR_NEW_CHECK: "gate",
    # Nobody weighs these here (no rubric has the text, or only a new one, which is scored, not
    # gated); they stay untrusted once merged (`trust.evidence`: a recorded answer vouches for a
    # check only once a trusted rubric has its text), so the PR adding the check weighs them.
    Kind.ANSWER_FOR_NO_CHECK: "allowed",
    Kind.ANSWER_REMOVED: "override",
    Kind.ANSWER_REMOVED_WITH_CHECK: "gate",
    Kind.MERGE_BASES: "override",
    Kind.MERGE_MISSING: "override",
    # GitHub merges nothing with conflicts; resolving them is a push (or a base move: see the
    # docs' "Required-check setup" on a base that moved since the run), gated again.
    Kind.MERGE_CONFLICTS: "allowed",
    Kind.MERGE_DIFFERS: "override",
}


def rubric_key_kind(key: str) -> str:
    return f"rubric.{key}"


# Every rule, the rubric's keys included: one table for the whole diff.
DIFFERENCE_RULES: dict[str, str] = {**KIND_RULES, **{rubric_key_kind(k): r for k, r in KEY_RULES.items()}}

# Every field of a recorded verdict, with what a change of it is: `key` fields are what a lookup
# matches on and `answer` what it reads (both compared lookup by lookup, `trust.answers`);
# `note` fields are shown, never read by the gate. A field the verdict format gains later has
# no rule and is `unclassified`.
VERDICT_FIELD_RULES: dict[str, str] = {
    "item": "key", "check_text": "key", "judge": "key", "prompt": "key", "item_hash": "key",
    "task_hash": "key", "sample": "key", "answer": "answer",
    "check": "note", "quote": "note", "usage": "note", "at": "note", "batch": "note",
    "unverified_quote": "note", "served_model": "note",
}


@dataclass(frozen=True)
class Difference:
    """One difference of a fact the gate depends on, between trusted and proposed."""

    kind: str
    path: str  # the file it is in (the rubric, calibration set or verdict file)
    used_by: tuple[str, ...]  # the rubric files that read it
    message: str | None = None  # what a reviewer reads; None: recorded only (the gate shows it)
    count: int = 1

    @property
    def rule(self) -> str:
        return rule_of(self.kind)

    @property
    def needs_override(self) -> bool:
        return self.rule in ("override", "unclassified")

    def to_dict(self) -> dict[str, object]:
        """As report.json lists it (`differences`), allowed and gated ones too."""
        return {"kind": self.kind, "file": self.path, "used_by": list(self.used_by), "rule": self.rule,
                "message": self.message, "count": self.count, "needs_override": self.needs_override}


def rule_of(kind: str, rules: dict[str, str] = DIFFERENCE_RULES) -> str:
    """`kind`'s rule; `unclassified` (needs the override) for a kind no rule names."""
    return rules.get(kind, "unclassified")
