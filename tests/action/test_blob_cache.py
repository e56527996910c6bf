"""The action reads each verdict blob once (`action/commits/blob_cache.py`, through `action/commits/snapshot/`): its results are exactly those
of parsing every store from its text at every ask, for several rubrics sharing a store, base and
head, a PR appending verdict lines, deleting some, or changing one in the middle."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

import pytest

from rubric_gate.action.commits.snapshot import model as snapshot_model
from rubric_gate.sources import SourceText
from rubric_gate.verdicts import VerdictStore
from rubric_gate.verdicts.blobs import default_cache
from tests.action.harness import (
    CALIBRATION,
    FAILS,
    LABELS,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    rubric_yaml,
    verdicts_jsonl,
)

SECOND = "rubrics/second.yaml"
THIRD = "rubrics/third.yaml"
NEW_TEXT = "Does the design name an owner for each key?"


def _rubric(rubric_id: str, checks: list[str], extra: dict[str, str] | None = None) -> str:
    return rubric_yaml(checks, extra=extra).replace("id: demo", f"id: {rubric_id}", 1)


def _lines(text: str, answers: dict[str, str]) -> str:
    return "".join(f'{{"item": "{item}", "check_text": "{text}", "answer": "{answer}"}}\n'
                   for item, answer in answers.items())


def _parsed_from_text_every_time(reader, sha: str, path: str) -> VerdictStore | None:  # type: ignore[no-untyped-def]
    """The reference: no blob ids, no sharing, no index (what the action did before the cache)."""
    text = reader.read(sha, path)
    return None if text is None else VerdictStore.from_source(SourceText(f"{sha[:7]}:{path}", text, None))


@contextmanager
def _without_the_cache() -> Iterator[None]:
    # Every store the action reads goes through the snapshots' one reader.
    with mock.patch.object(snapshot_model, "read_store", _parsed_from_text_every_time):
        yield


@pytest.fixture
def shared(scenario: Scenario) -> Scenario:
    """Three rubrics on the base branch reading one calibration set and one verdict store."""
    base = scenario.git.commit({SECOND: _rubric("second", ["A", "B", "C"]), THIRD: _rubric("third", ["B", "C", "D"])},
                               "two more rubrics on the same store")
    scenario.base_sha = scenario.fake.base_sha = base
    default_cache().clear()
    return scenario


def _results(scenario: Scenario, head: str, **inputs: str) -> tuple[int, dict, str]:
    result = scenario.run(head, **inputs)
    assert "Traceback" not in result.stderr, result.stderr
    (comment,) = scenario.fake.marked_comments()
    return result.code, result.report(), comment["body"]


def _same_with_and_without(scenario: Scenario, head: str, **inputs: str) -> tuple[int, dict, str]:
    with _without_the_cache():
        reference = _results(scenario, head, **inputs)
    cache = default_cache()
    cache.clear()
    parses = cache.parses
    cold = _results(scenario, head, **inputs)
    assert cache.parses - parses <= 2  # base and head at most, however many rubrics read the store
    cache.clear()  # the next run of the workflow: a new process, with the cache directory restored
    indexed = cache.indexed
    warm = _results(scenario, head, **inputs)
    # A PR's run indexes into a directory of its own: it reads no index the restored cache holds
    # (any workflow running for the PR can save one), so it parses again, to the same results.
    assert cache.indexed == indexed
    assert cold == reference and warm == reference
    return reference


def test_a_pr_appending_verdicts_for_checks_it_adds_to_rubrics_sharing_the_store(shared: Scenario) -> None:
    extra = {"N": NEW_TEXT}
    head = shared.git.commit({
        RUBRIC: _rubric("demo", ["A", "B", "C", "D", "N"], extra),
        SECOND: _rubric("second", ["A", "B", "C", "N"], extra),
        VERDICTS: verdicts_jsonl(TEXTS) + _lines(NEW_TEXT, {"R1": "no", "R2": "yes", "R3": "yes", "R4": "yes",
                                                            "R5": "yes"}),
    }, "add N to two rubrics, with its verdicts")
    code, report, body = _same_with_and_without(shared, head)
    assert code == 0 and report["decision"] == "pass"
    assert [r["file"] for r in report["rubrics"]] == [RUBRIC, SECOND]
    assert all(r["report"]["changes"][0]["check"] == "N" for r in report["rubrics"])
    assert "unverified verdict" in body


def test_a_pr_whose_added_lines_repeat_and_contradict_base_lines(shared: Scenario) -> None:
    extra = {"N": NEW_TEXT}
    repeated = verdicts_jsonl({"A": TEXTS["A"]}).splitlines(keepends=True)[0]  # a base line, byte for byte
    flipped = _lines(TEXTS["B"], {"R2": "yes"})  # a base answer contradicted by an appended line
    head = shared.git.commit({
        THIRD: _rubric("third", ["B", "C", "D", "N"], extra),
        VERDICTS: verdicts_jsonl(TEXTS) + repeated + flipped + _lines(NEW_TEXT, {i: "yes" for i in LABELS}),
    }, "append a repeat, a contradiction and N")
    code, report, _ = _same_with_and_without(shared, head)
    assert code == 1, [(r["error"], r["failures"]) for r in report["rubrics"]]
    assert any("changes 1 recorded answer" in f["message"] for f in report["standard"])


def test_a_pr_deleting_verdict_lines(shared: Scenario) -> None:
    kept = {text_id: text for text_id, text in TEXTS.items() if text_id != "D"}  # D's verdicts removed
    head = shared.git.commit({RUBRIC: _rubric("demo", ["A", "B", "C"]), VERDICTS: verdicts_jsonl(kept)},
                             "delete D and its verdicts")
    code, report, _ = _same_with_and_without(shared, head)
    assert code == 1, [(r["error"], r["failures"]) for r in report["rubrics"]]
    assert any(f["message"].startswith("removes 5 recorded verdict(s)") for f in report["standard"])


def test_a_pr_changing_an_answer_in_the_middle_of_the_store(shared: Scenario) -> None:
    fails = {item: set(checks) for item, checks in FAILS.items()}
    fails["R3"].discard("C")  # C's answer on R3 flipped in place
    head = shared.git.commit({VERDICTS: verdicts_jsonl(TEXTS, fails, LABELS),
                              SECOND: _rubric("second", ["A", "B"])}, "flip C on R3, drop C from second")
    code, report, _ = _same_with_and_without(shared, head)
    assert code == 1, [(r["error"], r["failures"]) for r in report["rubrics"]]
    assert any("changes 1 recorded answer" in f["message"] for f in report["standard"])


def test_a_base_branch_that_moved_on_is_read_from_its_own_blob(shared: Scenario) -> None:
    git = shared.git
    git("checkout", "-q", "-b", "tip", shared.base_sha)
    tip = git.commit({VERDICTS: verdicts_jsonl(TEXTS) + _lines(TEXTS["A"], {"R4": "no"})}, "main records more")
    git("checkout", "-q", "pr")
    head = git.commit({SECOND: _rubric("second", ["B", "C"]), CALIBRATION: (shared.git.path / CALIBRATION).read_text()},
                      "delete A from second")
    shared.fake.base_sha = tip  # the API's base tip moved on since the PR branched
    code, report, _ = _same_with_and_without(shared, head)
    assert report["base_branch_sha"] == tip and code in (0, 1)
