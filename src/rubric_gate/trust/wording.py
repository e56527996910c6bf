"""What reviewers read about trust: why a difference needs the override (or is recorded), in the
words the comment, the check run and report.json show. Pure text from values; the rules
themselves are `trust.differences.RULES`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rubric_gate.trust.differences import Kind
from rubric_gate.trust.rubric_diff import KeyChange

# A base the gate cannot read vouches for nothing: two PRs that each load can merge cleanly into
# one that does not (a key or an item id written twice), and the next PR would go ungated.
UNREADABLE_BASE = ("{what} does not load at the base ({why}), so the gate cannot tell what this PR changes; "
                   "a writer's override is needed once the PR is reviewed by hand")


def first(parts: Sequence[object], limit: int = 10) -> str:
    """The first `limit` of `parts`, comma-separated, and how many more there are."""
    shown = ", ".join(str(p) for p in parts[:limit])
    return shown + (f" and {len(parts) - limit} more" if len(parts) > limit else "")


def unclassified(kind: str) -> str:
    """A difference whose kind has no rule and no words of its own."""
    return f"changes {kind}, which no rule of the gate classifies, so it needs the override"


# -- rubric keys and ids ---------------------------------------------------------------------------

def rubric_key_message(diff: KeyChange) -> str | None:
    """What a reviewer reads about a changed rubric key that needs the override; None for a key
    the gate decides or allows (recorded only)."""
    if not diff.needs_override:
        return None
    if diff.key in ("calibration", "verdicts"):
        return f"repoints `{diff.key}` from {diff.before} to {diff.after}"
    if diff.key == "task":
        # The judge reads the task with every check: the gate cannot see what a new task
        # does to the verdicts (one saying "every output is fine" would pass).
        return ("rewords `task`, which the judge reads with every check; recorded and cached verdicts "
                "were judged against the old wording, so the gate cannot tell what the change does")
    if diff.key == "id":
        # The gate pairs files by path; a consumer looks a rubric up by its id. A new id
        # (a swap, or a draft taking this one's) changes which rubric that lookup reads.
        return (f"changes the rubric's `id` from {diff.before} to {diff.after}; whoever loads a rubric "
                "by id would read another rubric than the one the gate compared under this path")
    if diff.key == "judge":
        # Rule J decides a change from one judge to another when both can be called in the run
        # (`rubric.judge_gated`); an added or removed key, or a judge without its API key, cannot be compared.
        return (f"changes `judge` from {diff.before or '(none)'} to {diff.after or '(none)'}; the "
                "rubric's judge produces the verdicts later PRs are gated on (without one they replay "
                "the PR's own), and the gate compares two judges (rule J) only when both are named and "
                "their API keys are set in this run")
    return f"changes `{diff.key}`, which no rule of the gate classifies, so it needs the override"


def shared_id(rubric_id: str, paths: Sequence[str]) -> str:
    return (f"gives the rubric id `{rubric_id}` to {len(paths)} files ({first(paths)}); rubric ids must be "
            "unique: only an edit of an existing file is gated, and whoever looks the rubric up by "
            "id could read the copy instead")


# -- calibration sets and their labels ----------------------------------------------------------

def calibration_created() -> str:
    # A rubric at the base names it, so that rubric did not load there: labels this PR writes
    # would become the standard the next PR is gated on, vouched for by nobody.
    return (UNREADABLE_BASE.format(what="the calibration set", why="this PR creates it")
            + "; the labels it writes become the standard later PRs are gated on")


def calibration_deleted(items: int) -> str:
    return f"deletes the calibration set ({items} labeled items)"


def calibration_moved(to: str) -> str:
    return f"moves the calibration set to {to} (a rubric that still names the old path no longer loads)"


def _label(found: Sequence[Any]) -> list[str]:
    return [f"{i} ({lab})" for i, lab in found]


# Each kind of label difference: its lead (with the count) and how each item is shown.
_LABEL_WORDS: dict[str, tuple[str, Callable[[Sequence[Any]], list[str]]]] = {
    Kind.LABELS_RELABELED: ("relabeled {n}: ", lambda found: [f"{i} ({a} -> {b})" for i, a, b in found]),
    Kind.LABELS_REMOVED: ("removed {n}: ", _label),
    Kind.LABELS_REWRITTEN: ("changed the input or output of {n} (the label was given to the old content): ", _label),
    Kind.LABELS_HELD_OUT: ("moved out of the calibration split {n}: ", _label),
    Kind.LABELS_UNCLASSIFIED: ("changed fields no rule of the gate classifies in {n}, so they need the override: ",
                               lambda found: [f"{i} ({', '.join(fields)})" for i, fields in found]),
    Kind.LABELS_ADDED: ("added {n}: ", _label),
    Kind.LABELS_EDITED: ("edited {n} (same label): ", list),
}


def label_phrase(kind: str, found: Sequence[Any], limit: int = 20) -> str:
    """What a change of one calibration set does to its labeled items of `kind` (`trust.LabelDiff`)."""
    lead, each = _LABEL_WORDS[kind]
    return lead.format(n=len(found)) + first(each(found), limit)


# -- verdict files and their recorded answers ---------------------------------------------------

def verdicts_deleted(lines: int) -> str:
    return f"deletes the verdict store ({lines} recorded verdicts)"


def verdicts_moved(to: str) -> str:
    return f"moves the verdict store to {to} (a rubric that still names the old path finds no recorded verdict)"


def unclassified_fields(names: Sequence[str]) -> str:
    return f"changes verdict fields no rule of the gate classifies ({', '.join(names)}), so it needs the override"


# Each kind of answer difference a reviewer reads: its lead (with the count) and what follows
# the answers shown. The others (the gate weighs them, or a gated deletion takes them) are recorded.
_ANSWER_WORDS: dict[str, tuple[str, str]] = {
    Kind.ANSWER_REJUDGED: ("changes {n} recorded answer(s) ",
                           "({shown}); the configured judge re-judged these pairs and gave the same answers"),
    Kind.ANSWER_CHANGED: ("changes {n} recorded answer(s) ",
                          "({shown}) that a judge did not confirm in this run (with the `judge` input set, the "
                          "action re-judges each changed pair live, at the key of the line the head reads, under "
                          "every task reading it; an answer it confirms passes, and the verdict cache never "
                          "confirms one)"),
    # A PR's answers for checks the base already has would become the record the next PR is
    # gated on; those for a new check text are the gate's to weigh (they may reject, never excuse).
    Kind.ANSWER_FILLED: ("records {n} answer(s) ",
                         "for checks the base branch already has, where it had none ({shown}), that no judge "
                         "re-judged in this run; once merged they are the record later PRs are gated on"),
    # Recorded where no gate weighs them: named, and untrusted until a gated rubric has the text.
    Kind.ANSWER_FOR_NO_CHECK: ("records {n} answer(s) ",
                               "for check texts no edited rubric reading this file has ({shown}); no gate weighs "
                               "them here, so they stay untrusted once merged: the PR that adds such a check is "
                               "gated on them as on verdicts it wrote itself"),
    Kind.ANSWER_REMOVED: ("removes {n} recorded verdict(s) ",
                          "of checks still in use ({shown}); a lost answer is lost evidence, and the gap could be "
                          "filled with another answer later"),
}


def answers_message(kind: str, answers: Sequence[object]) -> str | None:
    """What a reviewer reads about the recorded answers of `kind` a PR changes; None: recorded only."""
    words = _ANSWER_WORDS.get(kind)
    if words is None:
        return None
    lead, rest = words
    return lead.format(n=len(answers)) + rest.format(shown=first(answers))


def on_tip(tip_sha: str) -> str:
    return f"merged onto the base tip {tip_sha[:7]},"


def tip_record_not_comparable(tip_sha: str) -> str:
    return (f"{on_tip(tip_sha)} which changed this file too, it changes lines other than by appending: the "
            "record the merge leaves cannot be compared with the tip's; rebase the PR onto its base branch")


def tip_answers_changed(tip_sha: str, answers: Sequence[object]) -> str:
    return (f"{on_tip(tip_sha)} changes {len(answers)} recorded answer(s) of the tip's record ({first(answers)}) "
            "that the configured judge did not confirm in this run")


def tip_answers_removed(tip_sha: str, answers: Sequence[object]) -> str:
    return f"{on_tip(tip_sha)} removes {len(answers)} recorded verdict(s) of the tip's record ({first(answers)})"
