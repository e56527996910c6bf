"""Gating one rubric file as values (`action.gating.gate_file`): each step returns the outcome so
far, pairs still being judged in a batch are a pending outcome (nothing decided, nothing passed),
and an error keeps what was found before it. On commits held in memory, with the judging step
replaced where a batch would still be running."""

from __future__ import annotations

import dataclasses

import pytest

from rubric_gate.action.commits.changed import ChangedFile
from rubric_gate.action.commits.snapshot import ParseMemo, load_snapshots
from rubric_gate.action.gating import gate_file as gating
from rubric_gate.action.gating.outcome import GateSettings, RubricOutcome
from rubric_gate.gate import GateOptions
from rubric_gate.scoring import VerdictLookup
from rubric_gate.service import GateRequest, GateRun, Judged
from tests.action.harness import (
    CALIBRATION,
    RUBRIC,
    TEXTS,
    VERDICTS,
    calibration_jsonl,
    rubric_yaml,
    verdicts_jsonl,
)
from tests.support.memory_repo import MemoryRepo

BASE = {RUBRIC: rubric_yaml(["A", "B", "C", "D"]), CALIBRATION: calibration_jsonl(),
        VERDICTS: verdicts_jsonl({c: TEXTS[c] for c in "ABCDE"})}


def _settings(head: dict[str, str | None], files: list[ChangedFile], tip: dict[str, str | None] | None = None,
              judges: tuple[str, ...] = ()) -> GateSettings:
    repo = MemoryRepo()
    repo.commit("base", BASE)
    repo.commit("head", head, parent="base")
    if tip is not None:
        repo.commit("tip", tip, parent="base")
    snapshots = load_snapshots(repo, "base", "tip" if tip is not None else "base", "head", files, ParseMemo())
    return GateSettings(snapshots, trust_pr_verdicts=True, request=GateRequest(judges=judges))


def _judging(monkeypatch: pytest.MonkeyPatch, pending_on: int) -> list[int]:
    """The judging step answers from the record, except its `pending_on`-th call (from 1), which
    leaves 4 pairs in a batch still processing."""
    calls: list[int] = []

    def judge_for_gate(docs, calibration, store, request, budget) -> Judged:  # type: ignore[no-untyped-def]
        calls.append(len(calls) + 1)
        if len(calls) == pending_on:
            return Judged(None, {"calls": 0}, pending_pairs=4, pending_batches=1)
        return Judged(VerdictLookup(calibration, store, docs[-1].rubric), {"calls": 0})

    monkeypatch.setattr(gating, "judge_for_gate", judge_for_gate)
    return calls


def test_a_deletion_still_being_judged_on_the_base_tip_is_pending_not_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    """At the merge base the rubric catches nothing the others do not; main has since changed it,
    and what the tip's version catches is still in a batch: nothing is decided yet."""
    calls = _judging(monkeypatch, pending_on=2)
    tip = {RUBRIC: rubric_yaml(["A", "B", "C", "D", "E"])}
    outcome = gating.gate_file(ChangedFile(RUBRIC, None, "removed"),
                               _settings({RUBRIC: None}, [ChangedFile(RUBRIC, None, "removed")], tip, ("openai:m",)))
    assert calls == [1, 2]
    assert outcome.pending and not outcome.passed and outcome.pending_pairs == 4
    assert outcome.notices[-1].startswith("Judging 4 pair(s) in batch")


def test_an_edit_whose_pairs_are_in_a_batch_has_no_report_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    pending = GateRun(None, Judged(None, {"calls": 0}, pending_pairs=4, pending_batches=1), GateOptions())
    monkeypatch.setattr(gating, "run_gate_request", lambda *args, **kwargs: pending)
    head = {RUBRIC: rubric_yaml(["A", "B", "C", "D", "E"])}
    outcome = gating.gate_file(ChangedFile(RUBRIC, None, "modified"),
                               _settings(head, [ChangedFile(RUBRIC, None, "modified")], judges=("openai:m",)))
    assert outcome.pending and outcome.report is None and outcome.error is None and not outcome.passed


def test_an_error_keeps_what_was_found_before_it() -> None:
    """A new rubric whose checks have no recorded verdict: the error names them and how to get
    them, after the notice a new rubric gets."""
    other = "rubrics/other.yaml"
    head = {other: rubric_yaml(["A", "F"], extra={"F": "Is F?"}).replace("id: demo", "id: other")}
    outcome = gating.gate_file(ChangedFile(other, None, "added"), _settings(head, [ChangedFile(other, None, "added")]))
    assert outcome.error is not None and outcome.error.startswith("no verdict for checks F (5/5 items): record verdicts")
    assert outcome.head is not None and outcome.notices[0].startswith("New rubric")


def test_the_outcome_is_a_value() -> None:
    outcome = gating.gate_file(ChangedFile(RUBRIC, None, "modified"),
                               _settings({RUBRIC: rubric_yaml(["B", "C", "D"])}, [ChangedFile(RUBRIC, None, "modified")]))
    assert isinstance(outcome, RubricOutcome) and outcome.report is not None and not outcome.passed  # A's catch
    with pytest.raises(dataclasses.FrozenInstanceError):
        outcome.failures = ()  # type: ignore[misc]
