"""The checklist the integrations share: rubric-gate's per-check prompt, the strict parser,
all-must-pass (or at most K), never a guessed answer, and verdicts under the live judge's key."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from rubric_gate.calibration import load_calibration
from rubric_gate.errors import InputError
from rubric_gate.integrations.checklist import ATTEMPTS, GatedChecklist, judge_key
from rubric_gate.judges import missing_pairs
from rubric_gate.judges.prompt import render_per_check
from rubric_gate.rubric import load_rubric
from rubric_gate.verdicts import VerdictStore
from tests.integrations.recorded import asked, expected_pass, recorded_reply
from tests.support.promptfoo_project import CONFIG_PATH, make_repo

JUDGE = "openai:gpt-4o-mini"


def grade(checklist: GatedChecklist, item: dict, reply=recorded_reply):
    async def ask(prompt: str) -> str:
        return reply(prompt)
    return asyncio.run(checklist.grade(ask, item["input"], item["output"]))


@pytest.fixture
def repo(tmp_path: Path):
    return make_repo(tmp_path, branch=False)


def items(repo) -> list[dict]:
    return [json.loads(line) for line in (repo.root / "calibration/support.jsonl").read_text().splitlines()]


def test_each_check_is_asked_with_the_per_check_prompt(repo) -> None:
    checklist = GatedChecklist.load(repo.root / CONFIG_PATH)
    seen: list[str] = []

    def reply(prompt: str) -> str:
        seen.append(prompt)
        return recorded_reply(prompt)

    item = items(repo)[0]
    grade(checklist, item, reply)
    assert sorted(seen) == sorted(render_per_check(checklist.rubric.task, item["input"], item["output"], c.text)
                                  for c in checklist.rubric.checks)


def test_all_must_pass_or_at_most_k(repo) -> None:
    strict = GatedChecklist.load(repo.root / CONFIG_PATH)
    lenient = GatedChecklist.load(repo.root / CONFIG_PATH, max_failures=1)
    ids = strict.rubric.check_ids
    for item in items(repo):
        assert grade(strict, item).passed is expected_pass(item["id"], ids)
        assert grade(lenient, item).passed is expected_pass(item["id"], ids, 1)
    graded = grade(strict, items(repo)[2])  # F3: two checks say no
    assert graded.failed == ["polite", "the-answer-makes-no-promise-the-policy-does-not"]
    assert graded.reason == ("failed: no on polite, the-answer-makes-no-promise-the-policy-does-not "
                             "(all must pass)")
    assert graded.metadata()["checks"]["polite"] == {"text": "The answer is polite and does not blame the customer.",
                                                     "answer": "no", "quote": "answer F3"}


def test_a_malformed_reply_is_asked_again_and_never_guessed(repo) -> None:
    checklist = GatedChecklist.load(repo.root / CONFIG_PATH)
    calls: dict[str, int] = {}

    def flaky(prompt: str) -> str:
        check, _ = asked(prompt)
        calls[check] = calls.get(check, 0) + 1
        if check == "polite" and calls[check] == 1:
            return "Sure! The answer is yes."
        if check == "concise":
            return '{"answer": "probably", "quote": ""}'
        return recorded_reply(prompt)

    graded = grade(checklist, items(repo)[6], flaky)  # P1: every other check says yes
    assert calls["polite"] == 2 and calls["concise"] == ATTEMPTS
    assert graded.unanswered == ["concise"] and graded.passed is None and graded.score is None
    assert graded.reason.startswith("undecided: no valid answer for concise")
    # an outcome the unanswered check cannot change is decided: F1 already fails
    assert grade(checklist, items(repo)[0], flaky).passed is False


def test_recorded_verdicts_carry_the_live_judges_full_key(repo, tmp_path: Path) -> None:
    store_path = tmp_path / "production.verdicts.jsonl"
    checklist = GatedChecklist.load(repo.root / CONFIG_PATH, verdicts=store_path, judge=JUDGE)
    for item in items(repo):
        checklist.record(grade(checklist, item), item["id"], item["input"], item["output"])
    doc = load_rubric(repo.root / CONFIG_PATH)
    calibration = load_calibration(repo.root / "calibration/support.jsonl")
    store = VerdictStore.load(store_path)
    # `rubric-gate judge` / `check --judge` would ask nothing: every pair is already keyed
    assert missing_pairs([doc.rubric], calibration, store, JUDGE) == []
    assert len(missing_pairs([doc.rubric], calibration, store, "anthropic:other")) == 6 * 11


def test_recording_needs_the_judge_key(repo, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="needs the judge"):
        GatedChecklist.load(repo.root / CONFIG_PATH, verdicts=tmp_path / "v.jsonl")
    with pytest.raises(InputError, match="max_failures must be between 0 and 5"):
        GatedChecklist.load(repo.root / CONFIG_PATH, max_failures=6)
    assert judge_key("openai/gpt-4o-mini") == "openai:gpt-4o-mini"
    assert judge_key("anthropic:claude") == "anthropic:claude"
