"""Every fact a pull request can change, with its rule: one `Rule` and one table (`RULES`).

The table covers every kind of difference between the trusted and the proposed snapshot
(`Kind`), every rubric key (each its own kind, `rubric.<key>`), every field of a calibration
item (`item.<field>`) and every field of a recorded verdict (`verdict.<field>`). A name with no
rule here is `Rule.UNCLASSIFIED`, which needs the override like `Rule.OVERRIDE`: a difference,
key or field nobody listed (one the formats gain later) is a finding, never silently fine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum


class Rule(StrEnum):
    """What a difference needs before the PR may pass."""

    GATE = "gate"  # the gate decides it (check edits, a new or deleted rubric, verdicts for new checks)
    ALLOWED = "allowed"  # recorded, no override (items added, a pure rename, a re-judged answer)
    OVERRIDE = "override"  # a change of what the gate stands on (labels, recorded answers, their files)
    UNCLASSIFIED = "unclassified"  # no rule names it: the override, as `OVERRIDE` (fail closed)

    @property
    def needs_override(self) -> bool:
        return self in (Rule.OVERRIDE, Rule.UNCLASSIFIED)


class Kind(StrEnum):
    # A rubric file.
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
    # A rubric's keys (`trust.rubric_diff`): a key the format gains is `rubric.<key>`, unclassified.
    RUBRIC_CHECKS = "rubric.checks"
    RUBRIC_AGGREGATION = "rubric.aggregation"
    RUBRIC_ID = "rubric.id"
    RUBRIC_VERSION = "rubric.version"
    RUBRIC_JUDGE = "rubric.judge"
    RUBRIC_TASK = "rubric.task"
    RUBRIC_CALIBRATION = "rubric.calibration"
    RUBRIC_VERDICTS = "rubric.verdicts"
    # A calibration set a rubric of the trusted snapshot reads.
    CALIBRATION_CREATED = "calibration.created"  # named by a rubric that did not load
    CALIBRATION_UNREADABLE = "calibration.unreadable"  # the trusted version does not load
    CALIBRATION_DELETED = "calibration.deleted"
    CALIBRATION_MOVED = "calibration.moved"
    # Its labeled items (`trust.labels`), in the order reviewers read them.
    LABELS_RELABELED = "labels.relabeled"
    LABELS_REMOVED = "labels.removed"
    LABELS_REWRITTEN = "labels.rewritten"  # same id and label, other input or output
    LABELS_HELD_OUT = "labels.held_out"
    LABELS_UNCLASSIFIED = "labels.unclassified"  # an item field with no rule
    LABELS_ADDED = "labels.added"
    LABELS_EDITED = "labels.edited"  # notes: flaw, meta
    # A verdict file a rubric of the trusted snapshot reads.
    VERDICTS_UNREADABLE = "verdicts.unreadable"  # the store, or the labels its answers are for
    VERDICTS_DELETED = "verdicts.deleted"
    VERDICTS_MOVED = "verdicts.moved"
    VERDICTS_UNCLASSIFIED = "verdicts.unclassified"  # a verdict field with no rule
    # Its answers as a lookup reads them, per (task, text, item, judge key) (`trust.answers`).
    ANSWER_CHANGED = "answer.changed"
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


def rubric_key(key: str) -> str:
    """The kind of a change of the rubric key `key` (its name in `RULES`)."""
    return f"rubric.{key}"


def item_field(name: str) -> str:
    """A calibration item's field, as `RULES` names it."""
    return f"item.{name}"


def verdict_field(name: str) -> str:
    """A recorded verdict's field, as `RULES` names it."""
    return f"verdict.{name}"


# The one table. A field's rule is that of a change of it alone, at its strictest.
RULES: dict[str, Rule] = {
    Kind.RUBRIC_ADDED: Rule.GATE,
    Kind.RUBRIC_REMOVED: Rule.GATE,
    Kind.RUBRIC_MOVED: Rule.ALLOWED,
    Kind.RUBRIC_ID_SHARED: Rule.OVERRIDE,
    Kind.RUBRIC_UNREADABLE: Rule.ALLOWED,  # said in every comment until it is fixed (its fix needs the override)
    Kind.FILE_MAYBE_IN_USE: Rule.OVERRIDE,
    # A check narrowed to fewer tests, or graded with other keys (weight, rubricPrompt, a test's
    # threshold): promptfoo grades it otherwise than the gate's verdicts say.
    Kind.PROMPTFOO_GRADING: Rule.OVERRIDE,
    Kind.RUBRIC_JUDGE_GATED: Rule.GATE,  # else `rubric.judge`: the override
    Kind.RUBRIC_CHECKS: Rule.GATE,
    Kind.RUBRIC_AGGREGATION: Rule.GATE,
    Kind.RUBRIC_ID: Rule.OVERRIDE,  # consumers load a rubric by id: a new id is another rubric to them
    Kind.RUBRIC_VERSION: Rule.ALLOWED,
    # The judge that produces the evidence later PRs are gated on (removing it downgrades them to
    # replay, where a PR's own verdicts stand in for its new checks).
    Kind.RUBRIC_JUDGE: Rule.OVERRIDE,
    Kind.RUBRIC_TASK: Rule.OVERRIDE,  # the judge reads it with every check
    Kind.RUBRIC_CALIBRATION: Rule.OVERRIDE,
    Kind.RUBRIC_VERDICTS: Rule.OVERRIDE,
    Kind.CALIBRATION_CREATED: Rule.OVERRIDE,
    Kind.CALIBRATION_UNREADABLE: Rule.OVERRIDE,
    Kind.CALIBRATION_DELETED: Rule.OVERRIDE,
    Kind.CALIBRATION_MOVED: Rule.OVERRIDE,
    Kind.LABELS_RELABELED: Rule.OVERRIDE,
    Kind.LABELS_REMOVED: Rule.OVERRIDE,
    Kind.LABELS_REWRITTEN: Rule.OVERRIDE,
    Kind.LABELS_HELD_OUT: Rule.OVERRIDE,
    Kind.LABELS_UNCLASSIFIED: Rule.UNCLASSIFIED,
    Kind.LABELS_ADDED: Rule.ALLOWED,
    Kind.LABELS_EDITED: Rule.ALLOWED,
    Kind.VERDICTS_UNREADABLE: Rule.OVERRIDE,
    Kind.VERDICTS_DELETED: Rule.OVERRIDE,
    Kind.VERDICTS_MOVED: Rule.OVERRIDE,
    Kind.VERDICTS_UNCLASSIFIED: Rule.UNCLASSIFIED,
    Kind.ANSWER_CHANGED: Rule.OVERRIDE,
    Kind.ANSWER_REJUDGED: Rule.ALLOWED,
    Kind.ANSWER_FILLED: Rule.OVERRIDE,
    Kind.ANSWER_FILLED_REJUDGED: Rule.ALLOWED,
    Kind.ANSWER_FOR_NEW_CHECK: Rule.GATE,
    # Nobody weighs these here (no rubric has the text, or only a new one, which is scored, not
    # gated); they stay untrusted once merged (`trust.evidence`: a recorded answer vouches for a
    # check only once a trusted rubric has its text), so the PR adding the check weighs them.
    Kind.ANSWER_FOR_NO_CHECK: Rule.ALLOWED,
    Kind.ANSWER_REMOVED: Rule.OVERRIDE,
    Kind.ANSWER_REMOVED_WITH_CHECK: Rule.GATE,
    Kind.MERGE_BASES: Rule.OVERRIDE,
    Kind.MERGE_MISSING: Rule.OVERRIDE,
    # GitHub merges nothing with conflicts; resolving them is a push (or a base move: see the
    # docs' "Required-check setup" on a base that moved since the run), gated again.
    Kind.MERGE_CONFLICTS: Rule.ALLOWED,
    Kind.MERGE_DIFFERS: Rule.OVERRIDE,
    # A calibration item's fields (`trust.labels`): the label, the content it was given to and
    # the split the gate decides on are the standard; `flaw` and `meta` are notes.
    item_field("id"): Rule.OVERRIDE,  # another id is another item: the labeled one is removed
    item_field("label"): Rule.OVERRIDE,  # labels.relabeled
    item_field("input"): Rule.OVERRIDE,  # labels.rewritten
    item_field("output"): Rule.OVERRIDE,  # labels.rewritten
    item_field("split"): Rule.OVERRIDE,  # labels.held_out (joining the calibration split is an addition)
    item_field("flaw"): Rule.ALLOWED,  # labels.edited
    item_field("meta"): Rule.ALLOWED,  # labels.edited
    # A recorded verdict's fields (`trust.answers`): what a lookup matches on and the answer it
    # reads, compared lookup by lookup (answer.changed unless the configured judge confirms it,
    # answer.rejudged); the others are shown, never read by the gate.
    **{verdict_field(f): Rule.OVERRIDE for f in ("item", "check_text", "judge", "prompt", "item_hash", "task_hash",
                                             "sample", "answer")},
    **{verdict_field(f): Rule.ALLOWED for f in ("check", "quote", "usage", "at", "batch", "unverified_quote",
                                                 "served_model")},
}


def rule_of(name: str, rules: Mapping[str, Rule] = RULES) -> Rule:
    """The rule of `name` (a kind, a rubric key's kind, an item or verdict field); `UNCLASSIFIED`
    (needs the override) for one no rule names."""
    return rules.get(name, Rule.UNCLASSIFIED)


@dataclass(frozen=True)
class Difference:
    """One difference of a fact the gate depends on, between trusted and proposed."""

    kind: str
    path: str  # the file it is in (the rubric, calibration set or verdict file)
    used_by: tuple[str, ...]  # the rubric files that read it
    message: str | None = None  # what a reviewer reads; None: recorded only (the gate shows it)
    count: int = 1

    @property
    def rule(self) -> Rule:
        return rule_of(self.kind)

    @property
    def needs_override(self) -> bool:
        return self.rule.needs_override

    def to_dict(self) -> dict[str, object]:
        """As report.json lists it (`differences`), allowed and gated ones too."""
        return {"kind": str(self.kind), "file": self.path, "used_by": list(self.used_by), "rule": self.rule.value,
                "message": self.message, "count": self.count, "needs_override": self.needs_override}
