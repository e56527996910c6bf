"""Gate one changed rubric file: base and head versions, base labels and verdicts, PR verdicts flagged.

The base is the merge base of the PR (what it branched from), so base-branch commits made
since are never reported as the PR's changes; the merge is gated on the base tip too. Every file
is read through the PR's snapshots (`action.commits.snapshot`: each blob parsed once per run). A deleted
rubric is gated on what it loses; a new one is scored like `rubric-gate attribute` (so is one
whose base does not load, which fails closed).

Values in, values out: each step takes the outcome so far and returns a new one (`RubricOutcome`);
pairs still being judged in a batch make it pending, a value the next step passes on.
"""

from __future__ import annotations

from dataclasses import replace

from rubric_gate.action.cache.verdict_cache import judging_store
from rubric_gate.action.commits.changed import ChangedFile
from rubric_gate.action.commits.snapshot import Snapshot
from rubric_gate.action.commits.sources import check_repo_path
from rubric_gate.action.gating.outcome import (
    JUDGE_HINT,
    GateSettings,
    RubricOutcome,
    missing_verdicts,
)
from rubric_gate.action.gating.own_verdicts import (
    ignored_note,
    pr_evidence,
    rejudged,
    replayed,
    vouched,
)
from rubric_gate.calibration import CalibrationSet
from rubric_gate.errors import InputError, MissingVerdictsError, RubricGateError
from rubric_gate.gate import GateOptions
from rubric_gate.rubric import RubricDocument, normalize_text
from rubric_gate.scoring import VerdictLookup, attribute_rubric, promptfoo_note
from rubric_gate.service import GateRun, Judged, judge_for_gate, run_gate_request
from rubric_gate.sources import SourceText
from rubric_gate.trust import (
    Evidence,
    Untrusted,
    apply_check_changes,
    check_conflicts,
    deletion_losses,
)
from rubric_gate.trust.wording import UNREADABLE_BASE
from rubric_gate.verdicts import VerdictStore
from rubric_gate.verdicts.compare import merged_added

__all__ = ["calibration_split", "gate_file", "verdicts_at"]


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


def _trusted_version(snapshot: Snapshot, path: str) -> tuple[RubricDocument, CalibrationSet, VerdictStore]:
    """The rubric at `path` as a trusted snapshot has it, the calibration split it is scored on
    and its verdicts (an InputError when one does not load)."""
    found = snapshot.rubric(path)
    assert found is not None
    return found, calibration_split(snapshot, found.rubric.calibration), verdicts_at(snapshot, found.rubric.verdicts)


def gate_file(changed: ChangedFile, settings: GateSettings) -> RubricOutcome:
    if changed.name_error:
        return RubricOutcome(changed, error=changed.name_error)
    try:
        if changed.status == "removed":
            return _gate_removed(changed, settings)
        if changed.status == "added":
            return _gate_added(RubricOutcome(changed), settings)
        return _gate_edited(changed, settings)
    except RubricGateError as exc:  # before any step had an outcome of its own
        return RubricOutcome(changed).stopped_by(exc)


# -- what the configured judge answered --------------------------------------------------------

def _took(outcome: RubricOutcome, judged: Judged, docs: list[RubricDocument],
          calibration: CalibrationSet) -> RubricOutcome:
    """The outcome with a judging step's statistics and warnings, and the configured judge's
    answer (a panel's majority) for each pair it answered for this rubric (a recorded answer the
    PR changes is excused only where it equals this one); pending while batches still judge."""
    taken = replace(outcome, judging=judged.judging).noted(*judged.warnings)
    if judged.lookup is None:
        return replace(taken, pending_pairs=judged.pending_pairs).noted(
            f"Judging {judged.pending_pairs} pair(s) in batch ({judged.pending_batches} batch(es) still processing): "
            "re-run this check to collect them; nothing is resubmitted.")
    lookup, answers = judged.lookup, dict(outcome.judged_pairs)
    for text in dict.fromkeys(c.text for doc in docs for c in doc.rubric.checks):
        column, key = lookup.column(text), normalize_text(text)
        for index, item in enumerate(calibration.items):
            if not column.missing[index]:
                answers[(lookup.task, key, item.content_hash)] = "no" if column.failed[index] else "yes"
    return replace(taken, judged_pairs=answers)


def _lookup(outcome: RubricOutcome, docs: list[RubricDocument], calibration: CalibrationSet,
            store: VerdictStore, s: GateSettings) -> tuple[RubricOutcome, VerdictLookup | None]:
    """The verdicts the gate reads for `docs`: recorded ones in replay, else what the configured
    judge (or panel) answers, judged into the cache by the gate service (None: pending)."""
    if not s.judged:
        return outcome, VerdictLookup(calibration, store, docs[-1].rubric)
    with judging_store(s.cache, store) as judging:
        judged = judge_for_gate(docs, calibration, judging, s.request, s.budget)
    return _took(outcome, judged, docs, calibration), judged.lookup


# -- a new rubric, a deleted one ---------------------------------------------------------------

def _gate_added(outcome: RubricOutcome, s: GateSettings, base_note: str | None = None) -> RubricOutcome:
    """A rubric with no base version: scored on its own labels like `rubric-gate attribute`, as the
    merge leaves them (the proposed snapshot: the files this PR changes as its head has them, every
    other file as the base tip has it), so labels or verdicts main changed since the PR branched
    count as they will once merged."""
    changed, proposed = outcome.file, s.snapshots.proposed
    try:
        head = proposed.rubric(changed.path, changed.path)
        if head is None:
            raise InputError(proposed.display(changed.path), "rubric not found at the head commit")
        outcome = replace(outcome, head=head)
        calibration = calibration_split(proposed, head.rubric.calibration)
        store = verdicts_at(proposed, head.rubric.verdicts)
        outcome = outcome.noted(base_note or "New rubric: there is no base version to gate against. It was scored "
                                "on its own calibration set; review its labels and checks by hand.")
        if s.judge_unavailable:
            outcome = outcome.noted(f"Replay mode: {s.judge_unavailable}.")
        outcome, lookup = _lookup(outcome, [head], calibration, store, s)
        if lookup is None:
            return outcome
        outcome = replace(outcome, summary=attribute_rubric(head, lookup))
        return outcome.noted(promptfoo_note(head)) if head.kind == "promptfoo" else outcome
    except RubricGateError as exc:
        return outcome.stopped_by(exc)


def _gate_removed(changed: ChangedFile, s: GateSettings) -> RubricOutcome:
    snapshots = s.snapshots
    outcome = _deletion_at(RubricOutcome(changed), snapshots.merge_base, s)
    if outcome.error is not None or outcome.pending or not snapshots.tip_moved:
        return outcome
    # What the deletion loses is what the base tip has: main may have given the rubric a catch since.
    path = changed.base_path
    at_base, at_tip = snapshots.merge_base.entry(path), snapshots.tip.entry(path)
    if at_tip is None or (at_base is not None and at_tip.blob_id == at_base.blob_id):
        return outcome
    on_tip = _deletion_at(RubricOutcome(changed), snapshots.tip, s)
    if on_tip.error is not None:
        return replace(outcome, error=on_tip.error, judge_failed=on_tip.judge_failed)
    if on_tip.pending:  # what the tip's rubric catches is still being judged: nothing to decide yet
        return replace(outcome, pending_pairs=on_tip.pending_pairs).noted(*on_tip.notices[-1:])
    outcome = outcome.failing(*(f"on the base branch's tip {snapshots.tip.sha[:7]}: {f}" for f in on_tip.failures
                                if f not in outcome.failures))
    return replace(outcome, judged_pairs={**outcome.judged_pairs, **on_tip.judged_pairs})


def _deletion_at(outcome: RubricOutcome, trusted: Snapshot, s: GateSettings) -> RubricOutcome:
    """What deleting the rubric loses, as `trusted` (the merge base or the base tip) has it."""
    changed = outcome.file
    try:
        if trusted.file(changed.base_path) is None:
            return outcome.noted("This PR deletes a file that did not exist at the merge base.")
        try:
            base = trusted.rubric(changed.base_path)
        except InputError as exc:
            return outcome.failing(UNREADABLE_BASE.format(what="the deleted rubric", why=exc.message))
        assert base is not None
        outcome = replace(outcome, base=base)
        summary = None
        try:
            calibration = calibration_split(trusted, base.rubric.calibration)
            base_store = verdicts_at(trusted, base.rubric.verdicts)
            outcome, lookup = _lookup(outcome, [base], calibration, base_store, s)
            if lookup is None:
                return outcome
            summary = attribute_rubric(base, lookup)
        except MissingVerdictsError as exc:
            # Verdicts lag the labels (e.g. items added since): what the rubric catches is unknown,
            # which is no reason to think it catches nothing.
            outcome = outcome.failing(f"the rubric could not be scored at the base ({missing_verdicts(exc)}), so "
                                      f"whether deleting it loses catches is unknown: {JUDGE_HINT}")
        except InputError as exc:
            outcome = outcome.failing(UNREADABLE_BASE.format(what="the deleted rubric's calibration set or verdicts",
                                                             why=exc.message))
        losses = deletion_losses(base.rubric, summary)
        what = ("stops gating the promptfoo config (`.rubric-gate.yaml` no longer names it)" if changed.unlisted else
                f"moves the rubric out of the `rubrics` glob to {changed.moved_to}, where it is no longer gated"
                if changed.moved_to else "deletes the rubric")
        if losses:
            return outcome.failing(f"this PR {what}, but " + "; ".join(losses))
        if outcome.failures:
            return outcome
        return outcome.noted(f"This PR {what}; it held no frozen check"
                             + (" and caught no flawed item." if summary is not None else "."))
    except RubricGateError as exc:
        return outcome.stopped_by(exc)


# -- an edited rubric: the branch, then the merge onto the base tip -----------------------------

def _gate_edited(changed: ChangedFile, s: GateSettings) -> RubricOutcome:
    at_base, at_head = s.snapshots.merge_base, s.snapshots.head
    outcome = RubricOutcome(changed)
    try:
        # Only the diff's own status says a file is new or deleted: a file the diff calls modified
        # or renamed but that cannot be read must not pass as "new" (ungated) or "deleted".
        if at_base.file(changed.base_path) is None:
            raise InputError(at_base.display(changed.base_path), "rubric not found at the base commit")
        head = at_head.rubric(changed.path, changed.path)
        if head is None:
            raise InputError(at_head.display(changed.path), "rubric not found at the head commit")
        outcome = replace(outcome, head=head)
        for key in ("calibration", "verdicts"):  # what the next PR will read: it must stay in the repository
            check_repo_path(at_head.sha, getattr(head.rubric, key))
        try:
            base, calibration, base_store = _trusted_version(at_base, changed.base_path)
        except InputError as exc:
            # A broken rubric was merged: scored as new for the reviewer, and failed closed.
            scored = _gate_added(outcome, s, base_note=(
                f"The base version does not load ({exc.message}), so this PR was scored as a new rubric."))
            if scored.error is not None or scored.pending:
                return scored
            return scored.failing(UNREADABLE_BASE.format(what="the rubric, its calibration set or its verdicts",
                                                         why=exc.message))
        outcome = replace(outcome, base=base)
        head_store = verdicts_at(at_head, head.rubric.verdicts)
        outcome, options = _gate_branch(outcome, base, head, calibration, base_store, head_store, s)
        if options is None or not s.snapshots.tip_moved:
            return outcome
        return _gate_onto_tip(outcome, base, head, head_store, options, s)
    except RubricGateError as exc:
        return outcome.stopped_by(exc)


def _run(base: RubricDocument, head: RubricDocument, calibration: CalibrationSet, store: VerdictStore,
         untrusted: Untrusted | None, s: GateSettings, notes: list[str],
         options: GateOptions | None = None) -> GateRun:
    """`base` -> `head` through the gate service (which judges what is missing, audits, gates and
    repairs). `options` given: a second gating of the same PR (onto the base tip), audited already
    and never repaired."""
    return run_gate_request(base, head, calibration, store, s.request, s.budget, audit_store=s.audit_store,
                            untrusted=untrusted, options=options, repairs=options is None, notes=notes)


def _gate_branch(outcome: RubricOutcome, base: RubricDocument, head: RubricDocument, calibration: CalibrationSet,
                 base_store: VerdictStore, head_store: VerdictStore,
                 s: GateSettings) -> tuple[RubricOutcome, GateOptions | None]:
    """Gate the branch: `base` -> `head` on `base`'s labels and trusted verdicts, saying which
    verdicts are the PR's own and what the configured judge made of them (`own_verdicts`). The
    options the gate ran with (audited), or None while batches still judge (the outcome is pending)."""
    evidence = pr_evidence(base, head, calibration, base_store, head_store)
    added, unweighed = list(evidence.pr_own), list(evidence.unweighed)
    notes = [ignored_note(list(evidence.ignored))] if evidence.ignored else []
    failure: str | None = None
    if s.judged:
        with judging_store(s.cache, base_store) as store:
            run = _run(base, head, calibration, store, None, s, notes)
        outcome = _took(outcome, run.judged, [base, head], calibration)
        if outcome.pending:
            return outcome, None
        if (added or unweighed) and not s.request.measures_reliability:
            note, failure = rejudged(added, unweighed, head, calibration, store, s, run.lookup)
            notes.append(note)
    else:
        if s.judge_unavailable:
            notes.append(f"Replay mode: {s.judge_unavailable}. The gate used recorded verdicts only.")
        asked, vouch = vouched(evidence, s)
        if added or unweighed:
            outcome = replace(outcome, approval=asked)
            note, failure = replayed(added, unweighed, head, s, asked, vouch)
            notes.append(note)
        run = _replay(base, head, calibration, base_store, head_store, evidence, vouch is not None, s, notes)
    if failure is not None:
        outcome = outcome.failing(failure)
    report = run.report
    assert report is not None
    report.notes.extend(notes)
    if outcome.judging is not None:
        report.judging = outcome.judging
    outcome = replace(outcome, report=report, audit_report=run.audit_report,
                      repair_report=run.repair_report).noted(*run.notices)
    return outcome, run.options


def _replay(base: RubricDocument, head: RubricDocument, calibration: CalibrationSet, base_store: VerdictStore,
            head_store: VerdictStore, evidence: Evidence, vouched: bool, s: GateSettings, notes: list[str],
            options: GateOptions | None = None) -> GateRun:
    """Gated on the recorded verdicts, the PR's own among them as untrusted evidence (unless a
    writer's approval vouches for them: then as recorded)."""
    added = list(evidence.pr_own)
    store = merged_added(base_store, head_store, added) if added else base_store
    untrusted = Untrusted(evidence.untrusted, base_store, calibration) if evidence.untrusted and not vouched else None
    return _run(base, head, calibration, store, untrusted, s, notes, options)


def _gate_onto_tip(outcome: RubricOutcome, base: RubricDocument, head: RubricDocument, head_store: VerdictStore,
                   options: GateOptions, s: GateSettings) -> RubricOutcome:
    """Gate the merge, not the branch: the PR's check changes applied onto the base tip's rubric,
    against the tip's labels and verdicts (the trusted snapshot of the tip). A PR that deletes B
    is rejected when main has since deleted A, the other check catching the same items."""
    changed, at_tip = outcome.file, s.snapshots.tip
    where = f"the base branch's tip {at_tip.sha[:7]}"
    if at_tip.file(changed.base_path) is None:
        return outcome.failing(f"{where} no longer has {changed.base_path}: the merge would bring back a rubric "
                               "the base branch removed; rebase the PR onto its base branch")
    try:
        tip, calibration, tip_store = _trusted_version(at_tip, changed.base_path)
    except InputError as exc:
        return outcome.failing(f"{where} cannot be read to gate the merge ({exc.message}); rebase the PR")
    outcome = outcome.failing(*(f"merged onto {where}, {c}: rebase the PR and keep one"
                                for c in check_conflicts(base.rubric, head.rubric, tip.rubric)))
    merged = RubricDocument(apply_check_changes(base.rubric, head.rubric, tip.rubric),
                            SourceText(f"this PR merged onto {at_tip.sha[:7]}", head.source.text, None,
                                       repo_path=changed.path), head.check_lines)
    if merged.rubric == tip.rubric and tip.rubric == base.rubric:
        return outcome
    try:
        if s.judged:
            with judging_store(s.cache, tip_store) as store:
                run = _run(tip, merged, calibration, store, None, s, [], options)
            # The branch's judging statistics stay the report's; the answers of both count.
            judged = _took(outcome, run.judged, [tip, merged], calibration)
            outcome = replace(judged, judging=outcome.judging if outcome.judging is not None else judged.judging)
            if outcome.pending:
                return outcome
        else:
            evidence = pr_evidence(tip, merged, calibration, tip_store, head_store)
            run = _replay(tip, merged, calibration, tip_store, head_store, evidence, vouched(evidence, s)[1] is not None,
                          s, [], options)
    except MissingVerdictsError as exc:
        return outcome.failing(f"merged onto {where}, the rubric cannot be scored ({missing_verdicts(exc)}): "
                               f"rebase the PR, or {JUDGE_HINT}")
    # What the branch's own report rejects is listed there already: only what the merge adds.
    branch = outcome.report
    rejected = {(c.check, c.change) for c in (branch.changes if branch is not None else []) if not c.accepted}
    assert run.report is not None
    return outcome.failing(*(f"merged onto {where}, {change.change} {change.check} is rejected: {change.reason}"
                             for change in run.report.changes
                             if not change.accepted and (change.check, change.change) not in rejected))
