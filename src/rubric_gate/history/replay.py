"""Score every revision of a rubric and replay the gate on each step (the paper's Figure 4 drift)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rubric_gate.attribution import compute_rates
from rubric_gate.calibration import CalibrationSet
from rubric_gate.gate import GateOptions, diff_rubrics, run_gate
from rubric_gate.history.git_log import Revision
from rubric_gate.rubric import Rubric
from rubric_gate.scoring import VerdictLookup
from rubric_gate.verdicts import VerdictStore, task_hash

SPLITS = ("calibration", "evaluation")


@dataclass
class RevisionReport:
    revision: Revision
    rubric: Rubric | None
    error: str | None = None  # why this revision could not be read or scored
    rates: dict[str, dict[str, Any]] = field(default_factory=dict)  # split -> rate name -> Rate.to_dict()
    changes: list[dict[str, Any]] = field(default_factory=list)  # from the previous scored revision
    missing: dict[str, int] = field(default_factory=dict)  # check id -> calibration items without a verdict

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
        }


@dataclass
class History:
    path: str
    gates: str
    revisions: list[RevisionReport]
    splits: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"rubric": self.path, "gates": self.gates, "splits": list(self.splits),
                "revisions": [r.to_dict() for r in self.revisions]}


def _missing(lookup: VerdictLookup, rubric: Rubric) -> dict[str, int]:
    counts = {c.id: int(lookup.column(c.text).missing.sum()) for c in rubric.checks}
    return {check: n for check, n in counts.items() if n}


def _rates(lookup: VerdictLookup, rubric: Rubric) -> dict[str, Any]:
    rates = compute_rates(lookup.failed_matrix(rubric), lookup.calibration.flawed,
                          lookup.calibration.unplanned, rubric.max_failures)
    return {"correct_passed": rates.correct_passed.to_dict(), "flawed_caught": rates.flawed_caught.to_dict()}


def replay_history(path: str, revisions: list[tuple[Revision, Rubric | None, str | None]],
                   calibration: CalibrationSet, store: VerdictStore, options: GateOptions,
                   gates: str) -> History:
    """`revisions`: oldest first, each with its rubric (None and a reason when it did not load).

    Rates are scored per split on the given labels; each step is diffed against the previous
    revision that loaded and, when both have every verdict, gated on the calibration split as
    `check` would have gated it.
    """
    by_split = {name: calibration.split(name) for name in SPLITS}
    splits = tuple(name for name in SPLITS if by_split[name].items)
    cache: dict[tuple[str, str], VerdictLookup] = {}

    def lookup_for(split: str, rubric: Rubric) -> VerdictLookup:
        # As `check` replays: a verdict recorded under another task wording does not count.
        key = (split, task_hash(rubric.task))
        if key not in cache:
            cache[key] = VerdictLookup(by_split[split], store, rubric)
        return cache[key]

    reports: list[RevisionReport] = []
    previous: Rubric | None = None
    for revision, rubric, error in revisions:
        report = RevisionReport(revision, rubric, error)
        reports.append(report)
        if rubric is None:
            continue
        lookups = {name: lookup_for(name, rubric) for name in splits}
        gate_lookup = lookups.get("calibration")
        report.missing = _missing(gate_lookup, rubric) if gate_lookup else {}
        for name, lookup in lookups.items():
            if not _missing(lookup, rubric):
                report.rates[name] = _rates(lookup, rubric)
        if previous is not None:
            report.changes = [{"check": c.check_id, "change": c.kind, "detail": c.detail, "edited": list(c.edited)}
                              for c in diff_rubrics(previous, rubric)]
            if gate_lookup is not None and not report.missing and not _missing(gate_lookup, previous):
                result = run_gate(previous, rubric, gate_lookup.item_ids, gate_lookup.calibration.flawed,
                                  gate_lookup.failed_column, options)
                decided = {d.change.check_id: d for d in result.decisions}
                for change in report.changes:
                    decision = decided[change["check"]]
                    change["decision"] = "accepted" if decision.accepted else "rejected"
                    change["reason"] = decision.reason
        previous = rubric
    return History(path, gates, reports, splits)
