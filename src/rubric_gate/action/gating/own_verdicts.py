"""The PR's own recorded verdicts in one rubric's gating: which they are (`trust.split_evidence`),
whether a writer's approval vouches for them (`trust.approval`), and what the report says of them
and fails on: re-judged where a judge runs, replayed as untrusted evidence where none does.

Each function returns what the report notes and the failure, if any (`gate_file` puts them on
the outcome)."""

from __future__ import annotations

from rubric_gate.action.gating.outcome import GateSettings
from rubric_gate.calibration import CalibrationSet
from rubric_gate.rubric import RubricDocument
from rubric_gate.scoring import VerdictLookup
from rubric_gate.trust import Evidence, split_evidence, split_pr_verdicts
from rubric_gate.trust.approval import Approval
from rubric_gate.trust.wording import first
from rubric_gate.verdicts import Verdict, VerdictStore

__all__ = ["ignored_note", "pr_evidence", "rejudged", "replayed", "vouched"]


def pr_evidence(base: RubricDocument, head: RubricDocument, calibration: CalibrationSet, base_store: VerdictStore,
                head_store: VerdictStore) -> Evidence:
    """The PR's verdicts as the trust boundary splits them: its own for texts the base lacks,
    those for the base's texts (not used), the record's for texts only the head has."""
    fills, _contradicting = split_pr_verdicts(base_store, head_store, calibration)
    # (Changed answers of base verdicts are reported and gated run-wide, with the label changes.)
    return split_evidence(fills, base_store, base.rubric, head.rubric, calibration)


def vouched(evidence: Evidence, s: GateSettings) -> tuple[Approval | None, Approval | None]:
    """The approval read for the PR's own verdicts (only when it has some), and it again when it
    vouches for them (`trust.approval`): a writer's standing approval of this head makes them count
    as recorded, under the same rules. `trust_pr_verdicts: false` asks for a judge whatever the
    reviews say."""
    asked = s.approval() if (evidence.pr_own or evidence.unweighed) and s.approval is not None else None
    return asked, asked if asked is not None and asked.granted and s.trust_pr_verdicts else None


def ignored_note(ignored: list[Verdict]) -> str:
    return (f"This PR records {len(ignored)} verdict(s) for checks the base rubric already has "
            f"({first([f'{v.check or v.check_text[:40]} on {v.item}' for v in ignored])}); only the base's "
            "record or a configured judge answers for those, so they were not used.")


def rejudged(added: list[Verdict], unweighed: list[Verdict], head: RubricDocument, calibration: CalibrationSet,
             store: VerdictStore, s: GateSettings, lookup: VerdictLookup) -> tuple[str, str | None]:
    """A judge ran: the PR's own verdicts were re-judged and not used; any the judge answers
    otherwise fail (merged, they are the record a run without the judge would replay)."""
    disagreements = _disagreements([*added, *unweighed], calibration, store, s.request.judges[0],
                                   lookup.prompt or "", lookup.task)
    what = " and ".join(part for part in (f"This PR adds {len(added)} verdict(s)" if added else "",
                                          f"{_unweighed_shown(unweighed, head)}" if unweighed else "") if part)
    note = (f"{what}; they were re-judged with `{s.request.judges[0]}` and "
            "not used" + (f"; {len(disagreements)} disagree with the judge: {', '.join(disagreements[:10])}"
                          if disagreements else "; the judge agrees with all of them") + ".")
    if not disagreements:
        return note, None
    # Merged, they are the record: a run where the judge cannot run (a fork's) replays them.
    return note, (f"{len(disagreements)} verdict(s) answering this PR's checks disagree with the configured judge; "
                  "once merged a run without the judge would replay them: correct or drop them")


def replayed(added: list[Verdict], unweighed: list[Verdict], head: RubricDocument, s: GateSettings,
             asked: Approval | None, vouch: Approval | None) -> tuple[str, str | None]:
    """No judge re-checks them: used as recorded where a writer's approval vouches for them or
    `trust_pr_verdicts` allows them (as untrusted evidence: their catches of flawed items do not
    count); a failure where `trust_pr_verdicts` is false or the configured judge could not run."""
    note = " and ".join(part for part in (
        f"This PR adds {len(added)} unverified verdict(s) to `{head.rubric.verdicts}`" if added else "",
        _unweighed_shown(unweighed, head) if unweighed else "") if part) + ": no judge could re-check them here"
    pending = f" ({asked.text})" if asked is not None and asked.refused else ""  # why one did not count
    if vouch is not None:
        return (note + ", and a writer's approval vouches for them, so they count as recorded"
                + (" in place of the configured judge, which could not run" if s.judge_unavailable else "")
                + f": {vouch.text}."), None
    if s.trust_pr_verdicts and not s.judge_unavailable:
        return (note + ", so they were used as recorded for the checks this PR adds (`trust_pr_verdicts`; "
                "set it to false to require a judge): their \"no\" on a correct item counts as blame, "
                "their catches of flawed items only once someone with write access approves this head"
                f"{pending}."), None
    # A judge is configured but cannot run (a fork's run has no secrets): what the PR records for
    # its new checks does not stand in for what that judge would answer, unless a writer vouches for it.
    why = ("`trust_pr_verdicts` is false (an approval does not change that)" if not s.trust_pr_verdicts else
           "the configured judge could not run, and a PR's own verdicts do not stand in for it unless "
           f"someone with write access approves this head{pending}")
    return note + f"; {why}, so this fails.", " and ".join(part for part in (
        f"{len(added)} unverified verdict(s) added by this PR" if added else "",
        f"{len(unweighed)} recorded before any check had their text" if unweighed else "") if part) + (
        " (the configured judge could not run)" if s.judge_unavailable else "")


def _unweighed_shown(unweighed: list[Verdict], head: RubricDocument) -> str:
    checks = ", ".join(dict.fromkeys(v.check or v.check_text[:40] for v in unweighed))
    return (f"{len(unweighed)} verdict(s) in `{head.rubric.verdicts}` answer checks this PR adds ({checks}) but were "
            "recorded before any check had their text, so no gate weighed them: they count as this PR's own")


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
