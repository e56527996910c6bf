"""Gate one changed rubric: base and head versions, base labels and verdicts, PR verdicts flagged."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from rubric_gate.action.changed import ChangedFile
from rubric_gate.action.judging import JudgeBackend
from rubric_gate.action.sources import FileReader
from rubric_gate.calibration import CalibrationSet, parse_calibration
from rubric_gate.errors import InputError, RubricGateError
from rubric_gate.gate import GateOptions
from rubric_gate.pipeline import Evaluation, run_check
from rubric_gate.report import CheckReport
from rubric_gate.rubric import RubricDocument, parse_rubric_text
from rubric_gate.sources import SourceText
from rubric_gate.verdicts import Verdict, VerdictStore


@dataclass
class GateSettings:
    base_sha: str
    head_sha: str
    trust_pr_verdicts: bool
    rates_rule: bool
    judge: JudgeBackend | None  # the live judge for this rubric, when one is configured and usable
    judge_unavailable: str | None  # why a configured judge is not used
    output_dir: Path
    concurrency: int = 8
    max_judge_calls: int | None = None


@dataclass
class RubricOutcome:
    file: ChangedFile
    report: CheckReport | None = None
    head: RubricDocument | None = None
    base: RubricDocument | None = None
    notices: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # reasons to fail besides the gate
    error: str | None = None
    new_verdicts: Path | None = None

    @property
    def passed(self) -> bool:
        if self.error is not None:
            return False
        gate_ok = self.report is None or self.report.decision == "pass"
        return gate_ok and (not self.failures or bool(self.report and self.report.override))

    def to_dict(self) -> dict[str, object]:
        return {
            "file": self.file.path,
            "base_file": self.file.base_path,
            "status": self.file.status,
            "decision": "pass" if self.passed else "fail",
            "error": self.error,
            "failures": self.failures,
            "notices": self.notices,
            "new_verdicts": str(self.new_verdicts) if self.new_verdicts else None,
            "report": self.report.to_dict() if self.report else None,
        }


def _read_required(reader: FileReader, sha: str, path: str, what: str) -> str:
    text = reader.read(sha, path)
    if text is None:
        raise InputError(f"{sha[:7]}:{path}", f"{what} not found at this commit")
    return text


def _display(sha: str, path: str) -> str:
    return f"{sha[:7]}:{path}"


def _calibration(reader: FileReader, sha: str, path: str) -> CalibrationSet:
    text = _read_required(reader, sha, path, "calibration set")
    return parse_calibration(SourceText(_display(sha, path), text, None))


def _verdicts(reader: FileReader, sha: str, path: str) -> VerdictStore:
    text = reader.read(sha, path)
    display = _display(sha, path)
    return VerdictStore(display=display) if text is None else VerdictStore.from_source(SourceText(display, text, None))


def _label_changes(base: CalibrationSet, head: CalibrationSet) -> str | None:
    before = {i.id: i for i in base.items}
    after = {i.id: i for i in head.items}
    relabeled = sorted(k for k in before.keys() & after.keys() if before[k].label != after[k].label)
    edited = sorted(k for k in before.keys() & after.keys() if before[k] != after[k] and k not in relabeled)
    parts = [f"{len(relabeled)} relabeled" if relabeled else "", f"{len(edited)} edited" if edited else "",
             f"{len(after.keys() - before.keys())} added" if after.keys() - before.keys() else "",
             f"{len(before.keys() - after.keys())} removed" if before.keys() - after.keys() else ""]
    summary = ", ".join(p for p in parts if p)
    return summary or None


def pr_added_verdicts(base: VerdictStore, head: VerdictStore) -> list[Verdict]:
    known = {v.to_json_line() for v in base}
    return [v for v in head if v.to_json_line() not in known]


def split_pr_verdicts(added: list[Verdict], base: VerdictStore,
                      calibration: CalibrationSet) -> tuple[list[Verdict], list[str]]:
    """The PR's verdicts for pairs the base has no verdict for, and the pairs where it contradicts the base.

    A PR verdict may fill a gap (a new check text), never overrule the base: otherwise a PR
    could "re-record" another check as catching what a deleted check caught.
    """
    items = {i.id: i for i in calibration.items}
    by_hash = {i.content_hash: i for i in calibration.items}
    fills: list[Verdict] = []
    contradicting: list[str] = []
    for verdict in added:
        item = items.get(verdict.item) or (by_hash.get(verdict.item_hash) if verdict.item_hash else None)
        recorded = base.find(verdict.check_text, item) if item is not None else None
        if recorded is None:
            fills.append(verdict)
        elif recorded.answer != verdict.answer:
            name = verdict.check or verdict.check_text[:40]
            contradicting.append(f"{name} on {verdict.item}: base {recorded.answer}, PR {verdict.answer}")
    return fills, contradicting


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "rubric"


def evaluate(changed: ChangedFile, reader: FileReader, settings: GateSettings) -> RubricOutcome:
    outcome = RubricOutcome(changed)
    try:
        _evaluate(outcome, reader, settings)
    except RubricGateError as exc:
        outcome.error = exc.message
    return outcome


def _evaluate(outcome: RubricOutcome, reader: FileReader, s: GateSettings) -> None:
    changed = outcome.file
    base_text = None if changed.status == "added" else reader.read(s.base_sha, changed.base_path)
    head_text = None if changed.status == "removed" else reader.read(s.head_sha, changed.path)
    # Only the diff's own status says a file is new or deleted: a file the diff calls modified
    # or renamed but that cannot be read must not pass as "new" (ungated) or "deleted".
    if changed.status in ("modified", "renamed"):
        if base_text is None:
            raise InputError(_display(s.base_sha, changed.base_path), "rubric not found at the base commit")
        if head_text is None:
            raise InputError(_display(s.head_sha, changed.path), "rubric not found at the head commit")
    if head_text is None:
        outcome.notices.append("This PR deletes the rubric: there is nothing left to gate. Review the deletion by hand.")
        return
    head = parse_rubric_text(head_text, _display(s.head_sha, changed.path))
    outcome.head = head
    if base_text is None:
        outcome.notices.append("New rubric: there is no base version to gate against, so it is not gated in this PR.")
        return
    base = parse_rubric_text(base_text, _display(s.base_sha, changed.base_path))
    outcome.base = base
    notes: list[str] = []

    # Labels and verdicts come from the base: the PR must not grade its own edit.
    calibration = _calibration(reader, s.base_sha, base.rubric.calibration)
    head_cal_text = reader.read(s.head_sha, head.rubric.calibration)
    base_cal_text = reader.read(s.base_sha, base.rubric.calibration)
    if head_cal_text != base_cal_text:
        detail = None
        if head_cal_text is not None:
            try:
                head_cal = parse_calibration(SourceText(_display(s.head_sha, head.rubric.calibration), head_cal_text, None))
                detail = _label_changes(calibration, head_cal)
            except InputError as exc:
                detail = f"the new file does not load: {exc.message}"
        notes.append(f"This PR edits the calibration labels (`{head.rubric.calibration}`"
                     f"{': ' + detail if detail else ''}). The gate used the base branch's labels; "
                     "review the label changes by hand.")
    calibration = calibration.split("calibration")
    if not calibration.items:
        raise InputError(calibration.display, "no items in the calibration split")

    base_store = _verdicts(reader, s.base_sha, base.rubric.verdicts)
    head_store = _verdicts(reader, s.head_sha, head.rubric.verdicts)
    added, contradicting = split_pr_verdicts(pr_added_verdicts(base_store, head_store), base_store, calibration)
    if contradicting:
        shown = ", ".join(contradicting[:10]) + (f" and {len(contradicting) - 10} more" if len(contradicting) > 10 else "")
        notes.append(f"This PR changes {len(contradicting)} verdict(s) the base branch recorded ({shown}); "
                     "the gate ignored them and used the base's verdicts.")

    judging = None
    judge = s.judge
    if judge is not None:
        new_path = s.output_dir / "verdicts" / f"{_safe_name(head.rubric.id)}.jsonl"
        new_path.parent.mkdir(parents=True, exist_ok=True)
        # Base verdicts are preloaded in memory; only newly judged ones are appended to the file.
        store = VerdictStore(base_store, path=new_path, display=str(new_path))
        judging = judge.judge_missing([base, head], calibration, store,
                                      concurrency=s.concurrency, max_calls=s.max_judge_calls)
        outcome.new_verdicts = new_path if new_path.exists() else None
        if outcome.new_verdicts is not None:
            notes.append(f"Verdicts judged in this run were written to `{new_path.relative_to(s.output_dir.parent)}` "
                         "in the job's workspace (not to the PR's files); upload it as an artifact to keep them.")
        spec = judge.spec
        evaluation = Evaluation(calibration, store, judge=spec, prompt=judge.prompt)
        disagreements = _disagreements(added, calibration, store, spec, judge.prompt)
        if added:
            notes.append(f"This PR adds {len(added)} verdict(s); they were re-judged with `{spec}` and not used"
                         + (f"; {len(disagreements)} disagree with the judge: {', '.join(disagreements[:10])}"
                            if disagreements else "; the judge agrees with all of them") + ".")
    else:
        if s.judge_unavailable:
            notes.append(f"Replay mode: {s.judge_unavailable}. The gate used recorded verdicts only.")
        store = base_store.merged(VerdictStore(added)) if added else base_store
        evaluation = Evaluation(calibration, store)
        if added:
            note = (f"This PR adds {len(added)} unverified verdict(s) to `{head.rubric.verdicts}`: "
                    "no judge could re-check them here")
            if s.trust_pr_verdicts:
                notes.append(note + ", so they were used as recorded.")
            else:
                notes.append(note + "; `trust_pr_verdicts` is false, so this fails.")
                outcome.failures.append(f"{len(added)} unverified verdict(s) added by this PR")
    report = run_check(base, head, evaluation, GateOptions(rates_rule=s.rates_rule))
    report.notes.extend(notes)
    if judging is not None:
        report.judging = judging
    outcome.report = report


def _disagreements(added: list[Verdict], calibration: CalibrationSet, store: VerdictStore,
                   judge: str, prompt: str) -> list[str]:
    items = {i.id: i for i in calibration.items}
    out = []
    for verdict in added:
        item = items.get(verdict.item)
        fresh = store.find(verdict.check_text, item, judge=judge, prompt=prompt) if item else None
        if fresh is not None and fresh.answer != verdict.answer:
            out.append(f"{verdict.check or verdict.check_text[:40]} on {verdict.item} (PR: {verdict.answer}, judge: {fresh.answer})")
    return out
