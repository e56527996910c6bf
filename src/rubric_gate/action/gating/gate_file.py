"""Gate one changed rubric file: base and head versions, base labels and verdicts, PR verdicts flagged.

The base is the merge base of the PR (what it branched from), so base-branch commits made
since are never reported as the PR's changes; the merge is gated on the base tip too. Every file
is read through the PR's snapshots (`action.commits.snapshot`: each blob parsed once per run). A deleted
rubric is gated on what it loses; a new one is scored like `rubric-gate attribute` (so is one
whose base does not load, which fails closed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rubric_gate.action.cache.verdict_cache import VerdictCache, judging_store
from rubric_gate.action.commits.changed import ChangedFile
from rubric_gate.action.commits.snapshot import Snapshot, Snapshots
from rubric_gate.action.commits.sources import check_repo_path
from rubric_gate.calibration import CalibrationSet
from rubric_gate.errors import InputError, JudgeError, MissingVerdictsError, RubricGateError
from rubric_gate.gate import GateOptions
from rubric_gate.results import CheckReport, RubricSummary
from rubric_gate.rubric import RubricDocument, normalize_text
from rubric_gate.scoring import VerdictLookup, attribute_rubric, promptfoo_note
from rubric_gate.service import (
    CallBudget,
    GateRequest,
    Judged,
    judge_for_gate,
    run_gate_request,
)
from rubric_gate.sources import SourceText
from rubric_gate.trust import (
    JudgedKey,
    Untrusted,
    apply_check_changes,
    check_conflicts,
    deletion_losses,
    split_evidence,
    split_pr_verdicts,
)
from rubric_gate.trust.approval import Approval
from rubric_gate.trust.wording import UNREADABLE_BASE
from rubric_gate.verdicts import Verdict, VerdictStore
from rubric_gate.verdicts.compare import merged_added

__all__ = ["GateSettings", "RubricOutcome", "calibration_split", "gate_file", "verdicts_at"]

JUDGE_HINT = ("record verdicts for them in the PR, or set the action's `judge` input "
              "(e.g. `judge: anthropic:claude-sonnet-4-6`) with its API key to judge them")


@dataclass
class GateSettings:
    """The git facts of one rubric's gating, and the request (`service.GateRequest`) it runs."""

    snapshots: Snapshots  # the merge base (what the PR branched from), the base tip, the head
    trust_pr_verdicts: bool
    judge_unavailable: str | None = None  # why a configured judge is not used (then `request` replays)
    request: GateRequest = field(default_factory=GateRequest)  # no judges: replay recorded verdicts
    budget: CallBudget = field(default_factory=lambda: CallBudget(None))  # `max_judge_calls`, shared by the run
    cache: VerdictCache | None = None  # where judged verdicts go and come back from
    # Whether a writer approved this head (read when first asked: only a PR whose own recorded
    # verdicts are evidence asks); None: no approval is read (a preview, a merge group).
    approval: Callable[[], Approval | None] | None = None

    @property
    def judged(self) -> bool:
        return bool(self.request.judges)


@dataclass
class RubricOutcome:
    file: ChangedFile
    report: CheckReport | None = None
    summary: RubricSummary | None = None  # a new rubric's attribution (no base to gate against)
    head: RubricDocument | None = None
    base: RubricDocument | None = None
    notices: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # reasons to fail besides the gate
    error: str | None = None
    judge_failed: bool = False  # `error` is a judge's (no valid answer, a dead endpoint), not bad input
    judging: dict[str, object] | None = None
    pending_pairs: int = 0  # pairs still being judged in a batch: no decision yet
    audit_report: Any = None  # rubric_gate.audit.AuditReport of the added and reworded checks
    repair_report: Any = None  # rubric_gate.repair.RepairReport for the rejected changes
    override: str | None = None  # an honoured override label (also set on the report, when there is one)
    approval: Approval | None = None  # the approval read for the PR's own recorded verdicts (granted: they counted)
    # What a configured judge answered in this run, by (task, text, item) (`trust.JudgedKey`): a
    # changed recorded answer is excused for exactly these pairs, never for a whole check text.
    judged_pairs: dict[JudgedKey, str] = field(default_factory=dict)  # -> the judge's answer

    @property
    def pending(self) -> bool:
        return self.error is None and self.pending_pairs > 0

    @property
    def passed(self) -> bool:
        if self.error is not None or self.pending:
            return False
        gate_ok = self.report is None or self.report.decision == "pass"
        return gate_ok and (not self.failures or bool(self.override or (self.report and self.report.override)))

    def to_dict(self) -> dict[str, object]:
        return {
            "file": self.file.path,
            "base_file": self.file.base_path,
            "status": self.file.status,
            "decision": "pending" if self.pending else "pass" if self.passed else "fail",
            "pending_pairs": self.pending_pairs,
            "error": self.error,
            "failures": self.failures,
            "notices": self.notices,
            "report": self.report.to_dict() if self.report else None,
            "attribution": self.summary.to_dict() if self.summary else None,
            "judging": self.judging,
            "audit": self.audit_report.to_dict() if self.audit_report is not None else None,
            "repairs": self.repair_report.to_dict() if self.repair_report is not None else None,
        }


def calibration_split(snapshot: Snapshot, path: str) -> CalibrationSet:
    """The calibration split a rubric is scored on (an InputError when absent or empty)."""
    found = snapshot.calibration(path)
    if found is None:
        raise InputError(snapshot.display(path), "calibration set not found at this commit")
    calibration = found.split("calibration")
    if not calibration.items:
        raise InputError(calibration.display, "no items in the calibration split")
    return calibration


def verdicts_at(snapshot: Snapshot, path: str) -> VerdictStore:
    """The verdict store (empty when there is none); parsed once per blob, base and head alike."""
    store = snapshot.verdicts(path)
    return VerdictStore(display=snapshot.display(path)) if store is None else store


def _judged_answers(outcome: RubricOutcome, lookup: VerdictLookup, docs: list[RubricDocument],
                    calibration: CalibrationSet) -> None:
    """Record the configured judge's answer (a panel's majority) for each pair it answered for
    this rubric: a recorded answer the PR changes is excused only where it equals this one."""
    for text in dict.fromkeys(c.text for doc in docs for c in doc.rubric.checks):
        column = lookup.column(text)
        key = normalize_text(text)
        for index, item in enumerate(calibration.items):
            if not column.missing[index]:
                outcome.judged_pairs[(lookup.task, key, item.content_hash)] = "no" if column.failed[index] else "yes"


def _pairs_shown(verdicts: list[Verdict]) -> str:
    shown = ", ".join(f"{v.check or v.check_text[:40]} on {v.item}" for v in verdicts[:10])
    return shown + (f" and {len(verdicts) - 10} more" if len(verdicts) > 10 else "")


def gate_file(changed: ChangedFile, settings: GateSettings) -> RubricOutcome:
    outcome = RubricOutcome(changed)
    if changed.name_error:
        outcome.error = changed.name_error
        return outcome
    try:
        if changed.status == "removed":
            _gate_removed(outcome, settings)
        elif changed.status == "added":
            _gate_added(outcome, settings)
        else:
            _gate_edited(outcome, settings)
    except _BatchPending:
        pass  # reported as pending: nothing to decide until the batch is collected
    except MissingVerdictsError as exc:
        parts = ", ".join(f"{cid} ({n}/{exc.total_items} items)" for cid, n in exc.missing.items())
        outcome.error = f"no verdict for checks {parts}: {JUDGE_HINT}"
    except RubricGateError as exc:
        outcome.error, outcome.judge_failed = exc.message, isinstance(exc, JudgeError)
    return outcome


class _BatchPending(Exception):
    """Batches are still judging some of this rubric's pairs."""


def _lookup(outcome: RubricOutcome, docs: list[RubricDocument], calibration: CalibrationSet,
            store: VerdictStore, s: GateSettings) -> VerdictLookup:
    """The verdicts the gate reads for `docs`: recorded ones in replay, else what the configured
    judge (or panel) answers, judged into the cache by the gate service."""
    if not s.judged:
        return VerdictLookup(calibration, store, docs[-1].rubric)
    with judging_store(s.cache, store) as judging:
        judged = judge_for_gate(docs, calibration, judging, s.request, s.budget)
    _took(outcome, judged)
    assert judged.lookup is not None
    _judged_answers(outcome, judged.lookup, docs, calibration)
    return judged.lookup


def _took(outcome: RubricOutcome, judged: Judged) -> None:
    outcome.judging = judged.judging
    outcome.notices.extend(judged.warnings)
    if judged.lookup is None:
        outcome.pending_pairs = judged.pending_pairs
        outcome.notices.append(f"Judging {judged.pending_pairs} pair(s) in batch ({judged.pending_batches} batch(es) "
                               "still processing): re-run this check to collect them; nothing is resubmitted.")
        raise _BatchPending


def _gate_added(outcome: RubricOutcome, s: GateSettings, base_note: str | None = None) -> None:
    """A rubric with no base version: scored on its own labels like `rubric-gate attribute`, as the
    merge leaves them (the proposed snapshot: the files this PR changes as its head has them, every
    other file as the base tip has it), so labels or verdicts main changed since the PR branched
    count as they will once merged."""
    changed, proposed = outcome.file, s.snapshots.proposed
    head = proposed.rubric(changed.path, changed.path)
    if head is None:
        raise InputError(proposed.display(changed.path), "rubric not found at the head commit")
    outcome.head = head
    calibration = calibration_split(proposed, head.rubric.calibration)
    store = verdicts_at(proposed, head.rubric.verdicts)
    outcome.notices.append(base_note or "New rubric: there is no base version to gate against. It was scored "
                           "on its own calibration set; review its labels and checks by hand.")
    if s.judge_unavailable:
        outcome.notices.append(f"Replay mode: {s.judge_unavailable}.")
    outcome.summary = attribute_rubric(head, _lookup(outcome, [head], calibration, store, s))
    if head.kind == "promptfoo":
        outcome.notices.append(promptfoo_note(head))


def _gate_removed(outcome: RubricOutcome, s: GateSettings) -> None:
    snapshots = s.snapshots
    _deletion_at(outcome, snapshots.merge_base, s)
    if snapshots.tip_moved:
        # What the deletion loses is what the base tip has: main may have given the rubric a catch since.
        path = outcome.file.base_path
        at_base, at_tip = snapshots.merge_base.entry(path), snapshots.tip.entry(path)
        if at_tip is not None and (at_base is None or at_tip.blob_id != at_base.blob_id):
            on_tip = RubricOutcome(outcome.file)
            _deletion_at(on_tip, snapshots.tip, s)
            outcome.failures.extend(f"on the base branch's tip {snapshots.tip.sha[:7]}: {f}" for f in on_tip.failures
                                    if f not in outcome.failures)
            outcome.judged_pairs.update(on_tip.judged_pairs)


def _deletion_at(outcome: RubricOutcome, trusted: Snapshot, s: GateSettings) -> None:
    """What deleting the rubric loses, as `trusted` (the merge base or the base tip) has it."""
    changed = outcome.file
    if trusted.file(changed.base_path) is None:
        outcome.notices.append("This PR deletes a file that did not exist at the merge base.")
        return
    try:
        base = trusted.rubric(changed.base_path)
    except InputError as exc:
        outcome.failures.append(UNREADABLE_BASE.format(what="the deleted rubric", why=exc.message))
        return
    assert base is not None
    outcome.base = base
    summary = None
    try:
        calibration = calibration_split(trusted, base.rubric.calibration)
        base_store = verdicts_at(trusted, base.rubric.verdicts)
        summary = attribute_rubric(base, _lookup(outcome, [base], calibration, base_store, s))
    except MissingVerdictsError as exc:
        # Verdicts lag the labels (e.g. items added since): what the rubric catches is unknown,
        # which is no reason to think it catches nothing.
        parts = ", ".join(f"{cid} ({n}/{exc.total_items} items)" for cid, n in exc.missing.items())
        outcome.failures.append(f"the rubric could not be scored at the base (no verdict for checks {parts}), so "
                                f"whether deleting it loses catches is unknown: {JUDGE_HINT}")
    except InputError as exc:
        outcome.failures.append(UNREADABLE_BASE.format(what="the deleted rubric's calibration set or verdicts",
                                                       why=exc.message))
    losses = deletion_losses(base.rubric, summary)
    what = ("stops gating the promptfoo config (`.rubric-gate.yaml` no longer names it)" if changed.unlisted else
            f"moves the rubric out of the `rubrics` glob to {changed.moved_to}, where it is no longer gated"
            if changed.moved_to else "deletes the rubric")
    if losses:
        outcome.failures.append(f"this PR {what}, but " + "; ".join(losses))
    elif not outcome.failures:
        outcome.notices.append(f"This PR {what}; it held no frozen check"
                               + (" and caught no flawed item." if summary is not None else "."))


def _gate_edited(outcome: RubricOutcome, s: GateSettings) -> None:
    changed, at_base, at_head = outcome.file, s.snapshots.merge_base, s.snapshots.head
    # Only the diff's own status says a file is new or deleted: a file the diff calls modified
    # or renamed but that cannot be read must not pass as "new" (ungated) or "deleted".
    if at_base.file(changed.base_path) is None:
        raise InputError(at_base.display(changed.base_path), "rubric not found at the base commit")
    head = at_head.rubric(changed.path, changed.path)
    if head is None:
        raise InputError(at_head.display(changed.path), "rubric not found at the head commit")
    outcome.head = head
    for key in ("calibration", "verdicts"):  # what the next PR will read: it must stay in the repository
        check_repo_path(at_head.sha, getattr(head.rubric, key))
    try:
        base = at_base.rubric(changed.base_path)
        assert base is not None
        calibration = calibration_split(at_base, base.rubric.calibration)
        base_store = verdicts_at(at_base, base.rubric.verdicts)
    except InputError as exc:
        # A broken rubric was merged: scored as new for the reviewer, and failed closed.
        _gate_added(outcome, s, base_note=(
            f"The base version does not load ({exc.message}), so this PR was scored as a new rubric."))
        outcome.failures.append(UNREADABLE_BASE.format(what="the rubric, its calibration set or its verdicts",
                                                       why=exc.message))
        return
    outcome.base = base
    head_store = verdicts_at(at_head, head.rubric.verdicts)
    notes: list[str] = []
    report, options = _gate_versions(outcome, base, head, calibration, base_store, head_store, s, notes)
    report.notes.extend(notes)
    if outcome.judging is not None:
        report.judging = outcome.judging
    outcome.report = report
    if s.snapshots.tip_moved:
        _gate_on_tip(outcome, base, head, head_store, options, s)


def _gate_on_tip(outcome: RubricOutcome, base: RubricDocument, head: RubricDocument,
                 head_store: VerdictStore, options: GateOptions, s: GateSettings) -> None:
    """Gate the merge, not the branch: the PR's check changes applied onto the base tip's rubric,
    against the tip's labels and verdicts (the trusted snapshot of the tip). A PR that deletes B
    is rejected when main has since deleted A, the other check catching the same items."""
    changed, at_tip = outcome.file, s.snapshots.tip
    where = f"the base branch's tip {at_tip.sha[:7]}"
    if at_tip.file(changed.base_path) is None:
        outcome.failures.append(f"{where} no longer has {changed.base_path}: the merge would bring back a rubric "
                                "the base branch removed; rebase the PR onto its base branch")
        return
    try:
        tip = at_tip.rubric(changed.base_path)
        assert tip is not None
        tip_calibration = calibration_split(at_tip, tip.rubric.calibration)
        tip_store = verdicts_at(at_tip, tip.rubric.verdicts)
    except InputError as exc:
        outcome.failures.append(f"{where} cannot be read to gate the merge ({exc.message}); rebase the PR")
        return
    conflicts = check_conflicts(base.rubric, head.rubric, tip.rubric)
    outcome.failures.extend(f"merged onto {where}, {c}: rebase the PR and keep one" for c in conflicts)
    merged = RubricDocument(apply_check_changes(base.rubric, head.rubric, tip.rubric),
                            SourceText(f"this PR merged onto {at_tip.sha[:7]}", head.source.text, None,
                                       repo_path=changed.path), head.check_lines)
    if merged.rubric == tip.rubric and tip.rubric == base.rubric:
        return
    judging, judged = outcome.judging, outcome.judged_pairs
    try:
        report, _ = _gate_versions(outcome, tip, merged, tip_calibration, tip_store, head_store, s, [],
                                   options=options)
    except MissingVerdictsError as exc:
        parts = ", ".join(f"{cid} ({n}/{exc.total_items} items)" for cid, n in exc.missing.items())
        outcome.failures.append(f"merged onto {where}, the rubric cannot be scored (no verdict for checks {parts}): "
                                f"rebase the PR, or {JUDGE_HINT}")
        return
    finally:
        outcome.judging = judging if judging is not None else outcome.judging
        outcome.judged_pairs = {**outcome.judged_pairs, **judged}
    # What the branch's own report rejects is listed there already: only what the merge adds.
    branch = outcome.report
    rejected = {(c.check, c.change) for c in (branch.changes if branch is not None else []) if not c.accepted}
    for change in report.changes:
        if not change.accepted and (change.check, change.change) not in rejected:
            outcome.failures.append(f"merged onto {where}, {change.change} {change.check} is rejected: {change.reason}")


def _gate_versions(outcome: RubricOutcome, base: RubricDocument, head: RubricDocument, calibration: CalibrationSet,
                   base_store: VerdictStore, head_store: VerdictStore, s: GateSettings, notes: list[str],
                   options: GateOptions | None = None) -> tuple[CheckReport, GateOptions]:
    """Gate `base` -> `head` on `base`'s labels and trusted verdicts through the gate service
    (which judges what is missing, audits, gates and repairs); this side says which verdicts
    are the PR's own and what the configured judge made of them.

    `options` given: a second gating of the same PR (onto the base tip), audited already.
    """
    primary = options is None
    fills, _contradicting = split_pr_verdicts(base_store, head_store, calibration)
    # (Changed answers of base verdicts are reported and gated run-wide, with the label changes.)
    evidence = split_evidence(fills, base_store, base.rubric, head.rubric, calibration)
    added, ignored, unweighed = list(evidence.pr_own), list(evidence.ignored), list(evidence.unweighed)
    if ignored and primary:
        notes.append(f"This PR records {len(ignored)} verdict(s) for checks the base rubric already has "
                     f"({_pairs_shown(ignored)}); only the base's record or a configured judge answers for "
                     "those, so they were not used.")
    untrusted = None
    if s.judged:
        with judging_store(s.cache, base_store) as store:
            run = run_gate_request(base, head, calibration, store, s.request, s.budget, audit_store=lambda: _audit_store(s),
                                   options=options, repairs=primary, notes=notes)
        _took(outcome, run.judged)
        _judged_answers(outcome, run.lookup, [base, head], calibration)
        if (added or unweighed) and primary and not s.request.measures_reliability:
            disagreements = _disagreements([*added, *unweighed], calibration, store, s.request.judges[0],
                                           run.lookup.prompt or "", run.lookup.task)
            what = " and ".join(part for part in (f"This PR adds {len(added)} verdict(s)" if added else "",
                                                  f"{_unweighed_shown(unweighed, head)}" if unweighed else "") if part)
            notes.append(f"{what}; they were re-judged with `{s.request.judges[0]}` and "
                         "not used" + (f"; {len(disagreements)} disagree with the judge: {', '.join(disagreements[:10])}"
                                       if disagreements else "; the judge agrees with all of them") + ".")
            if disagreements:
                # Merged, they are the record: a run where the judge cannot run (a fork's) replays them.
                outcome.failures.append(f"{len(disagreements)} verdict(s) answering this PR's checks disagree with the configured "
                                        "judge; once merged a run without the judge would replay them: correct or drop "
                                        "them")
    else:
        if s.judge_unavailable and primary:
            notes.append(f"Replay mode: {s.judge_unavailable}. The gate used recorded verdicts only.")
        store = merged_added(base_store, head_store, added) if added else base_store
        # A writer's approval of this head vouches for the PR's own records (`trust.approval`):
        # the rules are the same, its verdicts count as recorded. `trust_pr_verdicts: false`
        # asks for a judge whatever the reviews say.
        asked = s.approval() if (added or unweighed) and s.approval is not None else None
        vouched = asked if asked is not None and asked.granted and s.trust_pr_verdicts else None
        if (added or unweighed) and primary:
            outcome.approval = asked
            note = " and ".join(part for part in (
                f"This PR adds {len(added)} unverified verdict(s) to `{head.rubric.verdicts}`" if added else "",
                _unweighed_shown(unweighed, head) if unweighed else "") if part) + ": no judge could re-check them here"
            pending = f" ({asked.text})" if asked is not None and asked.refused else ""  # why one did not count
            if vouched is not None:
                notes.append(note + ", and a writer's approval vouches for them, so they count as recorded"
                             + (" in place of the configured judge, which could not run" if s.judge_unavailable else "")
                             + f": {vouched.text}.")
            elif s.trust_pr_verdicts and not s.judge_unavailable:
                notes.append(note + ", so they were used as recorded for the checks this PR adds (`trust_pr_verdicts`; "
                             "set it to false to require a judge): their \"no\" on a correct item counts as blame, "
                             "their catches of flawed items only once someone with write access approves this head"
                             f"{pending}.")
            else:
                # A judge is configured but cannot run (a fork's run has no secrets): what the PR
                # records for its new checks does not stand in for what that judge would answer,
                # unless a writer vouches for it.
                why = ("`trust_pr_verdicts` is false (an approval does not change that)" if not s.trust_pr_verdicts else
                       "the configured judge could not run, and a PR's own verdicts do not stand in for it unless "
                       f"someone with write access approves this head{pending}")
                notes.append(note + f"; {why}, so this fails.")
                outcome.failures.append(" and ".join(part for part in (
                    f"{len(added)} unverified verdict(s) added by this PR" if added else "",
                    f"{len(unweighed)} recorded before any check had their text" if unweighed else "") if part) + (
                    " (the configured judge could not run)" if s.judge_unavailable else ""))
        untrusted = Untrusted(evidence.untrusted, base_store, calibration) \
            if evidence.untrusted and vouched is None else None
        run = run_gate_request(base, head, calibration, store, s.request, s.budget, audit_store=lambda: _audit_store(s),
                               untrusted=untrusted, options=options, repairs=primary, notes=notes)
    if primary:
        outcome.audit_report, outcome.repair_report = run.audit_report, run.repair_report
        outcome.notices.extend(run.notices)
    assert run.report is not None
    return run.report, run.options


def _unweighed_shown(unweighed: list[Verdict], head: RubricDocument) -> str:
    checks = ", ".join(dict.fromkeys(v.check or v.check_text[:40] for v in unweighed))
    return (f"{len(unweighed)} verdict(s) in `{head.rubric.verdicts}` answer checks this PR adds ({checks}) but were "
            "recorded before any check had their text, so no gate weighed them: they count as this PR's own")


def _audit_store(s: GateSettings) -> Any:
    if s.cache is not None:
        return s.cache.audit_store()
    from rubric_gate.audit import AuditStore

    return AuditStore()


def _disagreements(added: list[Verdict], calibration: CalibrationSet, store: VerdictStore,
                   judge: str, prompt: str, task: str | None) -> list[str]:
    items = {i.id: i for i in calibration.items}
    out = []
    for verdict in added:
        item = items.get(verdict.item)
        fresh = store.find(verdict.check_text, item, judge=judge, prompt=prompt, task=task) if item else None
        if fresh is not None and fresh.answer != verdict.answer:
            out.append(f"{verdict.check or verdict.check_text[:40]} on {verdict.item} (PR: {verdict.answer}, judge: {fresh.answer})")
    return out
