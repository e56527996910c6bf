"""The run's decision as a pure function of its facts: no git, no GitHub, one row per case."""

from __future__ import annotations

import pytest

from rubric_gate.action.decide import (
    OtherPull,
    PostedResult,
    RunFacts,
    decide,
    exit_code,
    run_decision,
    standing_exit_code,
)
from rubric_gate.action.github.checks import CheckRecord
from rubric_gate.action.github.override import Override

GRANTED = Override(True, "the `rubric-gate:override` label was applied on abc1234 by @maintainer, who has write access")
REFUSED = Override(False, "the `rubric-gate:override` label was applied by @mallory, who has read access")
BASE, OTHER_BASE = "a" * 40, "b" * 40
FAILS_THERE = ("rubrics/demo.yaml: rejected deleted A",)


def _other(**fields) -> OtherPull:
    return OtherPull(**{"number": 8, "base_sha": OTHER_BASE, **fields})


@pytest.mark.parametrize(("facts", "decision", "code", "conclusion", "title"), [
    (RunFacts("rejected", failing=False, errors=0, pending=False), "pass", 0, "success", "rubric-gate: pass"),
    (RunFacts("rejected", failing=True, errors=0, pending=False), "fail", 1, "failure", "rubric-gate: fail"),
    (RunFacts("rejected", failing=True, errors=0, pending=False, override=GRANTED), "pass", 0, "success",
     "rubric-gate: pass (overridden)"),
    (RunFacts("rejected", failing=True, errors=0, pending=False, override=REFUSED), "fail", 1, "failure",
     "rubric-gate: fail"),
    # an override never covers invalid input
    (RunFacts("rejected", failing=True, errors=1, pending=False, override=GRANTED), "fail", 2, "failure",
     "rubric-gate: fail"),
    (RunFacts("rejected", failing=False, errors=0, pending=True), "pending", 1, "pending", "rubric-gate: pending"),
    (RunFacts("rejected", failing=False, errors=1, pending=True), "fail", 2, "failure", "rubric-gate: fail"),
    (RunFacts("error", failing=True, errors=0, pending=False), "fail", 0, "neutral", "rubric-gate: fail"),
    (RunFacts("error", failing=True, errors=2, pending=False), "fail", 2, "failure", "rubric-gate: fail"),
    (RunFacts("never", failing=True, errors=2, pending=False), "fail", 0, "neutral", "rubric-gate: fail"),
    # the check belongs to the commit: another PR with this head decides it too
    (RunFacts("rejected", failing=False, errors=0, pending=False, others=(_other(),)), "pass", 0, "success",
     "rubric-gate: pass"),
    (RunFacts("rejected", failing=False, errors=0, pending=False, others=(_other(failing=FAILS_THERE),)),
     "fail", 1, "failure", "rubric-gate: fail"),
    (RunFacts("rejected", failing=False, errors=0, pending=False, others=(_other(error="no merge base"),)),
     "fail", 1, "failure", "rubric-gate: fail"),
    (RunFacts("rejected", failing=True, errors=0, pending=False, override=GRANTED,
              others=(_other(failing=FAILS_THERE),)), "fail", 1, "failure", "rubric-gate: fail"),
    (RunFacts("rejected", failing=False, errors=0, pending=False,
              others=(_other(failing=FAILS_THERE, override=GRANTED),)), "pass", 0, "success",
     "rubric-gate: pass (overridden)"),
    (RunFacts("rejected", failing=True, errors=0, pending=False, override=GRANTED,
              others=(_other(failing=FAILS_THERE, override=GRANTED),)), "pass", 0, "success",
     "rubric-gate: pass (overridden)"),
    (RunFacts("rejected", failing=False, errors=0, pending=False,
              others=(_other(failing=FAILS_THERE, override=REFUSED),)), "fail", 1, "failure", "rubric-gate: fail"),
    (RunFacts("rejected", failing=False, errors=0, pending=False,
              others=(_other(error="no merge base", override=GRANTED),)), "fail", 1, "failure", "rubric-gate: fail"),
    (RunFacts("rejected", failing=False, errors=0, pending=False, unsettled=True), "fail", 1, "failure",
     "rubric-gate: fail"),
    (RunFacts("rejected", failing=False, errors=0, pending=False, unverified="403"), "fail", 2, "failure",
     "rubric-gate: fail"),
])
def test_the_decision(facts: RunFacts, decision: str, code: int, conclusion: str, title: str) -> None:
    decided = decide(facts)
    assert (decided.decision, decided.exit_code, decided.conclusion, decided.title) == (decision, code, conclusion,
                                                                                         title)
    assert decided.green == (conclusion in ("success", "neutral"))
    assert (decided.override is not None) == (facts.override is GRANTED and not facts.errors and facts.failing)


@pytest.mark.parametrize(("facts", "words"), [
    (RunFacts("rejected", failing=True, errors=0, pending=False, override=REFUSED), ["Override refused: ", "@mallory"]),
    (RunFacts("rejected", failing=True, errors=1, pending=False, override=GRANTED),
     ["The override does not apply", "1 rubric file(s) could not be gated"]),
    (RunFacts("rejected", failing=False, errors=0, pending=False, others=(_other(failing=FAILS_THERE),)),
     ["also proposed by #8 (base bbbbbbb)", "rejected deleted A", "so it fails here too"]),
    (RunFacts("rejected", failing=False, errors=0, pending=False,
              others=(_other(failing=FAILS_THERE, override=GRANTED),)), ["its override covers it there", "@maintainer"]),
    (RunFacts("rejected", failing=False, errors=0, pending=False,
              others=(_other(failing=FAILS_THERE, override=REFUSED),)), ["Its override label does not count", "@mallory"]),
    (RunFacts("rejected", failing=False, errors=0, pending=False, unsettled=True), ["kept changing", "re-run"]),
    (RunFacts("rejected", failing=False, errors=0, pending=False, unverified="cannot list"),
     ["could not be read again", "cannot list", "re-run"]),
])
def test_what_the_comment_says(facts: RunFacts, words: list[str]) -> None:
    text = "\n".join(decide(facts).notices)
    assert all(word in text for word in words), text


def test_a_passing_pr_with_a_passing_twin_says_nothing_about_it() -> None:
    assert decide(RunFacts("rejected", failing=False, errors=0, pending=False, others=(_other(),))).notices == ()


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"failing": False, "errors": False, "overridden": False, "pending": False, "failing_elsewhere": False}, "pass"),
    ({"failing": True, "errors": False, "overridden": True, "pending": False, "failing_elsewhere": False}, "pass"),
    ({"failing": True, "errors": False, "overridden": True, "pending": True, "failing_elsewhere": False}, "pending"),
    ({"failing": False, "errors": True, "overridden": True, "pending": False, "failing_elsewhere": False}, "fail"),
    ({"failing": False, "errors": False, "overridden": False, "pending": False, "failing_elsewhere": True}, "fail"),
])
def test_run_decision_as_the_preview_calls_it(kwargs: dict, expected: str) -> None:
    assert run_decision(**kwargs) == expected


@pytest.mark.parametrize(("fail_on", "decision", "errors", "code"), [
    ("rejected", "pass", False, 0), ("rejected", "fail", False, 1), ("rejected", "pending", False, 1),
    ("rejected", "fail", True, 2), ("error", "fail", False, 0), ("error", "fail", True, 2),
    ("never", "fail", True, 0),
])
def test_exit_code(fail_on: str, decision: str, errors: bool, code: int) -> None:
    assert exit_code(fail_on, decision, errors) == code


@pytest.mark.parametrize(("result", "code"), [
    (None, None),  # no result (its run cancelled): gate now
    (PostedResult(False, BASE), 1),  # a failure stands
    (PostedResult(True, BASE), None),  # a pass is gated again: anyone's workflow can post one
    (PostedResult(False, OTHER_BASE), None),  # gated against another base tip
    (PostedResult(False, None), None),  # records no base
])
def test_only_a_failure_stands_and_only_as_it_was_computed(result: PostedResult | None, code: int | None) -> None:
    assert standing_exit_code(result, BASE) == code


@pytest.mark.parametrize("record", [CheckRecord(BASE), CheckRecord(BASE, 7)])
def test_a_check_record_reads_back_as_written(record: CheckRecord) -> None:
    assert CheckRecord.parse(record.external_id()) == record


def test_an_older_record_reads_as_its_base_only_and_a_foreign_one_not_at_all() -> None:
    assert CheckRecord.parse(f"base:{BASE}") == CheckRecord(BASE)
    assert CheckRecord.parse("ci-build-42") is None and CheckRecord.parse(None) is None


def test_an_old_records_override_field_reads_as_nothing() -> None:
    """Runs before override's change wrote `override` into the record: read, it grants nothing
    (a record is any workflow's to write), and a record has no field to say so."""
    assert CheckRecord.parse(f"base:{BASE} pr:7 override") == CheckRecord(BASE, 7)
    assert not hasattr(CheckRecord(BASE, 7), "override")
