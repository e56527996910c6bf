"""Gate one edit on a verdict lookup: the decision step `check` and the action share.

Which verdicts decide (one judge's or a panel's majority), the stability rule, and the trust rule
for untrusted verdicts live here once, so the command line and the required check cannot drift.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from rubric_gate.boundary import catches_withheld
from rubric_gate.calibration import CalibrationSet
from rubric_gate.gate import GateOptions
from rubric_gate.report import CheckReport
from rubric_gate.rubric import RubricDocument
from rubric_gate.scoring import VerdictLookup, run_check
from rubric_gate.verdicts import Verdict, VerdictStore


@dataclass(frozen=True)
class Untrusted:
    """Verdicts nobody vouches for (a PR's own), merged into the lookup's store, and the
    trusted store they were merged into: they may reject a change, never excuse one."""

    verdicts: tuple[Verdict, ...]
    trusted: VerdictStore
    calibration: CalibrationSet


def gate_edit(base: RubricDocument, head: RubricDocument, lookup: VerdictLookup | Any, options: GateOptions, *,
              min_stability: float | None = None, untrusted: Untrusted | None = None,
              notes: list[str] | None = None) -> tuple[CheckReport, GateOptions]:
    """Gate `base` -> `head`: a panel's majority when `lookup` is a PanelLookup, else one
    judge's (or the record's) answers. Returns the report and the options the gate ran with."""
    from rubric_gate.ensemble import PanelLookup, run_panel_check

    if isinstance(lookup, PanelLookup):
        if min_stability is not None:
            options = replace(options, min_stability=min_stability, stability=lookup.stability)
        return run_panel_check(base, head, lookup, options), options
    report = run_check(base, head, lookup, options)
    if untrusted is not None and untrusted.verdicts:
        report = _on_trusted_evidence(report, base, head, untrusted, options, notes if notes is not None else [])
    return report, options


def _on_trusted_evidence(report: CheckReport, base: RubricDocument, head: RubricDocument, untrusted: Untrusted,
                         options: GateOptions, notes: list[str]) -> CheckReport:
    """Gate again with the untrusted "no" answers withheld, and keep that decision when it rejects
    a change the first one accepted (a catch the PR's own verdicts claim must not make another
    check's catch look shared)."""
    store = untrusted.trusted.merged(VerdictStore(catches_withheld(list(untrusted.verdicts))))
    trusted = run_check(base, head, VerdictLookup(untrusted.calibration, store, head.rubric), options)
    accepted = {(c.check, c.change) for c in report.changes if c.accepted}
    newly = [c for c in trusted.changes if not c.accepted and (c.check, c.change) in accepted]
    if not newly:
        return report
    notes.append("Gated on trusted verdicts only: the PR's own verdicts may reject a change, never excuse one, "
                 f"and without their catches {', '.join(f'{c.change} {c.check}' for c in newly[:10])} "
                 "is rejected.")
    return trusted
