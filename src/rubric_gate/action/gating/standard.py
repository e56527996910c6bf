"""What a PR does to the labels and recorded verdicts of every rubric, and to the rubrics' own
keys and ids, as findings for the comment and the check.

Labels are the standard every rubric is gated on, and recorded verdicts are the evidence the
gate replays: a PR that relabels or removes labeled items, repoints a rubric's `calibration`
or `verdicts`, or changes a base verdict's answer needs an override, even when no rubric file
changed. The differences are `snapshot.diff`'s (trusted against proposed), their rules
`trust.differences`'; this module says which a reviewer reads, and which block.
"""

from __future__ import annotations

from dataclasses import dataclass

from rubric_gate.action.commits.changed import ChangedFile
from rubric_gate.action.commits.snapshot import Snapshots, diff_snapshots
from rubric_gate.trust import Confirms
from rubric_gate.trust.differences import Difference, Rule
from rubric_gate.trust.wording import unclassified


@dataclass(frozen=True)
class StandardFinding:
    path: str  # the calibration or verdict file (or the rubric, for a repointed key)
    used_by: tuple[str, ...]  # rubric files that use it
    message: str
    blocking: bool  # needs the override label

    def to_dict(self) -> dict[str, object]:
        return {"file": self.path, "used_by": list(self.used_by), "message": self.message, "blocking": self.blocking}


def gate_standard(snapshots: Snapshots, globs: tuple[str, ...], rubric_changes: list[ChangedFile],
                  confirms: Confirms | None = None) -> list[StandardFinding]:
    """The findings of the PR's classified diff: every difference that needs the override (an
    unclassified one too), and the allowed ones a reviewer should read. `confirms`: which changed
    recorded answers a trusted source gave (`action.gating.confirm`); None: none."""
    return findings_of(diff_snapshots(snapshots, globs, rubric_changes, confirms))


def findings_of(differences: list[Difference]) -> list[StandardFinding]:
    """One finding per difference with a message; what one calibration set's items do is one
    finding (blocking when any of it needs the override). A difference with no rule and no
    message still blocks, named by its kind."""
    out: list[StandardFinding] = []
    labels: list[Difference] = []

    def flush() -> None:
        if labels:
            out.append(StandardFinding(labels[0].path, labels[0].used_by, "; ".join(d.message or d.kind for d in labels),
                                       any(d.needs_override for d in labels)))
            labels.clear()

    for difference in differences:
        if difference.kind.startswith("labels.") and (not labels or labels[0].path == difference.path):
            labels.append(difference)
            continue
        flush()
        if difference.kind.startswith("labels."):
            labels.append(difference)
            continue
        if difference.message is None and difference.rule is not Rule.UNCLASSIFIED:
            continue  # recorded: the gate decides it, or it is allowed and shown where it is decided
        message = difference.message or unclassified(difference.kind)
        out.append(StandardFinding(difference.path, difference.used_by, message, difference.needs_override))
    flush()
    return out
