"""Score every revision of a rubric and replay the gate on each step (the paper's Figure 4 drift).

Two chains: `committed` gates each revision against the previous committed one; `gated` is the
paper's replay (its Tables 2-3): each revision's edits, applied to what the gate kept from the
round before, gated again, so a rejected edit stays out of every later round.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rubric_gate.attribution import compute_rates
from rubric_gate.calibration import CalibrationSet
from rubric_gate.gate import GateOptions, GateResult, diff_rubrics, gated_rubric, run_gate
from rubric_gate.history.git_log import Revision
from rubric_gate.rubric import Check, Rubric
from rubric_gate.scoring import VerdictLookup
from rubric_gate.verdicts import VerdictStore, task_hash

SPLITS = ("calibration", "evaluation")
CHAINS = ("committed", "gated")


@dataclass
class RevisionReport:
    revision: Revision
    rubric: Rubric | None
    error: str | None = None  # why this revision could not be read or scored
    rates: dict[str, dict[str, Any]] = field(default_factory=dict)  # split -> rate name -> Rate.to_dict()
    changes: list[dict[str, Any]] = field(default_factory=list)  # from the previous scored revision
    missing: dict[str, int] = field(default_factory=dict)  # check id -> calibration items without a verdict
    gated: Rubric | None = None  # `--chain gated`: what the gate kept after this round
    gated_rates: dict[str, dict[str, Any]] = field(default_factory=dict)  # split -> rate name -> Rate.to_dict()

    @property
    def gate(self) -> str | None:
        decided = [c for c in self.changes if "decision" in c]
        if not decided:
            return None
        return "pass" if all(c["decision"] == "accepted" for c in decided) else "fail"

    def to_dict(self) -> dict[str, Any]:
        return {
            "commit": self.revision.commit,
            "date": self.revision.date,
            "subject": self.revision.subject,
            "path": self.revision.path,
            "version": None if self.rubric is None else self.rubric.version,
            "checks": None if self.rubric is None else len(self.rubric.checks),
            "rates": self.rates,
            "changes": self.changes,
            "gate": self.gate,
            "missing_verdicts": self.missing,
            "error": self.error,
            **({"gated": {"version": self.gated.version, "checks": [c.id for c in self.gated.checks],
                          "rates": self.gated_rates}} if self.gated is not None else {}),
        }


@dataclass
class History:
    path: str
    gates: str
    revisions: list[RevisionReport]
    splits: tuple[str, ...]
    chain: str = "committed"

    def to_dict(self) -> dict[str, Any]:
        return {"rubric": self.path, "gates": self.gates, "chain": self.chain, "splits": list(self.splits),
                "revisions": [r.to_dict() for r in self.revisions]}


def _missing(lookup: VerdictLookup, rubric: Rubric) -> dict[str, int]:
    counts = {c.id: int(lookup.column(c.text).missing.sum()) for c in rubric.checks}
    return {check: n for check, n in counts.items() if n}


def _rates(lookup: VerdictLookup, rubric: Rubric) -> dict[str, Any]:
    rates = compute_rates(lookup.failed_matrix(rubric), lookup.calibration.flawed,
                          lookup.calibration.unplanned, rubric.max_failures)
    return {"correct_passed": rates.correct_passed.to_dict(), "flawed_caught": rates.flawed_caught.to_dict(),
            "unplanned_caught": rates.unplanned_caught.to_dict()}


def apply_edits(previous: Rubric, revision: Rubric, kept: Rubric) -> Rubric:
    """`revision`'s edits of `previous`, applied to `kept` (what the gate kept so far): the rubric
    the round proposes in the gated chain.

    An added or edited check takes the revision's form (an edit of a check the gate never kept
    proposes it again, as edited); a deleted check goes; a renamed one keeps the form the gate
    kept under its new id; a check the revision leaves alone keeps the form the gate kept (a
    rejected rewording stays reverted). A new aggregation is proposed; the rest of the file
    (version, task, paths) is the revision's. Checks go in the revision's order, those only the
    gate kept after their neighbour in `kept`.
    """
    state: dict[str, Check] = {c.id: c for c in kept.checks}
    aggregation = kept.aggregation
    for change in diff_rubrics(previous, revision):
        if change.kind == "aggregation":
            aggregation = revision.aggregation
        elif change.kind == "deleted":
            state.pop(change.check_id, None)
        elif change.kind == "renamed":
            assert change.base is not None and change.head is not None
            old = state.pop(change.base.id, None)
            if old is not None:
                state[change.head.id] = old.model_copy(update={"id": change.head.id})
        else:  # added or modified
            assert change.head is not None
            state[change.check_id] = change.head
    return gated_rubric(kept, revision, list(state.values()), aggregation)


def replay_history(path: str, revisions: list[tuple[Revision, Rubric | None, str | None]],
                   calibration: CalibrationSet, store: VerdictStore, options: GateOptions,
                   gates: str, chain: str = "committed") -> History:
    """`revisions`: oldest first, each with its rubric (None and a reason when it did not load).

    Rates are scored per split on the given labels. `committed`: each step is diffed against the
    previous revision that loaded and, when both have every verdict, gated on the calibration
    split as `check` would have gated it. `gated`: each step's edits are applied to what the gate
    kept from the previous round (`apply_edits`) and gated against it; the rubric it keeps is
    scored beside the committed one.
    """
    if chain not in CHAINS:
        raise ValueError(f"unknown chain {chain!r}: {' or '.join(CHAINS)}")
    by_split = {name: calibration.split(name) for name in SPLITS}
    splits = tuple(name for name in SPLITS if by_split[name].items)
    cache: dict[tuple[str, str], VerdictLookup] = {}

    def lookup_for(split: str, rubric: Rubric) -> VerdictLookup:
        # As `check` replays: a verdict recorded under another task wording does not count.
        key = (split, task_hash(rubric.task))
        if key not in cache:
            cache[key] = VerdictLookup(by_split[split], store, rubric)
        return cache[key]

    def scored(rubric: Rubric) -> dict[str, dict[str, Any]]:
        return {name: _rates(lookup_for(name, rubric), rubric) for name in splits
                if not _missing(lookup_for(name, rubric), rubric)}

    reports: list[RevisionReport] = []
    previous: Rubric | None = None
    kept: Rubric | None = None  # the gated chain's rubric so far
    for revision, rubric, error in revisions:
        report = RevisionReport(revision, rubric, error)
        reports.append(report)
        if rubric is None:
            continue
        gate_lookup = lookup_for("calibration", rubric) if "calibration" in splits else None
        report.missing = _missing(gate_lookup, rubric) if gate_lookup else {}
        report.rates = scored(rubric)
        if chain == "gated":
            kept = _chain_round(report, previous, rubric, kept, gate_lookup, options)
            report.gated = kept
            report.gated_rates = scored(kept)
        elif previous is not None:
            report.changes = _changes(previous, rubric)
            if gate_lookup is not None and not report.missing and not _missing(gate_lookup, previous):
                _decide(report.changes, run_gate(previous, rubric, gate_lookup.item_ids,
                                                 gate_lookup.calibration.flawed, gate_lookup.failed_column, options))
        previous = rubric
    return History(path, gates, reports, splits, chain)


def _changes(before: Rubric, after: Rubric) -> list[dict[str, Any]]:
    return [{"check": c.check_id, "change": c.kind, "detail": c.detail, "edited": list(c.edited)}
            for c in diff_rubrics(before, after)]


def _decide(changes: list[dict[str, Any]], result: GateResult) -> None:
    decided = {d.change.check_id: d for d in result.decisions}
    for change in changes:
        decision = decided[change["check"]]
        change["decision"] = "accepted" if decision.accepted else "rejected"
        change["reason"] = decision.reason


def _chain_round(report: RevisionReport, previous: Rubric | None, rubric: Rubric, kept: Rubric | None,
                 lookup: VerdictLookup | None, options: GateOptions) -> Rubric:
    """One round of the gated chain: this revision's edits applied to `kept`, gated against it; the
    rubric the gate keeps. The first revision starts the chain; a round that cannot be gated (a
    check without verdicts) keeps `kept` as it was, its changes listed undecided."""
    if previous is None or kept is None:
        return rubric
    proposed = apply_edits(previous, rubric, kept)
    report.changes = _changes(kept, proposed)
    if lookup is None:
        return kept
    proposed_lookup = VerdictLookup(lookup.calibration, lookup.store, proposed)
    missing = {**_missing(proposed_lookup, kept), **_missing(proposed_lookup, proposed)}
    if missing:
        report.missing = missing
        return kept
    result = run_gate(kept, proposed, proposed_lookup.item_ids, proposed_lookup.calibration.flawed,
                      proposed_lookup.failed_column, options)
    _decide(report.changes, result)
    return result.gated
