"""`check --base REF:PATH`: whether `preview` and the action would decide this edit differently.

`check` gates what is in the working tree and trusts it: you are its author. The action gates a
pull request, where the verdicts the branch records for check texts the base rubric does not have
are the PR's own (`trust.evidence`): they may reject a change, never excuse one, until someone
with write access approves the PR's head. With a git base, `check` gates the same edit the way the
action weighs that evidence (the base's record at REF trusted, the working tree's additions the
PR's own, through the same `gate_edit`) and says in one line whether the answer differs, and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rubric_gate.calibration import CalibrationSet, load_calibration
from rubric_gate.errors import InputError, RubricGateError
from rubric_gate.gate import GateOptions
from rubric_gate.results import CheckReport
from rubric_gate.rubric import RubricDocument, normalize_text
from rubric_gate.scoring import VerdictLookup, resolve_path
from rubric_gate.service import gate_edit
from rubric_gate.trust import Untrusted, record_changes, split_evidence, split_pr_verdicts
from rubric_gate.verdicts import VerdictStore
from rubric_gate.verdicts.compare import merged_added


@dataclass(frozen=True)
class ActionView:
    decision: str  # what preview and the action decide on this edit: pass | fail
    differs: bool  # from check's own answer (its decision, or which changes it accepts)
    line: str  # the one line said on stderr

    def to_dict(self) -> dict[str, object]:
        return {"decision": self.decision, "differs": self.differs, "why": self.line.removeprefix("rubric-gate: ")}


def action_view(ref: str, base: RubricDocument, head: RubricDocument, items: CalibrationSet, report: CheckReport,
                options: GateOptions, root: Path) -> ActionView:
    """The edit gated as the action weighs its evidence: the base rubric's verdict file at `ref`
    trusted, what the working tree's head verdict file adds to it the PR's own."""
    try:
        trusted = VerdictStore.load(f"{ref}:{base.rubric.verdicts}", root)
    except InputError:
        trusted = VerdictStore(display=f"{ref}:{base.rubric.verdicts}")  # no record at the base: all is the PR's
    working = VerdictStore.load(resolve_path(root, head.rubric.verdicts), missing_ok=True)
    # What needs the override there, whatever the evidence: check reads the working tree's labels
    # and record as the truth, the action gates on the base's.
    changes = _record_changes(ref, base, head, trusted, working, root)
    if changes:
        verdict = (f"decide FAIL here, not {report.decision.upper()}" if report.decision != "fail"
                   else "decide as check does here (FAIL), and would also need the override")
        return ActionView("fail", report.decision != "fail", f"rubric-gate: preview and the action {verdict}: the "
                          f"branch {'; '.join(changes)}, which needs the override label from someone with write "
                          "access (an approval does not cover it)")
    fills, _ = split_pr_verdicts(trusted, working, items)
    evidence = split_evidence(fills, trusted, base.rubric, head.rubric, items)
    own = len(evidence.untrusted)
    if not own:
        return ActionView(report.decision, False, "rubric-gate: preview and the action decide as check does here: "
                          f"this edit rests on no verdict the branch records since {ref}")
    store = merged_added(trusted, working, list(evidence.pr_own)) if evidence.pr_own else trusted
    try:
        theirs, _ = gate_edit(base, head, VerdictLookup(items, store, head.rubric), options,
                              untrusted=Untrusted(evidence.untrusted, trusted, items))
    except RubricGateError as exc:
        return ActionView("fail", True, f"rubric-gate: preview and the action would stop on this edit: {exc.message}")
    accepted = {(c.check, c.change) for c in report.changes if c.accepted}
    differs = theirs.decision != report.decision or accepted != {(c.check, c.change) for c in theirs.changes
                                                                 if c.accepted}
    texts = {normalize_text(v.check_text) for v in evidence.untrusted}
    checks = ", ".join(c.id for c in head.rubric.checks if c.normalized_text in texts) or "no check of this rubric"
    evidence_text = (f"{own} verdict{'s' if own != 1 else ''} the branch records for {checks} "
                     f"({head.rubric.verdicts}) count there as the PR's own, which may reject a change but never "
                     "excuse one")
    if not differs:
        return ActionView(theirs.decision, False, f"rubric-gate: preview and the action decide as check does here "
                          f"({theirs.decision.upper()}), though the {evidence_text}")
    held = [f"{h.change} {h.check}" for h in theirs.withheld.held] if theirs.withheld is not None else []
    return ActionView(theirs.decision, True, f"rubric-gate: preview and the action decide {theirs.decision.upper()} "
                      f"here, not {report.decision.upper()}, until someone with write access approves the PR's head: "
                      f"the {evidence_text}" + (f" (held: {', '.join(held)})" if held else ""))


def _record_changes(ref: str, base: RubricDocument, head: RubricDocument, trusted: VerdictStore,
                    working: VerdictStore, root: Path) -> list[str]:
    """What the working tree does to the base's labels and record that needs the override there
    (`trust.record_changes`), with the files the rubric reads them through."""
    out = [f"points `{key}` at {getattr(head.rubric, key)} instead of {getattr(base.rubric, key)}"
           for key in ("calibration", "verdicts") if getattr(head.rubric, key) != getattr(base.rubric, key)]
    try:
        before = load_calibration(f"{ref}:{base.rubric.calibration}", root)
    except InputError:
        return [*out, f"reads a calibration set {ref} does not have ({head.rubric.calibration})"]
    after = load_calibration(head.rubric.calibration, root)
    return [*out, *record_changes(before.items, after.items, trusted, working, base.rubric, head.rubric)]
